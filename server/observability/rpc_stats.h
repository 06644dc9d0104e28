// RpcStats: request counts, status codes and latencies per RPC method (DESIGN.md section 4,
// statistics), read by GetStats/WatchStats (server/observability/stats_proto.h) and /metrics
// (metrics.h).
//
// The methods are named once at construction; recording a finished request is a few relaxed
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

// Upper bounds (inclusive, in microseconds) of the latency histogram's buckets, 5 us to 60 s,
// chosen from measured latencies (docs/operations.md#latency-buckets): fine steps below 250 us,
// where small RPCs and most Run calls of a release build fall, then 1-2.5-5 steps to 10 s, and
// 30 s and 60 s for large streamed transfers. One more bucket (+Inf) holds slower requests.
inline constexpr std::array<int64_t, 26> kLatencyBoundsMicros = {
    5,       10,      15,        20,        30,        50,         75,         100,       150,
    250,     500,     1'000,     2'500,     5'000,     10'000,     25'000,     50'000,    100'000,
    250'000, 500'000, 1'000'000, 2'500'000, 5'000'000, 10'000'000, 30'000'000, 60'000'000};
inline constexpr int kLatencyBucketCount = static_cast<int>(kLatencyBoundsMicros.size()) + 1;

// The parts of a request's time on the server, in the order they happen. Queue and execute
// hold every request's time between them; decode and encode only the requests that carry
// tensor values (docs/operations.md#request-time-split).
enum class Phase {
  kDecode,   // the request's TensorProtos into tensors (PutTensor, a Run's inline inputs)
  kQueue,    // arrival until its work began: waiting for the session's strand (and a worker)
  kExecute,  // the rest: the work itself (kernels, handles, statistics)
  kEncode,   // tensors into the reply's TensorProtos (GetTensor)
};
inline constexpr size_t kPhaseCount = 4;
// Their names in GetStats' field names and /metrics' phase label, indexed by Phase.
inline constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {"decode", "queue",
                                                                          "execute", "encode"};
// One request's time per Phase.
struct RequestPhases {
  std::array<std::chrono::nanoseconds, kPhaseCount> time{};
  std::chrono::nanoseconds& operator[](Phase p) { return time[static_cast<size_t>(p)]; }
  std::chrono::nanoseconds operator[](Phase p) const { return time[static_cast<size_t>(p)]; }
};

// One method's counters, as Snapshot() reads them.
struct RpcMethodStats {
  std::string method;
  int64_t requests = 0;
  int64_t errors = 0;                             // requests whose status was not OK
  std::array<int64_t, kStatusCodeCount> codes{};  // requests per status code
  double latency_sum_seconds = 0;
  // Requests per latency bucket (not cumulative); the last one is +Inf.
  std::array<int64_t, kLatencyBucketCount> latency_buckets{};
  // Seconds spent in each Phase, summed over the requests (indexed by Phase).
  std::array<double, kPhaseCount> phase_seconds{};
  // Requests whose work ran on the gRPC thread that received them (inline_cost.h).
  int64_t inline_requests = 0;
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
  // `code` (a grpc::StatusCode; others count as UNKNOWN) that took `latency` (>= 0), of which
  // `phases` says where it went, and whose work ran inline (on gRPC's thread) or not.
  // Thread-safe, lock-free and allocation-free.
  void Record(int method, int code, std::chrono::nanoseconds latency,
              const RequestPhases& phases = {}, bool ran_inline = false) {
    Counters& c = counters_[method];
    if (ran_inline) c.inline_requests.fetch_add(1, std::memory_order_relaxed);
    const bool known = code >= 0 && code < kStatusCodeCount;
    c.codes[known ? code : kStatusCodeUnknown].fetch_add(1, std::memory_order_relaxed);
    c.buckets[BucketOf(latency)].fetch_add(1, std::memory_order_relaxed);
    c.latency_sum_nanos.fetch_add(latency.count(), std::memory_order_relaxed);
    for (size_t p = 0; p < kPhaseCount; ++p) {
      const int64_t nanos = phases.time[p].count();
      if (nanos != 0) c.phase_nanos[p].fetch_add(nanos, std::memory_order_relaxed);
    }
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
    std::array<std::atomic<int64_t>, kPhaseCount> phase_nanos{};
    std::atomic<int64_t> inline_requests{0};
  };

  const std::vector<std::string> methods_;
  const std::unique_ptr<Counters[]> counters_;
};

}  // namespace onemodel::server
