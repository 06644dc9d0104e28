// Runs an elementwise row function over N float operands of one shape with arbitrary strides.
//
// Dimensions of extent 1 are dropped and neighbours that are contiguous in every operand are
// merged, so a contiguous tensor becomes one long row, and a row-broadcast operand keeps
// unit-stride rows. The flat element range is split over the thread pool when it is at least
// `grain` elements per task. row(n, ptrs, strides) handles n elements starting at ptrs[k]
// with element stride strides[k] for operand k (operand 0 is the output).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/common/cancellation.h"
#include "core/kernels/thread_pool.h"
#include "core/shape/strides.h"
#include "core/tensor/tensor.h"

namespace onemodel::internal {

// Element (0, ..., 0) of a float output; bumps its version (spec 7: kernels write through
// the mutable accessors).
inline float* Base(Tensor& t) { return t.MutableStorage<float>().data() + t.offset(); }
// Element (0, ..., 0) of a float input (never written through).
inline float* Base(const Tensor& t) {
  return const_cast<float*>(t.Storage<float>().data()) + t.offset();
}

template <int N>
struct RowPlan {
  int rank = 0;  // coalesced dimensions; the last is the row
  std::array<int64_t, kMaxRank> extent{};
  std::array<std::array<int64_t, kMaxRank>, N> stride{};
};

// Coalesces `shape` for the N operands' strides.
template <int N>
RowPlan<N> PlanRows(const Shape& shape, const std::array<const Strides*, N>& strides) {
  RowPlan<N> p;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == 1) continue;
    if (p.rank > 0) {
      const size_t i = static_cast<size_t>(p.rank - 1);
      bool merge = true;
      for (int k = 0; k < N; ++k) {
        merge = merge && p.stride[k][i] == int64_t{(*strides[k])[d]} * shape[d];
      }
      if (merge) {
        p.extent[i] *= shape[d];
        for (int k = 0; k < N; ++k) p.stride[k][i] = (*strides[k])[d];
        continue;
      }
    }
    const size_t i = static_cast<size_t>(p.rank++);
    p.extent[i] = shape[d];
    for (int k = 0; k < N; ++k) p.stride[k][i] = (*strides[k])[d];
  }
  if (p.rank == 0) {  // a single element
    p.rank = 1;
    p.extent[0] = 1;
  }
  return p;
}

// Calls `row` for the flat elements [begin, end) in row-major order.
template <int N, typename Row>
void RunRange(const RowPlan<N>& p, const std::array<float*, N>& bases, int64_t begin, int64_t end,
              const Row& row) {
  const size_t inner = static_cast<size_t>(p.rank - 1);
  const int64_t n = p.extent[inner];
  std::array<int64_t, N> inner_stride;
  for (int k = 0; k < N; ++k) inner_stride[k] = p.stride[k][inner];
  int64_t r = begin / n, c = begin % n;
  // Index of row r in the outer dimensions, and the operands' pointers there.
  std::array<int64_t, kMaxRank> index{};
  std::array<float*, N> ptr = bases;
  for (int64_t d = static_cast<int64_t>(inner) - 1, rest = r; d >= 0; --d) {
    const size_t i = static_cast<size_t>(d);
    index[i] = rest % p.extent[i];
    rest /= p.extent[i];
    for (int k = 0; k < N; ++k) ptr[k] += index[i] * p.stride[k][i];
  }
  for (int64_t pos = begin; pos < end;) {
    const int64_t len = std::min(n - c, end - pos);
    std::array<float*, N> at;
    for (int k = 0; k < N; ++k) at[k] = ptr[k] + c * inner_stride[k];
    row(len, at, inner_stride);
    pos += len;
    c = 0;
    // Advance the odometer to the next row.
    for (int64_t d = static_cast<int64_t>(inner) - 1; d >= 0; --d) {
      const size_t i = static_cast<size_t>(d);
      for (int k = 0; k < N; ++k) ptr[k] += p.stride[k][i];
      if (++index[i] < p.extent[i]) break;
      for (int k = 0; k < N; ++k) ptr[k] -= p.stride[k][i] * p.extent[i];
      index[i] = 0;
    }
  }
}

// RunRange in steps of 2^20 elements, stopping between steps once `cancel` is cancelled.
template <int N, typename Row>
void RunRangeChecked(const RowPlan<N>& p, const std::array<float*, N>& bases, int64_t begin,
                     int64_t end, const Row& row, const CancelToken* cancel) {
  constexpr int64_t kStep = int64_t{1} << 20;  // a multiple of 64, as the pieces are
  for (int64_t at = begin; at < end; at += kStep) {
    if (Cancelled(cancel)) return;
    RunRange<N>(p, bases, at, std::min(end, at + kStep), row);
  }
}

// Plans, splits over `pool` in pieces of at least `grain` elements (multiples of 64), runs;
// stops early once the thread's CancelToken is cancelled.
template <int N, typename Row>
void ForEachRow(ThreadPool& pool, int64_t grain, const Shape& shape,
                const std::array<float*, N>& bases, const std::array<const Strides*, N>& strides,
                const Row& row) {
  const int64_t total = shape.ElementCount();
  if (total == 0) return;
  const RowPlan<N> plan = PlanRows<N>(shape, strides);
  const CancelToken* cancel = CurrentCancelToken();
  const int64_t tasks = std::min<int64_t>(pool.threads(), total / std::max<int64_t>(grain, 1));
  if (tasks <= 1) {
    RunRangeChecked<N>(plan, bases, 0, total, row, cancel);
    return;
  }
  const int64_t piece = ((total + tasks - 1) / tasks + 63) / 64 * 64;
  pool.ParallelFor(tasks, [&](int64_t t) {
    const int64_t begin = std::min(total, t * piece), end = std::min(total, begin + piece);
    if (begin < end) RunRangeChecked<N>(plan, bases, begin, end, row, cancel);
  });
}

}  // namespace onemodel::internal
