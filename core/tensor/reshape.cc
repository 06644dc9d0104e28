#include "core/tensor/reshape.h"

#include <array>

namespace onemodel {

std::optional<Strides> ReshapeStrides(const Shape& from, const Strides& strides, const Shape& to) {
  if (from.IsEmpty()) return ContiguousStrides(to);

  // Runs of mergeable source dimensions (extent-1 dimensions dropped).
  struct Run {
    int64_t length;
    int64_t inner_stride;
  };
  std::array<Run, kMaxRank> runs{};
  int run_count = 0;
  int64_t prev_stride = 0;
  for (int d = 0; d < from.rank(); ++d) {
    if (from[d] == 1) continue;
    if (run_count > 0 && prev_stride == static_cast<int64_t>(strides[d]) * from[d]) {
      Run& r = runs[static_cast<size_t>(run_count - 1)];
      r.length *= from[d];
      r.inner_stride = strides[d];
    } else {
      runs[static_cast<size_t>(run_count++)] = {from[d], strides[d]};
    }
    prev_stride = strides[d];
  }

  // Partition the new shape into groups, one per run, left to right.
  Strides out = ContiguousStrides(to);
  int d = 0;
  for (int r = 0; r < run_count; ++r) {
    const Run& run = runs[static_cast<size_t>(r)];
    const int first = d;
    int64_t product = 1;
    while (d < to.rank() && product < run.length) product *= to[d++];
    if (product != run.length) return std::nullopt;
    int64_t stride = run.inner_stride;
    for (int g = d - 1; g >= first; --g) {
      out[g] = static_cast<int32_t>(stride);
      stride *= to[g];
    }
  }
  for (; d < to.rank(); ++d) {
    if (to[d] != 1) return std::nullopt;
  }
  return out;
}

}  // namespace onemodel
