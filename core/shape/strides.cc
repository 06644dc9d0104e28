#include "core/shape/strides.h"

#include <algorithm>

#include "core/common/exceptions.h"

namespace onemodel {

Strides::Strides(std::initializer_list<int32_t> values)
    : Strides(std::span<const int32_t>(values.begin(), values.size())) {}

Strides::Strides(std::span<const int32_t> values) {
  if (values.size() > static_cast<size_t>(kMaxRank)) {
    throw TensorShapeException("strides of rank " + std::to_string(values.size()) +
                               "; the maximum rank is " + std::to_string(kMaxRank));
  }
  std::copy(values.begin(), values.end(), values_.begin());
  rank_ = static_cast<int32_t>(values.size());
}

std::string Strides::ToString() const {
  std::string s = "[";
  for (int d = 0; d < rank_; ++d) {
    if (d) s += ", ";
    s += std::to_string(values_[static_cast<size_t>(d)]);
  }
  return s + "]";
}

Strides ContiguousStrides(const Shape& shape) {
  std::array<int32_t, kMaxRank> values{};
  int64_t product = 1;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    values[static_cast<size_t>(d)] = static_cast<int32_t>(std::min<int64_t>(product, kMaxElements));
    product = std::min<int64_t>(product * shape[d], kMaxElements + 1);
  }
  return Strides(std::span<const int32_t>(values.data(), static_cast<size_t>(shape.rank())));
}

bool IsContiguous(const Shape& shape, const Strides& strides) {
  if (shape.IsEmpty()) return true;
  int64_t expected = 1;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

OffsetRange ReachableOffsets(const Shape& shape, const Strides& strides, int64_t offset) {
  OffsetRange r{offset, offset};
  for (int d = 0; d < shape.rank(); ++d) {
    const int64_t span = static_cast<int64_t>(shape[d] - 1) * strides[d];
    (span < 0 ? r.lowest : r.highest) += span;
  }
  return r;
}

void CheckViewBounds(const Shape& shape, const Strides& strides, int64_t offset,
                     int64_t buffer_elements) {
  if (strides.rank() != shape.rank()) {
    throw TensorShapeException("strides " + strides.ToString() + " do not match shape " +
                               shape.ToString() + " (rank " + std::to_string(strides.rank()) +
                               " vs " + std::to_string(shape.rank()) + ")");
  }
  if (shape.IsEmpty()) return;
  // The offset itself is reachable (every index 0). Checking it first also keeps the sums in
  // ReachableOffsets from overflowing int64 for offsets far outside the buffer.
  if (offset < 0 || offset >= buffer_elements) {
    throw TensorShapeException("view of shape " + shape.ToString() + " with strides " +
                               strides.ToString() + " at offset " + std::to_string(offset) +
                               ": the offset is outside the buffer's " +
                               std::to_string(buffer_elements) + " elements");
  }
  const OffsetRange r = ReachableOffsets(shape, strides, offset);
  if (r.lowest < 0 || r.highest >= buffer_elements) {
    throw TensorShapeException("view of shape " + shape.ToString() + " with strides " +
                               strides.ToString() + " at offset " + std::to_string(offset) +
                               " reaches elements " + std::to_string(r.lowest) + " to " +
                               std::to_string(r.highest) + ", outside the buffer's " +
                               std::to_string(buffer_elements) + " elements");
  }
}

}  // namespace onemodel
