// Views as differentiable operations: the result shares the input's buffer (as the Tensor
// member views do) and, when recording, backward puts the gradient back through the view.
//
//   Tensor flat = ops::Reshape(x, {-1}, ctx);   // a copy only when no strides express it
#pragma once

#include <initializer_list>
#include <span>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

Tensor Reshape(const Tensor& x, std::span<const int64_t> shape, const OpContext& ctx);
Tensor Permute(const Tensor& x, std::span<const int> perm, const OpContext& ctx);
Tensor Transpose(const Tensor& x, int d0, int d1, const OpContext& ctx);
Tensor Slice(const Tensor& x, int dim, int64_t start, int64_t stop, int64_t step,
             const OpContext& ctx);
Tensor Expand(const Tensor& x, const Shape& shape, const OpContext& ctx);
// Removes every extent-1 dimension (dims empty) or the given ones.
Tensor Squeeze(const Tensor& x, std::span<const int> dims, const OpContext& ctx);
Tensor Unsqueeze(const Tensor& x, int dim, const OpContext& ctx);

}  // namespace onemodel::ops
