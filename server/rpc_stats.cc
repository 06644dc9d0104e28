#include "server/rpc_stats.h"

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
  }
  return out;
}

}  // namespace onemodel::server
