// AvgPool2dFast: each output's sum is built in a float accumulator, one window position for a
// run of outputs at a time in the reference's window order (a loop the compiler vectorizes
// for unit strides, the elementwise Add row otherwise), then divided, so values are the
// reference's bit for bit. Runs are output columns
// of one row when the input's x stride is 1 and the row is wide, otherwise the channels of
// one output pixel (with channel stride 1, avgpool_simd.cc's per-target row loop, the sums in
// registers, the input prefetched ahead). Units (output rows) are split over the thread pool.
#include <algorithm>
#include <cstdint>

#include "core/common/cancellation.h"
#include "core/kernels/internal/avgpool.h"
#include "core/kernels/internal/simd_tables.h"

namespace onemodel::internal {
namespace {

// Outputs accumulated at once (a stack buffer each for sums and divisors).
constexpr int64_t kRun = 256;
// Rows narrower than this vectorize over channels instead.
constexpr int64_t kMinRowRun = 8;
// Window positions visited below this many per task stay on the calling thread.
constexpr int64_t kGrain = int64_t{1} << 16;
constexpr int64_t kTasksPerThread = 4;

struct AvgPlan {
  const float* in = nullptr;  // element (0, 0, 0, 0)
  float* out = nullptr;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t si[4] = {}, so[4] = {};
  AvgPool2dParams p;
  BinaryRowFn add = nullptr, div = nullptr;
  void (*row)(const AvgRow& r) = nullptr;
  bool stream = false;
};

// acc[i] += src[i * stride] for i < n.
inline void AddRun(const AvgPlan& a, float* acc, const float* src, int64_t n, int64_t stride) {
  if (stride != 1) return a.add(n, acc, 1, acc, 1, src, stride);
  for (int64_t i = 0; i < n; ++i) acc[i] += src[i];
}

void CopyStrides(const Tensor& t, int64_t (&dst)[4]) {
  for (int d = 0; d < 4; ++d) dst[d] = t.shape()[d] == 1 ? 0 : t.strides()[d];
}

// Output row (n, c, oy), runs of output columns: for each window position (y, kx), the
// columns whose x = ox*stride - pad + kx is in bounds add it.
void RowUnit(const AvgPlan& a, int64_t u) {
  const AvgPool2dParams& p = a.p;
  const int64_t oy = u % a.oh, nc = u / a.oh, c = nc % a.c, n = nc / a.c;
  const float* plane = a.in + n * a.si[0] + c * a.si[1];
  float* orow = a.out + n * a.so[0] + c * a.so[1] + oy * a.so[2];
  const AvgSpan ys = AvgClip(oy, p.stride_h, p.pad_h, p.kernel_h, a.h, p.count_include_pad);
  float acc[kRun], divisor[kRun];
  for (int64_t ox0 = 0; ox0 < a.ow; ox0 += kRun) {
    const int64_t m = std::min(kRun, a.ow - ox0);
    std::fill(acc, acc + m, 0.0f);
    for (int64_t y = ys.lo; y < ys.hi; ++y) {
      const float* row = plane + y * a.si[2];
      for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
        // Columns [lo, hi) read x = ox*stride - pad + kx within [0, w).
        const int64_t first = p.pad_w - kx, last = a.w - 1 + p.pad_w - kx;
        const int64_t lo = std::max(ox0, first <= 0 ? 0 : (first + p.stride_w - 1) / p.stride_w);
        const int64_t hi = std::min(ox0 + m, last < 0 ? 0 : last / p.stride_w + 1);
        if (lo >= hi) continue;
        AddRun(a, acc + (lo - ox0), row + lo * p.stride_w - p.pad_w + kx, hi - lo, p.stride_w);
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      const AvgSpan xs =
          AvgClip(ox0 + i, p.stride_w, p.pad_w, p.kernel_w, a.w, p.count_include_pad);
      divisor[i] = static_cast<float>(ys.count * xs.count);
    }
    a.div(m, orow + ox0 * a.so[3], a.so[3], acc, 1, divisor, 1);
  }
}

// Output row (n, oy) of every channel: the per-target row loop (channel stride 1), or runs
// of channels.
void PixelUnit(const AvgPlan& a, int64_t u) {
  const AvgPool2dParams& p = a.p;
  const int64_t oy = u % a.oh, n = u / a.oh;
  const float* image = a.in + n * a.si[0];
  const AvgSpan ys = AvgClip(oy, p.stride_h, p.pad_h, p.kernel_h, a.h, p.count_include_pad);
  if (a.si[1] == 1) {
    const AvgSpan next_ys =
        oy + 1 < a.oh ? AvgClip(oy + 1, p.stride_h, p.pad_h, p.kernel_h, a.h, p.count_include_pad)
                      : AvgSpan{0, 0, 0};
    return a.row({image, a.si[2], a.si[3], a.w, a.c, a.ow, p.stride_w, p.pad_w, p.kernel_w,
                  p.count_include_pad, ys, next_ys, a.out + n * a.so[0] + oy * a.so[2], a.so[3],
                  a.so[1], a.stream});
  }
  float acc[kRun];
  for (int64_t ox = 0; ox < a.ow; ++ox) {
    const AvgSpan xs = AvgClip(ox, p.stride_w, p.pad_w, p.kernel_w, a.w, p.count_include_pad);
    const float divisor = static_cast<float>(ys.count * xs.count);
    float* opix = a.out + n * a.so[0] + oy * a.so[2] + ox * a.so[3];
    for (int64_t c0 = 0; c0 < a.c; c0 += kRun) {
      const int64_t m = std::min(kRun, a.c - c0);
      std::fill(acc, acc + m, 0.0f);
      for (int64_t y = ys.lo; y < ys.hi; ++y) {
        for (int64_t x = xs.lo; x < xs.hi; ++x) {
          AddRun(a, acc, image + y * a.si[2] + x * a.si[3] + c0 * a.si[1], m, a.si[1]);
        }
      }
      float* o = opix + c0 * a.so[1];
      if (a.so[1] == 1) {
        for (int64_t i = 0; i < m; ++i) o[i] = acc[i] / divisor;
      } else {
        a.div(m, o, a.so[1], acc, 1, &divisor, 0);
      }
    }
  }
}

}  // namespace

void AvgPool2dFast(SimdTarget target, ThreadPool& pool, const Tensor& x, const AvgPool2dParams& p,
                   Tensor& out, bool stream) {
  AvgPlan a;
  a.in = x.Storage<float>().data() + x.offset();
  a.out = out.MutableStorage<float>().data() + out.offset();
  a.n = x.shape()[0];
  a.c = x.shape()[1];
  a.h = x.shape()[2];
  a.w = x.shape()[3];
  a.oh = out.shape()[2];
  a.ow = out.shape()[3];
  CopyStrides(x, a.si);
  CopyStrides(out, a.so);
  a.p = p;
  const ElementwiseSimd& simd = ElementwiseSimdFor(target);
  a.add = simd.binary[static_cast<int>(BinaryOp::kAdd)];
  a.div = simd.binary[static_cast<int>(BinaryOp::kDiv)];
  a.row = AvgPoolSimdFor(target).row;
  a.stream = stream;
  const int64_t outputs = a.n * a.c * a.oh * a.ow;
  if (outputs == 0) return;

  const bool rows = (a.si[3] == 1 || a.w == 1) && a.ow >= kMinRowRun;
  void (*unit)(const AvgPlan&, int64_t) = rows ? &RowUnit : &PixelUnit;
  const int64_t units = rows ? a.n * a.c * a.oh : a.n * a.oh;
  const int64_t work = outputs * p.kernel_h * p.kernel_w;
  // The loops look at the token between units (output rows); units longer than
  // kMaxUncheckedWork (huge windows or rows of stride-0 views) take the reference, which
  // looks before each output and each long window's rows, with the same bits.
  if (work / units > kMaxUncheckedWork) return AvgPool2dReference(x, p, out);
  const CancelToken* cancel = CurrentCancelToken();
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end && !Cancelled(cancel); ++u) unit(a, u);
  };
  const int64_t threads = pool.threads();
  const int64_t tasks =
      threads <= 1 ? 1 : std::min({units, threads * kTasksPerThread, work / kGrain});
  if (tasks <= 1) return run(0, units);
  pool.ParallelFor(tasks, [&](int64_t t) { run(units * t / tasks, units * (t + 1) / tasks); });
}

void AvgPool2dBackwardFast(ThreadPool& pool, const Tensor& grad_out, const AvgPool2dParams& p,
                           Tensor& grad_x) {
  const int64_t planes = grad_x.shape()[0] * grad_x.shape()[1];
  const int64_t work =
      planes * (grad_x.shape()[2] * grad_x.shape()[3] +
                grad_out.shape()[2] * grad_out.shape()[3] * p.kernel_h * p.kernel_w);
  const int64_t threads = pool.threads();
  const int64_t tasks =
      threads <= 1 ? 1 : std::min({planes, threads * kTasksPerThread, work / kGrain});
  float* gx = grad_x.MutableData<float>().data();
  if (tasks <= 1) return AvgPool2dBackwardPlanes(grad_out, p, grad_x.shape(), gx, 0, planes);
  pool.ParallelFor(tasks, [&](int64_t t) {
    AvgPool2dBackwardPlanes(grad_out, p, grad_x.shape(), gx, planes * t / tasks,
                            planes * (t + 1) / tasks);
  });
}

}  // namespace onemodel::internal
