#include "server/observability/status_page.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "server/observability/serial_label.h"

namespace onemodel::server {
namespace {

using nlohmann::json;

json ServerJson(const StatusInputs& in) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return {{"instance", in.instance_id},
          {"grpc", in.grpc_address},
          {"version", in.build.version},
          {"git", in.build.git},
          {"kernels", in.build.kernels},
          {"blas", in.build.blas},
          {"start_time_seconds", in.process.start_time_seconds},
          {"uptime_seconds", std::max(0.0, now - in.process.start_time_seconds)},
          {"resident_memory_bytes", in.process.resident_memory_bytes},
          {"cpu_seconds", in.process.cpu_seconds},
          {"threads", in.process.threads},
          {"open_fds", in.process.open_fds}};
}

json PoolJson(const PoolStats& pool) {
  json classes = json::array();
  for (const PoolClassStats& c : pool.classes) {
    classes.push_back({{"size_bytes", c.size_bytes},
                       {"rented_buffers", c.rented_buffers},
                       {"idle_buffers", c.idle_buffers},
                       {"rented_bytes", c.rented_buffers * c.size_bytes},
                       {"idle_bytes", c.idle_buffers * c.size_bytes}});
  }
  return {{"rented_bytes", pool.rented_bytes},
          {"requested_bytes", pool.rented_requested_bytes},
          {"idle_bytes", pool.idle_bytes},
          {"max_idle_bytes", pool.max_idle_bytes},
          {"peak_rented_bytes", pool.peak_rented_bytes},
          {"hits", pool.hits},
          {"misses", pool.misses},
          {"classes", std::move(classes)}};
}

// The kStatusSessionRows sessions holding the most memory (lower serial first on ties).
json SessionsJson(const ServerSnapshot& server) {
  std::vector<const SessionSnapshot*> sessions;
  for (const SessionSnapshot& s : server.per_session) sessions.push_back(&s);
  const size_t shown = std::min(sessions.size(), kStatusSessionRows);
  std::partial_sort(sessions.begin(), sessions.begin() + static_cast<ptrdiff_t>(shown),
                    sessions.end(), [](const SessionSnapshot* a, const SessionSnapshot* b) {
                      return MemoryBytes(*a) != MemoryBytes(*b) ? MemoryBytes(*a) > MemoryBytes(*b)
                                                                : a->serial < b->serial;
                    });
  json rows = json::array();
  for (size_t i = 0; i < shown; ++i) {
    const SessionSnapshot& s = *sessions[i];
    rows.push_back({{"session", SerialLabel('s', s.serial)},
                    {"kernels", s.kernel_variant},
                    {"memory_bytes", MemoryBytes(s)},
                    {"charged_bytes", s.charged_bytes},
                    {"memory_limit_bytes", s.memory_limit_bytes},
                    {"pool_bytes", s.pool_bytes},
                    {"arena_bytes", s.arena.reserved_bytes},
                    {"arena_chunks", s.arena.chunks},
                    {"handles", s.handles},
                    {"requests", s.requests},
                    {"idle_seconds", s.idle_seconds}});
  }
  const SessionCounters& c = server.sessions;
  return {{"open", c.open},
          {"created", c.created},
          {"closed", c.closed},
          {"expired", c.expired},
          {"rows", std::move(rows)}};
}

// The methods that served any request.
json RpcsJson(const std::vector<RpcMethodStats>& rpcs) {
  json out = json::array();
  for (const RpcMethodStats& m : rpcs) {
    if (m.requests == 0) continue;
    out.push_back({{"method", m.method},
                   {"requests", m.requests},
                   {"errors", m.errors},
                   {"mean_seconds", m.latency_sum_seconds / static_cast<double>(m.requests)},
                   {"p50_seconds", LatencyQuantile(m.latency_buckets, 0.5)},
                   {"p90_seconds", LatencyQuantile(m.latency_buckets, 0.9)},
                   {"p99_seconds", LatencyQuantile(m.latency_buckets, 0.99)}});
  }
  return out;
}

}  // namespace

std::string StatusJson(const StatusInputs& in) {
  return json{{"server", ServerJson(in)},
              {"pool", PoolJson(in.server.pool)},
              {"sessions", SessionsJson(in.server)},
              {"rpcs", RpcsJson(in.rpcs)}}
      .dump();
}

}  // namespace onemodel::server
