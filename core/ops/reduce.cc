#include "core/ops/reduce.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/common/cancellation.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"
#include "core/shape/dim_vector.h"
#include "core/shape/strided_walk.h"

namespace onemodel::ops {
namespace {

using internal::CheckFloat;
using internal::NewFloat;
using Walk = onemodel::internal::StridedWalk<1>;

// Which axes of a rank-r tensor are reduced (empty `axes`: all). Throws for duplicates.
std::array<bool, kMaxRank> ReducedAxes(std::string_view op, std::span<const int> axes, int rank) {
  std::array<bool, kMaxRank> reduced{};
  if (axes.empty()) {
    for (int d = 0; d < rank; ++d) reduced[static_cast<size_t>(d)] = true;
    return reduced;
  }
  for (int a : axes) {
    const int d = internal::NormalizeAxis(op, a, rank);
    if (reduced[static_cast<size_t>(d)]) {
      throw TensorShapeException(std::string(op) + ": axis " + std::to_string(a) +
                                 " is given twice");
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  return reduced;
}

// Sum of x over the reduced axes into a new tensor (keepdims shape), times `scale`. Stops
// early (the sums incomplete) once the thread's CancelToken is cancelled: it looks before each
// output element and every 2^20 elements summed.
Tensor SumKeepDims(const Tensor& x, const std::array<bool, kMaxRank>& reduced, double scale,
                   const OpContext& ctx) {
  const int rank = x.rank();
  DimVector<int64_t> out_extents;
  DimVector<int> order;  // kept axes first, then reduced ones
  for (int d = 0; d < rank; ++d) {
    out_extents.push_back(reduced[static_cast<size_t>(d)] ? 1 : x.shape()[d]);
    if (!reduced[static_cast<size_t>(d)]) order.push_back(d);
  }
  const int kept = static_cast<int>(order.size());
  for (int d = 0; d < rank; ++d) {
    if (reduced[static_cast<size_t>(d)]) order.push_back(d);
  }
  Tensor out = NewFloat(Shape(out_extents.span()), ctx);
  const Tensor v = x.Permute(order.span());
  const float* in = x.Storage<float>().data() + v.offset();
  float* o = out.MutableData<float>().data();
  // Outer walk: the kept axes (one output element each); inner walk: the reduced ones.
  const size_t k = static_cast<size_t>(kept);
  const std::span<const int32_t> extents = v.shape().extents(), strides = v.strides().values();
  const auto outer = Walk::Of(extents.first(k), {strides.first(k)});
  const auto inner = Walk::Of(extents.subspan(k), {strides.subspan(k)});
  const int64_t outer_step = outer.RowStride(0), inner_step = inner.RowStride(0);
  int64_t inner_count = 1;
  for (int32_t e : extents.subspan(k)) inner_count *= e;
  const CancelToken* cancel = CurrentCancelToken();
  constexpr int64_t kCheckEvery = int64_t{1} << 20;
  bool stopped = false;
  float* next = o;  // the output element being summed
  outer.ForEachRow(0, out.ElementCount(), [&](int64_t n, const Walk::Offsets& at) {
    for (int64_t j = 0; j < n && !stopped; ++j) {
      const float* first = in + at[0] + j * outer_step;
      double acc = 0;
      for (int64_t k0 = 0; k0 == 0 || k0 < inner_count; k0 += kCheckEvery) {
        if (Cancelled(cancel)) {
          stopped = true;
          return;
        }
        inner.ForEachRow(k0, std::min(inner_count, k0 + kCheckEvery),
                         [&](int64_t m, const Walk::Offsets& from) {
                           const float* p = first + from[0];
                           for (int64_t q = 0; q < m; ++q) acc += p[q * inner_step];
                         });
      }
      *next++ = static_cast<float>(acc * scale);
    }
  });
  return out;
}

// Drops the reduced axes of a keepdims result (a view).
Tensor DropAxes(const Tensor& t, const std::array<bool, kMaxRank>& reduced) {
  DimVector<int64_t> extents;
  for (int d = 0; d < t.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) extents.push_back(t.shape()[d]);
  }
  return *t.TryReshape(extents.span());  // contiguous, so always a view
}

// Backward of Sum and Mean: the output gradient spread back over the reduced axes, scaled.
void ReduceBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  const Shape& in_shape = r.InputShape(0);
  DimVector<int64_t> keep;
  for (int d = 0; d < in_shape.rank(); ++d) {
    keep.push_back(r.ints()[static_cast<size_t>(d)] ? 1 : in_shape[d]);
  }
  const internal::Temporary g_keep(g.Reshape(keep.span(), ctx.allocator), g);
  Tensor scale = NewFloat(Shape{}, ctx);
  scale.Fill(r.floats()[0]);
  grads[0] = NewFloat(in_shape, ctx);
  ctx.kernels.Binary(BinaryOp::kMul, g_keep->Expand(in_shape), scale.Expand(in_shape), grads[0]);
  scale.Dispose();
}

Tensor Reduce(OpKind kind, const Tensor& x, std::span<const int> axes, bool keepdims,
              const OpContext& ctx) {
  const std::string_view op = OpKindName(kind);
  CheckFloat(op, "x", x);
  const std::array<bool, kMaxRank> reduced = ReducedAxes(op, axes, x.rank());
  int64_t count = 1;
  for (int d = 0; d < x.rank(); ++d) {
    if (reduced[static_cast<size_t>(d)]) count *= x.shape()[d];
  }
  const double scale = kind == OpKind::kMean ? (count ? 1.0 / static_cast<double>(count)
                                                      : std::numeric_limits<double>::quiet_NaN())
                                             : 1.0;
  Tensor out = SumKeepDims(x, reduced, scale, ctx);
  if (!keepdims) out = DropAxes(out, reduced);
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(kind, &ReduceBackward, {&x});
  std::vector<int64_t> mask(reduced.begin(), reduced.begin() + x.rank());
  record->SetInts(std::move(mask));
  record->SetFloats({static_cast<float>(scale)});
  return out.WithAutogradNode(std::move(record));
}

}  // namespace

Tensor Sum(const Tensor& x, std::span<const int> axes, bool keepdims, const OpContext& ctx) {
  return Reduce(OpKind::kSum, x, axes, keepdims, ctx);
}

Tensor Mean(const Tensor& x, std::span<const int> axes, bool keepdims, const OpContext& ctx) {
  return Reduce(OpKind::kMean, x, axes, keepdims, ctx);
}

Tensor SumToShape(const Tensor& g, const Shape& shape, const OpContext& ctx) {
  const int lead = g.rank() - shape.rank();
  std::array<bool, kMaxRank> reduced{};
  for (int d = 0; d < g.rank(); ++d) {
    reduced[static_cast<size_t>(d)] = d < lead || (shape[d - lead] == 1 && g.shape()[d] != 1);
  }
  Tensor summed = SumKeepDims(g, reduced, 1.0, ctx);
  return *summed.TryReshape(DimVector<int64_t>(shape).span());
}

}  // namespace onemodel::ops
