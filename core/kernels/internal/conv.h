// Conv2d kernels: the reference meaning (direct loops, double accumulation) and the fast path
// (im2col + OpenBLAS sgemm; oneDNN for dense NHWC activations). Shapes and contracts as
// TensorKernels::Conv2d* states them; both stop, leaving the output incomplete, once the thread's
// CancelToken is cancelled: the fast path between images, the reference before each output
// element (and each kernel row when one element is long).
#pragma once

#include <cstdint>
#include <span>

#include "core/kernels/kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/kernels/thread_pool.h"

namespace onemodel::internal {

// The extents every Conv2d kernel works with, read from an input and a weight shape.
struct ConvDims {
  int64_t n, c, h, w;      // input
  int64_t k, kh, kw;       // weights (K, C / groups, KH, KW)
  int64_t oh, ow;          // output
  int64_t groups, cg, kg;  // C / groups, K / groups
  // Rows of one group's unfolded input: cg * kh * kw; columns: oh * ow.
  int64_t Rows() const { return cg * kh * kw; }
  int64_t Cols() const { return oh * ow; }
};
ConvDims ConvDimsOf(const Shape& x, const Shape& w, const Conv2dParams& p);
// The same with the output extents taken from y (N, K, OH, OW), the convolution's output or
// its gradient: a transposed convolution with output_padding >= stride (allowed while below
// the dilation) has fewer rows than ConvOutputExtent gives, and only y's exist.
ConvDims ConvDimsOf(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p);

void Conv2dReference(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                     Tensor& out);
void Conv2dBackwardInputReference(const Tensor& grad_out, const Tensor& w, const Conv2dParams& p,
                                  Tensor& grad_x);
void Conv2dBackwardWeightReference(const Tensor& grad_out, const Tensor& x, const Conv2dParams& p,
                                   Tensor& grad_w);

// Scratch of the fast kernels: a dense copy of the weights (or the weight gradient's partial
// sums) and, per thread that works on it, one batch of images unfolded and that batch's output
// or output gradient; with keep_layout, at least what the oneDNN path needs (conv_dnnl.h),
// which takes dense NHWC activations on `threads` threads.
int64_t Conv2dFastScratchFloats(const Shape& x, const Shape& w, const Conv2dParams& p, int threads);
// The fast kernels split their batches of small images over `pool` (the scratch sized for its
// threads); the results do not depend on the number of threads or on `target`, the SIMD
// target of their shifted taps (conv_simd.h).
void Conv2dFast(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                Tensor& out, std::span<float> scratch, ThreadPool& pool, SimdTarget target);
void Conv2dBackwardInputFast(const Tensor& grad_out, const Tensor& w, const Conv2dParams& p,
                             Tensor& grad_x, std::span<float> scratch, ThreadPool& pool,
                             SimdTarget target);
void Conv2dBackwardWeightFast(const Tensor& grad_out, const Tensor& x, const Conv2dParams& p,
                              Tensor& grad_w, std::span<float> scratch, ThreadPool& pool,
                              SimdTarget target);

}  // namespace onemodel::internal
