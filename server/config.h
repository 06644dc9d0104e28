// ServerConfig: every setting of onemodeld, from flags or ONEMODEL_* environment variables.
//
// Defaults need no file and no other service: `onemodeld` alone listens on 127.0.0.1:50051
// with metrics on 127.0.0.1:9464. Each flag has an environment variable (flag name in upper
// snake case after ONEMODEL_); a flag on the command line wins over the variable. Sizes take
// units (64MiB, 1GiB, 4096); `onemodeld --help` documents each setting and its range. Every
// numeric setting has a range and must be finite: a value outside exits 2 with a message naming
// the flag and the range (NumericFlagRanges lists them).
//
//   ServerConfig config;
//   if (int exit_code = ParseConfig(argc, argv, &config); exit_code >= 0) return exit_code;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onemodel::server {

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  std::string metrics_listen = "127.0.0.1:9464";  // empty ("off" on the command line): none
  std::string ready_file;                         // written once serving (tests, supervisors)
  int64_t metrics_sessions = 10;  // sessions with their own series; the rest are "other"
  bool status_page = true;        // /status on the metrics port
  int64_t pool_max_idle_bytes = int64_t{2} << 30;
  int64_t memory_limit_bytes = 0;  // ceiling on all rented memory; 0: 80% of physical memory
  int64_t max_sessions = 1024;
  int64_t session_memory_default = int64_t{1} << 30;
  int64_t session_memory_max = int64_t{4} << 30;
  double idle_timeout_seconds = 300;
  double max_idle_timeout_seconds = 86400;
  int64_t max_message_bytes = int64_t{64} << 20;
  int64_t max_run_operations = 4096;
  int64_t max_handles_per_session = 1 << 20;
  int workers = 0;  // 0: one per CPU core
  // Session requests estimated (inline_cost.h) to touch at most this many bytes run on the
  // gRPC thread when their session is idle; 0: every one goes to a worker.
  int64_t inline_max_bytes = int64_t{256} << 10;
  int blas_threads = 1;  // threads one MatMul (BLAS call) may use; 0: one per CPU core
  std::string log_level = "info";
  std::string log_format = "text";  // text | json
  int64_t slow_request_ms = 1000;   // requests that take longer are logged (warning); 0: none
  // Failed or slow requests logged a second at most (the rest are counted); 0: all are.
  int64_t max_request_warnings_per_second = 100;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;  // with it, clients must present a certificate it signed
  std::string auth_token_file;
  double drain_seconds = 30;  // how long SIGTERM waits for in-flight requests
  // How long a streamed transfer may wait on its client (no chunk received or accepted)
  // before it is cancelled and lets its session go.
  double stream_idle_timeout_seconds = 30;
  // A streamed transfer that moves less than this per second over stream_idle_timeout_seconds
  // of waiting on its client (a trickle) is cancelled too; 0: no minimum.
  int64_t stream_min_bytes_per_second = int64_t{64} << 10;
  // Bytes all uploads in flight may reserve at their headers; 0: half of the memory ceiling.
  int64_t max_upload_bytes_in_flight = 0;
  // Ids of ended sessions kept (and how long) so that none is proposed again (RecentIds).
  int64_t session_tombstones = 65536;
  double session_tombstone_seconds = 3600;
  int64_t max_watches = 64;             // WatchStats streams open at once, server-wide
  int64_t max_watches_per_session = 4;  // WatchStats streams naming one session
  int64_t min_watch_interval_ms = 100;  // shortest WatchStats interval; shorter is refused
};

// A numeric flag and the closed range ParseConfig accepts (anything else exits 2).
struct FlagRange {
  std::string flag;  // "--idle-timeout"
  double min;
  double max;
  bool integer;
};

// Fills `config` from argv and the environment. Returns -1 to go on, or the exit code for
// main to return at once (0 after --help, 2 after printing a usage error).
int ParseConfig(int argc, char** argv, ServerConfig* config);

// Every numeric flag with its range, in --help order.
std::vector<FlagRange> NumericFlagRanges();

// The ceiling actually enforced: memory_limit_bytes, or 80% of physical memory when it is 0.
int64_t EffectiveMemoryLimit(const ServerConfig& config);
// The uploads' limit actually enforced: max_upload_bytes_in_flight, or half the ceiling.
int64_t EffectiveUploadLimit(const ServerConfig& config);

}  // namespace onemodel::server
