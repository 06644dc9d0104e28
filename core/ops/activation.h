// Parameterized activations: Clip, LeakyRelu and GELU in either form (the tanh form is
// UnaryOp::kGelu's kernel row; the erf form is exact GELU, PyTorch's approximate="none").
//
//   Tensor y = ops::Clip(x, -1.0f, 1.0f, ctx);
//   Tensor z = ops::LeakyRelu(x, 0.2f, ctx);
//   Tensor g = ops::Gelu(x, GeluApproximation::kNone, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// min(max(x, min), max) elementwise (so max wins when min > max; NaN in x, min or max gives
// NaN), as torch.clamp and ONNX Clip; FLOAT input. Records for backward (saves x, keeps min
// and max in Floats): the gradient passes where min <= x <= max and is 0 elsewhere.
Tensor Clip(const Tensor& x, float min, float max, const OpContext& ctx);

// x where x > 0, else alpha * x (NaN stays NaN); FLOAT input. Records for backward (saves x,
// keeps alpha in Floats): the gradient is g where x > 0, else alpha * g.
Tensor LeakyRelu(const Tensor& x, float alpha, const OpContext& ctx);

enum class GeluApproximation { kTanh, kNone };

// GELU: kTanh is 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (ops::Gelu, spec 8: saves
// the input and the tanh of the inner term); kNone is x * 0.5 * (1 + erf(x / sqrt 2))
// (saves the input). Both record under OpKind::kGelu; FLOAT input.
Tensor Gelu(const Tensor& x, GeluApproximation approximate, const OpContext& ctx);

}  // namespace onemodel::ops
