// The meaning of every elementwise op, one float at a time. ReferenceKernels is built from
// these; fast kernels must match them bit for bit (Add..Relu) or within the ULP bounds of
// docs/kernels.md (Exp, Log, Tanh, Sigmoid, Gelu, Erf, Pow).
#pragma once

#include <cmath>

#include "core/kernels/kernels.h"

namespace onemodel::scalar {

// sqrt(2 / pi) and the cubic coefficient of GELU's tanh form.
inline constexpr float kGeluScale = 0.7978845608028654f;
inline constexpr float kGeluCubic = 0.044715f;
// 2 / sqrt(pi), erf's slope at 0, and 1 / sqrt(2), GELU's erf-form argument scale.
inline constexpr float kTwoOverSqrtPi = 1.1283791670955126f;
inline constexpr float kSqrtHalf = 0.7071067811865476f;

// Max and Min propagate NaN: the first NaN operand is the result.
inline float Max(float a, float b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a > b ? a : b;
}
inline float Min(float a, float b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a < b ? a : b;
}
// Relu(NaN) is NaN; Relu(-0) is +0.
inline float Relu(float x) { return x > 0.0f ? x : (std::isnan(x) ? x : 0.0f); }
inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
// The inner term of GELU's tanh form, whose tanh the backward pass saves (spec 8).
inline float GeluInner(float x) { return kGeluScale * (x + kGeluCubic * x * x * x); }
inline float Gelu(float x) { return 0.5f * x * (1.0f + std::tanh(GeluInner(x))); }

inline float Binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kMax:
      return Max(a, b);
    case BinaryOp::kMin:
      return Min(a, b);
    case BinaryOp::kPow:
      return std::pow(a, b);
  }
  return a;
}

inline float Unary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kAbs:
      return std::fabs(x);
    case UnaryOp::kExp:
      return std::exp(x);
    case UnaryOp::kLog:
      return std::log(x);
    case UnaryOp::kSqrt:
      return std::sqrt(x);
    case UnaryOp::kRelu:
      return Relu(x);
    case UnaryOp::kSigmoid:
      return Sigmoid(x);
    case UnaryOp::kTanh:
      return std::tanh(x);
    case UnaryOp::kGelu:
      return Gelu(x);
    case UnaryOp::kErf:
      return std::erf(x);
  }
  return x;
}

}  // namespace onemodel::scalar
