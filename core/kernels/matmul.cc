#include "core/kernels/internal/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <optional>

#include "core/common/cancellation.h"

namespace onemodel::internal {
namespace {

// The strided loops look at their cancellation token before each output element and every
// this many multiply-adds within one.
constexpr int64_t kCheckWork = int64_t{1} << 20;
// One sgemm call computes about this many multiply-adds (a fraction of a second), and at least
// kMinBlockRows rows, so a cancelled MatMul stops between calls without the split costing
// much (each call packs its operands again).
constexpr int64_t kBlasBlockWork = int64_t{1} << 32;
constexpr int64_t kMinBlockRows = 64;

struct Dims {
  int64_t m, k, n;
};

Dims DimsOf(const Tensor& a, const Tensor& out) {
  const int r = out.rank();
  return {out.shape()[r - 2], a.shape()[r - 1], out.shape()[r - 1]};
}

// out[i, j] = sum_k a[i, k] * b[k, j] with accumulator Acc, over any strides; returns early,
// leaving out incomplete, once `cancel` is cancelled.
template <typename Acc>
void StridedMatMul(const float* a, int64_t sam, int64_t sak, const float* b, int64_t sbk,
                   int64_t sbn, float* out, int64_t som, int64_t son, Dims d,
                   const CancelToken* cancel) {
  for (int64_t i = 0; i < d.m; ++i) {
    for (int64_t j = 0; j < d.n; ++j) {
      Acc acc = 0;
      for (int64_t k0 = 0; k0 == 0 || k0 < d.k; k0 += kCheckWork) {
        if (Cancelled(cancel)) return;
        const int64_t k1 = std::min(d.k, k0 + kCheckWork);
        for (int64_t k = k0; k < k1; ++k) {
          acc += static_cast<Acc>(a[i * sam + k * sak]) * static_cast<Acc>(b[k * sbk + j * sbn]);
        }
      }
      out[i * som + j * son] = static_cast<float>(acc);
    }
  }
}

// A rows x cols matrix with the given strides as BLAS sees it: row-major (no transpose) or
// column-major (transpose), with its leading dimension; nullopt when neither fits.
struct BlasMatrix {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};
std::optional<BlasMatrix> AsBlas(int64_t rows, int64_t cols, int64_t row_stride,
                                 int64_t col_stride) {
  if (cols == 1 || col_stride == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : row_stride;
    if (ld >= std::max<int64_t>(cols, 1)) return BlasMatrix{CblasNoTrans, ld};
  }
  if (rows == 1 || row_stride == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : col_stride;
    if (ld >= std::max<int64_t>(rows, 1)) return BlasMatrix{CblasTrans, ld};
  }
  return std::nullopt;
}

}  // namespace

void MatMulReference(const Tensor& a, const Tensor& b, Tensor& out) {
  const float* pa = a.Storage<float>().data();
  const float* pb = b.Storage<float>().data();
  float* po = out.MutableStorage<float>().data();
  const int r = out.rank();
  const Dims d = DimsOf(a, out);
  const CancelToken* cancel = CurrentCancelToken();
  ForEachMatrix(a, b, out, [&](int64_t oa, int64_t ob, int64_t oo) {
    StridedMatMul<double>(pa + oa, a.strides()[r - 2], a.strides()[r - 1], pb + ob,
                          b.strides()[r - 2], b.strides()[r - 1], po + oo, out.strides()[r - 2],
                          out.strides()[r - 1], d, cancel);
  });
}

void MatMulBlas(const Tensor& a, const Tensor& b, Tensor& out) {
  const float* pa = a.Storage<float>().data();
  const float* pb = b.Storage<float>().data();
  float* po = out.MutableStorage<float>().data();
  const int r = out.rank();
  const Dims d = DimsOf(a, out);
  const auto ma = AsBlas(d.m, d.k, a.strides()[r - 2], a.strides()[r - 1]);
  const auto mb = AsBlas(d.k, d.n, b.strides()[r - 2], b.strides()[r - 1]);
  const auto mo = AsBlas(d.m, d.n, out.strides()[r - 2], out.strides()[r - 1]);
  const bool blas = ma && mb && mo && mo->trans == CblasNoTrans && d.k > 0 && d.m > 0 && d.n > 0;
  const CancelToken* cancel = CurrentCancelToken();
  // Row i0 of a and out starts i0 row strides in, whether BLAS sees them transposed or not.
  const int64_t rows =
      std::min(d.m, std::max(kMinBlockRows, kBlasBlockWork / std::max<int64_t>(d.n * d.k, 1)));
  ForEachMatrix(a, b, out, [&](int64_t oa, int64_t ob, int64_t oo) {
    if (!blas) {
      StridedMatMul<float>(pa + oa, a.strides()[r - 2], a.strides()[r - 1], pb + ob,
                           b.strides()[r - 2], b.strides()[r - 1], po + oo, out.strides()[r - 2],
                           out.strides()[r - 1], d, cancel);
      return;
    }
    for (int64_t i0 = 0; i0 < d.m; i0 += rows) {
      if (Cancelled(cancel)) return;
      cblas_sgemm(CblasRowMajor, ma->trans, mb->trans,
                  static_cast<blasint>(std::min(rows, d.m - i0)), static_cast<blasint>(d.n),
                  static_cast<blasint>(d.k), 1.0f, pa + oa + i0 * a.strides()[r - 2],
                  static_cast<blasint>(ma->ld), pb + ob, static_cast<blasint>(mb->ld), 0.0f,
                  po + oo + i0 * out.strides()[r - 2], static_cast<blasint>(mo->ld));
    }
  });
}

void MatMulFast(SimdTarget target, ThreadPool& pool, const Tensor& a, const Tensor& b,
                Tensor& out) {
  const int r = out.rank();
  const Dims d = DimsOf(a, out);
  // m * k first: with it at most kDirectMaxWork, m * k * n cannot overflow.
  const bool small = d.m * d.k <= kDirectMaxWork && d.m * d.k * d.n <= kDirectMaxWork;
  if (!small || d.n < kDirectMinColumns || b.strides()[r - 1] != 1 || out.strides()[r - 1] != 1) {
    return MatMulBlas(a, b, out);
  }
  const MatMulSimd& simd = MatMulSimdFor(target);
  const float* pa = a.Storage<float>().data();
  const float* pb = b.Storage<float>().data();
  float* po = out.MutableStorage<float>().data();
  const CancelToken* cancel = CurrentCancelToken();
  const bool parallel = d.m * d.k * d.n >= kDirectParallelWork;
  ForEachMatrix(a, b, out, [&](int64_t oa, int64_t ob, int64_t oo) {
    const MatMulPlan plan{.a = pa + oa,
                          .sam = a.strides()[r - 2],
                          .sak = a.strides()[r - 1],
                          .b = pb + ob,
                          .sbk = b.strides()[r - 2],
                          .out = po + oo,
                          .som = out.strides()[r - 2],
                          .m = d.m,
                          .k = d.k,
                          .n = d.n};
    const int64_t units = simd.unit_count(plan);
    // A few tasks per thread: the caller takes whatever a worker that wakes late leaves.
    const int64_t tasks = parallel ? std::min<int64_t>(units, 4 * pool.threads()) : 1;
    pool.ParallelFor(tasks, [&](int64_t t) {
      if (Cancelled(cancel)) return;
      simd.units(plan, units * t / tasks, units * (t + 1) / tasks);
    });
  });
}

}  // namespace onemodel::internal
