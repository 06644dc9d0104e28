// MatMul kernels: the reference meaning (double accumulation) and the fast BLAS path.
#pragma once

#include <cstdint>
#include <span>

#include "core/kernels/kernels.h"
#include "core/shape/strided_walk.h"

namespace onemodel::internal {

// Calls fn(a_offset, b_offset, out_offset) for every batch index of out's leading dimensions
// (a, b and out have equal batch dimensions, any strides).
template <typename Fn>
void ForEachMatrix(const Tensor& a, const Tensor& b, const Tensor& out, const Fn& fn) {
  const size_t batch = static_cast<size_t>(out.rank() - 2);
  const std::span<const int32_t> extents = out.shape().extents().first(batch);
  int64_t count = 1;
  for (int32_t e : extents) count *= e;
  const auto walk = StridedWalk<3>::Of(
      extents, {a.strides().values().first(batch), b.strides().values().first(batch),
                out.strides().values().first(batch)});
  const int64_t sa = walk.RowStride(0), sb = walk.RowStride(1), so = walk.RowStride(2);
  walk.ForEachRow(0, count, [&](int64_t n, const StridedWalk<3>::Offsets& at) {
    for (int64_t i = 0; i < n; ++i) {
      fn(a.offset() + at[0] + i * sa, b.offset() + at[1] + i * sb, out.offset() + at[2] + i * so);
    }
  });
}

// Both MatMul kernels stop between blocks, leaving out incomplete, once the thread's
// CancelToken (core/common/cancellation.h) is cancelled.

// out = a x b with double accumulation, any strides.
void MatMulReference(const Tensor& a, const Tensor& b, Tensor& out);

// out = a x b through OpenBLAS sgemm where the strides allow it (unit stride in one of each
// matrix's dimensions), else a float-accumulating strided loop.
void MatMulBlas(const Tensor& a, const Tensor& b, Tensor& out);

}  // namespace onemodel::internal
