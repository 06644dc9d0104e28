// Conv2d's oneDNN path (inside the fast kernels): oneDNN 2.6's direct convolution with NHWC
// activations and weights in the blocked format oneDNN picks, for forward, input gradient and
// weight gradient. The weights are reordered into that format, and oneDNN's scratchpad placed,
// in the caller's scratch (a session's arena); the primitives live in the current
// ConvPrimitiveCache (conv_cache.h). Threads: as many OpenMP threads as the kernels' pool has
// (docs/kernels.md).
#pragma once

#include <cstdint>
#include <span>

#include "core/kernels/internal/conv.h"

namespace onemodel::internal {

// Whether the oneDNN path takes a convolution of x (N, C, H, W) into y (N, K, OH, OW) (for
// the gradients: grad_x and grad_out): both dense NHWC, y's extents those ConvOutputExtent
// gives, w's strides non-negative and not overlapping, and the bias (when given) unit-stride.
bool DnnlConvApplies(const Tensor& x, const Tensor& w, const Tensor& y, const Tensor* bias,
                     const Conv2dParams& p);

// Floats of scratch the three kernels below need for these shapes (their maximum).
int64_t DnnlConvScratchFloats(const Shape& x, const Shape& w, const Conv2dParams& p, int threads);

// Conv2dFast, Conv2dBackwardInputFast and Conv2dBackwardWeightFast where DnnlConvApplies.
void DnnlConv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                Tensor& out, std::span<float> scratch, int threads);
void DnnlConv2dBackwardInput(const Tensor& grad_out, const Tensor& w, const Conv2dParams& p,
                             Tensor& grad_x, std::span<float> scratch, int threads);
void DnnlConv2dBackwardWeight(const Tensor& grad_out, const Tensor& x, const Conv2dParams& p,
                              Tensor& grad_w, std::span<float> scratch, int threads);

}  // namespace onemodel::internal
