// DimVector: up to kMaxRank values (extents, axes, permutations) without heap allocation,
// for operations whose no-grad path must allocate nothing.
//
//   DimVector<int64_t> e;
//   e.push_back(3);
//   Shape s(e.span());
#pragma once

#include <array>
#include <cstddef>
#include <span>

#include "core/shape/shape.h"

namespace onemodel {

template <typename T>
class DimVector {
 public:
  DimVector() = default;
  // The extents of `shape`, in order.
  explicit DimVector(const Shape& shape) {
    for (int32_t e : shape.extents()) push_back(e);
  }

  // Appends; at most kMaxRank values (callers bound this by a shape's rank).
  void push_back(T v) { values_[size_++] = v; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return values_[i]; }
  const T& operator[](size_t i) const { return values_[i]; }
  T* begin() { return values_.data(); }
  T* end() { return values_.data() + size_; }
  const T* begin() const { return values_.data(); }
  const T* end() const { return values_.data() + size_; }
  std::span<const T> span() const { return {values_.data(), size_}; }

 private:
  std::array<T, kMaxRank> values_{};
  size_t size_ = 0;
};

}  // namespace onemodel
