// --sweep's rates and the knee found on synthetic measurements.
#include "client/load/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace onemodel::load {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The message ParseSweep(text) throws ("" when it does not).
std::string SweepError(const std::string& text) {
  try {
    ParseSweep(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SweepTest, RatesAreLogSpacedFromFirstToLast) {
  EXPECT_THAT(ParseSweep("10:1000:3"), ElementsAre(10, 100, 1000));
  EXPECT_THAT(ParseSweep("50:50000:4"), ElementsAre(50, 500, 5000, 50000));
  const std::vector<double> rates = ParseSweep("100:200:5");
  ASSERT_EQ(rates.size(), 5);
  EXPECT_NEAR(rates[2], 141.421356, 1e-5);
  EXPECT_EQ(rates.back(), 200);
}

TEST(SweepTest, MalformedSweepsSayWhatIsWrong) {
  EXPECT_THAT(SweepError("100:1000"), HasSubstr("FROM:TO:STEPS"));
  EXPECT_THAT(SweepError("a:1000:3"), HasSubstr("first rate 'a' is not a number"));
  EXPECT_THAT(SweepError("100:1e3x:3"), HasSubstr("last rate '1e3x' is not a number"));
  EXPECT_THAT(SweepError("1000:100:3"), HasSubstr("FROM < TO"));
  EXPECT_THAT(SweepError("0:100:3"), HasSubstr("FROM < TO"));
  EXPECT_THAT(SweepError("10:100:1"), HasSubstr("STEPS must be a whole number from 2 to 100"));
  EXPECT_THAT(SweepError("10:100:2.5"), HasSubstr("whole number"));
  EXPECT_EQ(SweepError("10:100:2"), "");
}

TEST(SweepTest, RatesAboveAMillionPerSecondAndNonFiniteOnesAreRefused) {
  EXPECT_THAT(SweepError("1e15:1e300:2"), HasSubstr("at most 1000000 requests/s"));
  EXPECT_THAT(SweepError("10:1000001:2"), HasSubstr("at most 1000000 requests/s"));
  EXPECT_THAT(SweepError("10:inf:2"), HasSubstr("last rate 'inf' is not a number"));
  EXPECT_THAT(SweepError("nan:10:2"), HasSubstr("first rate 'nan' is not a number"));
  EXPECT_EQ(SweepError("10:1000000:2"), "");
}

// p99s (in ms) of rates 100, 200, 400, ... with no errors.
std::vector<RatePoint> Curve(const std::vector<double>& p99_ms) {
  std::vector<RatePoint> points;
  double rate = 100;
  for (const double p99 : p99_ms) {
    points.push_back({.rate_per_s = rate, .p99_us = p99 * 1e3, .errors = 0});
    rate *= 2;
  }
  return points;
}

TEST(SweepTest, KneeIsTheLastRateUnderTheBound) {
  const Knee knee = FindKnee(Curve({1, 1.2, 1.5, 3, 40, 400}), /*p99_bound_us=*/5000);
  EXPECT_TRUE(knee.found);
  EXPECT_TRUE(knee.limited);
  EXPECT_EQ(knee.rate_per_s, 800);
}

TEST(SweepTest, ARateThatPassesAgainAfterTheFirstFailureIsNoise) {
  const Knee knee = FindKnee(Curve({1, 9, 2, 30}), 5000);
  EXPECT_EQ(knee.rate_per_s, 100);
}

TEST(SweepTest, ErrorsBreakARateWhateverItsLatency) {
  std::vector<RatePoint> points = Curve({1, 1, 1});
  points[1].errors = 3;
  EXPECT_EQ(FindKnee(points, 5000).rate_per_s, 100);
}

TEST(SweepTest, PointsAreJudgedInRateOrder) {
  std::vector<RatePoint> points = Curve({1, 2, 90});
  std::swap(points[0], points[2]);
  EXPECT_EQ(FindKnee(points, 5000).rate_per_s, 200);
}

TEST(SweepTest, NoKneeWhenTheLowestRateFailsAndAboveTheSweepWhenNoneDoes) {
  const Knee too_fast = FindKnee(Curve({8, 9}), 5000);
  EXPECT_FALSE(too_fast.found);
  EXPECT_TRUE(too_fast.limited);
  const Knee held = FindKnee(Curve({1, 2, 3}), 5000);
  EXPECT_TRUE(held.found);
  EXPECT_FALSE(held.limited);
  EXPECT_EQ(held.rate_per_s, 400);
}

}  // namespace
}  // namespace onemodel::load
