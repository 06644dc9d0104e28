#include "core/ops/linear.h"

#include <array>
#include <span>
#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"
#include "core/ops/reduce.h"
#include "core/shape/dim_vector.h"

namespace onemodel::ops {
namespace {

using Extents = DimVector<int64_t>;

// The first rank - drop extents of s.
Extents Leading(const Shape& s, int drop) {
  Extents out;
  for (int d = 0; d < s.rank() - drop; ++d) out.push_back(s[d]);
  return out;
}

// The operands as matrices of rank >= 2 (1-D promoted), expanded to the broadcast batch, and
// the result's shape before and after removing promoted dimensions.
struct Plan {
  Tensor a, b;           // promoted, batch-expanded views
  Shape out_full;        // batch + [M, N]
  Extents out_squeezed;  // numpy's result shape
};

Plan MakePlan(const Tensor& a0, const Tensor& b0) {
  if (a0.rank() == 0 || b0.rank() == 0) {
    throw TensorShapeException("MatMul: operands must have at least one dimension, got " +
                               a0.Describe() + " and " + b0.Describe());
  }
  const Tensor a = a0.rank() == 1 ? a0.Unsqueeze(0) : a0.Detach();
  const Tensor b = b0.rank() == 1 ? b0.Unsqueeze(1) : b0.Detach();
  const int64_t m = a.shape()[a.rank() - 2], k = a.shape()[a.rank() - 1];
  const int64_t kb = b.shape()[b.rank() - 2], n = b.shape()[b.rank() - 1];
  if (k != kb) {
    throw TensorShapeException("MatMul: inner dimensions differ: a " + a0.shape().ToString() +
                               " has " + std::to_string(k) + " columns, b " +
                               b0.shape().ToString() + " has " + std::to_string(kb) + " rows");
  }
  const Shape batch =
      Shape::Broadcast(Shape(Leading(a.shape(), 2).span()), Shape(Leading(b.shape(), 2).span()));
  Extents ea = Leading(batch, 0), eb = ea, full = ea;
  ea.push_back(m);
  ea.push_back(k);
  eb.push_back(k);
  eb.push_back(n);
  full.push_back(m);
  full.push_back(n);
  Plan p{a.Expand(Shape(ea.span())), b.Expand(Shape(eb.span())), Shape(full.span()), Leading(batch, 0)};
  if (a0.rank() > 1) p.out_squeezed.push_back(m);
  if (b0.rank() > 1) p.out_squeezed.push_back(n);
  return p;
}

// d/da = g x b^T, d/db = a^T x g, summed over broadcast batch dimensions.
void MatMulBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  const Tensor& a0 = r.Saved(0);
  const Tensor& b0 = r.Saved(1);
  const Plan p = MakePlan(a0, b0);
  const Tensor gf = g.Reshape(Leading(p.out_full, 0).span(), ctx.allocator);
  const bool g_copied = gf.buffer() != g.buffer();
  const int rank = p.out_full.rank();
  auto product = [&](const Tensor& x, const Tensor& y, const Shape& shape, const Shape& target) {
    Tensor full = internal::NewFloat(shape, ctx);
    ctx.kernels.MatMul(x, y, full);
    if (full.shape() == target) return full;
    Tensor reduced = SumToShape(full, target, ctx);
    full.Dispose();
    return reduced;
  };
  if (r.inputs()[0].node) {
    grads[0] = product(gf, p.b.Transpose(rank - 2, rank - 1), p.a.shape(),
                       a0.rank() == 1 ? Shape{1, a0.shape()[0]} : a0.shape());
    if (a0.rank() == 1) grads[0] = *grads[0].TryReshape(Leading(a0.shape(), 0).span());
  }
  if (r.inputs()[1].node) {
    grads[1] = product(p.a.Transpose(rank - 2, rank - 1), gf, p.b.shape(),
                       b0.rank() == 1 ? Shape{b0.shape()[0], 1} : b0.shape());
    if (b0.rank() == 1) grads[1] = *grads[1].TryReshape(Leading(b0.shape(), 0).span());
  }
  if (g_copied) Tensor(gf).Dispose();
}

}  // namespace

Tensor MatMul(const Tensor& a, const Tensor& b, const OpContext& ctx) {
  internal::CheckFloat("MatMul", "a", a);
  internal::CheckFloat("MatMul", "b", b);
  const Plan p = MakePlan(a, b);
  Tensor out = internal::NewFloat(p.out_full, ctx);
  ctx.kernels.MatMul(p.a, p.b, out);
  out = *out.TryReshape(p.out_squeezed.span());
  if (!ShouldRecord({&a, &b})) return out;
  auto record = internal::NewRecord(OpKind::kMatMul, &MatMulBackward, {&a, &b});
  record->Save(0, a);
  record->Save(1, b);
  return out.WithAutogradNode(std::move(record));
}

}  // namespace onemodel::ops
