// 2-D pooling over a logical (N, C, H, W) FLOAT tensor in any physical layout (NCHW, NHWC or
// any strides): MaxPool2d, ReluMaxPool2d, AvgPool2d, GlobalAvgPool2d.
//
//   Tensor y = ops::MaxPool2d(x, {.kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2,
//                                 .pad_h = 1, .pad_w = 1}, ctx);
//   Tensor a = ops::AvgPool2d(x, {.kernel_h = 2, .kernel_w = 2, .stride_h = 2,
//                                 .stride_w = 2}, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// Window maxima (spec 9, with ONNX's dilations and ceil_mode). Validates kernel >= 1,
// stride >= 1, dilation >= 1, 0 <= pad < kernel and a non-empty output. Records int32 argmax
// indices (owned by the record) only when recording; otherwise no index is computed.
// params.relu is ignored: ReluMaxPool2d sets it.
Tensor MaxPool2d(const Tensor& x, const MaxPool2dParams& params, const OpContext& ctx);

// Relu then MaxPool2d in one pass, the same values (spec 8): records int32 indices with -1
// where the window has no positive element, which gets no gradient.
Tensor ReluMaxPool2d(const Tensor& x, const MaxPool2dParams& params, const OpContext& ctx);

// Window averages (ONNX AveragePool, AvgPool2dParams), bit-identical in every kernel variant.
// Validates as MaxPool2d. Records the input's shape and the parameters.
Tensor AvgPool2d(const Tensor& x, const AvgPool2dParams& params, const OpContext& ctx);

// The mean of each (n, c) plane, shape (N, C, 1, 1): AvgPool2d with an H x W window.
Tensor GlobalAvgPool2d(const Tensor& x, const OpContext& ctx);

}  // namespace onemodel::ops
