// Elementwise operations with numpy broadcasting (binary) and their gradients.
//
//   Tensor y = ops::Add(x, bias, ctx);      // bias [N] broadcasts over x [B, N]
//   Tensor z = ops::Gelu(y, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// op(a, b) over Shape::Broadcast(a, b); FLOAT inputs. Records for backward.
Tensor Binary(BinaryOp op, const Tensor& a, const Tensor& b, const OpContext& ctx);
// op(x); FLOAT input. Records for backward.
Tensor Unary(UnaryOp op, const Tensor& x, const OpContext& ctx);

inline Tensor Add(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Binary(BinaryOp::kAdd, a, b, c);
}
inline Tensor Sub(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Binary(BinaryOp::kSub, a, b, c);
}
inline Tensor Mul(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Binary(BinaryOp::kMul, a, b, c);
}
inline Tensor Div(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Binary(BinaryOp::kDiv, a, b, c);
}
inline Tensor Max(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Binary(BinaryOp::kMax, a, b, c);
}
inline Tensor Min(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Binary(BinaryOp::kMin, a, b, c);
}
inline Tensor Pow(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Binary(BinaryOp::kPow, a, b, c);
}
inline Tensor Neg(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kNeg, x, c); }
inline Tensor Abs(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kAbs, x, c); }
inline Tensor Exp(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kExp, x, c); }
inline Tensor Log(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kLog, x, c); }
inline Tensor Sqrt(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kSqrt, x, c); }
inline Tensor Relu(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kRelu, x, c); }
inline Tensor Sigmoid(const Tensor& x, const OpContext& c) {
  return Unary(UnaryOp::kSigmoid, x, c);
}
inline Tensor Tanh(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kTanh, x, c); }
inline Tensor Gelu(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kGelu, x, c); }
inline Tensor Erf(const Tensor& x, const OpContext& c) { return Unary(UnaryOp::kErf, x, c); }

}  // namespace onemodel::ops
