// CumSum: running sums along one axis, as ONNX's CumSum (exclusive, reverse) and torch.cumsum.
// Each line is summed in order, in double, by one loop (no kernel variants), so the result is
// the same whatever the kernel choice.
//
//   Tensor c = ops::CumSum(x, 1, /*exclusive=*/false, /*reverse=*/false, ctx);  // x[:, :j+1].sum
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// y[..., j, ...] = the sum of x along `axis` up to and including j (exclusive: up to j - 1, so
// the first is 0; reverse: from the end down to j). Records for backward: the gradient is the
// CumSum of the output gradient in the other direction, with the same exclusive.
Tensor CumSum(const Tensor& x, int axis, bool exclusive, bool reverse, const OpContext& ctx);

}  // namespace onemodel::ops
