// MaxPool2d over a logical (N, C, H, W) FLOAT tensor in either physical layout.
//
//   Tensor y = ops::MaxPool2d(x, {.kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2,
//                                 .pad_h = 1, .pad_w = 1}, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// Window maxima (spec 9). Validates kernel >= 1, stride >= 1, 0 <= pad < kernel and a
// non-empty output. Records int32 argmax indices (owned by the record) only when recording;
// otherwise no index is computed.
Tensor MaxPool2d(const Tensor& x, const MaxPool2dParams& params, const OpContext& ctx);

}  // namespace onemodel::ops
