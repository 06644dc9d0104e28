// MaxPool2dFast: resolves the tensors to a PoolPlan, picks the loop for the input's physical
// layout (maxpool_simd.cc) and splits its units over the thread pool. Each output element is
// computed by one unit alone, so the result does not depend on the split or the thread count.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/common/cancellation.h"
#include "core/kernels/internal/maxpool.h"
#include "core/kernels/internal/maxpool_simd.h"

namespace onemodel::internal {
namespace {

// Work (window positions visited) below this many per task stays on the calling thread.
constexpr int64_t kPoolGrain = int64_t{1} << 16;
// The same for the planes loop, which visits positions several times faster than the rows
// loop does on the short rows it takes: a [256, 8, 8, 8] 2x2 pooling (2^17 positions) took
// 56-90 µs on one thread and 77-109 µs split in two, [1024, 8, 8, 8] 231 µs against 171 µs
// (docs/kernels.md).
constexpr int64_t kPlanesGrain = int64_t{1} << 18;
// Tasks per thread: the pool hands tasks out dynamically, so a busy core delays little.
constexpr int64_t kTasksPerThread = 4;

void CopyStrides(const Tensor& t, int64_t (&dst)[4]) {
  for (int d = 0; d < 4; ++d) dst[d] = t.shape()[d] == 1 ? 0 : t.strides()[d];
}

// fn over units [begin, end) in groups of about kPoolGrain * 16 window positions (`unit_work`
// each), stopping between groups once `cancel` is cancelled.
void RunUnitsChecked(PoolUnitsFn fn, const PoolPlan& plan, int64_t begin, int64_t end,
                     int64_t unit_work, const CancelToken* cancel) {
  const int64_t group = std::max<int64_t>(1, kPoolGrain * 16 / std::max<int64_t>(unit_work, 1));
  for (int64_t at = begin; at < end; at += group) {
    if (Cancelled(cancel)) return;
    fn(plan, at, std::min(end, at + group));
  }
}

// Whether MaxPoolSimd::planes takes the call: contiguous NCHW input, output and indices,
// every window inside the input without padding, output rows at most half a vector wide (so
// a vector covers two rows or more) and gather offsets within int32.
bool PlanesApply(const PoolPlan& p, int64_t lanes, const Tensor& x, const Tensor& out,
                 const Tensor* indices) {
  return x.IsContiguous() && out.IsContiguous() && (!indices || indices->IsContiguous()) &&
         p.ph == 0 && p.pw == 0 && (p.oh - 1) * p.sh + (p.kh - 1) * p.dh < p.h &&
         (p.ow - 1) * p.sw + (p.kw - 1) * p.dw < p.w && p.ow * 2 <= lanes &&
         lanes * p.h * p.w <= INT32_MAX;
}

// Whether MaxPoolSimd::pairs takes a call the planes loop could: 2x2 windows at stride 2
// without dilation tiling each plane.
bool PairsApply(const PoolPlan& p, int64_t lanes) {
  return p.kh == 2 && p.kw == 2 && p.sh == 2 && p.sw == 2 && p.dh == 1 && p.dw == 1 &&
         p.h == 2 * p.oh && p.w == 2 * p.ow && PairLanesFit(lanes, p.oh, p.ow);
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
  plan.dh = p.dilation_h;
  plan.dw = p.dilation_w;
  plan.relu = p.relu;
  const int64_t outputs = plan.n * plan.c * plan.oh * plan.ow;
  if (outputs == 0) return;

  // The x stride of a one-column input never matters: treat it as unit.
  if (plan.w == 1) plan.in_stride[3] = 1;
  const MaxPoolSimd& simd = MaxPoolSimdFor(target);
  PoolUnitsFn fn = simd.strided;
  int64_t units = plan.n * plan.c * plan.oh;
  if (PlanesApply(plan, simd.lanes, x, out, indices)) {
    fn = PairsApply(plan, simd.lanes) ? simd.pairs : simd.planes;
    units = plan.n * plan.c;
  } else if (plan.in_stride[3] == 1) {
    fn = simd.rows;
  } else if (plan.in_stride[1] == 1) {
    fn = simd.pixels;
    units = plan.n * plan.oh;
  }

  const int64_t work = outputs * p.kernel_h * p.kernel_w;
  const int64_t unit_work = work / units;
  // The loops look at the token between units (output rows or planes); units longer than
  // kMaxUncheckedWork (huge windows or rows of stride-0 views) take the reference, which
  // looks before each output and each long window's rows, with the same bits.
  if (unit_work > kMaxUncheckedWork) return MaxPool2dReference(x, p, out, indices);
  const CancelToken* cancel = CurrentCancelToken();
  const int64_t threads = pool.threads();
  const int64_t tasks =
      threads <= 1
          ? 1
          : std::min({units, threads * kTasksPerThread,
                      work / (fn == simd.planes || fn == simd.pairs ? kPlanesGrain : kPoolGrain)});
  if (tasks <= 1) {
    RunUnitsChecked(fn, plan, 0, units, unit_work, cancel);
    return;
  }
  pool.ParallelFor(tasks, [&](int64_t t) {
    RunUnitsChecked(fn, plan, units * t / tasks, units * (t + 1) / tasks, unit_work, cancel);
  });
}

namespace {

// MaxPool2dBackwardFast's operands, resolved once.
struct ScatterPlan {
  float* gx = nullptr;           // contiguous (N, C, H, W)
  const float* g = nullptr;      // grad_out at its offset
  const int32_t* idx = nullptr;  // indices at their offset
  int64_t c = 0, oh = 0, ow = 0, plane = 0;
  int64_t g_stride[4] = {}, idx_stride[4] = {};
};

// Planes [begin, end) (plane p = n * C + c): zero the plane, then add the output gradient at
// each argmax, output positions row by row: the reference's order, so the same bits.
void ScatterPlanes(const ScatterPlan& b, int64_t begin, int64_t end) {
  const int64_t* gs = b.g_stride;
  const int64_t* is = b.idx_stride;
  for (int64_t p = begin; p < end; ++p) {
    float* dst = b.gx + p * b.plane;
    std::memset(dst, 0, static_cast<size_t>(b.plane) * sizeof(float));  // +0.0f is all zeros
    const int64_t n = p / b.c, c = p % b.c;
    const float* gp = b.g + n * gs[0] + c * gs[1];
    const int32_t* ip = b.idx + n * is[0] + c * is[1];
    for (int64_t y = 0; y < b.oh; ++y) {
      const float* grow = gp + y * gs[2];
      const int32_t* irow = ip + y * is[2];
      if (gs[3] == 1 && is[3] == 1) {
        for (int64_t x = 0; x < b.ow; ++x) {
          const int32_t k = irow[x];
          if (k >= 0) dst[k] += grow[x];
        }
      } else {
        for (int64_t x = 0; x < b.ow; ++x) {
          const int32_t k = irow[x * is[3]];
          if (k >= 0) dst[k] += grow[x * gs[3]];
        }
      }
    }
  }
}

}  // namespace

void MaxPool2dBackwardFast(SimdTarget target, ThreadPool& pool, const Tensor& grad_out,
                           const Tensor& indices, Tensor& grad_x) {
  ScatterPlan b;
  b.gx = grad_x.MutableData<float>().data();
  b.g = grad_out.Storage<float>().data() + grad_out.offset();
  b.idx = indices.Storage<int32_t>().data() + indices.offset();
  CopyStrides(grad_out, b.g_stride);
  CopyStrides(indices, b.idx_stride);
  const int64_t planes = grad_x.shape()[0] * grad_x.shape()[1];
  b.c = grad_x.shape()[1];
  b.oh = grad_out.shape()[2];
  b.ow = grad_out.shape()[3];
  b.plane = grad_x.shape()[2] * grad_x.shape()[3];
  if (planes == 0 || b.plane == 0) return;

  // Planes tiled by 2x2 cells, one per output position, are written cell by cell where every
  // index lies in its own cell (as MaxPool2d's 2x2 windows at stride 2 give them); a task that
  // finds one elsewhere scatters its planes instead.
  const MaxPoolSimd& simd = MaxPoolSimdFor(target);
  const bool pairs = grad_out.IsContiguous() && indices.IsContiguous() &&
                     grad_x.shape()[2] == 2 * b.oh && grad_x.shape()[3] == 2 * b.ow &&
                     PairLanesFit(simd.lanes, b.oh, b.ow);
  const PairsGradPlan cells{b.g, b.idx, b.gx, b.oh, b.ow};
  auto run = [&](int64_t begin, int64_t end) {
    if (!pairs || !simd.pairs_grad(cells, begin, end)) ScatterPlanes(b, begin, end);
  };

  // Work: every gradient element written plus every output gradient read.
  const int64_t work = planes * (b.plane + b.oh * b.ow);
  const int64_t threads = pool.threads();
  const int64_t tasks =
      threads <= 1 ? 1 : std::min({planes, threads * kTasksPerThread, work / kPoolGrain});
  if (tasks <= 1) {
    run(0, planes);
    return;
  }
  pool.ParallelFor(tasks, [&](int64_t t) { run(planes * t / tasks, planes * (t + 1) / tasks); });
}

}  // namespace onemodel::internal
