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

// One output row (n, oy) of an input with channel stride 1: for each output column ox, every
// channel's window sum (rows ys, the in-bounds columns of ox's window, in that order) divided
// by its divisor, into out[ox * sox + c * so]. While it sums column ox it prefetches the
// columns that column ox + kAvgAhead adds to its window (past the row's end, those of the next
// output row, whose window rows are next_ys), so the input arrives before it is needed. With
// `stream`, an output made of whole 64-byte lines (so 1, C and sox multiples of 16, out
// aligned) is written with streaming stores, fenced before it returns.
struct AvgRow {
  const float* image = nullptr;  // element (n, 0, 0, 0)
  int64_t sy = 0, sx = 0;        // the input's row and column strides
  int64_t w = 0, c = 0, ow = 0;
  int32_t stride_w = 1, pad_w = 0, kernel_w = 1;
  bool count_include_pad = false;
  AvgSpan ys{}, next_ys{};  // next_ys: empty when this is the image's last output row
  float* out = nullptr;     // channel 0 of output column 0
  int64_t sox = 0, so = 1;  // the output's column and channel strides
  bool stream = false;
};

// Output columns ahead of the one being summed whose input is prefetched: enough to cover
// memory latency (measured on the AMD family-26 VM, docs/performance.md).
constexpr int64_t kAvgAhead = 6;

// The per-target loops of avgpool_simd.cc (compiled once per SIMD target).
struct AvgPoolSimd {
  void (*row)(const AvgRow& r);  // never throws, never allocates
};
const AvgPoolSimd& AvgPoolSimdFor(SimdTarget target);

// Scalar loops over any strides; no threads.
void AvgPool2dReference(const Tensor& x, const AvgPool2dParams& p, Tensor& out);

// The same bits, vectorized across output columns (unit x stride) or channels, split over
// `pool`; `stream`: the NHWC row loop writes whole-line outputs with streaming stores. Its loops
// look at the thread's CancelToken between output rows; a call whose rows hold more than
// kMaxUncheckedWork window positions each takes the reference, which looks before each output
// and every 2^20 positions of a window that long.
void AvgPool2dFast(SimdTarget target, ThreadPool& pool, const Tensor& x, const AvgPool2dParams& p,
                   Tensor& out, bool stream);

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
