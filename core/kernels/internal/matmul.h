// MatMul kernels: the reference meaning (double accumulation) and the fast paths (direct SIMD
// tiles for small products, OpenBLAS for the rest, a strided loop for strides neither takes).
#pragma once

#include <cstdint>
#include <span>

#include "core/kernels/kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/kernels/thread_pool.h"
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

// The direct tiles take products of at most this many multiply-adds (m * k * n); larger ones go
// to OpenBLAS, whose packing pays off there (docs/kernels.md, measured).
constexpr int64_t kDirectMaxWork = int64_t{1} << 24;
// The direct tiles take outputs at least this many columns wide: narrower ones waste most of
// each 16-lane vector, and OpenBLAS was faster there (64 x 256 x 10: 4.8 us against 5.8 us).
constexpr int64_t kDirectMinColumns = 16;
// Direct products of at least this many multiply-adds are split over the thread pool. In the
// server such a product is above --inline-max-bytes' default, so it runs on a worker inside a
// request's ThreadPool::Warm scope: 512 x 20 x 64 then took 8.9 us on two threads against
// 12.2 us on one (docs/kernels.md, "Small MatMul").
constexpr int64_t kDirectParallelWork = int64_t{1} << 19;

// One matrix product out = a x b for the direct tiles, as raw pointers and element strides:
// a any strides, b and out unit column stride (row strides any value).
struct MatMulPlan {
  const float* a;
  int64_t sam, sak;
  const float* b;
  int64_t sbk;
  float* out;
  int64_t som;
  int64_t m, k, n;
};

// The direct tiles compiled for one SIMD target (matmul_simd.cc). A unit is one tile of out
// (a few rows by up to two vectors of columns); units(plan, begin, end) computes units
// [begin, end) of unit_count(plan), each exactly once, never throwing or allocating.
struct MatMulSimd {
  int64_t (*unit_count)(const MatMulPlan& plan);
  void (*units)(const MatMulPlan& plan, int64_t begin, int64_t end);
};

// The direct tiles for `target` (which must be compiled in).
const MatMulSimd& MatMulSimdFor(SimdTarget target);

// FastKernels' MatMul: the direct tiles of `target` (split over `pool` from
// kDirectParallelWork) where b and out have unit column stride, out has at least
// kDirectMinColumns columns and m * k * n is at most kDirectMaxWork; else MatMulBlas.
void MatMulFast(SimdTarget target, ThreadPool& pool, const Tensor& a, const Tensor& b, Tensor& out);

// out = a x b through OpenBLAS sgemm where the strides allow it (unit stride in one of each
// matrix's dimensions), else a float-accumulating strided loop.
void MatMulBlas(const Tensor& a, const Tensor& b, Tensor& out);

}  // namespace onemodel::internal
