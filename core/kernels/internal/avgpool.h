// AvgPool2d kernels (AvgPool2dParams): the reference meaning and the fast path, equal bit for
// bit. Each output is +0.0f plus its window's in-bounds elements in row-major window order
// (float adds), divided by the window's divisor; the fast path vectorizes across outputs
// (output columns or channels), never within one sum, so the order is the same. Backward:
// zero, then each output gradient divided by its divisor, added over its window, output
// positions row by row, plane by plane.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/kernels/kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/kernels/thread_pool.h"

namespace onemodel::internal {

// One dimension of the window of output position o: in-bounds positions [lo, hi) and the
// divisor's factor `count` (the window clipped to the padded input, or [lo, hi) alone).
struct AvgSpan {
  int64_t lo, hi, count;
};
inline AvgSpan AvgClip(int64_t o, int32_t stride, int32_t pad, int32_t kernel, int64_t size,
                       bool count_include_pad) {
  const int64_t start = o * stride - pad;
  const int64_t lo = std::max<int64_t>(start, 0);
  const int64_t hi = std::min<int64_t>(start + kernel, size);
  const int64_t padded_end = std::min<int64_t>(start + kernel, size + pad);
  return {lo, hi, count_include_pad ? padded_end - start : hi - lo};
}

// One output pixel of an input with channel stride 1: every channel's window sum (rows ys,
// columns xs, each in bounds and non-empty or empty) divided by `divisor`, into out[c * so].
struct AvgPixel {
  const float* image = nullptr;  // element (n, 0, 0, 0)
  int64_t sy = 0, sx = 0;        // the input's row and column strides
  AvgSpan ys{}, xs{};
  int64_t c = 0;
  float divisor = 1;
  float* out = nullptr;  // channel 0 of the output pixel
  int64_t so = 1;        // the output's channel stride
};

// The per-target loops of avgpool_simd.cc (compiled once per SIMD target).
struct AvgPoolSimd {
  void (*pixel)(const AvgPixel& px);  // never throws, never allocates
};
const AvgPoolSimd& AvgPoolSimdFor(SimdTarget target);

// Scalar loops over any strides; no threads.
void AvgPool2dReference(const Tensor& x, const AvgPool2dParams& p, Tensor& out);

// The same bits, vectorized across output columns (unit x stride) or channels, split over
// `pool`.
void AvgPool2dFast(SimdTarget target, ThreadPool& pool, const Tensor& x, const AvgPool2dParams& p,
                   Tensor& out);

// Planes [begin, end) (plane = n * C + c) of the backward into gx, the contiguous gradient
// of an input of shape x_shape; stops between output rows (and between outputs when a window
// holds 2^20 elements or more) once the thread's CancelToken is cancelled.
void AvgPool2dBackwardPlanes(const Tensor& grad_out, const AvgPool2dParams& p, const Shape& x_shape,
                             float* gx, int64_t begin, int64_t end);

// Every plane, one thread.
void AvgPool2dBackwardReference(const Tensor& grad_out, const AvgPool2dParams& p, Tensor& grad_x);

// Every plane, split over `pool` (each plane by one thread, so the same bits).
void AvgPool2dBackwardFast(ThreadPool& pool, const Tensor& grad_out, const AvgPool2dParams& p,
                           Tensor& grad_x);

}  // namespace onemodel::internal
