#include "core/ops/internal/reduce_axes.h"

#include <string>
#include <vector>

#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops::internal {

AxisMask ReducedAxes(std::string_view op, std::span<const int> axes, int rank) {
  AxisMask reduced{};
  if (axes.empty()) {
    for (int d = 0; d < rank; ++d) reduced[static_cast<size_t>(d)] = true;
    return reduced;
  }
  for (int a : axes) {
    const int d = NormalizeAxis(op, a, rank);
    if (reduced[static_cast<size_t>(d)]) {
      throw TensorShapeException(std::string(op) + ": axis " + std::to_string(a) +
                                 " is given twice");
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  return reduced;
}

DimVector<int> KeptThenReduced(const AxisMask& reduced, int rank) {
  DimVector<int> order;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[static_cast<size_t>(d)]) order.push_back(d);
  }
  for (int d = 0; d < rank; ++d) {
    if (reduced[static_cast<size_t>(d)]) order.push_back(d);
  }
  return order;
}

Shape KeepDimsShape(const Shape& shape, const AxisMask& reduced) {
  DimVector<int64_t> extents;
  for (int d = 0; d < shape.rank(); ++d) {
    extents.push_back(reduced[static_cast<size_t>(d)] ? 1 : shape[d]);
  }
  return Shape(extents.span());
}

Tensor DropAxes(const Tensor& t, const AxisMask& reduced) {
  DimVector<int64_t> extents;
  for (int d = 0; d < t.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) extents.push_back(t.shape()[d]);
  }
  return *t.TryReshape(extents.span());  // contiguous, so always a view
}

std::vector<int64_t> MaskInts(const AxisMask& reduced, int rank) {
  return std::vector<int64_t>(reduced.begin(), reduced.begin() + rank);
}

AxisMask MaskOf(std::span<const int64_t> ints) {
  AxisMask reduced{};
  for (size_t d = 0; d < ints.size(); ++d) reduced[d] = ints[d] != 0;
  return reduced;
}

}  // namespace onemodel::ops::internal
