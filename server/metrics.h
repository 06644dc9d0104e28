// MetricsExporter: every server statistic as Prometheus text at http://<address>/metrics
// (DESIGN.md section 4, statistics).
//
// Each scrape takes one ServerSnapshot and one RpcStats::Snapshot() and builds the metric
// families from them, so the values are current and consistent with each other; nothing is
// copied in between scrapes. Families: onemodel_pool_*, onemodel_sessions_*, onemodel_arena_*
// and onemodel_session_* (labelled session="<serial>", kernels="<variant>"), onemodel_rpc_*.
//
//   MetricsExporter metrics("127.0.0.1:0", rpc_stats, [&] { return sessions.Snapshot(); });
//   WriteReadyFile("metrics=127.0.0.1:" + std::to_string(metrics.port()));
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "server/rpc_stats.h"
#include "server/server_snapshot.h"

namespace onemodel::server {

class HttpEndpoint;

class MetricsExporter {
 public:
  // Serves /metrics on `listen_address` ("host:port"; port 0 picks a free one) until
  // destroyed. `snapshot` is called from the HTTP threads, once per scrape, and must be
  // thread-safe and not throw; it and `rpc_stats` must outlive the exporter. Throws
  // std::runtime_error naming the address and the reason when it cannot listen there.
  MetricsExporter(const std::string& listen_address, const RpcStats& rpc_stats,
                  std::function<ServerSnapshot()> snapshot);
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
