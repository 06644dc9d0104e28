// LogRateLimit: a burst of per_second lines, then one per 1/per_second seconds; the first line
// allowed after refusals carries their count; 0 is no limit; a clock read out of order (two
// threads) neither refills nor throws.
#include "server/observability/log_rate_limit.h"

#include <gtest/gtest.h>

#include <chrono>

namespace onemodel::server {
namespace {

using std::chrono::milliseconds;

TEST(LogRateLimit, ABurstThenOneLinePerIntervalAndTheCountOfTheRest) {
  LogRateLimit limit(4);
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  int64_t held = -1;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(limit.Allow(t0, &held));
    EXPECT_EQ(held, 0);
  }
  EXPECT_FALSE(limit.Allow(t0, &held));
  EXPECT_FALSE(limit.Allow(t0 + milliseconds(200), &held)) << "a quarter second earns one";
  EXPECT_EQ(held, 0);
  EXPECT_TRUE(limit.Allow(t0 + milliseconds(250), &held));
  EXPECT_EQ(held, 2) << "the two refused";
  EXPECT_FALSE(limit.Allow(t0 + milliseconds(250), &held));
  EXPECT_TRUE(limit.Allow(t0 + std::chrono::hours(2), &held));
  EXPECT_EQ(held, 1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limit.Allow(t0 + std::chrono::hours(2), &held));
  EXPECT_FALSE(limit.Allow(t0 + std::chrono::hours(2), &held)) << "a long pause earns 4, no more";
}

TEST(LogRateLimit, ZeroAllowsEveryLine) {
  LogRateLimit limit(0);
  const auto t0 = std::chrono::steady_clock::now();
  int64_t held = -1;
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(limit.Allow(t0, &held));
  EXPECT_EQ(held, 0);
}

TEST(LogRateLimit, AnEarlierClockReadingEarnsNothing) {
  LogRateLimit limit(1);
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  int64_t held = 0;
  EXPECT_TRUE(limit.Allow(t0, &held));
  EXPECT_FALSE(limit.Allow(t0 - std::chrono::seconds(5), &held));
  EXPECT_FALSE(limit.Allow(t0 + milliseconds(500), &held)) << "counted from t0, not t0 - 5 s";
  EXPECT_TRUE(limit.Allow(t0 + milliseconds(1000), &held));
  EXPECT_EQ(held, 2);
}

}  // namespace
}  // namespace onemodel::server
