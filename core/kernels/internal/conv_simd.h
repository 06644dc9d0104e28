// The per-target loops of conv_fast.cc's shifted taps (conv_simd.cc, compiled once per SIMD
// target): one tap of a small dense convolution unfolded from, or folded back into, the same
// channel of a run of images. conv_fast.cc's ShiftedTap builds the TapPlan once per batch.
//
//   const ConvSimd& simd = ConvSimdFor(SimdTarget::kAvx3);
//   simd.unfold(tap, x_plane, image_stride, images, row);   // row: images x tap.cols floats
#pragma once

#include <cstdint>

#include "core/kernels/simd_targets.h"

namespace onemodel::internal {

// One tap over planes of `cols` output positions: position e reads input element
// e - lo + from of the plane when keep[e] is all ones, padding (+0) when it is 0. keep has
// cols entries and is 0 outside [lo, hi); positions in [lo, hi) with keep 0 are padding
// columns between rows, whose input elements are in the plane.
struct TapPlan {
  int64_t cols = 0, lo = 0, hi = 0, from = 0;
  const uint32_t* keep = nullptr;
};

struct ConvSimd {
  // row[n * cols + e] = position e's input of plane in + n * image_stride (+0 for padding), for
  // every n < images and e < cols: the rows are written whole. Reads no element outside
  // [from, from + hi - lo) of each plane.
  void (*unfold)(const TapPlan& tap, const float* in, int64_t image_stride, int64_t images,
                 float* row);
  // plane[e - lo + from] += row[n * cols + e] (+0 where keep[e] is 0) of plane
  // out + n * image_stride, for every n < images and e in [lo, hi); nothing else is touched.
  void (*fold)(const TapPlan& tap, const float* row, int64_t images, float* out,
               int64_t image_stride);
};

// The tap loops compiled for `target` (which must be compiled in).
const ConvSimd& ConvSimdFor(SimdTarget target);

}  // namespace onemodel::internal
