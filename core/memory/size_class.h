// The pool's size classes (spec 6).
//
// n <= 256 bytes: max(64, n rounded up to a multiple of 64).
// n > 256: b = 2^floor(log2(n-1)), step = b/4, class = b + ceil((n-b)/step) * step,
// so classes are b * {1.25, 1.5, 1.75, 2} and waste stays below 25 %.
//
//   SizeClassBytes(257) == 320;  SizeClassIndex(257) == 4;
#pragma once

#include <bit>
#include <cstdint>

namespace onemodel {

// Classes up to 2^32 bytes: enough for 2^31-1 plus the CHECKED canary.
inline constexpr int kSmallClassCount = 4;  // 64, 128, 192, 256
inline constexpr int kSizeClassCount = kSmallClassCount + 4 * (32 - 8);

// The class size in bytes for a request of n bytes (0 <= n <= 2^32).
constexpr int64_t SizeClassBytes(int64_t n) {
  if (n <= 256) return n <= 64 ? 64 : (n + 63) / 64 * 64;
  const int log2b = 63 - std::countl_zero(static_cast<uint64_t>(n - 1));
  const int64_t b = int64_t{1} << log2b;
  const int64_t steps = (n - b + (b / 4) - 1) >> (log2b - 2);  // ceil((n - b) / step)
  return b + (steps << (log2b - 2));
}

// The index of n's class in [0, kSizeClassCount): classes in increasing size order.
constexpr int SizeClassIndex(int64_t n) {
  if (n <= 256) return n <= 64 ? 0 : static_cast<int>((n + 63) / 64) - 1;
  const int log2b = 63 - std::countl_zero(static_cast<uint64_t>(n - 1));
  const int64_t b = int64_t{1} << log2b;
  const int k = static_cast<int>((n - b + (b / 4) - 1) >> (log2b - 2));  // 1..4
  return kSmallClassCount + (log2b - 8) * 4 + (k - 1);
}

// The size in bytes of class `index` (inverse of SizeClassIndex).
constexpr int64_t SizeClassBytesAt(int index) {
  if (index < kSmallClassCount) return 64 * int64_t{index + 1};
  const int rel = index - kSmallClassCount;
  const int64_t b = int64_t{256} << (rel / 4);
  return b + (rel % 4 + 1) * (b / 4);
}

}  // namespace onemodel
