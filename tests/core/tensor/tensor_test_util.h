// Helpers shared by the tensor tests: row-major enumeration of indices and element offsets,
// computed from shape, strides and offset alone (independently of the code under test), and
// small constructors of filled tensors.
//
//   Tensor x = Iota<float>(Shape{2, 3}, pool);          // 0, 1, ..., 5
//   EXPECT_EQ(Values<float>(x.Transpose(0, 1)), (std::vector<float>{0, 3, 1, 4, 2, 5}));
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/memory/allocator.h"
#include "core/shape/shape.h"
#include "core/shape/strides.h"
#include "core/tensor/tensor.h"

namespace onemodel::tensor_test {

// Calls f(index) for every index of `shape` in row-major order (once, with an empty index, for
// a scalar; never for an empty shape).
template <typename F>
void ForEachIndex(const Shape& shape, F&& f) {
  if (shape.IsEmpty()) return;
  const int rank = shape.rank();
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (;;) {
    f(std::span<const int64_t>(index));
    int d = rank - 1;
    for (; d >= 0; --d) {
      const size_t i = static_cast<size_t>(d);
      if (++index[i] < shape[d]) break;
      index[i] = 0;
    }
    if (d < 0) return;
  }
}

// The element offsets (offset + sum of index * stride) of every element in row-major order.
inline std::vector<int64_t> RowMajorOffsets(const Shape& shape, const Strides& strides,
                                            int64_t offset) {
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(shape.ElementCount()));
  ForEachIndex(shape, [&](std::span<const int64_t> index) {
    int64_t at = offset;
    for (int d = 0; d < shape.rank(); ++d) at += index[static_cast<size_t>(d)] * strides[d];
    offsets.push_back(at);
  });
  return offsets;
}

inline std::vector<int64_t> RowMajorOffsets(const Tensor& t) {
  return RowMajorOffsets(t.shape(), t.strides(), t.offset());
}

// Every element of `t`, read with At<T>, in row-major order.
template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> values;
  values.reserve(static_cast<size_t>(t.ElementCount()));
  ForEachIndex(t.shape(),
               [&](std::span<const int64_t> index) { values.push_back(t.At<T>(index)); });
  return values;
}

// A new contiguous tensor holding first, first + 1, ... in row-major order.
template <typename T>
Tensor Iota(const Shape& shape, Allocator& allocator, T first = T{0}) {
  Tensor t = Tensor::Empty(shape, DTypeOf<T>(), allocator);
  T next = first;
  for (T& v : t.MutableData<T>()) v = next++;
  return t;
}

// A new contiguous tensor holding `values` (their count must match the shape).
template <typename T>
Tensor FromValues(const Shape& shape, const std::vector<T>& values, Allocator& allocator) {
  Tensor t = Tensor::Empty(shape, DTypeOf<T>(), allocator);
  std::span<T> data = t.MutableData<T>();
  for (size_t i = 0; i < values.size() && i < data.size(); ++i) data[i] = values[i];
  return t;
}

}  // namespace onemodel::tensor_test
