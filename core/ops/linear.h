// MatMul with numpy semantics: 1-D operands are promoted (a to [1, K], b to [K, 1]) and the
// added dimension removed from the result; batch dimensions broadcast.
//
//   Tensor h = ops::MatMul(x, w, ctx);   // [B, In] x [In, Out] -> [B, Out]
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

Tensor MatMul(const Tensor& a, const Tensor& b, const OpContext& ctx);

}  // namespace onemodel::ops
