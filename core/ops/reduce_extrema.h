// The extrema of a FLOAT tensor: ReduceMax and ReduceMin over axes, and ArgMax and ArgMin
// along one axis (INT64 indices). A NaN wins over every number (spec 9's rule for MaxPool2d,
// as PyTorch's max and min): the result is the first NaN of the slice. Among equal values the
// first in row-major order over the reduced axes wins, and the gradient of ReduceMax/ReduceMin
// goes to that element only (as torch.max(x, dim), not torch.amax, which splits it).
//
//   Tensor m = ops::ReduceMax(logits, {-1}, /*keepdims=*/true, ctx);   // (N, 1)
//   Tensor label = ops::ArgMax(logits, -1, /*keepdims=*/false, false, ctx);  // (N) INT64
#pragma once

#include <span>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// The largest element over `axes` (negative counts from the end; empty means every axis);
// keepdims keeps reduced axes with extent 1. An empty reduction gives -inf (ONNX's rule;
// PyTorch refuses it). Records for backward: the gradient goes to the winning element.
Tensor ReduceMax(const Tensor& x, std::span<const int> axes, bool keepdims, const OpContext& ctx);
// As ReduceMax for the smallest element; an empty reduction gives +inf.
Tensor ReduceMin(const Tensor& x, std::span<const int> axes, bool keepdims, const OpContext& ctx);

// The index along `axis` of the largest element of each slice, as a new INT64 tensor; NaN
// counts as the largest. Ties go to the first index, or the last when select_last_index (ONNX's
// attribute). Throws TensorShapeException when the axis is empty. Never records.
Tensor ArgMax(const Tensor& x, int axis, bool keepdims, bool select_last_index,
              const OpContext& ctx);
// As ArgMax for the smallest element; NaN still wins (counts as the smallest), as in PyTorch.
Tensor ArgMin(const Tensor& x, int axis, bool keepdims, bool select_last_index,
              const OpContext& ctx);

}  // namespace onemodel::ops
