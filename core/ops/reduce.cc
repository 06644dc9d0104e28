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
#include "core/ops/internal/reduce_axes.h"
#include "core/ops/internal/sum_runs.h"
#include "core/shape/dim_vector.h"
#include "core/shape/strided_walk.h"

namespace onemodel::ops {
namespace {

using internal::AxisMask;
using internal::CheckFloat;
using internal::DropAxes;
using internal::NewFloat;
using Walk = onemodel::internal::StridedWalk<1>;

// Output elements summed side by side: their double sums are independent chains, so the
// additions of one overlap the latency of the others' (a chain alone waits for each addition).
// Eight, as internal::AddEightRuns takes them where their runs have unit stride.
constexpr int64_t kChains = 8;

// Sum of x over the reduced axes into a new tensor (keepdims shape), times `scale`: each
// output element's sum in double, over the reduced elements in row-major order (up to kChains
// of them at once, each in that order). Stops early (the sums incomplete) once the thread's
// CancelToken is cancelled: it looks before each group of output elements and every 2^20
// elements each sums.
Tensor SumKeepDims(const Tensor& x, const AxisMask& reduced, double scale, const OpContext& ctx) {
  int kept = 0;
  for (int d = 0; d < x.rank(); ++d) kept += reduced[static_cast<size_t>(d)] ? 0 : 1;
  const DimVector<int> order = internal::KeptThenReduced(reduced, x.rank());
  Tensor out = NewFloat(internal::KeepDimsShape(x.shape(), reduced), ctx);
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
    for (int64_t j = 0; j < n && !stopped; j += kChains) {
      const int64_t chains = std::min(kChains, n - j);
      const float* first = in + at[0] + j * outer_step;
      std::array<double, kChains> acc{};
      for (int64_t k0 = 0; k0 == 0 || k0 < inner_count; k0 += kCheckEvery) {
        if (Cancelled(cancel)) {
          stopped = true;
          return;
        }
        inner.ForEachRow(
            k0, std::min(inner_count, k0 + kCheckEvery), [&](int64_t m, const Walk::Offsets& from) {
              const float* p = first + from[0];
              if (chains == kChains) {
                return inner_step == 1
                           ? internal::AddEightRuns(p, m, outer_step, acc.data())
                           : internal::AddRuns<kChains>(p, m, inner_step, outer_step, acc.data());
              }
              for (int64_t u = 0; u < chains; ++u) {
                internal::AddRuns<1>(p + u * outer_step, m, inner_step, 0, &acc[u]);
              }
            });
      }
      for (int64_t u = 0; u < chains; ++u) *next++ = static_cast<float>(acc[u] * scale);
    }
  });
  return out;
}

// Backward of Sum and Mean: the output gradient spread back over the reduced axes, scaled.
void ReduceBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  const Shape& in_shape = r.InputShape(0);
  const DimVector<int64_t> keep(internal::KeepDimsShape(in_shape, internal::MaskOf(r.ints())));
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
  const AxisMask reduced = internal::ReducedAxes(op, axes, x.rank());
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
  record->SetInts(internal::MaskInts(reduced, x.rank()));
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
  AxisMask reduced{};
  for (int d = 0; d < g.rank(); ++d) {
    reduced[static_cast<size_t>(d)] = d < lead || (shape[d - lead] == 1 && g.shape()[d] != 1);
  }
  Tensor summed = SumKeepDims(g, reduced, 1.0, ctx);
  return *summed.TryReshape(DimVector<int64_t>(shape).span());
}

}  // namespace onemodel::ops
