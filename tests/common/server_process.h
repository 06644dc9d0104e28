// ServerProcess: a real onemodeld child process for integration tests.
//
// Starts the server on free ports (--listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0) with a
// ready file, waits until the server has written it, and reads the addresses and instance id
// from it. Stop() (or the destructor) sends SIGTERM and waits, so a test can assert that the
// server shut down cleanly. The child is killed if the test process dies first; create the
// object on a thread that outlives it (the main thread).
//
//   ServerProcess server({"--max-message-bytes", "1MiB"});
//   onemodel::client::Client client(server.grpc_address());
//   ...
//   EXPECT_TRUE(server.Stop().ok());
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onemodel::testing {

// How a process ended: its exit code, or the signal that killed it.
struct ExitStatus {
  int code = -1;   // exit code when it exited
  int signal = 0;  // the terminating signal when killed
  // Exited with code 0.
  bool ok() const { return signal == 0 && code == 0; }
  // "exit code 3" or "killed by signal 9".
  std::string Describe() const;
};

// The number that starts the `name` line of /proc/<pid>/status ("Threads", or "VmRSS" in
// KiB), -1 when there is no such line.
int64_t ProcStatusNumber(pid_t pid, std::string_view name);
// The resident memory of process `pid` in bytes (VmRSS), -1 when /proc does not say.
int64_t ResidentBytes(pid_t pid);

class ServerProcess {
 public:
  // Starts `binary` with the test flags, then `extra_args` (which may replace the default
  // --metrics-listen); throws std::runtime_error when it does not become ready within 30
  // seconds (or exits first).
  explicit ServerProcess(std::vector<std::string> extra_args = {},
                         std::string binary = ONEMODELD_PATH);
  // Stops the server if Stop() was not called.
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Sends `signal` and waits for the exit (SIGKILL after 30 s); later calls return the same.
  ExitStatus Stop(int signal = SIGTERM);

  const std::string& grpc_address() const { return grpc_address_; }
  // Empty when metrics are disabled.
  const std::string& metrics_address() const { return metrics_address_; }
  const std::string& instance_id() const { return instance_id_; }
  pid_t pid() const { return pid_; }

 private:
  // Waits for the ready file and parses it; throws if the child exits or time runs out.
  void AwaitReady();
  void ParseReadyFile(const std::string& text);

  std::string dir_;  // temporary directory holding the ready file
  std::string ready_file_;
  pid_t pid_ = -1;
  bool stopped_ = false;
  ExitStatus exit_status_;
  std::string grpc_address_;
  std::string metrics_address_;
  std::string instance_id_;
};

}  // namespace onemodel::testing
