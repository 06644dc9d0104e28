#include <cstdint>

#include "bench/compare/cases.h"

namespace onemodel::bench {

Tensor Filled(const Shape& shape, uint32_t seed, Allocator& allocator) {
  Tensor t = Tensor::Empty(shape, DType::kFloat, allocator);
  uint32_t state = seed;
  for (float& v : t.MutableData<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) * 0x1p-23f - 1.0f;
  }
  return t;
}

}  // namespace onemodel::bench
