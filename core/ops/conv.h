// Conv2d over a logical (N, C, H, W) FLOAT tensor in any physical layout.
//
//   Tensor y = ops::Conv2d(x, w, &b, {.stride_h = 2, .stride_w = 2, .pad_top = 1,
//                                     .pad_left = 1, .pad_bottom = 1, .pad_right = 1}, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel {

// ConvTranspose2d's attributes: the convolution it transposes, plus extra output rows and
// columns at the bottom and right (each below the stride or the dilation, as PyTorch).
struct ConvTranspose2dParams {
  Conv2dParams conv;
  int32_t output_padding_h = 0;
  int32_t output_padding_w = 0;
};

}  // namespace onemodel

namespace onemodel::ops {

// y (N, K, OH, OW), contiguous NCHW (dense NHWC when params.keep_layout is 1 and x is NHWC):
// the cross-correlation of x (N, C, H, W, any strides) with w (K, C / groups, KH, KW; plain,
// or pre-blocked in the BlockedWeights family with the same bits out), plus bias (K) when
// given, with OH =
// floor((H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) / stride_h) + 1 (OW alike).
// Validates ranks, shapes, strides and dilations >= 1, pads >= 0, groups >= 1 dividing C and
// K, and a non-empty output. Records (spec 8) the input and the weights as saved slots and
// kernel, stride, pads, dilations and groups as Ints; gradients for x, w and bias (x's in
// NHWC when x and the output gradient are NHWC).
Tensor Conv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& params,
              const OpContext& ctx);

// y (N, K, OH, OW), contiguous NCHW (or NHWC as Conv2d's keep_layout): the transposed
// convolution (the gradient of Conv2d with respect to its input) of x (N, C, H, W, any
// strides) with w (C, K / groups, KH, KW; plain, or BlockedWeights blocked along C with the
// same bits out), plus bias (K) when given, with OH = (H - 1) * stride_h - pad_top -
// pad_bottom + dilation_h * (KH - 1) + output_padding_h + 1 (OW alike). Validates as Conv2d
// does, plus 0 <= output_padding < stride or < dilation and a positive output. Records
// (spec 8) the input and the weights as saved slots and Conv2d's Ints then the output
// paddings; gradients for x, w and bias, by the Conv2d kernels.
Tensor ConvTranspose2d(const Tensor& x, const Tensor& w, const Tensor* bias,
                       const ConvTranspose2dParams& params, const OpContext& ctx);

}  // namespace onemodel::ops
