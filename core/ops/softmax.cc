#include "core/ops/softmax.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/common/cancellation.h"
#include "core/ops/internal/op_utils.h"
#include "core/shape/dim_vector.h"

namespace onemodel::ops {
namespace {

// Calls fn(base_in, base_out, stride_in, stride_out, n) for every row along `axis` of x and
// its contiguous output (same shape); stops early once the thread's CancelToken is cancelled.
template <typename Fn>
void ForEachRowAlong(const Tensor& x, const Tensor& out, int axis, const Fn& fn) {
  DimVector<int> order;
  for (int d = 0; d < x.rank(); ++d) {
    if (d != axis) order.push_back(d);
  }
  order.push_back(axis);
  const Tensor vx = x.Permute(order.span()), vo = out.Permute(order.span());
  const int outer_rank = x.rank() - 1;
  int64_t rows = 1;
  for (int d = 0; d < outer_rank; ++d) rows *= vx.shape()[d];
  const int64_t n = x.rank() ? vx.shape()[outer_rank] : 1;
  const int64_t sx = x.rank() ? vx.strides()[outer_rank] : 1,
                so = x.rank() ? vo.strides()[outer_rank] : 1;
  const CancelToken* cancel = CurrentCancelToken();
  for (int64_t r = 0; r < rows; ++r) {
    if (Cancelled(cancel)) return;
    int64_t ox = vx.offset(), oo = vo.offset(), rest = r;
    for (int d = outer_rank - 1; d >= 0; --d) {
      const int64_t i = rest % vx.shape()[d];
      rest /= vx.shape()[d];
      ox += i * vx.strides()[d];
      oo += i * vo.strides()[d];
    }
    fn(ox, oo, sx, so, n);
  }
}

// fn(i) for i in [0, n) in order, in chunks that look at the thread's CancelToken before each
// (one row may be 2^31 long): stops early, the row incomplete, once cancelled.
template <typename Fn>
void ForEachInRow(int64_t n, const Fn& fn) {
  ForEachChunk(CurrentCancelToken(), n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

// y = softmax(scale * x) or its log, row by row, in double.
Tensor Forward(const Tensor& x, int axis, float scale, bool log, const OpContext& ctx) {
  Tensor out = internal::NewFloat(x.shape(), ctx);
  if (x.shape().IsEmpty()) return out;
  const float* in = x.Storage<float>().data();
  float* o = out.MutableStorage<float>().data();
  ForEachRowAlong(x, out, axis, [&](int64_t ox, int64_t oo, int64_t sx, int64_t so, int64_t n) {
    double max = -std::numeric_limits<double>::infinity();
    ForEachInRow(n, [&](int64_t i) { max = std::fmax(max, double{scale} * in[ox + i * sx]); });
    double sum = 0;
    ForEachInRow(n, [&](int64_t i) { sum += std::exp(double{scale} * in[ox + i * sx] - max); });
    const double log_sum = std::log(sum);
    ForEachInRow(n, [&](int64_t i) {
      const double z = double{scale} * in[ox + i * sx] - max;
      o[oo + i * so] = static_cast<float>(log ? z - log_sum : std::exp(z) / sum);
    });
  });
  return out;
}

// Softmax: dx = scale * y * (g - sum(g * y)); LogSoftmax: dx = scale * (g - exp(y) * sum(g)).
void SoftmaxBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  const Tensor& y = r.Saved(0);
  const bool log = r.op() == OpKind::kLogSoftmax;
  const int axis = static_cast<int>(r.ints()[0]);
  const double scale = r.floats()[0];
  grads[0] = internal::NewFloat(y.shape(), ctx);
  if (y.shape().IsEmpty()) return;
  const float* ys = y.Storage<float>().data();
  float* dx = grads[0].MutableStorage<float>().data();
  const float* gs = g.Storage<float>().data();
  // Walk y and g with the same row structure: g has y's shape, possibly other strides.
  std::vector<int64_t> g_offsets;
  ForEachRowAlong(g, grads[0], axis, [&](int64_t og, int64_t, int64_t sg, int64_t, int64_t) {
    g_offsets.push_back(og);
    g_offsets.push_back(sg);
  });
  size_t row = 0;
  ForEachRowAlong(
      y, grads[0], axis, [&](int64_t oy, int64_t od, int64_t sy, int64_t sd, int64_t n) {
        const int64_t og = g_offsets[row], sg = g_offsets[row + 1];
        row += 2;
        double dot = 0;
        ForEachInRow(n, [&](int64_t i) {
          dot += log ? double{gs[og + i * sg]} : double{gs[og + i * sg]} * ys[oy + i * sy];
        });
        ForEachInRow(n, [&](int64_t i) {
          const double yi = ys[oy + i * sy], gi = gs[og + i * sg];
          dx[od + i * sd] =
              static_cast<float>(log ? scale * (gi - std::exp(yi) * dot) : scale * yi * (gi - dot));
        });
      });
}

Tensor SoftmaxOp(OpKind kind, const Tensor& x, int axis, float scale, const OpContext& ctx) {
  const std::string_view name = OpKindName(kind);
  internal::CheckFloat(name, "x", x);
  const int a = internal::NormalizeAxis(name, axis, x.rank());
  Tensor out = Forward(x, a, scale, kind == OpKind::kLogSoftmax, ctx);
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(kind, &SoftmaxBackward, {&x});
  record->Save(0, out);
  record->SetInts({a});
  record->SetFloats({scale});
  return out.WithAutogradNode(std::move(record));
}

}  // namespace

Tensor Softmax(const Tensor& x, int axis, const OpContext& ctx, float scale) {
  return SoftmaxOp(OpKind::kSoftmax, x, axis, scale, ctx);
}

Tensor LogSoftmax(const Tensor& x, int axis, const OpContext& ctx, float scale) {
  return SoftmaxOp(OpKind::kLogSoftmax, x, axis, scale, ctx);
}

}  // namespace onemodel::ops
