#include "core/ops/compare.h"

#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/map.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops {
namespace {

using internal::CheckFloat;
using internal::MapInto;

bool Compared(CompareOp op, float a, float b) {
  switch (op) {
    case CompareOp::kEqual:
      return a == b;
    case CompareOp::kLess:
      return a < b;
    case CompareOp::kLessEqual:
      return a <= b;
    case CompareOp::kGreater:
      return a > b;
    case CompareOp::kGreaterEqual:
      return a >= b;
  }
  return false;
}

// Throws TensorTypeException unless `condition` is a live plain BOOL tensor.
void CheckCondition(const Tensor& condition) {
  if (condition.is_null()) throw TensorException("Where: input condition is a null handle");
  if (condition.dtype() != DType::kBool) {
    throw TensorTypeException("Where: input condition is " + condition.Describe() +
                              "; it must be BOOL: make it with a comparison (Less, Equal, ...) "
                              "or Cast it to BOOL (nonzero is true)");
  }
  if (condition.block_size()) {
    throw TensorLayoutException("Where: input condition is blocked (" + condition.Describe() +
                                "); convert it with ToLayout(NCHW) first");
  }
}

// The gradient of Where's input `i` (1: a, 2: b): g where the condition is `when`, else 0.
Tensor Routed(const BackwardRecord& r, const Tensor& g, bool when, const OpContext& ctx) {
  Tensor out = internal::NewFloat(g.shape(), ctx);
  MapInto<float, float, bool>(
      out, [when](float x, bool c) { return c == when ? x : 0.0f; }, g,
      r.Saved(0).Expand(g.shape()));
  return out;
}

void WhereBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                   std::span<Tensor> grads) {
  if (internal::Wants(r, 1)) internal::Give(r, 1, Routed(r, g, true, ctx), ctx, grads);
  if (internal::Wants(r, 2)) internal::Give(r, 2, Routed(r, g, false, ctx), ctx, grads);
}

}  // namespace

std::string_view CompareOpName(CompareOp op) {
  switch (op) {
#define ONEMODEL_COMPARE_NAME(Name) \
  case CompareOp::k##Name:          \
    return #Name;
    ONEMODEL_FOR_EACH_COMPARE_OP(ONEMODEL_COMPARE_NAME)
#undef ONEMODEL_COMPARE_NAME
  }
  return "?";
}

Tensor Compare(CompareOp op, const Tensor& a, const Tensor& b, const OpContext& ctx) {
  const std::string name(CompareOpName(op));
  CheckFloat(name, "a", a);
  CheckFloat(name, "b", b);
  const Shape shape = Shape::Broadcast(a.shape(), b.shape());
  Tensor out = Tensor::Empty(shape, DType::kBool, ctx.allocator);
  MapInto<bool, float, float>(
      out, [op](float x, float y) { return Compared(op, x, y); }, a.Expand(shape),
      b.Expand(shape));
  return out;
}

Tensor Where(const Tensor& condition, const Tensor& a, const Tensor& b, const OpContext& ctx) {
  CheckCondition(condition);
  CheckFloat("Where", "a", a);
  CheckFloat("Where", "b", b);
  const Shape shape = Shape::Broadcast(condition.shape(), Shape::Broadcast(a.shape(), b.shape()));
  Tensor out = internal::NewFloat(shape, ctx);
  MapInto<float, bool, float, float>(
      out, [](bool c, float x, float y) { return c ? x : y; }, condition.Expand(shape),
      a.Expand(shape), b.Expand(shape));
  if (!ShouldRecord({&a, &b})) return out;
  auto record = internal::NewRecord(OpKind::kWhere, &WhereBackward, {&condition, &a, &b});
  record->Save(0, condition);
  return out.WithAutogradNode(std::move(record));
}

}  // namespace onemodel::ops
