#include "tests/common/server_process.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace onemodel::testing {
namespace {

constexpr auto kReadyTimeout = std::chrono::seconds(30);
constexpr auto kStopTimeout = std::chrono::seconds(30);
constexpr auto kPollInterval = std::chrono::milliseconds(5);

ExitStatus FromWaitStatus(int status) {
  ExitStatus exit;
  if (WIFEXITED(status)) exit.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  return exit;
}

// Forks and execs `argv`; the child dies with its parent.
pid_t Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {  // only async-signal-safe calls from here on
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

int64_t ProcStatusNumber(pid_t pid, std::string_view name) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with(name) && line.size() > name.size() && line[name.size()] == ':') {
      return std::stoll(line.substr(name.size() + 1));
    }
  }
  return -1;
}

int64_t ResidentBytes(pid_t pid) {
  const int64_t kib = ProcStatusNumber(pid, "VmRSS");
  return kib < 0 ? -1 : kib * 1024;
}

std::string ExitStatus::Describe() const {
  return signal != 0 ? "killed by signal " + std::to_string(signal)
                     : "exit code " + std::to_string(code);
}

ServerProcess::ServerProcess(std::vector<std::string> extra_args, std::string binary) {
  std::string dir_template = (std::filesystem::temp_directory_path() / "onemodeld-XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr) {
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  }
  dir_ = dir_template;
  ready_file_ = dir_ + "/ready";
  std::vector<std::string> args = {std::move(binary), "--listen",    "127.0.0.1:0", "--ready-file",
                                   ready_file_,       "--log-level", "warn"};
  if (std::find(extra_args.begin(), extra_args.end(), "--metrics-listen") == extra_args.end()) {
    args.insert(args.end(), {"--metrics-listen", "127.0.0.1:0"});
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  pid_ = Spawn(args);
  try {
    AwaitReady();
  } catch (...) {
    Stop(SIGKILL);
    std::filesystem::remove_all(dir_);
    throw;
  }
}

ServerProcess::~ServerProcess() {
  Stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void ServerProcess::AwaitReady() {
  const auto deadline = std::chrono::steady_clock::now() + kReadyTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      stopped_ = true;
      exit_status_ = FromWaitStatus(status);
      throw std::runtime_error("onemodeld exited before it was ready: " + exit_status_.Describe());
    }
    std::ifstream in(ready_file_);
    if (in) {  // written atomically: complete once it exists
      std::stringstream text;
      text << in.rdbuf();
      ParseReadyFile(text.str());
      return;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  throw std::runtime_error("onemodeld wrote no ready file within 30 s");
}

void ServerProcess::ParseReadyFile(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t equals = line.find('=');
    if (equals == std::string::npos) continue;
    const std::string key = line.substr(0, equals);
    const std::string value = line.substr(equals + 1);
    if (key == "grpc") grpc_address_ = value;
    if (key == "metrics") metrics_address_ = value;
    if (key == "instance") instance_id_ = value;
  }
  if (grpc_address_.empty() || instance_id_.empty()) {
    throw std::runtime_error("ready file lacks grpc= or instance=: '" + text + "'");
  }
}

ExitStatus ServerProcess::Stop(int signal) {
  if (stopped_) return exit_status_;
  stopped_ = true;
  kill(pid_, signal);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  pid_t waited = 0;
  while ((waited = waitpid(pid_, &status, WNOHANG)) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waited = waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  exit_status_ = waited == pid_ ? FromWaitStatus(status) : ExitStatus{};
  return exit_status_;
}

}  // namespace onemodel::testing
