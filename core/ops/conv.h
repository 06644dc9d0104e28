// Conv2d over a logical (N, C, H, W) FLOAT tensor in any physical layout.
//
//   Tensor y = ops::Conv2d(x, w, &b, {.stride_h = 2, .stride_w = 2, .pad_top = 1,
//                                     .pad_left = 1, .pad_bottom = 1, .pad_right = 1}, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// y (N, K, OH, OW), contiguous NCHW: the cross-correlation of x (N, C, H, W, any strides)
// with w (K, C / groups, KH, KW), plus bias (K) when given, with OH =
// floor((H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) / stride_h) + 1 (OW alike).
// Validates ranks, shapes, strides and dilations >= 1, pads >= 0, groups >= 1 dividing C and
// K, and a non-empty output. Records (spec 8) the input and the weights as saved slots and
// kernel, stride, pads, dilations and groups as Ints; gradients for x, w and bias.
Tensor Conv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& params,
              const OpContext& ctx);

}  // namespace onemodel::ops
