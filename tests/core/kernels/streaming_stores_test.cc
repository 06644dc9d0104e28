// The streaming-store threshold: this machine's last-level cache size, read from sysfs (sizes
// such as "32768K"), and a quarter of it as the default.
#include "core/kernels/streaming_stores.h"

#include <gtest/gtest.h>

namespace onemodel {
namespace {

TEST(StreamingStoresTest, LastLevelCacheIsAPlausibleSizeInBytes) {
  // A unit dropped while parsing ("32768K" read as 32768) would land far below 256 KiB.
  EXPECT_GE(LastLevelCacheBytes(), int64_t{256} << 10);
  EXPECT_LE(LastLevelCacheBytes(), int64_t{4} << 30);
}

TEST(StreamingStoresTest, DefaultThresholdIsAQuarterOfTheLastLevelCache) {
  EXPECT_EQ(DefaultStreamingMinBytes(), LastLevelCacheBytes() / 4);
}

}  // namespace
}  // namespace onemodel
