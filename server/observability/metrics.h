// MetricsExporter: every server statistic as Prometheus text at http://<address>/metrics
// (DESIGN.md section 4, statistics).
//
// Each scrape takes one ServerSnapshot and one RpcStats::Snapshot() and builds the metric
// families from them, so the values are current and consistent with each other; nothing is
// copied in between scrapes. Families: process_* (Prometheus' standard process metrics),
// onemodel_build_info, onemodel_pool_*, onemodel_sessions_*, onemodel_arena_* and
// onemodel_session_* (labelled session="<serial>", kernels="<variant>" for the
// MetricsOptions::session_series sessions holding the most memory, and session="other" summing
// the rest, so a scrape has a bounded number of series), onemodel_rpc_*. With
// MetricsOptions::status_page the same port serves the status page (status_page.h).
//
//   MetricsExporter metrics("127.0.0.1:0", rpc_stats, [&] { return sessions.Snapshot(); },
//                           {.session_series = 10, .instance_id = id});
//   WriteReadyFile("metrics=127.0.0.1:" + std::to_string(metrics.port()));
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "server/observability/rpc_stats.h"
#include "server/observability/server_snapshot.h"

namespace onemodel::server {

class HttpEndpoint;

struct MetricsOptions {
  // Sessions with series of their own (--metrics-sessions); the others are summed as "other".
  int64_t session_series = 10;
  // Serve the status page at / and /status, and its data at /status.json (--status-page).
  bool status_page = true;
  std::string instance_id = {};   // shown on the status page
  std::string grpc_address = {};  // shown on the status page
};

class MetricsExporter {
 public:
  // Serves /metrics (and the status page, per `options`) on `listen_address` ("host:port";
  // port 0 picks a free one) until destroyed. `snapshot` is called from the HTTP threads, once per
  // scrape, and must be thread-safe and not throw; it and `rpc_stats` must outlive the exporter.
  // Throws std::runtime_error naming the address and the reason when it cannot listen there.
  MetricsExporter(const std::string& listen_address, const RpcStats& rpc_stats,
                  std::function<ServerSnapshot()> snapshot, MetricsOptions options = {});
  // Stops serving; returns once no scrape is running.
  ~MetricsExporter();
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  // The port it listens on (the one picked when port 0 was asked).
  int port() const;

 private:
  std::unique_ptr<HttpEndpoint> http_;
};

}  // namespace onemodel::server
