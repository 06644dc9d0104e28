// health and stats.
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include "client/cli/commands.h"

namespace onemodel::cli {
namespace {

std::string MiB(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

void PrintArena(const v1::ArenaStats& a) {
  std::cout << "  arena       " << a.chunks() << " chunks, reserved " << MiB(a.reserved_bytes())
            << ", used " << MiB(a.used_bytes()) << ", peak " << MiB(a.peak_used_bytes()) << ", "
            << a.resets() << " resets, " << a.allocations() << " allocations, " << a.growth_events()
            << " growth events\n";
}

void PrintStatsTable(const v1::Stats& s) {
  const v1::PoolStats& p = s.pool();
  const v1::SessionCounters& c = s.sessions();
  std::cout << "server instance " << s.server_instance_id() << "\n"
            << "pool            " << p.rented_buffers() << " buffers rented, "
            << MiB(p.rented_bytes()) << " (requested " << MiB(p.rented_requested_bytes())
            << ", peak " << MiB(p.peak_rented_bytes()) << "), idle " << MiB(p.idle_bytes())
            << " of " << MiB(p.max_idle_bytes()) << ", " << p.hits() << " hits, " << p.misses()
            << " misses, " << p.frees_over_cap() << " frees over cap\n"
            << "sessions        " << c.open() << " open, " << c.created() << " created, "
            << c.closed() << " closed, " << c.expired() << " expired, "
            << c.buffers_released_by_close() << " unreleased buffers released by close, "
            << c.leaked_buffers_reclaimed() << " leaked buffers reclaimed (expired)\n";
  if (s.has_session()) {
    const v1::SessionStats& session = s.session();
    std::cout << "session         " << session.session_id() << " (" << session.kernel_variant()
              << "): " << session.handles() << " handles, " << session.pool_buffers()
              << " pool buffers, " << MiB(session.pool_bytes()) << " of "
              << MiB(session.memory_limit_bytes()) << ", " << session.requests() << " requests\n";
    PrintArena(session.arena());
    const v1::ConvCacheStats& conv = session.conv_cache();
    std::cout << "  conv cache  " << conv.entries() << " of " << conv.capacity() << " primitives, "
              << conv.hits() << " hits, " << conv.misses() << " misses, " << conv.evictions()
              << " evictions\n";
  }
  char line[128];
  std::snprintf(line, sizeof line, "%-48s %10s %8s %14s\n", "rpc", "requests", "errors",
                "mean latency");
  std::cout << line;
  for (const v1::RpcStats& rpc : s.rpcs()) {
    const double mean_ms =
        rpc.requests() > 0 ? rpc.latency_sum_seconds() * 1e3 / static_cast<double>(rpc.requests())
                           : 0.0;
    std::snprintf(line, sizeof line, "%-48s %10lld %8lld %11.3f ms\n", rpc.method().c_str(),
                  static_cast<long long>(rpc.requests()), static_cast<long long>(rpc.errors()),
                  mean_ms);
    std::cout << line;
  }
}

void AddHealth(CLI::App& app, GlobalOptions& global) {
  struct Options {
    std::string service;
    int timeout_ms = 5000;
  };
  auto options = std::make_shared<Options>();
  CLI::App* health = app.add_subcommand("health", "check serving status (exit 0 when SERVING)");
  health->add_option("--service", options->service, "service name ('' = the whole server)");
  health->add_option("--timeout-ms", options->timeout_ms, "deadline of the check")
      ->capture_default_str();
  health->callback([&global, options] {
    const client::HealthStatus status =
        Connect(global.connection)
            .Health(options->service, std::chrono::milliseconds(options->timeout_ms));
    std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(status) << "\n";
    global.exit_code = status == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
  });
}

void PrintStatsJson(const v1::Stats& stats) {
  google::protobuf::util::JsonPrintOptions json;
  json.add_whitespace = true;
  json.always_print_primitive_fields = true;
  json.preserve_proto_field_names = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(stats, &text, json).ok()) {
    throw client::Error(grpc::StatusCode::INTERNAL, "cannot format the statistics as JSON");
  }
  std::cout << text;
}

// Set by the first Ctrl-C of `stats --watch` (the second one ends the process at once).
volatile std::sig_atomic_t interrupted = 0;

void OnInterrupt(int) { interrupted = 1; }

// Prints statistics every `interval_ms`: on a terminal each view replaces the last one,
// otherwise views follow each other, separated by a blank line. Ends after `count` views
// (0: no limit) or on Ctrl-C.
void WatchStats(client::Client& client, const std::string& session, int64_t interval_ms,
                int64_t count, bool json) {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  const bool terminal = isatty(STDOUT_FILENO) == 1;
  int64_t shown = 0;
  client.WatchStats(
      interval_ms,
      [&](const v1::Stats& stats) {
        if (interrupted) return false;
        std::cout << (terminal ? "\033[H\033[2J" : shown > 0 ? "\n" : "");
        json ? PrintStatsJson(stats) : PrintStatsTable(stats);
        std::cout << std::flush;
        return ++shown != count && !interrupted;
      },
      session);
}

void AddStats(CLI::App& app, GlobalOptions& global) {
  struct Options {
    std::string session;
    bool json = false;
    bool watch = false;
    int64_t interval_ms = 1000;
    int64_t count = 0;
  };
  auto options = std::make_shared<Options>();
  CLI::App* stats = app.add_subcommand("stats", "print pool, session and RPC statistics");
  stats->add_option("--session", options->session, "also show this session's statistics");
  stats->add_flag("--json", options->json, "print the Stats message as JSON");
  CLI::Option* watch = stats->add_flag("--watch,-w", options->watch,
                                       "a live view, refreshed in place until Ctrl-C (or --count)");
  stats->add_option("--interval-ms", options->interval_ms, "--watch: time between views")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{10}, int64_t{3600000}))
      ->needs(watch);
  stats->add_option("--count,-n", options->count, "--watch: stop after this many views")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            int64_t n = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
            if (ec == std::errc() && end == v.data() + v.size() && n >= 1) return "";
            return "must be a whole number of views, at least 1 (leave --count out to watch "
                   "until Ctrl-C); got '" +
                   v + "'";
          },
          "N >= 1"))
      ->needs(watch);
  stats->callback([&global, options] {
    client::Client client = Connect(global.connection);
    if (options->watch) {
      return WatchStats(client, options->session, options->interval_ms, options->count,
                        options->json);
    }
    const v1::Stats stats = client.Stats(options->session);
    options->json ? PrintStatsJson(stats) : PrintStatsTable(stats);
  });
}

}  // namespace

void AddServerCommands(CLI::App& app, GlobalOptions& global) {
  AddHealth(app, global);
  AddStats(app, global);
}

}  // namespace onemodel::cli
