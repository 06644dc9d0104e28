// Helpers for the kernel tests: float tensors of a given logical shape laid out at random
// (permuted, reversed, with gaps, optionally broadcast) inside a larger buffer filled with a
// sentinel, so a test can check that a kernel touched nothing outside its output view.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "core/kernels/fast_kernels.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/tensor.h"
#include "tests/core/tensor/tensor_test_util.h"

namespace onemodel::kernel_test {

inline constexpr uint32_t kSentinelBits = 0x7FE5A5A5;  // a quiet NaN nobody computes

struct Placed {
  Tensor view;   // the tensor a kernel sees
  Tensor whole;  // the 1-D buffer around it
};

// A tensor of logical `shape` in a random layout; inputs may broadcast (stride 0).
inline Placed RandomLayout(const Shape& shape, std::mt19937& rng, Allocator& allocator,
                           bool allow_broadcast) {
  const int rank = shape.rank();
  std::vector<int> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int64_t> stored(static_cast<size_t>(rank)), step(static_cast<size_t>(rank)),
      extent(static_cast<size_t>(rank));
  int64_t total = 1;
  for (int i = 0; i < rank; ++i) {
    const size_t k = static_cast<size_t>(i);
    const int d = perm[k];
    const bool broadcast = allow_broadcast && shape[d] > 1 && rng() % 5 == 0;
    stored[k] = broadcast ? 1 : shape[d];
    step[k] = 1 + static_cast<int64_t>(rng() % 2);
    extent[k] = stored[k] * step[k] + static_cast<int64_t>(rng() % 2);
    total *= extent[k];
  }
  const int64_t margin = 16;
  Placed p;
  p.whole = Tensor::Empty(Shape{total + 2 * margin}, DType::kFloat, allocator);
  p.whole.Fill(std::bit_cast<float>(kSentinelBits));
  Tensor v = p.whole.Slice(0, margin, margin + total).TryReshape(extent).value();
  for (int i = 0; i < rank; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (stored[k] > 0 && rng() % 3 == 0) {
      v = v.Slice(i, stored[k] * step[k] - 1, -extent[k] - 1, -step[k]);  // reversed
    } else {
      v = v.Slice(i, 0, stored[k] * step[k], step[k]);
    }
  }
  std::vector<int> inverse(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) inverse[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
  v = v.Permute(inverse);
  p.view = v.Expand(shape);
  return p;
}

using tensor_test::ForEachIndex;

// Every element offset of `view`, for sentinel checks.
inline std::set<int64_t> OffsetsOf(const Tensor& view) {
  const std::vector<int64_t> offsets = tensor_test::RowMajorOffsets(view);
  return {offsets.begin(), offsets.end()};
}

// Number of elements of p.whole outside p.view that lost the sentinel.
inline int64_t SentinelDamage(const Placed& p) {
  const std::set<int64_t> inside = OffsetsOf(p.view);
  const auto all = p.whole.Data<float>();
  int64_t damaged = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!inside.count(static_cast<int64_t>(i)) &&
        std::bit_cast<uint32_t>(all[i]) != kSentinelBits) {
      ++damaged;
    }
  }
  return damaged;
}

// A value drawn to hit the interesting cases: specials, ties, tiny and huge magnitudes.
inline float InterestingFloat(std::mt19937& rng) {
  switch (rng() % 12) {
    case 0:
      return std::bit_cast<float>(0x7FC00000u | (static_cast<uint32_t>(rng()) & 0x3FFFFF) |
                                  (rng() % 2 ? 0x80000000u : 0u));  // NaN, any payload
    case 1:
      return rng() % 2 ? INFINITY : -INFINITY;
    case 2:
      return rng() % 2 ? 0.0f : -0.0f;
    case 3:
      return std::bit_cast<float>(static_cast<uint32_t>(rng()) & 0x807FFFFFu);  // subnormal
    case 4:
      return static_cast<float>(static_cast<int>(rng() % 5) - 2);  // small integers: ties
    case 5:
      return std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng),
                        static_cast<int>(rng() % 60) - 30);
    default:
      return std::uniform_real_distribution<float>(-8, 8)(rng);
  }
}

// Fills every element of `view` (through its strides) with InterestingFloat values.
inline void FillRandom(Tensor& view, std::mt19937& rng) {
  auto storage = view.MutableStorage<float>();
  for (int64_t at : OffsetsOf(view)) storage[static_cast<size_t>(at)] = InterestingFloat(rng);
}

// Random logical shape: rank 0-4, extents 0-6, now and then one long dimension (SIMD tails).
inline Shape RandomShape(std::mt19937& rng, int max_rank = 4) {
  const int rank = static_cast<int>(rng() % static_cast<unsigned>(max_rank + 1));
  std::vector<int64_t> e(static_cast<size_t>(rank));
  for (auto& x : e) x = rng() % 10 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 6);
  if (rank > 0 && rng() % 3 == 0) e[rng() % e.size()] = 17 + static_cast<int64_t>(rng() % 60);
  return Shape(std::span<const int64_t>(e));
}

}  // namespace onemodel::kernel_test
