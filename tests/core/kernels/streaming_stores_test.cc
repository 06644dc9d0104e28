// The streaming-store threshold: this machine's last-level cache size, read from sysfs (sizes
// such as "32768K") or a capped sysconf figure, and a quarter of it as the default; and where a
// streaming row's whole lines begin.
#include "core/kernels/streaming_stores.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace onemodel {
namespace {

TEST(StreamingStoresTest, LastLevelCacheIsAPlausibleSizeInBytes) {
  // A unit dropped while parsing ("32768K" read as 32768) would land far below 256 KiB.
  EXPECT_GE(LastLevelCacheBytes(), int64_t{256} << 10);
  EXPECT_LE(LastLevelCacheBytes(), int64_t{4} << 30);
}

TEST(StreamingStoresTest, SysfsFigureWinsAndAReportedOneIsCappedAt64MiB) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  EXPECT_EQ(LastLevelCacheBytesFrom(32 * kMiB, 508 * kMiB), 32 * kMiB);
  EXPECT_EQ(LastLevelCacheBytesFrom(256 * kMiB, 508 * kMiB), 256 * kMiB);  // listed: trusted
  EXPECT_EQ(LastLevelCacheBytesFrom(0, 508 * kMiB), 64 * kMiB);            // this VM's CPUID figure
  EXPECT_EQ(LastLevelCacheBytesFrom(0, 16 * kMiB), 16 * kMiB);
  EXPECT_EQ(LastLevelCacheBytesFrom(0, -1), 32 * kMiB);  // neither: the fallback
}

TEST(StreamingStoresTest, DefaultThresholdIsAQuarterOfTheLastLevelCache) {
  EXPECT_EQ(DefaultStreamingMinBytes(), LastLevelCacheBytes() / 4);
}

TEST(StreamingStoresTest, ElementsBeforeLineCountsToTheNextBoundaryAtMostN) {
  alignas(64) static float f[64];
  alignas(64) static uint16_t h[64];
  EXPECT_EQ(ElementsBeforeLine(f, 100), 0);  // already on a boundary
  for (int64_t k = 1; k < 16; ++k) {
    EXPECT_EQ(ElementsBeforeLine(f + k, 100), 16 - k) << k;
    EXPECT_EQ(ElementsBeforeLine(f + k, 3), std::min<int64_t>(3, 16 - k)) << k;  // short rows
  }
  EXPECT_EQ(ElementsBeforeLine(h + 1, 100), 31);  // counted in the element's own size
  EXPECT_EQ(ElementsBeforeLine(h + 32, 100), 0);
  EXPECT_EQ(ElementsBeforeLine(f + 5, 0), 0);  // an empty row
}

}  // namespace
}  // namespace onemodel
