// Reshape viewability (spec 4), as pure stride arithmetic.
//
// Drop source dimensions of extent 1; merge neighbours into runs while
// stride[i] == stride[i+1] * extent[i+1]; the new shape is viewable iff its dimensions, left
// to right, partition into groups whose extent products equal the run lengths in order,
// followed only by extent-1 dimensions. Inside a group strides are contiguous from the run's
// inner stride. Empty tensors are always viewable with contiguous strides.
//
//   auto s = ReshapeStrides(Shape{2, 3}, Strides{3, 1}, Shape{6});  // {1}
#pragma once

#include <optional>

#include "core/shape/strides.h"

namespace onemodel {

// The strides that view (from, strides) as `to`, or nullopt when no view exists.
// `to` must hold as many elements as `from`.
std::optional<Strides> ReshapeStrides(const Shape& from, const Strides& strides, const Shape& to);

}  // namespace onemodel
