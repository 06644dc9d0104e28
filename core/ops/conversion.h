// Operations that copy data into another type, layout or buffer: Cast, Contiguous, Copy and
// ToLayout.
//
//   Tensor h = ops::Cast(x, DType::kFloat16, ctx);
//   Tensor nhwc = ops::ToLayout(x, Layout::kNhwc, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// x converted to `dtype` by spec 10's rules (any supported types). Differentiable between
// floating types: the gradient is cast back.
Tensor Cast(const Tensor& x, DType dtype, const OpContext& ctx);
// x itself when contiguous, else a row-major copy; identity gradient.
Tensor Contiguous(const Tensor& x, const OpContext& ctx);
// Always a new row-major buffer from ctx.allocator holding x's values; identity gradient.
Tensor Copy(const Tensor& x, const OpContext& ctx);
// The same logical (N, C, H, W) tensor in `layout`; NCHW <-> NHWC is differentiable (identity
// on the logical tensor); a blocked result cannot require gradients.
Tensor ToLayout(const Tensor& x, Layout layout, const OpContext& ctx, int32_t block = 16);

}  // namespace onemodel::ops
