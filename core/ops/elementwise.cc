#include "core/ops/elementwise.h"

#include <cmath>
#include <string>

#include "core/autograd/backward_record.h"
#include "core/kernels/scalar_ops.h"
#include "core/ops/internal/map.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops {
namespace {

using internal::CheckFloat;
using internal::Give;
using internal::Map;
using internal::NewFloat;

using internal::Wants;

void BinaryBackward(BinaryOp op, const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  const Shape& shape = g.shape();
  switch (op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
      if (Wants(r, 0))
        Give(r, 0,
             Map(
                 shape, ctx, [](float x) { return x; }, g),
             ctx, grads);
      if (Wants(r, 1)) {
        const float sign = op == BinaryOp::kAdd ? 1.0f : -1.0f;
        Give(r, 1,
             Map(
                 shape, ctx, [sign](float x) { return sign * x; }, g),
             ctx, grads);
      }
      return;
    case BinaryOp::kMul: {
      const Tensor& a = r.Saved(0);
      const Tensor& b = r.Saved(1);
      if (Wants(r, 0))
        Give(r, 0,
             Map(
                 shape, ctx, [](float x, float y) { return x * y; }, g, b),
             ctx, grads);
      if (Wants(r, 1))
        Give(r, 1,
             Map(
                 shape, ctx, [](float x, float y) { return x * y; }, g, a),
             ctx, grads);
      return;
    }
    case BinaryOp::kDiv: {
      const Tensor& a = r.Saved(0);
      const Tensor& b = r.Saved(1);
      if (Wants(r, 0))
        Give(r, 0,
             Map(
                 shape, ctx, [](float x, float y) { return x / y; }, g, b),
             ctx, grads);
      if (Wants(r, 1)) {
        Give(r, 1,
             Map(
                 shape, ctx, [](float x, float p, float q) { return -x * p / (q * q); }, g, a, b),
             ctx, grads);
      }
      return;
    }
    case BinaryOp::kMax:
    case BinaryOp::kMin: {
      // PyTorch's rule: the larger (smaller) input takes the gradient; a tie splits it.
      const Tensor& a = r.Saved(0);
      const Tensor& b = r.Saved(1);
      const bool max = op == BinaryOp::kMax;
      auto share = [max](float x, float p, float q) {
        if (p == q) return 0.5f * x;
        return (max ? p > q : p < q) ? x : 0.0f;
      };
      if (Wants(r, 0)) Give(r, 0, Map(shape, ctx, share, g, a, b), ctx, grads);
      if (Wants(r, 1)) Give(r, 1, Map(shape, ctx, share, g, b, a), ctx, grads);
      return;
    }
    case BinaryOp::kPow: {
      const Tensor& a = r.Saved(0);
      const Tensor& b = r.Saved(1);
      const Tensor& out = r.Saved(2);
      if (Wants(r, 0)) {
        Give(r, 0,
             Map(
                 shape, ctx,
                 [](float x, float p, float q) {
                   return q == 0.0f ? 0.0f : x * q * std::pow(p, q - 1.0f);
                 },
                 g, a, b),
             ctx, grads);
      }
      if (Wants(r, 1)) {
        Give(r, 1,
             Map(
                 shape, ctx,
                 [](float x, float p, float q, float y) {
                   return p == 0.0f && q >= 0.0f ? 0.0f : x * y * std::log(p);
                 },
                 g, a, b, out),
             ctx, grads);
      }
      return;
    }
  }
}

void UnaryBackward(UnaryOp op, const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                   std::span<Tensor> grads) {
  const Shape& s = g.shape();
  switch (op) {
    case UnaryOp::kNeg:
      grads[0] = Map(
          s, ctx, [](float x) { return -x; }, g);
      return;
    case UnaryOp::kAbs:
      grads[0] = Map(
          s, ctx, [](float x, float a) { return a > 0 ? x : (a < 0 ? -x : 0.0f); }, g, r.Saved(0));
      return;
    case UnaryOp::kExp:
      grads[0] = Map(
          s, ctx, [](float x, float y) { return x * y; }, g, r.Saved(1));
      return;
    case UnaryOp::kLog:
      grads[0] = Map(
          s, ctx, [](float x, float a) { return x / a; }, g, r.Saved(0));
      return;
    case UnaryOp::kSqrt:
      grads[0] = Map(
          s, ctx, [](float x, float y) { return x / (2.0f * y); }, g, r.Saved(1));
      return;
    case UnaryOp::kRelu:
      grads[0] = Map(
          s, ctx, [](float x, float y) { return y > 0 ? x : 0.0f; }, g, r.Saved(1));
      return;
    case UnaryOp::kSigmoid:
      grads[0] = Map(
          s, ctx, [](float x, float y) { return x * y * (1.0f - y); }, g, r.Saved(1));
      return;
    case UnaryOp::kTanh:
      grads[0] = Map(
          s, ctx, [](float x, float y) { return x * (1.0f - y * y); }, g, r.Saved(1));
      return;
    case UnaryOp::kGelu:
      // Spec 8: GELU saves the input and the tanh of its inner term (an owned intermediate).
      grads[0] = Map(
          s, ctx,
          [](float x, float a, float t) {
            const float inner_grad =
                scalar::kGeluScale * (1.0f + 3.0f * scalar::kGeluCubic * a * a);
            return x * (0.5f * (1.0f + t) + 0.5f * a * (1.0f - t * t) * inner_grad);
          },
          g, r.Saved(0), r.Owned(0));
      return;
    case UnaryOp::kErf:
      grads[0] = Map(
          s, ctx, [](float x, float a) { return scalar::kTwoOverSqrtPi * std::exp(-a * a) * x; },
          g, r.Saved(0));
      return;
  }
}

// The BackwardFn of op kOp.
template <BinaryOp kOp>
void BinaryBackwardOf(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                      std::span<Tensor> grads) {
  BinaryBackward(kOp, r, g, ctx, grads);
}
template <UnaryOp kOp>
void UnaryBackwardOf(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  UnaryBackward(kOp, r, g, ctx, grads);
}

// What an op's record holds: the OpKind of the op's name and the backward of the op.
struct RecordSpec {
  OpKind kind;
  BackwardFn backward;
};
#define ONEMODEL_BINARY_RECORD(Name) {OpKind::k##Name, &BinaryBackwardOf<BinaryOp::k##Name>},
#define ONEMODEL_UNARY_RECORD(Name) {OpKind::k##Name, &UnaryBackwardOf<UnaryOp::k##Name>},
// Indexed by the op: both follow the op list of core/kernels/kernels.h.
constexpr RecordSpec kBinaryRecords[] = {ONEMODEL_FOR_EACH_BINARY_OP(ONEMODEL_BINARY_RECORD)};
constexpr RecordSpec kUnaryRecords[] = {ONEMODEL_FOR_EACH_UNARY_OP(ONEMODEL_UNARY_RECORD)};
#undef ONEMODEL_BINARY_RECORD
#undef ONEMODEL_UNARY_RECORD

const RecordSpec& RecordOf(BinaryOp op) { return kBinaryRecords[static_cast<size_t>(op)]; }
const RecordSpec& RecordOf(UnaryOp op) { return kUnaryRecords[static_cast<size_t>(op)]; }

}  // namespace

Tensor Binary(BinaryOp op, const Tensor& a, const Tensor& b, const OpContext& ctx) {
  const std::string name(BinaryOpName(op));
  CheckFloat(name, "a", a);
  CheckFloat(name, "b", b);
  const Shape shape = Shape::Broadcast(a.shape(), b.shape());
  Tensor out = NewFloat(shape, ctx);
  ctx.kernels.Binary(op, a.Expand(shape), b.Expand(shape), out);
  if (!ShouldRecord({&a, &b})) return out;
  const RecordSpec& spec = RecordOf(op);
  auto record = internal::NewRecord(spec.kind, spec.backward, {&a, &b});
  if (op != BinaryOp::kAdd && op != BinaryOp::kSub) {
    record->Save(0, a);
    record->Save(1, b);
  }
  if (op == BinaryOp::kPow) record->Save(2, out);
  return out.WithAutogradNode(std::move(record));
}

Tensor Unary(UnaryOp op, const Tensor& x, const OpContext& ctx) {
  CheckFloat(UnaryOpName(op), "x", x);
  Tensor out = NewFloat(x.shape(), ctx);
  ctx.kernels.Unary(op, x, out);
  if (!ShouldRecord({&x})) return out;
  const RecordSpec& spec = RecordOf(op);
  auto record = internal::NewRecord(spec.kind, spec.backward, {&x});
  switch (op) {
    case UnaryOp::kAbs:
    case UnaryOp::kLog:
    case UnaryOp::kErf:
      record->Save(0, x);  // backward needs the input
      break;
    case UnaryOp::kGelu:
      record->Save(0, x);
      record->Own(Map(
          x.shape(), ctx, [](float v) { return std::tanh(scalar::GeluInner(v)); }, x));
      break;
    case UnaryOp::kNeg:
      break;
    case UnaryOp::kExp:
    case UnaryOp::kSqrt:
    case UnaryOp::kRelu:
    case UnaryOp::kSigmoid:
    case UnaryOp::kTanh:
      record->Save(1, out);  // backward needs the output
      break;
  }
  return out.WithAutogradNode(std::move(record));
}

}  // namespace onemodel::ops
