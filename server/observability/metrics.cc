#include "server/observability/metrics.h"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "server/observability/build_info.h"
#include "server/observability/http_endpoint.h"
#include "server/observability/process_stats.h"
#include "server/observability/status_page.h"

namespace onemodel::server {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// One int64 statistic of a T exposed as a gauge or counter family.
template <typename T>
struct Field {
  const char* name;
  const char* help;
  MetricType type;
  int64_t T::*value;
};

constexpr MetricType kGauge = MetricType::Gauge;
constexpr MetricType kCounter = MetricType::Counter;

constexpr Field<PoolStats> kPoolFields[] = {
    {"onemodel_pool_rented_bytes", "Bytes of pool buffers now rented (their class sizes).", kGauge,
     &PoolStats::rented_bytes},
    {"onemodel_pool_rented_buffers", "Pool buffers now rented.", kGauge,
     &PoolStats::rented_buffers},
    {"onemodel_pool_requested_bytes", "Bytes asked for by the rented pool buffers.", kGauge,
     &PoolStats::rented_requested_bytes},
    {"onemodel_pool_idle_bytes", "Bytes of pool buffers waiting in free lists.", kGauge,
     &PoolStats::idle_bytes},
    {"onemodel_pool_peak_rented_bytes", "Highest onemodel_pool_rented_bytes since start.", kGauge,
     &PoolStats::peak_rented_bytes},
    {"onemodel_pool_max_idle_bytes", "Cap on onemodel_pool_idle_bytes.", kGauge,
     &PoolStats::max_idle_bytes},
    {"onemodel_pool_hits_total", "Rents served from a free list.", kCounter, &PoolStats::hits},
    {"onemodel_pool_misses_total", "Rents that allocated memory from the system.", kCounter,
     &PoolStats::misses},
    {"onemodel_pool_frees_over_cap_total",
     "Releases freed to the system because idle memory reached its cap.", kCounter,
     &PoolStats::frees_over_cap},
};

constexpr Field<PoolClassStats> kPoolClassFields[] = {
    {"onemodel_pool_class_rented_buffers", "Pool buffers of one size class now rented.", kGauge,
     &PoolClassStats::rented_buffers},
    {"onemodel_pool_class_idle_buffers", "Pool buffers of one size class waiting idle.", kGauge,
     &PoolClassStats::idle_buffers},
};

constexpr Field<SessionCounters> kSessionCounterFields[] = {
    {"onemodel_sessions_open", "Sessions now open.", kGauge, &SessionCounters::open},
    {"onemodel_sessions_created_total", "Sessions created.", kCounter, &SessionCounters::created},
    {"onemodel_sessions_closed_total", "Sessions closed by CloseSession or at shutdown.", kCounter,
     &SessionCounters::closed},
    {"onemodel_sessions_expired_total", "Sessions closed after their idle timeout.", kCounter,
     &SessionCounters::expired},
    {"onemodel_leaked_buffers_reclaimed_total",
     "Pool buffers of sessions that expired after their idle timeout (handles lost).", kCounter,
     &SessionCounters::leaked_buffers_reclaimed},
    {"onemodel_buffers_released_by_close_total",
     "Pool buffers sessions still held when closed (never released by the client; normal).",
     kCounter, &SessionCounters::buffers_released_by_close},
};

constexpr Field<ArenaStats> kArenaFields[] = {
    {"onemodel_arena_chunks", "Chunks a session's arena holds.", kGauge, &ArenaStats::chunks},
    {"onemodel_arena_reserved_bytes", "Bytes of a session's arena chunks.", kGauge,
     &ArenaStats::reserved_bytes},
    {"onemodel_arena_used_bytes", "Bytes a session's arena handed out since its last reset.",
     kGauge, &ArenaStats::used_bytes},
    {"onemodel_arena_peak_used_bytes", "Highest onemodel_arena_used_bytes of any run.", kGauge,
     &ArenaStats::peak_used_bytes},
    {"onemodel_arena_resets_total", "Resets of a session's arena.", kCounter, &ArenaStats::resets},
    {"onemodel_arena_allocations_total", "Allocations from a session's arena.", kCounter,
     &ArenaStats::allocations},
    {"onemodel_arena_growth_events_total",
     "Times a session's arena had to get more memory (none once warm).", kCounter,
     &ArenaStats::growth_events},
};

constexpr Field<SessionSnapshot> kSessionFields[] = {
    {"onemodel_session_handles", "Tensor handles a session holds.", kGauge,
     &SessionSnapshot::handles},
    {"onemodel_session_pool_buffers", "Pool buffers a session holds.", kGauge,
     &SessionSnapshot::pool_buffers},
    {"onemodel_session_pool_bytes", "Bytes of the pool buffers a session holds.", kGauge,
     &SessionSnapshot::pool_bytes},
    {"onemodel_session_memory_limit_bytes", "A session's memory limit.", kGauge,
     &SessionSnapshot::memory_limit_bytes},
    {"onemodel_session_requests_total", "Requests a session served.", kCounter,
     &SessionSnapshot::requests},
};

// A family with no samples yet.
MetricFamily Family(const char* name, const char* help, MetricType type) {
  return MetricFamily{name, help, type, {}};
}

// Adds one sample to a gauge or counter family.
void AddSample(MetricFamily& family, double value, Labels labels) {
  ClientMetric& metric = family.metric.emplace_back();
  metric.label = std::move(labels);
  (family.type == kCounter ? metric.counter.value : metric.gauge.value) = value;
}

// One family per field of `fields`, with one sample per row: an object and its labels.
template <typename T, size_t N>
void AddFields(std::vector<MetricFamily>& out, const Field<T> (&fields)[N],
               const std::vector<std::pair<const T*, Labels>>& rows) {
  for (const Field<T>& field : fields) {
    MetricFamily family = Family(field.name, field.help, field.type);
    for (const auto& [object, labels] : rows) {
      AddSample(family, static_cast<double>(object->*field.value), labels);
    }
    out.push_back(std::move(family));
  }
}

void AddRpcFamilies(std::vector<MetricFamily>& out, const std::vector<RpcMethodStats>& rpcs) {
  MetricFamily requests = Family("onemodel_rpc_requests_total",
                                 "Finished requests per RPC method and status code.", kCounter);
  MetricFamily errors =
      Family("onemodel_rpc_errors_total",
             "Finished requests per RPC method whose status was not OK.", kCounter);
  MetricFamily latency =
      Family("onemodel_rpc_latency_seconds",
             "Time from a request's arrival to its status, per RPC method.", MetricType::Histogram);
  MetricFamily phases =
      Family("onemodel_rpc_phase_seconds_total",
             "Where requests' time went, per RPC method and phase: decode (the request's tensors), "
             "queue (waiting for the session), execute (the work), encode (the reply's tensors).",
             kCounter);
  MetricFamily inline_requests =
      Family("onemodel_rpc_inline_requests_total",
             "Requests per RPC method whose work ran on the gRPC thread that received them "
             "(small work on an idle session, --inline-max-bytes).",
             kCounter);
  for (const RpcMethodStats& m : rpcs) {
    AddSample(inline_requests, static_cast<double>(m.inline_requests), {{"method", m.method}});
    for (size_t p = 0; p < kPhaseCount; ++p) {
      AddSample(phases, m.phase_seconds[p],
                {{"method", m.method}, {"phase", std::string(kPhaseNames[p])}});
    }
    for (int code = 0; code < kStatusCodeCount; ++code) {
      if (m.codes[code] == 0) continue;
      AddSample(requests, static_cast<double>(m.codes[code]),
                {{"method", m.method}, {"code", std::string(StatusCodeName(code))}});
    }
    AddSample(errors, static_cast<double>(m.errors), {{"method", m.method}});

    ClientMetric& metric = latency.metric.emplace_back();
    metric.label = {{"method", m.method}};
    ClientMetric::Histogram& h = metric.histogram;
    h.sample_sum = m.latency_sum_seconds;
    for (size_t b = 0; b < kLatencyBoundsMicros.size(); ++b) {
      h.sample_count += static_cast<uint64_t>(m.latency_buckets[b]);
      h.bucket.push_back({h.sample_count, kLatencyBoundsMicros[b] / 1e6});
    }
    // The +Inf bucket: the serializer writes it from sample_count.
    h.sample_count += static_cast<uint64_t>(m.latency_buckets.back());
  }
  out.push_back(std::move(requests));
  out.push_back(std::move(errors));
  out.push_back(std::move(latency));
  out.push_back(std::move(phases));
  out.push_back(std::move(inline_requests));
}

// Prometheus' standard process metrics (the names its client libraries use) and
// onemodel_build_info.
void AddProcessFamilies(std::vector<MetricFamily>& out, const ProcessStats& p,
                        const BuildInfo& build) {
  const struct {
    const char* name;
    const char* help;
    MetricType type;
    double value;
  } rows[] = {
      {"process_resident_memory_bytes", "Resident memory size in bytes.", kGauge,
       static_cast<double>(p.resident_memory_bytes)},
      {"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", kCounter,
       p.cpu_seconds},
      {"process_open_fds", "Number of open file descriptors.", kGauge,
       static_cast<double>(p.open_fds)},
      {"process_max_fds", "Maximum number of open file descriptors.", kGauge,
       static_cast<double>(p.max_fds)},
      {"process_threads", "Number of OS threads in the process.", kGauge,
       static_cast<double>(p.threads)},
      {"process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
       kGauge, p.start_time_seconds},
  };
  for (const auto& row : rows) {
    MetricFamily family = Family(row.name, row.help, row.type);
    AddSample(family, row.value, {});
    out.push_back(std::move(family));
  }
  MetricFamily info =
      Family("onemodel_build_info",
             "Always 1: the version, git commit, kernels and BLAS onemodeld runs.", kGauge);
  AddSample(info, 1,
            {{"version", build.version},
             {"git", build.git},
             {"kernels", build.kernels},
             {"blas", build.blas}});
  out.push_back(std::move(info));
}

// The rows of the per-session families: the `limit` sessions holding the most memory (lower
// serial first on ties), labelled by serial and kernels, then session="other" summing the rest
// (the highest peak for peak_used_bytes), so that sums over sessions stay totals.
std::vector<std::pair<SessionSnapshot, Labels>> SessionSeries(std::vector<SessionSnapshot> sessions,
                                                              int64_t limit) {
  std::sort(sessions.begin(), sessions.end(),
            [](const SessionSnapshot& a, const SessionSnapshot& b) {
              return MemoryBytes(a) != MemoryBytes(b) ? MemoryBytes(a) > MemoryBytes(b)
                                                      : a.serial < b.serial;
            });
  const size_t shown = std::min(sessions.size(), static_cast<size_t>(std::max<int64_t>(limit, 0)));
  std::vector<std::pair<SessionSnapshot, Labels>> rows;
  for (size_t i = 0; i < shown; ++i) {
    Labels labels = {{"session", std::to_string(sessions[i].serial)},
                     {"kernels", sessions[i].kernel_variant}};
    rows.emplace_back(std::move(sessions[i]), std::move(labels));
  }
  SessionSnapshot other;
  for (size_t i = shown; i < sessions.size(); ++i) {
    const SessionSnapshot& s = sessions[i];
    ArenaStats& a = other.arena;
    a.chunks += s.arena.chunks;
    a.reserved_bytes += s.arena.reserved_bytes;
    a.used_bytes += s.arena.used_bytes;
    a.peak_used_bytes = std::max(a.peak_used_bytes, s.arena.peak_used_bytes);
    a.resets += s.arena.resets;
    a.allocations += s.arena.allocations;
    a.growth_events += s.arena.growth_events;
    other.handles += s.handles;
    other.pool_buffers += s.pool_buffers;
    other.pool_bytes += s.pool_bytes;
    other.memory_limit_bytes += s.memory_limit_bytes;
    other.requests += s.requests;
  }
  rows.emplace_back(std::move(other), Labels{{"session", "other"}});
  return rows;
}

// Every family, from one reading of the process, the server and the RPC counters.
std::vector<MetricFamily> BuildFamilies(const ProcessStats& process, const BuildInfo& build,
                                        const ServerSnapshot& s,
                                        const std::vector<RpcMethodStats>& rpcs,
                                        int64_t session_series) {
  std::vector<MetricFamily> out;
  AddProcessFamilies(out, process, build);
  AddFields(out, kPoolFields, {{&s.pool, {}}});
  std::vector<std::pair<const PoolClassStats*, Labels>> classes;
  for (const PoolClassStats& c : s.pool.classes) {
    classes.push_back({&c, {{"size_bytes", std::to_string(c.size_bytes)}}});
  }
  AddFields(out, kPoolClassFields, classes);
  AddFields(out, kSessionCounterFields, {{&s.sessions, {}}});
  const std::vector<std::pair<SessionSnapshot, Labels>> series =
      SessionSeries(s.per_session, session_series);
  std::vector<std::pair<const ArenaStats*, Labels>> arenas;
  std::vector<std::pair<const SessionSnapshot*, Labels>> sessions;
  for (const auto& [session, labels] : series) {
    arenas.push_back({&session.arena, labels});
    sessions.push_back({&session, labels});
  }
  AddFields(out, kArenaFields, arenas);
  AddFields(out, kSessionFields, sessions);
  AddRpcFamilies(out, rpcs);
  return out;
}

// The served documents: /metrics, rendered from fresh readings at each scrape, and with
// `options.status_page` the status page at / and /status and its data at /status.json.
std::map<std::string, HttpDocument> Documents(const RpcStats& rpc_stats,
                                              std::function<ServerSnapshot()> snapshot,
                                              const MetricsOptions& options) {
  const BuildInfo build = CurrentBuildInfo();
  std::map<std::string, HttpDocument> documents;
  documents["/metrics"] = {
      "text/plain; version=0.0.4; charset=utf-8",
      [&rpc_stats, snapshot, build, limit = options.session_series] {
        return prometheus::TextSerializer().Serialize(
            BuildFamilies(ReadProcessStats(), build, snapshot(), rpc_stats.Snapshot(), limit));
      }};
  if (options.status_page) {
    const HttpDocument page = {"text/html; charset=utf-8",
                               [] { return std::string(kStatusPageHtml); }};
    documents["/"] = page;
    documents["/status"] = page;
    documents["/status.json"] = {
        "application/json", [&rpc_stats, snapshot, build, options] {
          return StatusJson({options.instance_id, options.grpc_address, build, ReadProcessStats(),
                             snapshot(), rpc_stats.Snapshot()});
        }};
  }
  return documents;
}

}  // namespace

MetricsExporter::MetricsExporter(const std::string& listen_address, const RpcStats& rpc_stats,
                                 std::function<ServerSnapshot()> snapshot, MetricsOptions options)
    : http_(std::make_unique<HttpEndpoint>(listen_address,
                                           Documents(rpc_stats, std::move(snapshot), options))) {}

MetricsExporter::~MetricsExporter() = default;

int MetricsExporter::port() const { return http_->port(); }

}  // namespace onemodel::server
