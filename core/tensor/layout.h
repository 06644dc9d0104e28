// Layouts of image tensors (spec 5).
//
// The logical shape of an image tensor is always (N, C, H, W); Layout says where its elements
// live. NCHW and NHWC are derived from a plain rank-4 tensor's strides (extent-1 dimensions
// ignored; NCHW wins when both match); other ranks and strides are Strided. Blocked tensors
// (channel blocks of B, physical order N, ceil(C/B), H, W, B, tail channels zero) are
// kernel-internal: only ToLayout, Data<T>() and metadata work on them.
//
//   Tensor nhwc = x.ToLayout(Layout::kNhwc, arena);
//   Tensor blocked = x.ToLayout(Layout::kBlocked, arena, /*block=*/16);
#pragma once

#include <string_view>

#include "core/shape/strides.h"

namespace onemodel {

enum class Layout { kNchw, kNhwc, kStrided, kBlocked };

// "NCHW", "NHWC", "Strided", "Blocked".
std::string_view LayoutName(Layout layout);

// The layout a plain (not blocked) tensor's strides describe.
Layout LayoutOf(const Shape& shape, const Strides& strides);

// Row-major strides of the NHWC pattern for a rank-4 logical (N, C, H, W) shape.
Strides NhwcStrides(const Shape& nchw);

// Physical element count of a blocked tensor: ceil(C/B) * N * H * W * B.
int64_t BlockedElementCount(const Shape& nchw, int32_t block);

}  // namespace onemodel
