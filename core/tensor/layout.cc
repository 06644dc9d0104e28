#include "core/tensor/layout.h"

namespace onemodel {

std::string_view LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kNchw:
      return "NCHW";
    case Layout::kNhwc:
      return "NHWC";
    case Layout::kStrided:
      return "Strided";
    case Layout::kBlocked:
      return "Blocked";
    case Layout::kBlockedWeights:
      return "BlockedWeights";
  }
  return "Unknown";
}

Strides NhwcStrides(const Shape& nchw) {
  const int32_t c = nchw[1], h = nchw[2], w = nchw[3];
  // Saturating like ContiguousStrides: only an empty tensor can overflow here.
  auto sat = [](int64_t v) { return static_cast<int32_t>(v > kMaxElements ? kMaxElements : v); };
  return Strides{sat(int64_t{h} * w * c), 1, sat(int64_t{w} * c), c};
}

Layout LayoutOf(const Shape& shape, const Strides& strides) {
  if (shape.rank() != 4) return Layout::kStrided;
  if (IsContiguous(shape, strides)) return Layout::kNchw;
  const Strides nhwc = NhwcStrides(shape);
  for (int d = 0; d < 4; ++d) {
    if (shape[d] != 1 && strides[d] != nhwc[d]) return Layout::kStrided;
  }
  return Layout::kNhwc;
}

int64_t BlockedElementCount(const Shape& shape, int32_t block, Layout family) {
  const int split = BlockedDim(family);
  int64_t count = (int64_t{shape[split]} + block - 1) / block * block;
  for (int d = 0; d < 4; ++d) {
    if (d != split) count *= shape[d];
  }
  return count;
}

}  // namespace onemodel
