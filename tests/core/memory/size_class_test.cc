#include "core/memory/size_class.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace onemodel {
namespace {

// Spec 6's rule restated independently: for n > 256 the class is the smallest of
// b * {1.25, 1.5, 1.75, 2} that holds n, with b the largest power of two below n.
int64_t ExpectedClass(int64_t n) {
  if (n <= 256) {
    int64_t c = 64;
    while (c < n) c += 64;
    return c;
  }
  int64_t b = 256;
  while (b * 2 < n) b *= 2;
  for (int64_t k = 5; k <= 8; ++k) {
    if (b * k / 4 >= n) return b * k / 4;
  }
  ADD_FAILURE() << "no class for " << n;
  return -1;
}

TEST(SizeClassTest, SmallRequestsRoundUpToMultiplesOf64) {
  EXPECT_EQ(SizeClassBytes(0), 64);
  EXPECT_EQ(SizeClassBytes(1), 64);
  EXPECT_EQ(SizeClassBytes(64), 64);
  EXPECT_EQ(SizeClassBytes(65), 128);
  EXPECT_EQ(SizeClassBytes(192), 192);
  EXPECT_EQ(SizeClassBytes(193), 256);
  EXPECT_EQ(SizeClassBytes(256), 256);
}

TEST(SizeClassTest, LargeRequestsUseQuarterSteps) {
  EXPECT_EQ(SizeClassBytes(257), 320);
  EXPECT_EQ(SizeClassBytes(320), 320);
  EXPECT_EQ(SizeClassBytes(321), 384);
  EXPECT_EQ(SizeClassBytes(448), 448);
  EXPECT_EQ(SizeClassBytes(449), 512);
  EXPECT_EQ(SizeClassBytes(512), 512);
  EXPECT_EQ(SizeClassBytes(513), 640);
  EXPECT_EQ(SizeClassBytes(65536), 65536);
  EXPECT_EQ(SizeClassBytes(65537), 81920);
  EXPECT_EQ(SizeClassBytes(2147483647), 2147483648);
}

TEST(SizeClassTest, EveryBoundaryMatchesTheIndependentFormula) {
  for (int64_t n : {0, 1, 63, 64, 65, 127, 128, 129, 255, 256, 257, 320, 321}) {
    EXPECT_EQ(SizeClassBytes(n), ExpectedClass(n)) << n;
  }
  for (int k = 9; k <= 31; ++k) {
    const int64_t p = int64_t{1} << k;
    for (int64_t n : {p - 1, p, p + 1, p + p / 4, p + p / 4 + 1, p + p / 2, p + p / 2 + 1,
                      p + 3 * p / 4, p + 3 * p / 4 + 1}) {
      if (n > 2147483647) continue;
      EXPECT_EQ(SizeClassBytes(n), ExpectedClass(n)) << n;
    }
  }
  EXPECT_EQ(SizeClassBytes(2147483647), ExpectedClass(2147483647));
}

TEST(SizeClassTest, WasteStaysBelowAQuarterAbove256) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> dist(257, 2147483647);
  for (int i = 0; i < 200000; ++i) {
    const int64_t n = dist(rng);
    const int64_t c = SizeClassBytes(n);
    ASSERT_GE(c, n);
    ASSERT_LT(c - n, n / 4 + 1) << n;  // waste < 25 % of the request
    ASSERT_EQ(c, ExpectedClass(n)) << n;
  }
}

TEST(SizeClassTest, IndexIsDenseMonotoneAndInvertible) {
  int previous = -1;
  for (int64_t n = 0; n <= (int64_t{1} << 20); n += (n < 4096 ? 1 : 61)) {
    const int index = SizeClassIndex(n);
    ASSERT_GE(index, previous);
    ASSERT_LE(index, previous + 1) << n;
    ASSERT_EQ(SizeClassBytesAt(index), SizeClassBytes(n)) << n;
    previous = index;
  }
  EXPECT_EQ(SizeClassIndex(int64_t{1} << 32), kSizeClassCount - 1);
  EXPECT_EQ(SizeClassBytesAt(kSizeClassCount - 1), int64_t{1} << 32);
}

}  // namespace
}  // namespace onemodel
