// The streaming-store threshold: this machine's last-level cache size, read from sysfs (sizes
// such as "32768K") or a capped sysconf figure, and a quarter of it as the default.
#include "core/kernels/streaming_stores.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace onemodel
