// Server: one running onemodeld service (pool, workers, sessions, gRPC service with health and
// reflection, metrics), started from a ServerConfig. The daemon (daemon.h) wraps it with signal
// handling; benchmarks and tests start one in-process.
//
//   ServerConfig config;
//   config.listen = "127.0.0.1:0";
//   Server server(config);                      // serving once constructed
//   Connect(server.grpc_address());
//   server.Shutdown(std::chrono::seconds(5));   // drain, close sessions
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/memory/buffer_pool.h"
#include "server/config.h"
#include "server/observability/metrics.h"
#include "server/observability/rpc_stats.h"
#include "server/rpc/service.h"
#include "server/sessions/heap_trim.h"
#include "server/sessions/session_manager.h"
#include "server/sessions/strand.h"

namespace onemodel::server {

class Server {
 public:
  // Starts serving. `extra_services` (benchmarks' baselines) are served beside ours. Throws
  // std::runtime_error with a message a person can act on when it cannot start.
  explicit Server(const ServerConfig& config, std::vector<grpc::Service*> extra_services = {});
  // Shuts down at once if Shutdown() was not called, then stops gRPC (cancelling what is left,
  // health Watch streams included).
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Health NOT_SERVING, new calls get UNAVAILABLE, in-flight calls get `drain` to finish, then
  // are stopped (their kernels stop between blocks, they end UNAVAILABLE) and get up to
  // kStopGrace to end; every session is closed, metrics stop. gRPC goes on refusing calls
  // until the destructor. Returns how many sessions were still open.
  int64_t Shutdown(std::chrono::milliseconds drain);
  // Ends the drain of a Shutdown() running on another thread now: calls are stopped at once.
  void CutDrainShort() { service_->CutDrainShort(); }

  // How long stopped calls get to end before gRPC cancels them.
  static constexpr std::chrono::milliseconds kStopGrace{1000};
  // How long no call may begin before freed heap memory goes back to the system (heap_trim.h).
  static constexpr std::chrono::milliseconds kHeapTrimQuiet{1000};
  // Threads gRPC may start for synchronous services: server reflection's streams each hold one
  // (6000 streams made 6000 threads before; docs/security.md). Ours and the health checks use
  // the callback API and are not counted. A reflection call beyond them gets RESOURCE_EXHAUSTED.
  static constexpr int kMaxSyncThreads = 16;

  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& metrics_address() const { return metrics_address_; }  // empty: off
  const std::string& instance_id() const { return instance_id_; }
  SessionManager& sessions() { return sessions_; }

 private:
  const ServerConfig config_;
  const std::string instance_id_;
  BufferPool pool_;
  WorkerPool workers_;
  SessionManager sessions_;
  RpcStats rpc_stats_;
  std::unique_ptr<OneModelService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<MetricsExporter> metrics_;
  std::unique_ptr<QuietHeapTrim> heap_trim_;
  std::string grpc_address_;
  std::string metrics_address_;
  bool shut_down_ = false;
};

}  // namespace onemodel::server
