#include "core/ops/cumsum.h"

#include <algorithm>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/common/cancellation.h"
#include "core/ops/internal/op_utils.h"
#include "core/shape/dim_vector.h"
#include "core/shape/strided_walk.h"

namespace onemodel::ops {
namespace {

using Walk = onemodel::internal::StridedWalk<2>;

// The running sums of x along axis d into a new tensor of x's shape. Stops early (the output
// incomplete) once the thread's CancelToken is cancelled: it looks before every line.
Tensor RunningSums(const Tensor& x, int d, bool exclusive, bool reverse, const OpContext& ctx) {
  Tensor out = internal::NewFloat(x.shape(), ctx);
  if (x.shape().IsEmpty()) return out;
  DimVector<int> order;  // the axis last
  for (int a = 0; a < x.rank(); ++a) {
    if (a != d) order.push_back(a);
  }
  order.push_back(d);
  const Tensor xv = x.Permute(order.span()), ov = out.Permute(order.span());
  const float* in = xv.Storage<float>().data() + xv.offset();
  float* o = out.MutableData<float>().data();
  const size_t lead = static_cast<size_t>(x.rank() - 1);
  const auto lines =
      Walk::Of(xv.shape().extents().first(lead),
               {xv.strides().values().first(lead), ov.strides().values().first(lead)});
  const int64_t n = x.shape()[d], sx = xv.strides()[x.rank() - 1], so = ov.strides()[x.rank() - 1];
  const int64_t rx = lines.RowStride(0), ro = lines.RowStride(1);
  const CancelToken* cancel = CurrentCancelToken();
  lines.ForEachRow(0, x.shape().ElementCount() / n, [&](int64_t m, const Walk::Offsets& at) {
    for (int64_t q = 0; q < m; ++q) {
      if (Cancelled(cancel)) return;
      const float* px = in + at[0] + q * rx;
      float* po = o + at[1] + q * ro;
      double acc = 0;
      ForEachChunk(cancel, n, [&](int64_t begin, int64_t end) {  // a line may be 2^31 long
        for (int64_t t = begin; t < end; ++t) {
          const int64_t i = reverse ? n - 1 - t : t;
          if (exclusive) po[i * so] = static_cast<float>(acc);
          acc += px[i * sx];
          if (!exclusive) po[i * so] = static_cast<float>(acc);
        }
      });
    }
  });
  return out;
}

// Ints: the axis, exclusive, reverse.
void CumSumBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  const std::vector<int64_t>& v = r.ints();
  grads[0] = RunningSums(g, static_cast<int>(v[0]), v[1] != 0, v[2] == 0, ctx);
}

}  // namespace

Tensor CumSum(const Tensor& x, int axis, bool exclusive, bool reverse, const OpContext& ctx) {
  internal::CheckFloat("CumSum", "x", x);
  const int d = internal::NormalizeAxis("CumSum", axis, x.rank());
  Tensor out = RunningSums(x, d, exclusive, reverse, ctx);
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(OpKind::kCumSum, &CumSumBackward, {&x});
  record->SetInts({d, exclusive ? 1 : 0, reverse ? 1 : 0});
  return out.WithAutogradNode(std::move(record));
}

}  // namespace onemodel::ops
