#include "server/rpc_stats.h"

#include <gtest/gtest.h>

#include <chrono>
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

TEST(RpcStatsTest, LatencyBucketBoundsAreInclusive) {
  EXPECT_EQ(RpcStats::BucketOf(nanoseconds(0)), 0);
  EXPECT_EQ(RpcStats::BucketOf(microseconds(50)), 0);
  EXPECT_EQ(RpcStats::BucketOf(microseconds(50) + nanoseconds(1)), 1);
  EXPECT_EQ(RpcStats::BucketOf(microseconds(100)), 1);
  EXPECT_EQ(RpcStats::BucketOf(std::chrono::milliseconds(3)), 6);  // (2.5 ms, 5 ms]
  EXPECT_EQ(RpcStats::BucketOf(std::chrono::seconds(10)), kLatencyBucketCount - 2);
  EXPECT_EQ(RpcStats::BucketOf(std::chrono::seconds(10) + nanoseconds(1)), kLatencyBucketCount - 1);
  EXPECT_EQ(RpcStats::BucketOf(std::chrono::hours(1)), kLatencyBucketCount - 1);
}

TEST(RpcStatsTest, BoundsRiseFrom50MicrosecondsTo10Seconds) {
  EXPECT_EQ(kLatencyBoundsMicros.front(), 50);
  EXPECT_EQ(kLatencyBoundsMicros.back(), 10'000'000);
  for (size_t i = 1; i < kLatencyBoundsMicros.size(); ++i) {
    EXPECT_GT(kLatencyBoundsMicros[i], kLatencyBoundsMicros[i - 1]);
  }
}

TEST(RpcStatsTest, HistogramCountsEachLatencyOnceAndSumsThemExactly) {
  RpcStats stats({"Run"});
  stats.Record(0, kOk, microseconds(20));
  stats.Record(0, kOk, microseconds(50));
  stats.Record(0, kOk, microseconds(700));
  stats.Record(0, kNotFound, std::chrono::seconds(30));
  const RpcMethodStats m = stats.Snapshot()[0];
  std::array<int64_t, kLatencyBucketCount> expected{};
  expected[0] = 2;                        // <= 50 us
  expected[4] = 1;                        // (500 us, 1 ms]
  expected[kLatencyBucketCount - 1] = 1;  // > 10 s
  EXPECT_EQ(m.latency_buckets, expected);
  EXPECT_DOUBLE_EQ(m.latency_sum_seconds, 30.00077);
}

TEST(RpcStatsTest, CountsFromManyThreadsAreExact) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  RpcStats stats({"Ping", "Run"});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&stats, t] {
      for (int i = 0; i < kPerThread; ++i) {
        stats.Record(t % 2, i % kStatusCodeCount, microseconds(i % 3 == 0 ? 30 : 2000));
      }
    });
  }
  for (std::thread& t : threads) t.join();

  // Each method got kThreads / 2 threads' records.
  std::array<int64_t, kStatusCodeCount> codes{};
  std::array<int64_t, kLatencyBucketCount> buckets{};
  for (int i = 0; i < kPerThread; ++i) {
    codes[i % kStatusCodeCount] += kThreads / 2;
    buckets[i % 3 == 0 ? 0 : 5] += kThreads / 2;  // 30 us: <= 50 us; 2 ms: (1 ms, 2.5 ms]
  }
  for (const RpcMethodStats& m : stats.Snapshot()) {
    EXPECT_EQ(m.requests, int64_t{kThreads / 2} * kPerThread) << m.method;
    EXPECT_EQ(m.errors, m.requests - codes[kOk]) << m.method;
    EXPECT_EQ(m.codes, codes) << m.method;
    EXPECT_EQ(m.latency_buckets, buckets) << m.method;
    EXPECT_DOUBLE_EQ(m.latency_sum_seconds, buckets[0] * 30e-6 + buckets[5] * 2e-3) << m.method;
  }
}

}  // namespace
}  // namespace onemodel::server
