#include "core/tensor/strided_copy.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace onemodel::internal {
namespace {

struct Dims {
  int rank = 0;
  std::array<int64_t, kMaxRank> extent{};
  std::array<int64_t, kMaxRank> dst{};  // strides in bytes
  std::array<int64_t, kMaxRank> src{};
};

// Drops extent-1 dimensions and merges neighbours that are contiguous in both layouts.
Dims Coalesce(const Shape& shape, int element_size, const Strides& dst, const Strides& src) {
  Dims c;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == 1) continue;
    const int64_t ds = int64_t{dst[d]} * element_size, ss = int64_t{src[d]} * element_size;
    if (c.rank > 0) {
      const size_t i = static_cast<size_t>(c.rank - 1);
      if (c.dst[i] == ds * shape[d] && c.src[i] == ss * shape[d]) {
        c.extent[i] *= shape[d];
        c.dst[i] = ds;
        c.src[i] = ss;
        continue;
      }
    }
    const size_t i = static_cast<size_t>(c.rank++);
    c.extent[i] = shape[d];
    c.dst[i] = ds;
    c.src[i] = ss;
  }
  return c;
}

template <typename Word>
void CopyRow(std::byte* dst, int64_t dst_step, const std::byte* src, int64_t src_step, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    Word w;
    std::memcpy(&w, src + i * src_step, sizeof(Word));
    std::memcpy(dst + i * dst_step, &w, sizeof(Word));
  }
}

}  // namespace

void StridedCopy(const Shape& shape, int element_size, std::byte* dst, const Strides& dst_strides,
                 const std::byte* src, const Strides& src_strides) {
  if (shape.IsEmpty()) return;
  const Dims c = Coalesce(shape, element_size, dst_strides, src_strides);
  if (c.rank == 0) {
    std::memcpy(dst, src, static_cast<size_t>(element_size));
    return;
  }
  const size_t inner = static_cast<size_t>(c.rank - 1);
  const int64_t n = c.extent[inner], ds = c.dst[inner], ss = c.src[inner];
  const bool dense = ds == element_size && ss == element_size;
  auto row = [&](std::byte* d, const std::byte* s) {
    if (dense) {
      std::memcpy(d, s, static_cast<size_t>(n * element_size));
      return;
    }
    switch (element_size) {
      case 1: CopyRow<uint8_t>(d, ds, s, ss, n); break;
      case 2: CopyRow<uint16_t>(d, ds, s, ss, n); break;
      case 4: CopyRow<uint32_t>(d, ds, s, ss, n); break;
      default: CopyRow<uint64_t>(d, ds, s, ss, n); break;
    }
  };
  // Odometer over the outer dimensions.
  std::array<int64_t, kMaxRank> index{};
  for (;;) {
    row(dst, src);
    int d = static_cast<int>(inner) - 1;
    for (; d >= 0; --d) {
      const size_t i = static_cast<size_t>(d);
      dst += c.dst[i];
      src += c.src[i];
      if (++index[i] < c.extent[i]) break;
      dst -= c.dst[i] * c.extent[i];
      src -= c.src[i] * c.extent[i];
      index[i] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace onemodel::internal
