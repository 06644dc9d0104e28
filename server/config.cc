#include "server/config.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/memory/memory_budget.h"
#include "proto/host_port.h"
#include "server/security_files.h"

namespace onemodel::server {
namespace {

constexpr int64_t kPiB = int64_t{1} << 50;
constexpr double kYearSeconds = 365 * 86400.0;

// `v` for a message: whole numbers in full, others with up to 6 significant digits.
std::string Show(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v == std::floor(v) && std::fabs(v) < 1e16 ? "%.0f" : "%.6g", v);
  return text;
}

// The whole of `v` as an integer, or nothing.
std::optional<double> ParseInteger(std::string_view v) {
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return static_cast<double>(n);
}

// The whole of `v` as a floating-point number (maybe NaN or infinite), or nothing.
std::optional<double> ParseReal(std::string_view v) {
  double n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

// A size in bytes: an integer and an optional unit, k, kb, ki or kib (any case) for 1024, and
// likewise m, g, t, p and e; nothing when `v` is no such size or it overflows 63 bits.
std::optional<double> ParseSize(std::string_view v) {
  size_t unit = v.size();
  while (unit > 0 && std::isalpha(static_cast<unsigned char>(v[unit - 1]))) --unit;
  std::string suffix;
  for (char c : v.substr(unit)) suffix += static_cast<char>(std::tolower(c));
  std::string_view number = v.substr(0, unit);
  while (!number.empty() && number.back() == ' ') number.remove_suffix(1);
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
    return std::nullopt;
  }
  int shift = 0;
  if (!suffix.empty() && suffix != "b") {
    const size_t power = std::string_view("kmgtpe").find(suffix[0]);
    const std::string_view rest = std::string_view(suffix).substr(1);
    if (power == std::string_view::npos ||
        !(rest.empty() || rest == "b" || rest == "i" || rest == "ib")) {
      return std::nullopt;
    }
    shift = 10 * static_cast<int>(power + 1);
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, int64_t{1} << shift, &bytes)) return std::nullopt;
  return static_cast<double>(bytes);
}

// "ONEMODEL_MAX_SESSIONS" for "--max-sessions" or "max-sessions": a flag's environment
// variable.
std::string EnvironmentName(std::string_view flag) {
  if (flag.starts_with("--")) flag.remove_prefix(2);
  std::string env = "ONEMODEL_";
  for (char c : flag) env += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return env;
}

// The settings of onemodeld, each with its environment variable and help text; every numeric
// one with the range it must lie in. Adding a setting is one line:
//   flags.Number("max-widgets", &c->max_widgets, 1, 4096, "widgets one session may hold");
//   flags.Size("widget-bytes", &c->widget_bytes, 4096, kPiB, "largest widget");
//   flags.Seconds("widget-timeout", &c->widget_timeout_seconds, 0.001, 86400, "widget wait");
class Flags {
 public:
  explicit Flags(CLI::App& app) : app_(app) {}

  // A text setting (validate it with ->check() if it has a form).
  CLI::Option* Text(const std::string& name, std::string* value, const std::string& help) {
    return Add(name, value, help);
  }
  // An on|off setting.
  CLI::Option* Switch(const std::string& name, bool* value, const std::string& help) {
    std::string text = *value ? "on" : "off";
    return Add(name, value, help)->transform(CLI::IsMember({"on", "off"}))->default_str(text);
  }
  // A host:port setting, the port from 0 to 65535; `off_allowed`: "off" or "" turn it off.
  CLI::Option* Address(const std::string& name, std::string* value, bool off_allowed,
                       const std::string& help) {
    return Add(name, value, help)
        ->check(CLI::Validator(
            [off_allowed](std::string& v) -> std::string {
              if (off_allowed && (v.empty() || v == "off")) return "";
              const std::string problem = HostPortProblem(v, 0);
              if (problem.empty()) return "";
              return "must be host:port with a port from 0 to 65535 (0 picks a free one), and " +
                     problem + "; got '" + v + "'";
            },
            "host:port"));
  }
  // An integer or floating-point setting in [min, max]; NaN and infinities are refused.
  template <typename T>
  CLI::Option* Number(const std::string& name, T* value, std::type_identity_t<T> min,
                      std::type_identity_t<T> max, const std::string& help) {
    return Add(name, value, help)
        ->transform(Range(name, min, max, std::is_integral_v<T> ? kInteger : kReal, ""));
  }
  // A duration in seconds in [min, max] (fractions allowed).
  CLI::Option* Seconds(const std::string& name, double* value, double min, double max,
                       const std::string& help) {
    return Add(name, value, help)->transform(Range(name, min, max, kReal, " seconds"));
  }
  // A byte size in [min, max]: 4096, 64KiB, 64MiB, 2GiB (units are powers of 1024).
  CLI::Option* Size(const std::string& name, int64_t* value, int64_t min, int64_t max,
                    const std::string& help) {
    return Add(name, value, help)
        ->transform(Range(name, min, max, kSize,
                          " bytes (" + FormatBytes(min) + " to " + FormatBytes(max) +
                              "; units such as 64KiB or 1GiB)"));
  }

  // The numeric flags declared so far with their ranges, in order.
  std::vector<FlagRange> ranges() const { return ranges_; }

 private:
  // Adds --name with its environment variable ("max-sessions": ONEMODEL_MAX_SESSIONS).
  template <typename T>
  CLI::Option* Add(const std::string& name, T* value, const std::string& help) {
    return app_.add_option("--" + name, *value, help)
        ->envname(EnvironmentName(name))
        ->capture_default_str();
  }
  enum Kind { kInteger, kReal, kSize };
  // Accepts finite numbers of `kind` from `min` to `max` (`unit` follows them in messages);
  // sizes become their count of bytes.
  CLI::Validator Range(const std::string& name, double min, double max, Kind kind,
                       const std::string& unit) {
    ranges_.push_back({"--" + name, min, max, kind != kReal});
    const std::string allowed = std::string(kind == kReal ? "a number" : "an integer") + " from " +
                                Show(min) + " to " + Show(max) + unit;
    return CLI::Validator(
        [=](std::string& v) -> std::string {
          const std::optional<double> n = kind == kSize      ? ParseSize(v)
                                          : kind == kInteger ? ParseInteger(v)
                                                             : ParseReal(v);
          if (!n || !std::isfinite(*n) || *n < min || *n > max) {
            return "must be " + allowed + "; got '" + v + "'";
          }
          if (kind == kSize) v = Show(*n);
          return "";
        },
        "[" + Show(min) + ", " + Show(max) + "]");
  }

  CLI::App& app_;
  std::vector<FlagRange> ranges_;
};

// The flags ("--auth-token-file") whose environment variable is set to the empty string and
// that the command line does not give. CLI11 skips such a variable as if unset, so
// ONEMODEL_AUTH_TOKEN_FILE= would start a server without authentication where
// --auth-token-file '' is refused: ParseConfig gives each of these flags as '' instead, so
// the same checks apply.
std::vector<std::string> FlagsOfEmptyVariables(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : app.get_options()) {
    const std::string& env = option->get_envname();
    const char* value = env.empty() ? nullptr : std::getenv(env.c_str());
    if (value == nullptr || *value != '\0') continue;
    const std::string flag = "--" + option->get_lnames().front();
    const bool given = std::any_of(argv + 1, argv + argc, [&](const char* arg) {
      const std::string_view a(arg);
      return a == flag || a.starts_with(flag + "=");
    });
    if (!given) flags.push_back(flag);
  }
  return flags;
}

// Declares every setting of `c` on `flags`.
void DefineFlags(Flags& flags, ServerConfig* c) {
  flags.Address("listen", &c->listen, false, "gRPC listen address host:port (port 0 picks one)");
  flags.Address("metrics-listen", &c->metrics_listen, true,
                "Prometheus /metrics address host:port; 'off' (or empty) disables it");
  flags.Number("metrics-sessions", &c->metrics_sessions, 0, 10000,
               "sessions (most memory first) with onemodel_session_*/onemodel_arena_* series of "
               "their own; the rest are summed as session=\"other\"");
  flags.Switch("status-page", &c->status_page,
               "serve the status page at / and /status on --metrics-listen (shows session "
               "statistics to whoever reaches that address)");
  flags.Text("ready-file", &c->ready_file,
             "once serving, write grpc=, metrics= and instance= lines to this file");
  flags.Size("pool-max-idle-bytes", &c->pool_max_idle_bytes, 0, kPiB,
             "idle memory the shared pool keeps for reuse; beyond it released blocks are freed");
  flags.Size("memory-limit", &c->memory_limit_bytes, 0, kPiB,
             "ceiling on all memory rented from the pool; 0 means 80% of physical memory");
  flags.Number("max-sessions", &c->max_sessions, 1, int64_t{1} << 20, "sessions open at once");
  flags.Size("session-memory-default", &c->session_memory_default, 4096, kPiB,
             "memory limit of a session that asks for none");
  flags.Size("session-memory-max", &c->session_memory_max, 4096, kPiB,
             "largest memory limit a session may ask for");
  flags.Seconds("idle-timeout", &c->idle_timeout_seconds, 0.001, kYearSeconds,
                "seconds without requests after which a session expires (default for sessions)");
  flags.Seconds("max-idle-timeout", &c->max_idle_timeout_seconds, 0.001, kYearSeconds,
                "largest idle timeout a session may ask for, in seconds");
  flags.Size("max-message-bytes", &c->max_message_bytes, 4096, 2147483647,
             "largest unary message; bigger tensors go through UploadTensor/DownloadTensor");
  flags.Number("max-run-operations", &c->max_run_operations, 1, int64_t{1} << 24,
               "operations in one Run request");
  flags.Number("max-handles", &c->max_handles_per_session, 1, int64_t{1} << 30,
               "tensor handles a session may hold");
  flags.Number("workers", &c->workers, 0, 1024,
               "threads running session work; 0 means one per core");
  flags.Size("inline-max-bytes", &c->inline_max_bytes, 0, 2147483647,
             "a session request estimated to touch at most this many bytes runs on the gRPC "
             "thread that received it when its session is idle (no hop to a worker); 0: none");
  flags.Number("blas-threads", &c->blas_threads, 0, 1024,
               "threads one MatMul may use; 1 suits many sessions at once (they already run in "
               "parallel), 0 means one per core (one big client)");
  flags.Text("log-level", &c->log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  flags.Text("log-format", &c->log_format, "text (for people) or json (one object a line)")
      ->check(CLI::IsMember({"text", "json"}));
  flags.Number("slow-request-ms", &c->slow_request_ms, 0, 3600000,
               "a request that takes longer than this many milliseconds is logged (warning) with "
               "its time; 0: none is");
  flags.Number("max-request-warnings-per-second", &c->max_request_warnings_per_second, 0, 1000000,
               "failed or slow requests logged a second at most; the line after a pause says how "
               "many were not; 0: all are");
  flags.Text("tls-cert", &c->tls_cert, "PEM server certificate chain; enables TLS")
      ->check(CLI::ExistingFile);
  flags.Text("tls-key", &c->tls_key, "PEM private key of --tls-cert")->check(CLI::ExistingFile);
  flags
      .Text("tls-client-ca", &c->tls_client_ca,
            "PEM CA bundle; clients must present a certificate it signed (mutual TLS)")
      ->check(CLI::ExistingFile);
  flags
      .Text("auth-token-file", &c->auth_token_file,
            "file holding a bearer token; calls must send 'authorization: Bearer <token>' "
            "(health checks stay open)")
      ->check(CLI::ExistingFile);
  flags.Seconds("drain-seconds", &c->drain_seconds, 0, 86400,
                "on SIGTERM/SIGINT/SIGHUP, how long in-flight requests may take to finish");
  flags.Seconds("stream-idle-timeout", &c->stream_idle_timeout_seconds, 0.001, 86400,
                "seconds an UploadTensor/DownloadTensor may wait on a client that sends or reads "
                "nothing before it is cancelled (DEADLINE_EXCEEDED) and its session goes on");
  flags.Size("stream-min-bytes-per-second", &c->stream_min_bytes_per_second, 0, kPiB,
             "slowest rate an UploadTensor/DownloadTensor client may move data at, measured over "
             "--stream-idle-timeout of waiting on it; slower ones are cancelled; 0: no minimum");
  flags.Size("max-upload-bytes-in-flight", &c->max_upload_bytes_in_flight, 0, kPiB,
             "bytes all UploadTensor calls in flight may reserve for their announced sizes; 0 "
             "means half of --memory-limit");
  flags.Number("max-watches", &c->max_watches, 1, int64_t{1} << 20,
               "WatchStats streams open at once");
  flags.Number("max-watches-per-session", &c->max_watches_per_session, 1, int64_t{1} << 20,
               "WatchStats streams open at once for one session");
  flags.Number("min-watch-interval-ms", &c->min_watch_interval_ms, 1, 3600000,
               "shortest WatchStats interval a client may ask for; shorter is refused");
  flags.Number("session-tombstones", &c->session_tombstones, 1, int64_t{1} << 22,
               "ids of ended sessions remembered (about 90 bytes each) so that CreateSession "
               "refuses them when proposed again");
  flags.Seconds("session-tombstone-seconds", &c->session_tombstone_seconds, 0.001, 30 * 86400.0,
                "how long an ended session's id stays refused");
}

}  // namespace

int ParseConfig(int argc, char** argv, ServerConfig* c) {
  CLI::App app{
      "onemodeld: the OneModel tensor service. Clients create sessions over gRPC, upload "
      "tensors as ONNX TensorProto, run eager operations with optional backward and fetch "
      "results. Every flag can also be set by the environment variable named beside it (set to "
      "the empty string, it counts as the flag given as ''); a flag given on the command line "
      "wins.",
      "onemodeld"};
  app.get_formatter()->column_width(44);
  Flags flags(app);
  DefineFlags(flags, c);
  const std::vector<std::string> emptied = FlagsOfEmptyVariables(app, argc, argv);
  std::vector<const char*> args(argv, argv + argc);
  for (const std::string& flag : emptied) args.insert(args.begin() + 1, {flag.c_str(), ""});
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e) == 0 ? 0 : 2;  // --help is 0; every usage error is 2
    for (const std::string& flag : emptied) {
      if (code != 0 && std::string_view(e.what()).starts_with(flag + ":")) {
        std::fprintf(stderr,
                     "onemodeld: (%s is set to the empty string, which counts as %s '';"
                     " unset it for the default)\n",
                     EnvironmentName(flag).c_str(), flag.c_str());
      }
    }
    return code;
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

std::vector<FlagRange> NumericFlagRanges() {
  CLI::App app;
  ServerConfig unused;
  Flags flags(app);
  DefineFlags(flags, &unused);
  return flags.ranges();
}

int64_t EffectiveMemoryLimit(const ServerConfig& c) {
  if (c.memory_limit_bytes > 0) return c.memory_limit_bytes;
  const int64_t pages = sysconf(_SC_PHYS_PAGES);
  const int64_t page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? pages / 10 * 8 * page : int64_t{8} << 30;
}

int64_t EffectiveUploadLimit(const ServerConfig& c) {
  return c.max_upload_bytes_in_flight > 0 ? c.max_upload_bytes_in_flight
                                          : EffectiveMemoryLimit(c) / 2;
}

}  // namespace onemodel::server
