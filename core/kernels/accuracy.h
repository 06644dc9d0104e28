// How far a fast kernel may be from the reference (docs/kernels.md states and measures it).
//
// Add, Sub, Mul, Div, Max, Min, Neg, Abs, Sqrt, Relu and MaxPool2d must be bit-identical.
// The transcendental ops must stay within kMaxUlp units in the last place of the reference
// result; where the reference result is tiny next to the input (GELU's and Sigmoid's far
// negative tails, where both sides lose all relative precision to cancellation), within an
// absolute error of kAbsFloor * max(1, |x|). MatMul: MatMulErrorBound below.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/kernels/kernels.h"

namespace onemodel {

// Distance in representable floats between a and b (0 when both are NaN, max when one is).
inline int64_t UlpDistance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<int64_t>::max();
  }
  auto ordered = [](float f) {
    const int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};  // monotone in f; -0 == +0
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

struct UnaryAccuracy {
  int64_t max_ulp;  // 0: bit-identical
  float abs_floor;  // absolute error allowed on top, scaled by max(1, |x|)
};

// The bound each fast unary op is held to: the maxima measured over all 2^32 inputs by
// bench/ulp_sweep (docs/kernels.md), so any regression fails the tests.
constexpr UnaryAccuracy AccuracyOf(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp:
      return {1, 0.0f};
    case UnaryOp::kLog:
      return {1, 0.0f};
    case UnaryOp::kTanh:
      return {4, 0.0f};
    case UnaryOp::kSigmoid:
      return {4, 0.0f};
    case UnaryOp::kGelu:
      return {16, 1e-7f};
    case UnaryOp::kErf:
      return {1, 0.0f};
    default:
      return {0, 0.0f};
  }
}

// True when `fast` is within op's bound of `ref` for input x.
inline bool WithinAccuracy(UnaryOp op, float x, float fast, float ref) {
  const UnaryAccuracy acc = AccuracyOf(op);
  if (acc.max_ulp == 0) return std::bit_cast<uint32_t>(fast) == std::bit_cast<uint32_t>(ref);
  if (UlpDistance(fast, ref) <= acc.max_ulp) return true;
  return std::isfinite(fast) && std::isfinite(ref) &&
         std::fabs(fast - ref) <= acc.abs_floor * std::fmax(1.0f, std::fabs(x));
}

// The most |fast - reference| may be for one element of MatMul with inner dimension k, where
// magnitude = sum_k |a_ik| |b_kj| (in double): k * 2^-22 * magnitude (rounding of the float
// products and sums, any summation order, and of the reference's one rounding to float) plus
// (k + 1/2) * 2^-149 (products, or fused multiply-adds, that underflow to subnormals lose up
// to 2^-150 each; the reference's rounding to float up to 2^-150). docs/kernels.md derives it.
// nullopt where no bound holds: when a float partial sum may overflow, i.e.
// (1 + k * 2^-22) * magnitude > FLT_MAX (the fast kernel may then give inf or NaN where the
// reference is finite), or k > 2^23.
inline std::optional<double> MatMulErrorBound(int64_t k, double magnitude) {
  const double relative = static_cast<double>(k) * std::ldexp(1.0, -22);
  if (k > (int64_t{1} << 23) ||
      (1 + relative) * magnitude > double{std::numeric_limits<float>::max()}) {
    return std::nullopt;
  }
  return relative * magnitude + (static_cast<double>(k) + 0.5) * std::ldexp(1.0, -149);
}

}  // namespace onemodel
