// Element copies between two strided layouts of one shape, for any element size. Contiguous
// runs become memcpy; dimensions that merge in both layouts are coalesced first.
//
//   StridedCopy(shape, 4, dst_base, dst_strides, src_base, src_strides);
#pragma once

#include <cstddef>

#include "core/shape/strides.h"

namespace onemodel::internal {

// Copies every element of `shape` (element_size 1, 2, 4 or 8 bytes) from the layout
// (src, src_strides) to (dst, dst_strides). Pointers address element (0, ..., 0); strides are
// in elements. A src_strides of all zeros repeats one value (a fill). The two must not overlap.
void StridedCopy(const Shape& shape, int element_size, std::byte* dst, const Strides& dst_strides,
                 const std::byte* src, const Strides& src_strides);

}  // namespace onemodel::internal
