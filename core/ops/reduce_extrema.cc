#include "core/ops/reduce_extrema.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/cancellation.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"
#include "core/ops/internal/reduce_axes.h"
#include "core/shape/strided_walk.h"

namespace onemodel::ops {
namespace {

using internal::AxisMask;
using Walk = onemodel::internal::StridedWalk<1>;

enum class Extremum { kMax, kMin };

// True when `a`, met after `best` in the slice, takes its place: a NaN beats every number and
// the first NaN stays; among equals the first stays unless `last`.
bool Beats(Extremum e, bool last, float a, float best) {
  if (std::isnan(best)) return last && std::isnan(a);
  if (std::isnan(a)) return true;
  if (last) return e == Extremum::kMax ? a >= best : a <= best;
  return e == Extremum::kMax ? a > best : a < best;
}

// The elements of one slice: the product of the reduced extents.
int64_t SliceCount(const Shape& shape, const AxisMask& reduced) {
  int64_t n = 1;
  for (int d = 0; d < shape.rank(); ++d) {
    if (reduced[static_cast<size_t>(d)]) n *= shape[d];
  }
  return n;
}

// For each slice of x over the reduced axes (one per element of the keepdims output, in
// row-major order), writes the winner's value to values[j] and its position in the slice
// (row-major over the reduced axes) to positions[j]; either may be null. An empty slice gives
// the identity (-inf for max, +inf for min) and position -1. Stops early (outputs incomplete)
// once the thread's CancelToken is cancelled: it looks every 2^20 elements.
void Scan(const Tensor& x, const AxisMask& reduced, Extremum e, bool last, float* values,
          int64_t* positions) {
  const int64_t inner = SliceCount(x.shape(), reduced);
  if (inner == 0) {
    const int64_t outputs = internal::KeepDimsShape(x.shape(), reduced).ElementCount();
    const float identity = e == Extremum::kMax ? -std::numeric_limits<float>::infinity()
                                               : std::numeric_limits<float>::infinity();
    if (values) std::fill_n(values, outputs, identity);
    if (positions) std::fill_n(positions, outputs, int64_t{-1});
    return;
  }
  const Tensor v = x.Permute(internal::KeptThenReduced(reduced, x.rank()).span());
  const float* in = v.Storage<float>().data() + v.offset();
  const auto walk = Walk::Of(v.shape().extents(), {v.strides().values()});
  const int64_t step = walk.RowStride(0), total = v.ElementCount();
  int64_t j = 0, k = 0, best_k = 0;  // the slice, the position in it, the winner's position
  float best = 0;
  ForEachChunk(CurrentCancelToken(), total, [&](int64_t begin, int64_t end) {
    walk.ForEachRow(begin, end, [&](int64_t n, const Walk::Offsets& o) {
      const float* p = in + o[0];
      for (int64_t q = 0; q < n; ++q) {
        const float a = p[q * step];
        if (k == 0 || Beats(e, last, a, best)) {
          best = a;
          best_k = k;
        }
        if (++k < inner) continue;
        if (values) values[j] = best;
        if (positions) positions[j] = best_k;
        ++j;
        k = 0;
      }
    });
  });
}

// Backward of ReduceMax/ReduceMin: each output gradient goes to its slice's winner (the
// position in Owned(0)); every other element gets 0.
void ExtremumBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                      std::span<Tensor> grads) {
  const Shape& in_shape = r.InputShape(0);
  const AxisMask reduced = internal::MaskOf(r.ints());
  grads[0] = internal::NewFloat(in_shape, ctx, /*zero=*/true);
  if (in_shape.IsEmpty()) return;
  const Tensor gp = grads[0].Permute(internal::KeptThenReduced(reduced, in_shape.rank()).span());
  float* base = grads[0].MutableData<float>().data();
  const internal::Temporary gc(g.Contiguous(ctx.allocator), g);
  const std::span<const float> gv = gc->Data<float>();
  const std::span<const int64_t> pos = r.Owned(0).Data<int64_t>();
  const int64_t inner = SliceCount(in_shape, reduced);
  for (size_t j = 0; j < pos.size(); ++j) {
    // The winner's place in gp's row-major order, unravelled into an offset.
    int64_t flat = static_cast<int64_t>(j) * inner + pos[j], offset = 0;
    for (int d = gp.rank(); d-- > 0;) {
      offset += flat % gp.shape()[d] * gp.strides()[d];
      flat /= gp.shape()[d];
    }
    base[offset] = gv[j];
  }
}

Tensor ReduceExtremum(OpKind kind, Extremum e, const Tensor& x, std::span<const int> axes,
                      bool keepdims, const OpContext& ctx) {
  const std::string_view op = OpKindName(kind);
  internal::CheckFloat(op, "x", x);
  const AxisMask reduced = internal::ReducedAxes(op, axes, x.rank());
  const Shape keep_shape = internal::KeepDimsShape(x.shape(), reduced);
  Tensor out = internal::NewFloat(keep_shape, ctx);
  const bool record = ShouldRecord({&x});
  Tensor positions;
  if (record) positions = Tensor::Empty(keep_shape, DType::kInt64, ctx.allocator);
  Scan(x, reduced, e, /*last=*/false, out.MutableData<float>().data(),
       record ? positions.MutableData<int64_t>().data() : nullptr);
  if (!keepdims) out = internal::DropAxes(out, reduced);
  if (!record) return out;
  auto rec = internal::NewRecord(kind, &ExtremumBackward, {&x});
  rec->Own(positions);
  rec->SetInts(internal::MaskInts(reduced, x.rank()));
  return out.WithAutogradNode(std::move(rec));
}

Tensor ArgExtremum(std::string_view op, Extremum e, const Tensor& x, int axis, bool keepdims,
                   bool last, const OpContext& ctx) {
  internal::CheckFloat(op, "x", x);
  const int d = internal::NormalizeAxis(op, axis, x.rank());
  if (x.shape()[d] == 0) {
    throw TensorShapeException(std::string(op) + ": axis " + std::to_string(axis) + " of x " +
                               x.shape().ToString() +
                               " is empty, so there is no index to return; reduce along an "
                               "axis with at least one element");
  }
  AxisMask reduced{};
  reduced[static_cast<size_t>(d)] = true;
  Tensor out =
      Tensor::Empty(internal::KeepDimsShape(x.shape(), reduced), DType::kInt64, ctx.allocator);
  Scan(x, reduced, e, last, nullptr, out.MutableData<int64_t>().data());
  return keepdims ? out : internal::DropAxes(out, reduced);
}

}  // namespace

Tensor ReduceMax(const Tensor& x, std::span<const int> axes, bool keepdims, const OpContext& ctx) {
  return ReduceExtremum(OpKind::kReduceMax, Extremum::kMax, x, axes, keepdims, ctx);
}

Tensor ReduceMin(const Tensor& x, std::span<const int> axes, bool keepdims, const OpContext& ctx) {
  return ReduceExtremum(OpKind::kReduceMin, Extremum::kMin, x, axes, keepdims, ctx);
}

Tensor ArgMax(const Tensor& x, int axis, bool keepdims, bool select_last_index,
              const OpContext& ctx) {
  return ArgExtremum("ArgMax", Extremum::kMax, x, axis, keepdims, select_last_index, ctx);
}

Tensor ArgMin(const Tensor& x, int axis, bool keepdims, bool select_last_index,
              const OpContext& ctx) {
  return ArgExtremum("ArgMin", Extremum::kMin, x, axis, keepdims, select_last_index, ctx);
}

}  // namespace onemodel::ops
