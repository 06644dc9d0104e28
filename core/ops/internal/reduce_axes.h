// The axes a reduction takes and the views it needs, shared by Sum/Mean (reduce.cc) and
// ReduceMax/ReduceMin (reduce_extrema.cc).
//
//   const auto reduced = internal::ReducedAxes("Sum", axes, x.rank());  // {} means all
//   const Tensor v = x.Permute(internal::KeptThenReduced(reduced, x.rank()).span());
#pragma once

#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "core/shape/dim_vector.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops::internal {

using AxisMask = std::array<bool, kMaxRank>;

// Which axes of a rank-r tensor are reduced (empty `axes`: all). Throws TensorShapeException
// naming `op` for an axis out of range or given twice.
AxisMask ReducedAxes(std::string_view op, std::span<const int> axes, int rank);

// The permutation putting the kept axes first and the reduced ones last, each in order.
DimVector<int> KeptThenReduced(const AxisMask& reduced, int rank);

// The keepdims shape: reduced axes of `shape` with extent 1.
Shape KeepDimsShape(const Shape& shape, const AxisMask& reduced);

// Drops the reduced axes of a contiguous keepdims result (a view).
Tensor DropAxes(const Tensor& t, const AxisMask& reduced);

// The mask as the 0/1 Ints a record keeps, and back.
std::vector<int64_t> MaskInts(const AxisMask& reduced, int rank);
AxisMask MaskOf(std::span<const int64_t> ints);

}  // namespace onemodel::ops::internal
