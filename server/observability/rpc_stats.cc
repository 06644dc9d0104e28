#include "server/observability/rpc_stats.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace onemodel::server {

RpcStats::RpcStats(std::vector<std::string> methods)
    : methods_(std::move(methods)), counters_(std::make_unique<Counters[]>(methods_.size())) {
  for (size_t i = 0; i < methods_.size(); ++i) {
    if (std::find(methods_.begin(), methods_.begin() + i, methods_[i]) != methods_.begin() + i) {
      throw std::invalid_argument("RpcStats: method '" + methods_[i] + "' is named twice");
    }
  }
}

int RpcStats::MethodIndex(std::string_view name) const {
  const auto it = std::find(methods_.begin(), methods_.end(), name);
  if (it == methods_.end()) {
    throw std::invalid_argument("RpcStats: no method '" + std::string(name) + "' was registered");
  }
  return static_cast<int>(it - methods_.begin());
}

double LatencyQuantile(const std::array<int64_t, kLatencyBucketCount>& buckets, double q) {
  const int64_t total = std::accumulate(buckets.begin(), buckets.end(), int64_t{0});
  if (total == 0) return 0;
  const double rank = q * static_cast<double>(total);
  int64_t below = 0;  // requests in the buckets before b
  for (int b = 0; b < kLatencyBucketCount - 1; ++b) {
    if (buckets[b] > 0 && static_cast<double>(below + buckets[b]) >= rank) {
      const double lower = b == 0 ? 0 : static_cast<double>(kLatencyBoundsMicros[b - 1]);
      const double upper = static_cast<double>(kLatencyBoundsMicros[b]);
      const double fraction = (rank - static_cast<double>(below)) / static_cast<double>(buckets[b]);
      return (lower + (upper - lower) * std::max(0.0, fraction)) / 1e6;
    }
    below += buckets[b];
  }
  return static_cast<double>(kLatencyBoundsMicros.back()) / 1e6;
}

std::vector<RpcMethodStats> RpcStats::Snapshot() const {
  std::vector<RpcMethodStats> out(methods_.size());
  for (size_t i = 0; i < methods_.size(); ++i) {
    const Counters& c = counters_[i];
    RpcMethodStats& m = out[i];
    m.method = methods_[i];
    for (int k = 0; k < kStatusCodeCount; ++k) {
      m.codes[k] = c.codes[k].load(std::memory_order_relaxed);
    }
    for (int b = 0; b < kLatencyBucketCount; ++b) {
      m.latency_buckets[b] = c.buckets[b].load(std::memory_order_relaxed);
    }
    m.requests = std::accumulate(m.codes.begin(), m.codes.end(), int64_t{0});
    m.errors = m.requests - m.codes[0];
    m.latency_sum_seconds = c.latency_sum_nanos.load(std::memory_order_relaxed) / 1e9;
    m.inline_requests = c.inline_requests.load(std::memory_order_relaxed);
    for (size_t p = 0; p < kPhaseCount; ++p) {
      m.phase_seconds[p] = c.phase_nanos[p].load(std::memory_order_relaxed) / 1e9;
    }
  }
  return out;
}

}  // namespace onemodel::server
