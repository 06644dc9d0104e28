#include "core/kernels/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <optional>

namespace onemodel::internal {
namespace {

struct Dims {
  int64_t m, k, n;
};

Dims DimsOf(const Tensor& a, const Tensor& out) {
  const int r = out.rank();
  return {out.shape()[r - 2], a.shape()[r - 1], out.shape()[r - 1]};
}

// out[i, j] = sum_k a[i, k] * b[k, j] with accumulator Acc, over any strides.
template <typename Acc>
void StridedMatMul(const float* a, int64_t sam, int64_t sak, const float* b, int64_t sbk,
                   int64_t sbn, float* out, int64_t som, int64_t son, Dims d) {
  for (int64_t i = 0; i < d.m; ++i) {
    for (int64_t j = 0; j < d.n; ++j) {
      Acc acc = 0;
      for (int64_t k = 0; k < d.k; ++k) {
        acc += static_cast<Acc>(a[i * sam + k * sak]) * static_cast<Acc>(b[k * sbk + j * sbn]);
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
  ForEachMatrix(a, b, out, [&](int64_t oa, int64_t ob, int64_t oo) {
    StridedMatMul<double>(pa + oa, a.strides()[r - 2], a.strides()[r - 1], pb + ob,
                          b.strides()[r - 2], b.strides()[r - 1], po + oo, out.strides()[r - 2],
                          out.strides()[r - 1], d);
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
  ForEachMatrix(a, b, out, [&](int64_t oa, int64_t ob, int64_t oo) {
    if (blas) {
      cblas_sgemm(CblasRowMajor, ma->trans, mb->trans, static_cast<blasint>(d.m),
                  static_cast<blasint>(d.n), static_cast<blasint>(d.k), 1.0f, pa + oa,
                  static_cast<blasint>(ma->ld), pb + ob, static_cast<blasint>(mb->ld), 0.0f,
                  po + oo, static_cast<blasint>(mo->ld));
    } else {
      StridedMatMul<float>(pa + oa, a.strides()[r - 2], a.strides()[r - 1], pb + ob,
                           b.strides()[r - 2], b.strides()[r - 1], po + oo, out.strides()[r - 2],
                           out.strides()[r - 1], d);
    }
  });
}

std::string BlasDescription() {
  return std::string("OpenBLAS ") + openblas_get_config() + " (kernel " + openblas_get_corename() +
         ")";
}

void SetBlasThreads(int threads) {
  static const int kDefault = openblas_get_num_threads();
  openblas_set_num_threads(threads > 0 ? threads : kDefault);
}

int BlasThreads() { return openblas_get_num_threads(); }

}  // namespace onemodel::internal
