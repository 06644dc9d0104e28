// Softmax and LogSoftmax over one axis of scale * x (spec 8: softmax saves its output and
// keeps the scale in Floats).
//
//   Tensor logp = ops::LogSoftmax(logits, -1, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

Tensor Softmax(const Tensor& x, int axis, const OpContext& ctx, float scale = 1.0f);
Tensor LogSoftmax(const Tensor& x, int axis, const OpContext& ctx, float scale = 1.0f);

}  // namespace onemodel::ops
