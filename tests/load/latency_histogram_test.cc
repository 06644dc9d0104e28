// LatencyHistogram: bucket edges, percentiles against exact ranks, merging, empty histograms.
#include "client/load/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace onemodel::load {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

TEST(LatencyHistogramTest, EmptyHistogramReportsZeros) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0);
  EXPECT_EQ(h.PercentileMicros(50), 0);
  EXPECT_EQ(h.MeanMicros(), 0);
  EXPECT_EQ(h.MinMicros(), 0);
  EXPECT_EQ(h.MaxMicros(), 0);
}

TEST(LatencyHistogramTest, EveryValueLiesInItsBucketWithinOneSixtyFourth) {
  for (int64_t nanos = 0; nanos < (int64_t{1} << 39); nanos = nanos * 9 / 8 + 1) {
    const int bucket = LatencyHistogram::BucketOf(nanos);
    const int64_t upper = LatencyHistogram::BucketUpperNanos(bucket);
    ASSERT_GE(upper, nanos);
    ASSERT_LE(upper - nanos, std::max<int64_t>(nanos / 64, 0)) << nanos;
    if (bucket > 0) {
      ASSERT_LT(LatencyHistogram::BucketUpperNanos(bucket - 1), nanos) << nanos;
    }
  }
}

TEST(LatencyHistogramTest, BucketsAreContiguousAndIncreasing) {
  for (int b = 1; b < LatencyHistogram::kBuckets; ++b) {
    ASSERT_EQ(LatencyHistogram::BucketOf(LatencyHistogram::BucketUpperNanos(b - 1) + 1), b);
  }
}

TEST(LatencyHistogramTest, VeryLongLatenciesLandInTheLastBucket) {
  EXPECT_EQ(LatencyHistogram::BucketOf(int64_t{1} << 50), LatencyHistogram::kBuckets - 1);
  LatencyHistogram h;
  h.Record(std::chrono::hours(1));
  EXPECT_DOUBLE_EQ(h.PercentileMicros(50),
                   3600e6);  // the exact maximum bounds the open last bucket
}

TEST(LatencyHistogramTest, PercentilesOfOneToAThousandMicroseconds) {
  LatencyHistogram h;
  for (int us = 1000; us >= 1; --us) h.Record(microseconds(us));
  EXPECT_EQ(h.count(), 1000);
  EXPECT_NEAR(h.PercentileMicros(50), 500, 500 / 64.0);
  EXPECT_NEAR(h.PercentileMicros(90), 900, 900 / 64.0);
  EXPECT_NEAR(h.PercentileMicros(99), 990, 990 / 64.0);
  EXPECT_NEAR(h.PercentileMicros(99.9), 999, 999 / 64.0);
  EXPECT_DOUBLE_EQ(h.PercentileMicros(100), 1000);
  EXPECT_DOUBLE_EQ(h.MinMicros(), 1);
  EXPECT_DOUBLE_EQ(h.MaxMicros(), 1000);
  EXPECT_DOUBLE_EQ(h.MeanMicros(), 500.5);
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int ns = 1; ns <= 100; ++ns) h.Record(nanoseconds(ns));
  EXPECT_DOUBLE_EQ(h.PercentileMicros(50), 0.050);
  EXPECT_DOUBLE_EQ(h.PercentileMicros(99), 0.099);
}

TEST(LatencyHistogramTest, PercentileMatchesTheSortedSampleWithinPrecision) {
  std::mt19937 random(3);
  std::lognormal_distribution<double> dist(12.0, 1.5);  // around 160 us, long tail
  std::vector<int64_t> samples(20000);
  LatencyHistogram h;
  for (int64_t& s : samples) {
    s = static_cast<int64_t>(dist(random));
    h.Record(nanoseconds(s));
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const double exact = static_cast<double>(samples[static_cast<size_t>(p / 100 * 20000) - 1]);
    EXPECT_NEAR(h.PercentileMicros(p) * 1e3, exact, exact / 64.0 + 1) << p;
  }
}

TEST(LatencyHistogramTest, MergeEqualsRecordingEverythingInOne) {
  LatencyHistogram a, b, both;
  for (int i = 1; i <= 500; ++i) {
    a.Record(microseconds(i));
    both.Record(microseconds(i));
    b.Record(microseconds(10 * i));
    both.Record(microseconds(10 * i));
  }
  LatencyHistogram merged = a;
  merged.Merge(b);
  EXPECT_EQ(merged.count(), both.count());
  EXPECT_DOUBLE_EQ(merged.MeanMicros(), both.MeanMicros());
  EXPECT_DOUBLE_EQ(merged.MinMicros(), 1);
  EXPECT_DOUBLE_EQ(merged.MaxMicros(), 5000);
  for (double p : {50.0, 90.0, 99.0})
    EXPECT_EQ(merged.PercentileMicros(p), both.PercentileMicros(p));
  LatencyHistogram empty;
  merged.Merge(empty);
  EXPECT_DOUBLE_EQ(merged.MinMicros(), 1);
}

TEST(LatencyHistogramTest, NegativeLatencyCountsAsZero) {
  LatencyHistogram h;
  h.Record(nanoseconds(-5));
  EXPECT_EQ(h.count(), 1);
  EXPECT_EQ(h.MaxMicros(), 0);
}

}  // namespace
}  // namespace onemodel::load
