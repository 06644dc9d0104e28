#include "server/daemon.h"

#include <grpc/grpc.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

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

const char* SignalName(int signal_number) {
  return signal_number == SIGTERM ? "SIGTERM" : "SIGINT";
}

// Watches a shutdown from its own thread: a second termination signal cuts the drain short,
// and past the hard deadline (drain time plus kExitMargin, or kExitMargin after a second
// signal) the process logs and _exits, whatever is still running.
class ShutdownWatch {
 public:
  ShutdownWatch(Server& server, const sigset_t& signals, std::chrono::milliseconds drain)
      : server_(&server),
        signals_(signals),
        deadline_(std::chrono::steady_clock::now() + drain + kExitMargin),
        thread_([this] { Watch(); }) {}
  // Stops watching (the process is about to return from main).
  ~ShutdownWatch() {
    done_.store(true);
    thread_.join();
  }
  ShutdownWatch(const ShutdownWatch&) = delete;
  ShutdownWatch& operator=(const ShutdownWatch&) = delete;

  bool second_signal() const { return second_signal_.load(); }
  // Called before the server is destroyed: a second signal no longer reaches it.
  void ServerGone() {
    std::lock_guard guard(server_mutex_);
    server_ = nullptr;
  }

 private:
  void Watch() {
    constexpr timespec kStep{0, 50'000'000};  // how often it looks at done_ and the clock
    while (!done_.load()) {
      const int signal_number = sigtimedwait(&signals_, nullptr, &kStep);
      if (signal_number > 0 && !second_signal_.exchange(true)) {
        spdlog::warn("second signal ({}): stopping the calls in flight now",
                     SignalName(signal_number));
        deadline_ = std::min(deadline_, std::chrono::steady_clock::now() + kExitMargin);
        std::lock_guard guard(server_mutex_);
        if (server_) server_->CutDrainShort();
      }
      if (std::chrono::steady_clock::now() >= deadline_) {
        spdlog::error(
            "onemodeld has not stopped {} s after its drain time: exiting at once with "
            "code {}",
            kExitMargin.count(), kExitDrainOverrun);
        spdlog::shutdown();
        _exit(kExitDrainOverrun);
      }
    }
  }

  std::mutex server_mutex_;
  Server* server_;  // guarded by server_mutex_
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
  spdlog::info(
      "{} received: draining (up to {} s for in-flight requests; a second signal stops "
      "them now)",
      SignalName(signal_number), config.drain_seconds);
  const std::chrono::milliseconds drain(static_cast<int64_t>(config.drain_seconds * 1000));
  bool second_signal = false;
  {
    ShutdownWatch watch(*server, signals, drain);
    const int64_t open = server->Shutdown(drain);
    watch.ServerGone();
    server.reset();  // joins the workers: still under the watch
    spdlog::info("onemodeld stopped: {} open session(s) closed", open);
    second_signal = watch.second_signal();
  }
  return second_signal ? kExitSecondSignal : kExitDrained;
}

}  // namespace onemodel::server
