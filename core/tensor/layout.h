// Layouts of image tensors (spec 5).
//
// The logical shape of an image tensor is always (N, C, H, W); Layout says where its elements
// live. NCHW and NHWC are derived from a plain rank-4 tensor's strides (extent-1 dimensions
// ignored; NCHW wins when both match); other ranks and strides are Strided. Blocked tensors
// are kernel-internal: only ToLayout, Data<T>() and metadata work on them. Two blocked
// families split one dimension into blocks of B, the block lanes innermost, tail lanes zero:
//   Blocked         activations (N, C, H, W): physical order N, ceil(C/B), H, W, B;
//   BlockedWeights  convolution weights (K, C / groups, KH, KW): ceil(K/B), C / groups, KH,
//                   KW, B (the "OIhw16o" order).
//
//   Tensor nhwc = x.ToLayout(Layout::kNhwc, arena);
//   Tensor blocked = x.ToLayout(Layout::kBlocked, arena, /*block=*/16);
//   Tensor packed = w.ToLayout(Layout::kBlockedWeights, arena, /*block=*/16);
#pragma once

#include <string_view>

#include "core/shape/strides.h"

namespace onemodel {

enum class Layout { kNchw, kNhwc, kStrided, kBlocked, kBlockedWeights };

// "NCHW", "NHWC", "Strided", "Blocked", "BlockedWeights".
std::string_view LayoutName(Layout layout);

// The layout a plain (not blocked) tensor's strides describe.
Layout LayoutOf(const Shape& shape, const Strides& strides);

// Row-major strides of the NHWC pattern for a rank-4 logical (N, C, H, W) shape.
Strides NhwcStrides(const Shape& nchw);

// True for the blocked families (Blocked, BlockedWeights).
constexpr bool IsBlocked(Layout layout) {
  return layout == Layout::kBlocked || layout == Layout::kBlockedWeights;
}

// The logical dimension a blocked family splits into blocks: 1 (C) for Blocked, 0 (K) for
// BlockedWeights.
constexpr int BlockedDim(Layout family) { return family == Layout::kBlockedWeights ? 0 : 1; }

// Physical element count of a rank-4 tensor in a blocked family: the element count with the
// blocked dimension rounded up to whole blocks (Blocked: ceil(C/B) * N * H * W * B).
int64_t BlockedElementCount(const Shape& shape, int32_t block, Layout family = Layout::kBlocked);

}  // namespace onemodel
