// Strides, contiguity and view bounds (spec 3).
//
// Strides are signed 32-bit element counts (not bytes): 0 broadcasts, negative reverses.
// Element (i0, ..., ik) lives at offset + sum(i_d * stride_d).
//
//   Strides s = ContiguousStrides(Shape{2, 3});     // {3, 1}
//   IsContiguous(Shape{2, 3}, s);                    // true
//   CheckViewBounds(shape, s, offset, buffer_elems); // throws TensorShapeException
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "core/shape/shape.h"

namespace onemodel {

class Strides {
 public:
  Strides() = default;
  Strides(std::initializer_list<int32_t> values);
  explicit Strides(std::span<const int32_t> values);

  int rank() const { return rank_; }
  int32_t operator[](int d) const { return values_[static_cast<size_t>(d)]; }
  int32_t& operator[](int d) { return values_[static_cast<size_t>(d)]; }
  std::span<const int32_t> values() const { return {values_.data(), static_cast<size_t>(rank_)}; }
  friend bool operator==(const Strides& a, const Strides& b) {
    return a.rank_ == b.rank_ && a.values_ == b.values_;
  }
  std::string ToString() const;

 private:
  int32_t rank_ = 0;
  std::array<int32_t, kMaxRank> values_{};
};

// Row-major strides: each stride is the product of the extents to its right. For an empty
// shape no element is reachable, so strides too large for 32 bits saturate at 2^31-1.
Strides ContiguousStrides(const Shape& shape);

// Spec 3: every dimension with extent != 1 has the row-major stride; extent-1 dimensions are
// ignored; empty tensors are contiguous.
bool IsContiguous(const Shape& shape, const Strides& strides);

// Lowest and highest element offsets a non-empty view reaches (|offset| must leave room for
// the strides' span, about 2^62, in int64; CheckViewBounds ensures that).
struct OffsetRange {
  int64_t lowest;
  int64_t highest;
};
OffsetRange ReachableOffsets(const Shape& shape, const Strides& strides, int64_t offset);

// Throws TensorShapeException unless strides match the shape's rank and, for a non-empty
// view, every reachable offset lies in [0, buffer_elements).
void CheckViewBounds(const Shape& shape, const Strides& strides, int64_t offset,
                     int64_t buffer_elements);

}  // namespace onemodel
