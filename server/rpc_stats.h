// RpcStats: request counts, status codes and latencies per RPC method (DESIGN.md section 4,
// statistics), read by GetStats/WatchStats (server/stats_proto.h) and /metrics (metrics.h).
//
// The methods are named once at construction; recording a finished request is three relaxed
// atomic additions (no lock, no allocation). Snapshot() copies everything out for a report.
//
//   RpcStats stats({"Ping", "CreateSession", "Run"});
//   const int run = stats.MethodIndex("Run");                  // once, at startup
//   stats.Record(run, status.error_code(), finish - start);    // per request
//   for (const RpcMethodStats& m : stats.Snapshot()) Print(m.method, m.requests, m.errors);
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "proto/status_code_name.h"

namespace onemodel::server {

// Where Record() counts a code outside 0..16 (proto/status_code_name.h names the codes).
inline constexpr int kStatusCodeUnknown = 2;

// Upper bounds (inclusive, in microseconds) of the latency histogram's buckets: 50 us to 10 s
// in 1-2.5-5 steps. One more bucket (+Inf) holds slower requests.
inline constexpr std::array<int64_t, 77> kLatencyBoundsMicros = {2,3,4,5,6,8,10,12,15,19,23,29,36,45,57,71,89,111,139,173,217,271,339,424,529,662,827,1034,1292,1616,2019,2524,3155,3944,4930,6163,7704,9630,12037,15046,18808,23510,29387,36734,45918,57397,71746,89683,112104,140130,175162,218953,273691,342114,427642,534553,668191,835239,1044049,1305061,1631326,2039158,2548947,3186184,3982730,4978412,6223015,7778769,9723461,12154327,15192908,18991135,23738919,29673649,37092062,46365077,57956346};
inline constexpr int kLatencyBucketCount = static_cast<int>(kLatencyBoundsMicros.size()) + 1;

// One method's counters, as Snapshot() reads them.
struct RpcMethodStats {
  std::string method;
  int64_t requests = 0;
  int64_t errors = 0;                             // requests whose status was not OK
  std::array<int64_t, kStatusCodeCount> codes{};  // requests per status code
  double latency_sum_seconds = 0;
  // Requests per latency bucket (not cumulative); the last one is +Inf.
  std::array<int64_t, kLatencyBucketCount> latency_buckets{};
};

// The q-quantile (0 <= q <= 1) of the latencies counted in `buckets`, in seconds, as Prometheus'
// histogram_quantile() estimates it: linearly within the bucket it falls in (the first bucket
// from 0), the highest bound when it falls in +Inf, 0 when nothing was counted.
double LatencyQuantile(const std::array<int64_t, kLatencyBucketCount>& buckets, double q);

class RpcStats {
 public:
  // Counters for `methods`, all zero. Throws std::invalid_argument for a repeated name.
  explicit RpcStats(std::vector<std::string> methods);
  RpcStats(const RpcStats&) = delete;
  RpcStats& operator=(const RpcStats&) = delete;

  // The index Record() takes for `name`. Throws std::invalid_argument for an unknown name.
  int MethodIndex(std::string_view name) const;

  // Counts one finished request of method `method` (an index from MethodIndex) with status
  // `code` (a grpc::StatusCode; others count as UNKNOWN) that took `latency` (>= 0).
  // Thread-safe, lock-free and allocation-free.
  void Record(int method, int code, std::chrono::nanoseconds latency) {
    Counters& c = counters_[method];
    const bool known = code >= 0 && code < kStatusCodeCount;
    c.codes[known ? code : kStatusCodeUnknown].fetch_add(1, std::memory_order_relaxed);
    c.buckets[BucketOf(latency)].fetch_add(1, std::memory_order_relaxed);
    c.latency_sum_nanos.fetch_add(latency.count(), std::memory_order_relaxed);
  }

  // Every method's counters, in construction order. Each counter is exact once the
  // Record() calls before it have returned; one racing with it may show in some counters only.
  std::vector<RpcMethodStats> Snapshot() const;

  // The index of the bucket `latency` falls in (see kLatencyBoundsMicros).
  static int BucketOf(std::chrono::nanoseconds latency) {
    int b = 0;
    while (b < kLatencyBucketCount - 1 && latency.count() > kLatencyBoundsMicros[b] * 1000) ++b;
    return b;
  }

 private:
  // One cache line or more per method, so that methods do not contend.
  struct alignas(64) Counters {
    std::array<std::atomic<int64_t>, kStatusCodeCount> codes{};
    std::array<std::atomic<int64_t>, kLatencyBucketCount> buckets{};
    std::atomic<int64_t> latency_sum_nanos{0};
  };

  const std::vector<std::string> methods_;
  const std::unique_ptr<Counters[]> counters_;
};

}  // namespace onemodel::server
