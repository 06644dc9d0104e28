#include "core/tensor/strided_copy.h"

#include <cstdint>
#include <cstring>

#include "core/shape/strided_walk.h"

namespace onemodel::internal {
namespace {

template <typename Word>
void CopyRow(std::byte* dst, int64_t dst_step, const std::byte* src, int64_t src_step, int64_t n) {
  if (src_step == 0) {  // one value repeated (a fill, a broadcast column): read it once
    Word w;
    std::memcpy(&w, src, sizeof(Word));
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dst_step, &w, sizeof(Word));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    Word w;
    std::memcpy(&w, src + i * src_step, sizeof(Word));
    std::memcpy(dst + i * dst_step, &w, sizeof(Word));
  }
}

// Copies the flat elements [begin, end) of `walk` (operand 0 the destination, 1 the source);
// the destination's element at offset o is at dst + (o - dst_origin) x element_size.
void CopyRows(const StridedWalk<2>& walk, int size, int64_t begin, int64_t end, std::byte* dst,
              int64_t dst_origin, const std::byte* src) {
  const int64_t ds = walk.RowStride(0) * size, ss = walk.RowStride(1) * size;
  const bool dense = ds == size && ss == size;
  walk.ForEachRow(begin, end, [&](int64_t n, const StridedWalk<2>::Offsets& at) {
    std::byte* d = dst + (at[0] - dst_origin) * size;
    const std::byte* s = src + at[1] * size;
    if (dense || n == 1) {
      std::memcpy(d, s, static_cast<size_t>(n * size));
      return;
    }
    switch (size) {
      case 1:
        CopyRow<uint8_t>(d, ds, s, ss, n);
        break;
      case 2:
        CopyRow<uint16_t>(d, ds, s, ss, n);
        break;
      case 4:
        CopyRow<uint32_t>(d, ds, s, ss, n);
        break;
      default:
        CopyRow<uint64_t>(d, ds, s, ss, n);
        break;
    }
  });
}

}  // namespace

void StridedCopy(const Shape& shape, int element_size, std::byte* dst, const Strides& dst_strides,
                 const std::byte* src, const Strides& src_strides) {
  if (shape.IsEmpty()) return;
  const auto walk =
      StridedWalk<2>::Of(shape.extents(), {dst_strides.values(), src_strides.values()});
  CopyRows(walk, element_size, 0, shape.ElementCount(), dst, 0, src);
}

void StridedCopyRange(const Shape& shape, int element_size, const std::byte* src,
                      const Strides& src_strides, int64_t first, int64_t count, std::byte* dst) {
  if (count == 0) return;
  const Strides row_major = ContiguousStrides(shape);  // offset of an element = its flat index
  const auto walk = StridedWalk<2>::Of(shape.extents(), {row_major.values(), src_strides.values()});
  CopyRows(walk, element_size, first, first + count, dst, first, src);
}

}  // namespace onemodel::internal
