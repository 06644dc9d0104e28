// StridedWalk: the row-major walk over N operands that share one shape but each have their own
// strides: a copy's destination and source, an elementwise kernel's output and inputs, MatMul's
// batch of matrices, the elements a reduction sums.
//
// Extent-1 dimensions are dropped and neighbours that are contiguous in every operand merge, so
// a contiguous tensor becomes one long row and a row-broadcast operand keeps unit-stride rows.
// The walk then visits rows: row(n, at) covers n elements; operand k's first is `at[k]`
// elements from its element (0, ..., 0), each next one RowStride(k) further. A walk can start
// and stop at any flat (row-major) element: a chunk of a copy, one thread's share of a kernel.
// It allocates nothing.
//
//   const auto walk = StridedWalk<2>::Of(shape.extents(), {dst.values(), src.values()});
//   walk.ForEachRow(0, shape.ElementCount(), [&](int64_t n, const StridedWalk<2>::Offsets& at) {
//     for (int64_t i = 0; i < n; ++i) d[at[0] + i * walk.RowStride(0)] = s[at[1] + i * ...];
//   });
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/shape/shape.h"

namespace onemodel::internal {

template <int N>
class StridedWalk {
 public:
  using Offsets = std::array<int64_t, N>;

  // The coalesced walk over `extents` (at most kMaxRank) for the N operands' strides (in
  // elements; any sign, 0 for a broadcast dimension). Each strides[k] has extents.size() entries.
  static StridedWalk Of(std::span<const int32_t> extents,
                        const std::array<std::span<const int32_t>, N>& strides) {
    StridedWalk w;
    w.rank_ = 0;
    for (size_t d = 0; d < extents.size(); ++d) {
      const int64_t e = extents[d];
      if (e == 1) continue;
      if (w.rank_ > 0) {
        const size_t i = static_cast<size_t>(w.rank_ - 1);
        bool merge = true;
        for (size_t k = 0; k < N; ++k) merge = merge && w.stride_[k][i] == strides[k][d] * e;
        if (merge) {
          w.extent_[i] *= e;
          for (size_t k = 0; k < N; ++k) w.stride_[k][i] = strides[k][d];
          continue;
        }
      }
      const size_t i = static_cast<size_t>(w.rank_++);
      w.extent_[i] = e;
      for (size_t k = 0; k < N; ++k) w.stride_[k][i] = strides[k][d];
    }
    if (w.rank_ == 0) {  // a single element: one row of one
      w.rank_ = 1;
      w.extent_[0] = 1;
    }
    return w;
  }

  // Dimensions left after coalescing (at least 1; the last is the row).
  int rank() const { return rank_; }
  // Elements in one row.
  int64_t RowLength() const { return extent_[Inner()]; }
  // Operand k's stride along a row, in elements.
  int64_t RowStride(int k) const { return stride_[static_cast<size_t>(k)][Inner()]; }

  // Calls row(n, at) for the flat elements [begin, end) in row-major order, one call per row
  // or part of a row (0 <= begin <= end <= the element count).
  template <typename Row>
  void ForEachRow(int64_t begin, int64_t end, const Row& row) const {
    if (begin >= end) return;
    const size_t inner = Inner();
    const int64_t n = extent_[inner];
    Offsets row_stride;
    for (size_t k = 0; k < N; ++k) row_stride[k] = stride_[k][inner];
    // The outer index of begin's row, and each operand's offset there.
    std::array<int64_t, kMaxRank> index{};
    Offsets at_row{};
    int64_t rest = begin / n, c = begin % n;
    for (size_t i = inner; i-- > 0;) {
      index[i] = rest % extent_[i];
      rest /= extent_[i];
      for (size_t k = 0; k < N; ++k) at_row[k] += index[i] * stride_[k][i];
    }
    for (int64_t pos = begin;;) {
      const int64_t len = std::min(n - c, end - pos);
      Offsets at;
      for (size_t k = 0; k < N; ++k) at[k] = at_row[k] + c * row_stride[k];
      row(len, at);
      pos += len;
      if (pos == end) return;
      c = 0;
      // Odometer: the next row.
      for (size_t i = inner; i-- > 0;) {
        for (size_t k = 0; k < N; ++k) at_row[k] += stride_[k][i];
        if (++index[i] < extent_[i]) break;
        for (size_t k = 0; k < N; ++k) at_row[k] -= stride_[k][i] * extent_[i];
        index[i] = 0;
      }
    }
  }

 private:
  size_t Inner() const { return static_cast<size_t>(rank_ - 1); }

  int rank_ = 1;
  std::array<int64_t, kMaxRank> extent_{};
  std::array<std::array<int64_t, kMaxRank>, N> stride_{};
};

}  // namespace onemodel::internal
