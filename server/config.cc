#include "server/config.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "server/security_files.h"

namespace onemodel::server {
namespace {

// "max-sessions" -> "ONEMODEL_MAX_SESSIONS".
std::string EnvName(const std::string& flag) {
  std::string env = "ONEMODEL_";
  for (char c : flag) env += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return env;
}

// Adds --name with its environment variable and help text.
template <typename T>
CLI::Option* AddSetting(CLI::App& app, const std::string& name, T* value, const std::string& help) {
  return app.add_option("--" + name, *value, help)->envname(EnvName(name))->capture_default_str();
}

// Adds a byte size setting: accepts 4096, 64KiB, 64MiB, 2GiB (units are powers of 1024).
CLI::Option* AddSize(CLI::App& app, const std::string& name, int64_t* value,
                     const std::string& help) {
  return AddSetting(app, name, value, help)->transform(CLI::AsSizeValue(false));
}

}  // namespace

int ParseConfig(int argc, char** argv, ServerConfig* c) {
  CLI::App app{
      "onemodeld: the OneModel tensor service. Clients create sessions over gRPC, upload "
      "tensors as ONNX TensorProto, run eager operations with optional backward and fetch "
      "results. Every flag can also be set by the environment variable named beside it; a "
      "flag given on the command line wins.",
      "onemodeld"};
  app.get_formatter()->column_width(44);
  AddSetting(app, "listen", &c->listen, "gRPC listen address host:port (port 0 picks one)");
  AddSetting(app, "metrics-listen", &c->metrics_listen,
             "Prometheus /metrics address host:port; 'off' (or empty) disables it");
  AddSetting(app, "ready-file", &c->ready_file,
             "once serving, write grpc=, metrics= and instance= lines to this file");
  AddSize(app, "pool-max-idle-bytes", &c->pool_max_idle_bytes,
          "idle memory the shared pool keeps for reuse; beyond it released blocks are freed");
  AddSize(app, "memory-limit", &c->memory_limit_bytes,
          "ceiling on all memory rented from the pool; 0 means 80% of physical memory");
  AddSetting(app, "max-sessions", &c->max_sessions, "sessions open at once")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  AddSize(app, "session-memory-default", &c->session_memory_default,
          "memory limit of a session that asks for none");
  AddSize(app, "session-memory-max", &c->session_memory_max,
          "largest memory limit a session may ask for");
  AddSetting(app, "idle-timeout", &c->idle_timeout_seconds,
             "seconds without requests after which a session expires (default for sessions)")
      ->check(CLI::PositiveNumber);
  AddSetting(app, "max-idle-timeout", &c->max_idle_timeout_seconds,
             "largest idle timeout a session may ask for, in seconds")
      ->check(CLI::PositiveNumber);
  AddSize(app, "max-message-bytes", &c->max_message_bytes,
          "largest unary message; bigger tensors go through UploadTensor/DownloadTensor")
      ->check(CLI::Range(int64_t{4096}, int64_t{2147483647}));
  AddSetting(app, "max-run-operations", &c->max_run_operations, "operations in one Run request")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  AddSetting(app, "max-handles", &c->max_handles_per_session, "tensor handles a session may hold")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  AddSetting(app, "workers", &c->workers, "threads running session work; 0 means one per core")
      ->check(CLI::Range(0, 1024));
  AddSetting(app, "blas-threads", &c->blas_threads,
             "threads one MatMul may use; 1 suits many sessions at once (they already run in "
             "parallel), 0 means one per core (one big client)")
      ->check(CLI::Range(0, 1024));
  AddSetting(app, "log-level", &c->log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  AddSetting(app, "log-format", &c->log_format, "text (for people) or json (one object a line)")
      ->check(CLI::IsMember({"text", "json"}));
  AddSetting(app, "tls-cert", &c->tls_cert, "PEM server certificate chain; enables TLS")
      ->check(CLI::ExistingFile);
  AddSetting(app, "tls-key", &c->tls_key, "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile);
  AddSetting(app, "tls-client-ca", &c->tls_client_ca,
             "PEM CA bundle; clients must present a certificate it signed (mutual TLS)")
      ->check(CLI::ExistingFile);
  AddSetting(app, "auth-token-file", &c->auth_token_file,
             "file holding a bearer token; calls must send 'authorization: Bearer <token>' "
             "(health checks stay open)")
      ->check(CLI::ExistingFile);
  AddSetting(app, "drain-seconds", &c->drain_seconds,
             "on SIGTERM/SIGINT, how long in-flight requests may take to finish")
      ->check(CLI::NonNegativeNumber);
  AddSetting(app, "stream-idle-timeout", &c->stream_idle_timeout_seconds,
             "seconds an UploadTensor/DownloadTensor may wait on a client that sends or reads "
             "nothing before it is cancelled (DEADLINE_EXCEEDED) and its session goes on")
      ->check(CLI::PositiveNumber);
  AddSetting(app, "max-watches", &c->max_watches, "WatchStats streams open at once")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  AddSetting(app, "max-watches-per-session", &c->max_watches_per_session,
             "WatchStats streams open at once for one session")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  AddSetting(app, "min-watch-interval-ms", &c->min_watch_interval_ms,
             "shortest WatchStats interval a client may ask for; shorter is refused")
      ->check(CLI::Range(int64_t{1}, int64_t{3600000}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is 0; every usage error is 2
  }
  if (c->metrics_listen == "off") c->metrics_listen.clear();
  if (c->tls_cert.empty() != c->tls_key.empty()) {
    std::fprintf(stderr, "onemodeld: --tls-cert and --tls-key must be given together\n");
    return 2;
  }
  if (!c->tls_client_ca.empty() && c->tls_cert.empty()) {
    std::fprintf(stderr, "onemodeld: --tls-client-ca needs --tls-cert and --tls-key\n");
    return 2;
  }
  if (const std::string error = CheckSecurityFiles(*c); !error.empty()) {
    std::fprintf(stderr, "onemodeld: %s\n", error.c_str());
    return 2;
  }
  if (c->session_memory_default > c->session_memory_max) {
    std::fprintf(stderr,
                 "onemodeld: --session-memory-default (%lld) is above --session-memory-max "
                 "(%lld)\n",
                 static_cast<long long>(c->session_memory_default),
                 static_cast<long long>(c->session_memory_max));
    return 2;
  }
  if (c->idle_timeout_seconds > c->max_idle_timeout_seconds) {
    std::fprintf(stderr, "onemodeld: --idle-timeout is above --max-idle-timeout\n");
    return 2;
  }
  if (c->workers == 0)
    c->workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return -1;
}

int64_t EffectiveMemoryLimit(const ServerConfig& c) {
  if (c.memory_limit_bytes > 0) return c.memory_limit_bytes;
  const int64_t pages = sysconf(_SC_PHYS_PAGES);
  const int64_t page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? pages / 10 * 8 * page : int64_t{8} << 30;
}

}  // namespace onemodel::server
