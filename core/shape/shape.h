// Shapes and their limits (spec 3).
//
// A Shape is a small value: rank 0-8, each extent a non-negative 32-bit integer, and an
// element count of at most 2^31-1 where every left-to-right prefix product also fits.
// Constructing a Shape checks all of that and throws TensorShapeException naming the shape,
// so nothing is ever allocated for an invalid one.
//
//   Shape s{2, 3, 4};                              // 24 elements
//   Shape b = Shape::Broadcast(s, Shape{3, 1});    // [2, 3, 4]
//   CheckByteSize(s, DType::kDouble);              // count x element size <= 2^31-1
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "core/dtype/dtype.h"

namespace onemodel {

inline constexpr int kMaxRank = 8;
inline constexpr int64_t kMaxElements = 2147483647;     // 2^31-1
inline constexpr int64_t kMaxBufferBytes = 2147483647;  // 2^31-1

class Shape {
 public:
  // The rank-0 shape: a scalar with one element.
  Shape() = default;
  // Validates rank, extents and element count; throws TensorShapeException.
  Shape(std::initializer_list<int64_t> extents);
  explicit Shape(std::span<const int64_t> extents);
  explicit Shape(std::span<const int32_t> extents);

  int rank() const { return rank_; }
  int32_t operator[](int d) const { return extents_[static_cast<size_t>(d)]; }
  std::span<const int32_t> extents() const { return {extents_.data(), static_cast<size_t>(rank_)}; }
  // Product of the extents (1 for rank 0, 0 when any extent is 0).
  int64_t ElementCount() const { return count_; }
  bool IsEmpty() const { return count_ == 0; }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.rank_ == b.rank_ && a.extents_ == b.extents_;
  }
  // "[2, 3, 4]"; "[]" for a scalar.
  std::string ToString() const;

  // numpy's multidirectional broadcasting: right-align, each pair equal or one of them 1.
  // Throws TensorShapeException naming both shapes when they do not broadcast.
  static Shape Broadcast(const Shape& a, const Shape& b);

 private:
  template <typename Int>
  void Assign(std::span<const Int> extents);

  int32_t rank_ = 0;
  std::array<int32_t, kMaxRank> extents_{};
  int64_t count_ = 1;
};

// Throws TensorShapeException unless count x ElementSize(dtype) fits in 2^31-1 bytes.
void CheckByteSize(const Shape& shape, DType dtype);

// Formats any list of extents as "[a, b, c]" (used in messages for shapes not yet valid); past
// 16 extents, the first 16 and the count: "[1, 1, ..., 1, ... (100000 in all)]".
std::string FormatExtents(std::span<const int64_t> extents);

// Resolves a reshape request for `count` elements: at most one -1 (inferred), every other
// extent non-negative, product equal to count. Throws TensorShapeException otherwise.
Shape InferShape(int64_t count, std::span<const int64_t> requested);

}  // namespace onemodel
