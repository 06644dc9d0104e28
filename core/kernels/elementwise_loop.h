// Runs an elementwise row function over N float operands of one shape with arbitrary strides.
//
// The walk is StridedWalk's (core/shape/strided_walk.h): extent-1 dimensions dropped,
// neighbours contiguous in every operand merged, so a contiguous tensor is one long row and a
// row-broadcast operand keeps unit-stride rows. row(n, ptrs, strides) handles n elements
// starting at ptrs[k] with element stride strides[k] for operand k (operand 0 is the output).
//
//   RunRows<2>(out.shape(), {BaseForWrite(out), Base(x)}, {&out.strides(), &x.strides()}, row);
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "hwy/cache_control.h"

#include "core/common/cancellation.h"
#include "core/kernels/thread_pool.h"
#include "core/shape/strided_walk.h"
#include "core/shape/strides.h"
#include "core/tensor/tensor.h"

namespace onemodel::internal {

// Element (0, ..., 0) of a float output, to be written: bumps its version (spec 7: kernels
// write through the mutable accessors).
inline float* BaseForWrite(Tensor& t) { return t.MutableStorage<float>().data() + t.offset(); }
// Element (0, ..., 0) of a float input (never written through; the version is unchanged).
inline float* Base(const Tensor& t) {
  return const_cast<float*>(t.Storage<float>().data()) + t.offset();
}

// The walk over `shape` for the N operands' strides.
template <int N>
StridedWalk<N> WalkOf(const Shape& shape, const std::array<const Strides*, N>& strides) {
  std::array<std::span<const int32_t>, N> values;
  for (size_t k = 0; k < N; ++k) values[k] = strides[k]->values();
  return StridedWalk<N>::Of(shape.extents(), values);
}

// Calls `row` for the flat elements [begin, end) in row-major order, in steps of 2^20
// elements, stopping between steps once `cancel` is cancelled.
template <int N, typename Row>
void RunRangeChecked(const StridedWalk<N>& walk, const std::array<float*, N>& bases, int64_t begin,
                     int64_t end, const Row& row, const CancelToken* cancel) {
  constexpr int64_t kStep = int64_t{1} << 20;  // a multiple of 64, as the pieces are
  std::array<int64_t, N> row_stride;
  for (int k = 0; k < N; ++k) row_stride[static_cast<size_t>(k)] = walk.RowStride(k);
  for (int64_t at = begin; at < end; at += kStep) {
    if (Cancelled(cancel)) return;
    walk.ForEachRow(at, std::min(end, at + kStep),
                    [&](int64_t n, const typename StridedWalk<N>::Offsets& offsets) {
                      std::array<float*, N> p;
                      for (size_t k = 0; k < N; ++k) p[k] = bases[k] + offsets[k];
                      row(n, p, row_stride);
                    });
  }
}

// Every element on this thread; stops early once the thread's CancelToken is cancelled.
template <int N, typename Row>
void RunRows(const Shape& shape, const std::array<float*, N>& bases,
             const std::array<const Strides*, N>& strides, const Row& row) {
  RunRangeChecked<N>(WalkOf<N>(shape, strides), bases, 0, shape.ElementCount(), row,
                     CurrentCancelToken());
}

// Splits over `pool` in pieces of at least `grain` elements (multiples of 64), runs; stops
// early once the thread's CancelToken is cancelled. `streaming`: the rows use streaming
// stores, so each piece ends with a store fence (hwy::FlushStream), making its output
// visible to the thread that joins the pieces.
template <int N, typename Row>
void ForEachRow(ThreadPool& pool, int64_t grain, const Shape& shape,
                const std::array<float*, N>& bases, const std::array<const Strides*, N>& strides,
                const Row& row, bool streaming = false) {
  const int64_t total = shape.ElementCount();
  if (total == 0) return;
  const StridedWalk<N> walk = WalkOf<N>(shape, strides);
  const CancelToken* cancel = CurrentCancelToken();
  const auto run = [&](int64_t begin, int64_t end) {
    RunRangeChecked<N>(walk, bases, begin, end, row, cancel);
    if (streaming) hwy::FlushStream();
  };
  const int64_t tasks = std::min<int64_t>(pool.threads(), total / std::max<int64_t>(grain, 1));
  if (tasks <= 1) {
    run(0, total);
    return;
  }
  const int64_t piece = ((total + tasks - 1) / tasks + 63) / 64 * 64;
  pool.ParallelFor(tasks, [&](int64_t t) {
    const int64_t begin = std::min(total, t * piece), end = std::min(total, begin + piece);
    if (begin < end) run(begin, end);
  });
}

}  // namespace onemodel::internal
