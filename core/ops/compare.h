// Comparisons of FLOAT tensors with numpy broadcasting, producing BOOL (IEEE: any comparison
// with NaN is false, so Equal(NaN, NaN) is false), and Where, which picks between two FLOAT
// tensors by a BOOL condition. Comparisons never record (a BOOL result has no gradient);
// Where is differentiable in a and b.
//
//   Tensor mask = ops::Less(scores, threshold, ctx);         // BOOL
//   Tensor y = ops::Where(mask, scores, minus_inf, ctx);      // scores where below threshold
#pragma once

#include <string_view>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// The comparisons, one row each: X(Name) gives CompareOp::kName and the name "Name".
#define ONEMODEL_FOR_EACH_COMPARE_OP(X) X(Equal) X(Less) X(LessEqual) X(Greater) X(GreaterEqual)

#define ONEMODEL_OP_ENUMERATOR(Name) k##Name,
enum class CompareOp { ONEMODEL_FOR_EACH_COMPARE_OP(ONEMODEL_OP_ENUMERATOR) };
#undef ONEMODEL_OP_ENUMERATOR

// "Equal", "Less", ...: the op's name, as Run requests and error messages spell it.
std::string_view CompareOpName(CompareOp op);

// a op b over Shape::Broadcast(a, b) as a new BOOL tensor; FLOAT inputs. Never records.
Tensor Compare(CompareOp op, const Tensor& a, const Tensor& b, const OpContext& ctx);

inline Tensor Equal(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Compare(CompareOp::kEqual, a, b, c);
}
inline Tensor Less(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Compare(CompareOp::kLess, a, b, c);
}
inline Tensor LessEqual(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Compare(CompareOp::kLessEqual, a, b, c);
}
inline Tensor Greater(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Compare(CompareOp::kGreater, a, b, c);
}
inline Tensor GreaterEqual(const Tensor& a, const Tensor& b, const OpContext& c) {
  return Compare(CompareOp::kGreaterEqual, a, b, c);
}

// condition ? a : b elementwise over the broadcast of all three shapes; condition BOOL (any
// nonzero byte is true), a and b FLOAT. Records for backward: a's gradient is the output
// gradient where the condition holds and 0 elsewhere, b's the reverse (saves the condition).
Tensor Where(const Tensor& condition, const Tensor& a, const Tensor& b, const OpContext& ctx);

}  // namespace onemodel::ops
