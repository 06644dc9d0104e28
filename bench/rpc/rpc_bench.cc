// The service (RPC) benchmarks of docs/performance.md, in one run (DESIGN.md section 8).
//
// Starts onemodeld's Server in this process with a raw byte-stream baseline beside it and
// compares, in turn and as medians of many repetitions (rpc_comparisons.h):
//   a small Add against an empty RPC (latency; goal: at most 1.5x),
//   one Run of 10 chained Adds against 10 Runs of one Add (goal: batch at least 5x faster),
//   UploadTensor + DownloadTensor of 256 MiB against the raw stream (goal: at least 0.8),
//   32 sessions against 1 (aggregate small Adds per second; goal: at least 1.6x).
//   an MLP's SGD step through the server against 2x the step in-process + 3 Pings (goal: at most).
// Ratios say how many times better ours is (> 1: better); figures are medians.
//
//   build/release/bench/rpc/rpc_bench [--quick] [--reps=N] [--calls=N] [--bytes=N]
//       [--transfer-reps=N] [--workers=N] [--inline-max-bytes=N] [--only=NAME,...]
//       [--no-breakdown] [--tune-malloc] [--json FILE]
//
// --quick: a smoke run of a few seconds (the CTest rpc_bench_smoke). --only: some of the names
// below ("breakdown": the small Add's latency breakdown). --inline-max-bytes: the server's flag
// (0: every session request hops to a worker, as before inline requests). --tune-malloc: mallopt as
// in TuneMalloc() before anything runs, to show what glibc's defaults cost the transfers.
#include <grpcpp/grpcpp.h>
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench/report.h"
#include "bench/rpc/rpc_comparisons.h"

namespace onemodel::bench {
namespace {

struct Options {
  RpcOptions rpc;
  std::string only;  // comma-separated names; empty: all
  bool breakdown = true;
  bool tune_malloc = false;
  std::string json;
};

bool Wants(const Options& options, std::string_view name) {
  if (options.only.empty()) return true;
  std::string_view list = options.only;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

struct Result {
  const RpcComparison* comparison;
  Comparison figures;
};

const char* Verdict(const Result& r) {
  if (r.comparison->goal <= 0) return "-";
  return r.figures.ratio >= r.comparison->goal ? "ok" : "MISS";
}

void PrintResults(const std::vector<Result>& results) {
  std::printf("\n%-32s %12s %12s %-6s %8s  %-28s %s\n", "comparison", "ours", "baseline", "unit",
              "ratio", "goal", "verdict");
  for (const Result& r : results) {
    const RpcComparison& c = *r.comparison;
    std::printf("%-32s %12.2f %12.2f %-6s %8.3f  %-28s %s\n", c.name, r.figures.ours,
                r.figures.baseline, c.unit, r.figures.ratio, c.goal > 0 ? c.goal_text : "-",
                Verdict(r));
    std::printf("    ours: %s; baseline: %s\n", c.ours_name, c.baseline_name);
  }
}

void PrintDetails(const char* title, const std::vector<Detail>& details) {
  if (details.empty()) return;
  std::printf("\n[%s]\n", title);
  for (const Detail& d : details) {
    std::printf("  %-52s %10.2f %-5s", d.name.c_str(), d.value, d.unit.c_str());
    if (!d.versus.empty()) std::printf("  %7.3f x %s", d.ratio, d.versus.c_str());
    std::printf("\n");
  }
}

bool WriteJson(const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& machine,
               const std::vector<Result>& results, const std::vector<Detail>& details) {
  Json report = {
      {"machine", Object(machine)}, {"results", Json::array()}, {"details", Json::array()}};
  for (const Result& result : results) {
    const RpcComparison& c = *result.comparison;
    const Comparison& r = result.figures;
    report["results"].push_back({{"name", c.name},
                                 {"unit", c.unit},
                                 {"ours", r.ours},
                                 {"baseline", r.baseline},
                                 {"ours_name", c.ours_name},
                                 {"baseline_name", c.baseline_name},
                                 {"ratio", r.ratio},
                                 {"goal", c.goal}});
  }
  for (const Detail& d : details) {
    report["details"].push_back({{"name", d.name},
                                 {"value", d.value},
                                 {"unit", d.unit},
                                 {"versus", d.versus},
                                 {"ratio", d.ratio}});
  }
  return WriteJsonFile(path, report);
}

// Keeps glibc from returning freed memory to the system at once: buffers up to 32 MiB come from
// the heap, not mmap, and the heap is trimmed only above 1 GiB free. gRPC allocates and frees
// each 1 MiB message's buffers; by default each one is a fresh mmap (or trimmed heap), so
// every byte received page-faults first.
void TuneMalloc() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--quick] [--reps=N] [--calls=N] [--bytes=N] [--transfer-reps=N] "
               "[--workers=N] [--inline-max-bytes=N] [--only=NAME,...] [--no-breakdown] "
               "[--tune-malloc] [--json FILE]\n"
               "names (and 'breakdown'):",
               argv0);
  for (const RpcComparison& c : RpcComparisons()) std::fprintf(stderr, " %s", c.name);
  std::fprintf(stderr, "\n");
  return 2;
}

int Main(int argc, char** argv) {
  Options options;
  // --quick first, so that other flags refine it in any order.
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--quick") options.rpc = RpcOptions::Quick();
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&](std::string_view flag) { return std::atoll(argv[i] + flag.size()); };
    if (arg == "--quick") {
    } else if (arg.starts_with("--reps=")) {
      options.rpc.latency_reps = options.rpc.scaling_reps = std::max(1, int(value("--reps=")));
    } else if (arg.starts_with("--calls=")) {
      options.rpc.latency_calls = std::max(1, int(value("--calls=")));
    } else if (arg.starts_with("--bytes=")) {
      options.rpc.transfer_bytes = std::max<int64_t>(4, value("--bytes="));
    } else if (arg.starts_with("--transfer-reps=")) {
      options.rpc.transfer_reps = std::max(1, int(value("--transfer-reps=")));
    } else if (arg.starts_with("--workers=")) {
      options.rpc.workers = std::max(0, int(value("--workers=")));
    } else if (arg.starts_with("--inline-max-bytes=")) {
      options.rpc.inline_max_bytes = std::max<int64_t>(0, value("--inline-max-bytes="));
    } else if (arg.starts_with("--only=")) {
      options.only = std::string(arg.substr(7));
    } else if (arg == "--no-breakdown") {
      options.breakdown = false;
    } else if (arg == "--tune-malloc") {
      options.tune_malloc = true;
    } else if (arg.starts_with("--json=")) {
      options.json = std::string(arg.substr(7));
    } else if (arg == "--json" && i + 1 < argc) {
      options.json = argv[++i];
    } else {
      return Usage(argv[0]);
    }
  }

  if (options.tune_malloc) TuneMalloc();
  const auto started = std::chrono::steady_clock::now();
  const std::string load_before = ReadLine("/proc/loadavg", "");
  RpcFixture fixture(options.rpc);
  const RpcOptions& o = options.rpc;
  std::vector<std::pair<std::string, std::string>> machine = {
      {"cpu", ReadLine("/proc/cpuinfo", "model name")},
      {"cores", std::to_string(std::thread::hardware_concurrency())},
      {"server_workers", std::to_string(fixture.workers())},
      {"server_inline_max_bytes", std::to_string(o.inline_max_bytes)},
      {"grpc", grpc::Version()},
      {"malloc", options.tune_malloc ? "glibc, tuned (--tune-malloc)" : "glibc defaults"},
      {"loadavg_at_start", load_before},
      {"latency_reps", std::to_string(o.latency_reps)},
      {"latency_calls", std::to_string(o.latency_calls)},
      {"transfer_reps", std::to_string(o.transfer_reps)},
      {"transfer_bytes", std::to_string(o.transfer_bytes)},
      {"scaling_reps", std::to_string(o.scaling_reps)},
      {"scaling_window_seconds", std::to_string(o.scaling_window_seconds)},
  };
  for (const auto& [key, v] : machine) std::printf("%-22s %s\n", key.c_str(), v.c_str());
  std::printf(
      "Figures are medians; ratio = median over repetitions of how many times better ours is "
      "(baseline/ours for times, ours/baseline for rates), sampled in turn.\n");
  std::fflush(stdout);

  std::vector<Result> results;
  std::vector<Detail> all_details;
  for (const RpcComparison& c : RpcComparisons()) {
    if (!Wants(options, c.name)) continue;
    std::vector<Detail> details;
    results.push_back({&c, c.run(fixture, o, &details)});
    std::printf("%-32s done (ratio %.3f)\n", c.name, results.back().figures.ratio);
    std::fflush(stdout);
    PrintDetails(c.name, details);
    for (Detail& d : details) d.name = std::string(c.name) + ": " + d.name;
    all_details.insert(all_details.end(), details.begin(), details.end());
  }
  if (options.breakdown && Wants(options, "breakdown")) {
    std::vector<Detail> details = SmallAddBreakdown(fixture, o);
    PrintDetails("small Add latency breakdown, in turn", details);
    for (Detail& d : details) d.name = "breakdown: " + d.name;
    all_details.insert(all_details.end(), details.begin(), details.end());
  }
  PrintResults(results);

  const std::string load_after = ReadLine("/proc/loadavg", "");
  machine.push_back({"loadavg_at_end", load_after});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("\n%.1f s; loadavg at start: %s; at end: %s\n", seconds, load_before.c_str(),
              load_after.c_str());
  if (!options.json.empty()) {
    if (!WriteJson(options.json, machine, results, all_details)) {
      std::fprintf(stderr, "cannot write %s\n", options.json.c_str());
      return 1;
    }
    std::printf("wrote %s\n", options.json.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace onemodel::bench

int main(int argc, char** argv) {
  try {
    return onemodel::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rpc_bench: %s\n", e.what());
    return 1;
  }
}
