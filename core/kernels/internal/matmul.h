// MatMul kernels: the reference meaning (double accumulation) and the fast BLAS path.
#pragma once

#include "core/kernels/kernels.h"

namespace onemodel::internal {

// Calls fn(a_offset, b_offset, out_offset) for every batch index of out's leading dimensions
// (a, b and out have equal batch dimensions, any strides).
template <typename Fn>
void ForEachMatrix(const Tensor& a, const Tensor& b, const Tensor& out, const Fn& fn) {
  const int batch_rank = out.rank() - 2;
  int64_t count = 1;
  for (int d = 0; d < batch_rank; ++d) count *= out.shape()[d];
  std::array<int64_t, kMaxRank> index{};
  int64_t oa = a.offset(), ob = b.offset(), oo = out.offset();
  for (int64_t i = 0; i < count; ++i) {
    fn(oa, ob, oo);
    for (int d = batch_rank - 1; d >= 0; --d) {
      oa += a.strides()[d];
      ob += b.strides()[d];
      oo += out.strides()[d];
      if (++index[static_cast<size_t>(d)] < out.shape()[d]) break;
      oa -= int64_t{a.strides()[d]} * out.shape()[d];
      ob -= int64_t{b.strides()[d]} * out.shape()[d];
      oo -= int64_t{out.strides()[d]} * out.shape()[d];
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

// Both MatMul kernels stop between blocks, leaving out incomplete, once the thread's
// CancelToken (core/common/cancellation.h) is cancelled.

// out = a x b with double accumulation, any strides.
void MatMulReference(const Tensor& a, const Tensor& b, Tensor& out);

// out = a x b through OpenBLAS sgemm where the strides allow it (unit stride in one of each
// matrix's dimensions), else a float-accumulating strided loop.
void MatMulBlas(const Tensor& a, const Tensor& b, Tensor& out);

}  // namespace onemodel::internal
