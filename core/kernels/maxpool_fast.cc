// MaxPool2dFast: resolves the tensors to a PoolPlan, picks the loop for the input's physical
// layout (maxpool_simd.cc) and splits its units over the thread pool. Each output element is
// computed by one unit alone, so the result does not depend on the split or the thread count.
#include <algorithm>
#include <cstdint>

#include "core/kernels/maxpool.h"
#include "core/kernels/maxpool_simd.h"

namespace onemodel::internal {
namespace {

// Work (window positions visited) below this many per task stays on the calling thread.
constexpr int64_t kPoolGrain = int64_t{1} << 16;
// Tasks per thread: the pool hands tasks out dynamically, so a busy core delays little.
constexpr int64_t kTasksPerThread = 4;

void CopyStrides(const Tensor& t, int64_t (&dst)[4]) {
  for (int d = 0; d < 4; ++d) dst[d] = t.shape()[d] == 1 ? 0 : t.strides()[d];
}

}  // namespace

void MaxPool2dFast(SimdTarget target, ThreadPool& pool, const Tensor& x, const MaxPool2dParams& p,
                   Tensor& out, Tensor* indices) {
  PoolPlan plan;
  plan.in = x.Storage<float>().data() + x.offset();
  plan.out = out.MutableStorage<float>().data() + out.offset();
  if (indices) plan.idx = indices->MutableStorage<int32_t>().data() + indices->offset();
  plan.n = x.shape()[0];
  plan.c = x.shape()[1];
  plan.h = x.shape()[2];
  plan.w = x.shape()[3];
  plan.oh = out.shape()[2];
  plan.ow = out.shape()[3];
  CopyStrides(x, plan.in_stride);
  CopyStrides(out, plan.out_stride);
  if (indices) CopyStrides(*indices, plan.idx_stride);
  plan.kh = p.kernel_h;
  plan.kw = p.kernel_w;
  plan.sh = p.stride_h;
  plan.sw = p.stride_w;
  plan.ph = p.pad_h;
  plan.pw = p.pad_w;
  const int64_t outputs = plan.n * plan.c * plan.oh * plan.ow;
  if (outputs == 0) return;

  // The x stride of a one-column input never matters: treat it as unit.
  if (plan.w == 1) plan.in_stride[3] = 1;
  const MaxPoolSimd& simd = MaxPoolSimdFor(target);
  PoolUnitsFn fn = simd.strided;
  int64_t units = plan.n * plan.c * plan.oh;
  if (plan.in_stride[3] == 1) {
    fn = simd.rows;
  } else if (plan.in_stride[1] == 1) {
    fn = simd.pixels;
    units = plan.n * plan.oh;
  }

  const int64_t work = outputs * p.kernel_h * p.kernel_w;
  const int64_t threads = pool.threads();
  const int64_t tasks =
      threads <= 1 ? 1 : std::min({units, threads * kTasksPerThread, work / kPoolGrain});
  if (tasks <= 1) {
    fn(plan, 0, units);
    return;
  }
  pool.ParallelFor(tasks, [&](int64_t t) { fn(plan, units * t / tasks, units * (t + 1) / tasks); });
}

}  // namespace onemodel::internal
