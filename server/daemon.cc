#include "server/daemon.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "server/observability/logging.h"
#include "server/server.h"
#include "server/termination_signals.h"

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

// Watches a shutdown from its own thread: a second termination signal cuts the drain short,
// and past the hard deadline (drain time plus kExitMargin, or kExitMargin after a second
// signal) the process logs and _exits, whatever is still running.
class ShutdownWatch {
 public:
  ShutdownWatch(Server& server, const sigset_t& signals, std::chrono::milliseconds drain)
      : server_(server),
        signals_(signals),
        deadline_(std::chrono::steady_clock::now() + drain + kExitMargin),
        thread_([this] { Watch(); }) {}
  // Stops watching.
  ~ShutdownWatch() {
    done_.store(true);
    thread_.join();
  }
  ShutdownWatch(const ShutdownWatch&) = delete;
  ShutdownWatch& operator=(const ShutdownWatch&) = delete;

  bool second_signal() const { return second_signal_.load(); }

 private:
  void Watch() {
    constexpr timespec kStep{0, 50'000'000};  // how often it looks at done_ and the clock
    while (!done_.load()) {
      const int signal_number = sigtimedwait(&signals_, nullptr, &kStep);
      if (signal_number > 0 && !second_signal_.exchange(true)) {
        spdlog::warn("second signal ({}): stopping the calls in flight now",
                     TerminationSignalName(signal_number));
        deadline_ = std::min(deadline_, std::chrono::steady_clock::now() + kExitMargin);
        server_.CutDrainShort();
      }
      if (std::chrono::steady_clock::now() >= deadline_) {
        spdlog::error(
            "onemodeld has not stopped {} s after its drain time: exiting at once with "
            "code {}",
            kExitMargin.count(), kExitDrainOverrun);
        FlushLogs();
        _exit(kExitDrainOverrun);
      }
    }
  }

  Server& server_;
  const sigset_t signals_;
  std::chrono::steady_clock::time_point deadline_;  // only Watch() uses it
  std::atomic<bool> done_{false};
  std::atomic<bool> second_signal_{false};
  std::thread thread_;
};

}  // namespace

int RunDaemon(const ServerConfig& config) {
  // main() blocked them before any library started a thread; block them again for callers
  // that did not (every thread started from here on inherits the mask).
  const sigset_t signals = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

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
  spdlog::info(
      "{} received: draining (up to {} s for in-flight requests; a second signal stops "
      "them now)",
      TerminationSignalName(signal_number), config.drain_seconds);
  const std::chrono::milliseconds drain(static_cast<int64_t>(config.drain_seconds * 1000));
  ShutdownWatch watch(*server, signals, drain);
  const int64_t open = server->Shutdown(drain);
  const int exit_code = watch.second_signal() ? kExitSecondSignal : kExitDrained;
  spdlog::info("onemodeld stopped: {} open session(s) closed; exit code {}", open, exit_code);
  // Not spdlog::shutdown(): that drops the logger, and a late call refused on a gRPC thread
  // before _exit would log through a null one.
  FlushLogs();
  // Every call has ended and every session is closed. The process leaves without gRPC's own
  // shutdown (~Server): that answers calls still arriving, before their clients have seen its
  // GOAWAY, with a bare CANCELLED, where the closed connection gives them UNAVAILABLE; and it
  // would join workers that a kernel deaf to cancellation could hold, and gRPC's last
  // grpc_shutdown() joins an executor thread that, after a large transfer, may sit in
  // tcp_posix's backup poller for up to 10 s. The OS reclaims the rest.
  _exit(exit_code);
}

}  // namespace onemodel::server
