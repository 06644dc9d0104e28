#include "server/daemon.h"

#include <grpc/grpc.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "server/server.h"

namespace onemodel::server {
namespace {

// Writes `text` to `path` so that a reader sees all of it or nothing.
void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write the ready file '" + temporary + "'");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot rename '" + temporary + "' to '" + path + "'");
  }
}

}  // namespace

int RunDaemon(const ServerConfig& config) {
  // Every thread started from here on inherits the mask; only sigwait() below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // One reference to the gRPC library for the life of the process, never given back: the last
  // grpc_shutdown() (in ~grpc::Server otherwise) joins gRPC's executor threads, and after a
  // large transfer one of them may sit in tcp_posix's backup poller, which polls in 10 s
  // steps, so exit took up to 10 s more after the drain. The process exits instead; the OS
  // reclaims what gRPC holds.
  grpc_init();
  std::unique_ptr<Server> server;
  try {
    server = std::make_unique<Server>(config);
    if (!config.ready_file.empty()) {
      const std::string& metrics = server->metrics_address();
      WriteAtomically(config.ready_file, "grpc=" + server->grpc_address() + "\n" +
                                             (metrics.empty() ? "" : "metrics=" + metrics + "\n") +
                                             "instance=" + server->instance_id() + "\n");
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("{} received: draining (up to {} s for in-flight requests)",
               signal_number == SIGTERM ? "SIGTERM" : "SIGINT", config.drain_seconds);
  const int64_t open = server->Shutdown(
      std::chrono::milliseconds(static_cast<int64_t>(config.drain_seconds * 1000)));
  spdlog::info("onemodeld stopped: {} open session(s) closed", open);
  return 0;
}

}  // namespace onemodel::server
