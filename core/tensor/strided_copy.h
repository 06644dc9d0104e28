// Element copies between two strided layouts of one shape, for any element size. Contiguous
// runs become memcpy; dimensions that merge in both layouts are coalesced first
// (core/shape/strided_walk.h).
//
//   StridedCopy(shape, 4, dst_base, dst_strides, src_base, src_strides);
//   StridedCopyRange(shape, 4, src_base, src_strides, 10, 6, out);  // elements 10..15, row-major
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/shape/strides.h"

namespace onemodel::internal {

// Copies every element of `shape` (element_size 1, 2, 4 or 8 bytes) from the layout
// (src, src_strides) to (dst, dst_strides). Pointers address element (0, ..., 0); strides are
// in elements. A src_strides of all zeros repeats one value (a fill). The two must not overlap.
void StridedCopy(const Shape& shape, int element_size, std::byte* dst, const Strides& dst_strides,
                 const std::byte* src, const Strides& src_strides);

// Copies the elements [first, first + count) of the layout (src, src_strides), in row-major
// order, to the contiguous `dst` (count x element_size bytes); the range must lie within the
// shape's element count.
void StridedCopyRange(const Shape& shape, int element_size, const std::byte* src,
                      const Strides& src_strides, int64_t first, int64_t count, std::byte* dst);

}  // namespace onemodel::internal
