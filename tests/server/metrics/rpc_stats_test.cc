#include "server/observability/rpc_stats.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <iterator>
#include <stdexcept>
#include <thread>
#include <vector>

namespace onemodel::server {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

constexpr int kOk = 0;
constexpr int kInvalidArgument = 3;
constexpr int kNotFound = 5;

TEST(StatusCodeNameTest, NamesEveryGrpcCode) {
  EXPECT_EQ(StatusCodeName(0), "OK");
  EXPECT_EQ(StatusCodeName(kInvalidArgument), "INVALID_ARGUMENT");
  EXPECT_EQ(StatusCodeName(8), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(StatusCodeName(9), "FAILED_PRECONDITION");
  EXPECT_EQ(StatusCodeName(16), "UNAUTHENTICATED");
  EXPECT_EQ(StatusCodeName(17), "UNKNOWN");
  EXPECT_EQ(StatusCodeName(-1), "UNKNOWN");
}

TEST(RpcStatsTest, SnapshotListsMethodsInOrderAllZero) {
  RpcStats stats({"Ping", "CreateSession", "Run"});
  const std::vector<RpcMethodStats> snapshot = stats.Snapshot();
  ASSERT_EQ(snapshot.size(), 3u);
  EXPECT_EQ(snapshot[0].method, "Ping");
  EXPECT_EQ(snapshot[1].method, "CreateSession");
  EXPECT_EQ(snapshot[2].method, "Run");
  for (const RpcMethodStats& m : snapshot) {
    EXPECT_EQ(m.requests, 0);
    EXPECT_EQ(m.errors, 0);
    EXPECT_EQ(m.latency_sum_seconds, 0);
    for (int64_t n : m.codes) EXPECT_EQ(n, 0);
    for (int64_t n : m.latency_buckets) EXPECT_EQ(n, 0);
  }
}

TEST(RpcStatsTest, MethodIndexFindsEachNameAndRejectsUnknownOnes) {
  RpcStats stats({"Ping", "Run"});
  EXPECT_EQ(stats.MethodIndex("Ping"), 0);
  EXPECT_EQ(stats.MethodIndex("Run"), 1);
  EXPECT_THROW(stats.MethodIndex("Backward"), std::invalid_argument);
}

TEST(RpcStatsTest, RepeatedMethodNameIsRejected) {
  try {
    RpcStats stats({"Ping", "Run", "Ping"});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "RpcStats: method 'Ping' is named twice");
  }
}

TEST(RpcStatsTest, CountsRequestsErrorsAndCodesPerMethod) {
  RpcStats stats({"Ping", "Run"});
  const int run = stats.MethodIndex("Run");
  stats.Record(run, kOk, microseconds(10));
  stats.Record(run, kOk, microseconds(10));
  stats.Record(run, kInvalidArgument, microseconds(10));
  stats.Record(run, kNotFound, microseconds(10));
  stats.Record(run, 99, microseconds(10));  // not a gRPC code: UNKNOWN
  const std::vector<RpcMethodStats> snapshot = stats.Snapshot();
  EXPECT_EQ(snapshot[0].requests, 0) << "Ping untouched";
  const RpcMethodStats& m = snapshot[run];
  EXPECT_EQ(m.requests, 5);
  EXPECT_EQ(m.errors, 3);
  EXPECT_EQ(m.codes[kOk], 2);
  EXPECT_EQ(m.codes[kInvalidArgument], 1);
  EXPECT_EQ(m.codes[kNotFound], 1);
  EXPECT_EQ(m.codes[kStatusCodeUnknown], 1);
}

// The bounds in microseconds, written out independently of kLatencyBoundsMicros.
constexpr int64_t kExpectedBounds[] = {
    5,      10,     15,      20,      30,      50,       75,       100,     150,
    250,    500,    1000,    2500,    5000,    10000,    25000,    50000,   100000,
    250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000, 60000000};

TEST(RpcStatsTest, BucketsRiseFrom5MicrosecondsTo60Seconds) {
  ASSERT_EQ(kLatencyBoundsMicros.size(), std::size(kExpectedBounds));
  for (size_t i = 0; i < std::size(kExpectedBounds); ++i) {
    EXPECT_EQ(kLatencyBoundsMicros[i], kExpectedBounds[i]) << i;
  }
  EXPECT_EQ(kLatencyBucketCount, 27);
}

TEST(RpcStatsTest, EveryBoundIsInclusiveAndOneNanosecondMoreIsTheNextBucket) {
  EXPECT_EQ(RpcStats::BucketOf(nanoseconds(0)), 0);
  for (int b = 0; b < static_cast<int>(std::size(kExpectedBounds)); ++b) {
    const nanoseconds bound = microseconds(kExpectedBounds[b]);
    EXPECT_EQ(RpcStats::BucketOf(bound), b) << kExpectedBounds[b] << " us";
    EXPECT_EQ(RpcStats::BucketOf(bound + nanoseconds(1)), b + 1) << kExpectedBounds[b] << " us";
  }
  EXPECT_EQ(RpcStats::BucketOf(std::chrono::milliseconds(3)), 13);  // (2.5 ms, 5 ms]
  EXPECT_EQ(RpcStats::BucketOf(std::chrono::hours(1)), kLatencyBucketCount - 1);
}

TEST(LatencyQuantileTest, InterpolatesWithinTheBucketAsPrometheusDoes) {
  std::array<int64_t, kLatencyBucketCount> buckets{};
  EXPECT_EQ(LatencyQuantile(buckets, 0.5), 0) << "nothing counted";
  buckets[0] = 10;  // (0, 5 us]
  buckets[7] = 30;  // (75 us, 100 us]
  // Rank 0.5 * 40 = 20: the 10th of the 30 in (75, 100]: 75 + 25 * 10 / 30.
  EXPECT_NEAR(LatencyQuantile(buckets, 0.5), (75 + 25.0 / 3) * 1e-6, 1e-12);
  EXPECT_NEAR(LatencyQuantile(buckets, 0.125), 2.5e-6, 1e-12) << "the first bucket starts at 0";
  EXPECT_NEAR(LatencyQuantile(buckets, 1.0), 100e-6, 1e-12);
  EXPECT_NEAR(LatencyQuantile(buckets, 0.0), 0, 1e-12);
  buckets[kLatencyBucketCount - 1] = 60;  // over 60 s
  EXPECT_EQ(LatencyQuantile(buckets, 0.99), 60.0) << "+Inf answers the highest bound";
}

TEST(RpcStatsTest, HistogramCountsEachLatencyOnceAndSumsThemExactly) {
  RpcStats stats({"Run"});
  stats.Record(0, kOk, microseconds(3));
  stats.Record(0, kOk, microseconds(5));
  stats.Record(0, kOk, microseconds(700));
  stats.Record(0, kNotFound, std::chrono::seconds(90));
  const RpcMethodStats m = stats.Snapshot()[0];
  std::array<int64_t, kLatencyBucketCount> expected{};
  expected[0] = 2;                        // <= 5 us
  expected[11] = 1;                       // (500 us, 1 ms]
  expected[kLatencyBucketCount - 1] = 1;  // > 60 s
  EXPECT_EQ(m.latency_buckets, expected);
  EXPECT_DOUBLE_EQ(m.latency_sum_seconds, 90.000708);
}

TEST(RpcStatsTest, SumsEachPhaseAndCountsInlineRequestsPerMethod) {
  RpcStats stats({"Ping", "Run"});
  const RequestPhases split{{microseconds(1), microseconds(20), microseconds(300),
                             microseconds(4000)}};  // decode, queue, execute, encode
  stats.Record(1, kOk, microseconds(4321), split, /*ran_inline=*/true);
  stats.Record(1, kNotFound, microseconds(4321), split);
  stats.Record(1, kOk, microseconds(9));  // no split given: nothing added
  const std::vector<RpcMethodStats> all = stats.Snapshot();
  EXPECT_EQ(all[1].phase_seconds, (std::array<double, kPhaseCount>{2e-6, 40e-6, 600e-6, 8e-3}));
  EXPECT_EQ(all[1].inline_requests, 1);
  EXPECT_EQ(all[0].phase_seconds, (std::array<double, kPhaseCount>{}));
  EXPECT_EQ(all[0].inline_requests, 0);
}

TEST(RpcStatsTest, CountsFromManyThreadsAreExact) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  RpcStats stats({"Ping", "Run"});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&stats, t] {
      for (int i = 0; i < kPerThread; ++i) {
        stats.Record(t % 2, i % kStatusCodeCount, microseconds(i % 3 == 0 ? 4 : 2000));
      }
    });
  }
  for (std::thread& t : threads) t.join();

  // Each method got kThreads / 2 threads' records.
  std::array<int64_t, kStatusCodeCount> codes{};
  std::array<int64_t, kLatencyBucketCount> buckets{};
  for (int i = 0; i < kPerThread; ++i) {
    codes[i % kStatusCodeCount] += kThreads / 2;
    buckets[i % 3 == 0 ? 0 : 12] += kThreads / 2;  // 4 us: <= 5 us; 2 ms: (1 ms, 2.5 ms]
  }
  for (const RpcMethodStats& m : stats.Snapshot()) {
    EXPECT_EQ(m.requests, int64_t{kThreads / 2} * kPerThread) << m.method;
    EXPECT_EQ(m.errors, m.requests - codes[kOk]) << m.method;
    EXPECT_EQ(m.codes, codes) << m.method;
    EXPECT_EQ(m.latency_buckets, buckets) << m.method;
    EXPECT_DOUBLE_EQ(m.latency_sum_seconds, buckets[0] * 4e-6 + buckets[12] * 2e-3) << m.method;
  }
}

}  // namespace
}  // namespace onemodel::server
