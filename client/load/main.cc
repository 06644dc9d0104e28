// onemodel-load: a load generator for onemodeld. Runs --sessions concurrent sessions, each
// repeating a step (mlp: forward Run + Backward; chain: elementwise Run; transfer: Put + Get),
// in a closed loop or open loop at a fixed arrival rate (--rate, or a --sweep of rates that
// finds the knee), and reports requests/s, latency percentiles (per RPC and per step), errors
// by status code and the server's pool and arena statistics before and after; --csv writes
// the time series that onemodel-load-plot draws. `onemodel-load --help` lists the flags.
//
//   onemodel-load --server host:50051 --sessions 32 --duration 60 --warmup 10 --check
//   onemodel-load --step chain --size 65536 --chain-length 16 --requests 100000 --json -
//   onemodel-load --sessions 8 --sweep 100:20000:8 --duration 5 --p99-bound-ms 20
//       --json sweep.json --csv sweep.csv    (one command)
//
// Exit codes: 0 done (and the --check passed), 1 the --check failed, 2 a usage error (a --json
// or --csv file that cannot be created included: checked before the run), 3 the load could not
// start (server unreachable, session creation refused, ...) or its report not be written.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "client/load/load_progress.h"
#include "client/load/load_report.h"
#include "client/load/load_runner.h"
#include "client/load/time_series.h"

namespace {

using namespace onemodel::load;

// A --json or --csv output: stdout ("-") or a file opened before the run, so that a path that
// cannot be written fails at once rather than after a long run.
struct Output {
  const char* flag;
  std::string path;  // empty: none
  std::ofstream file;
};

void CannotWrite(const Output& out) {
  std::cerr << "onemodel-load: cannot write the " << out.flag << " file '" << out.path
            << "': check that its directory exists and is writable\n";
}

// Opens the file of `out` (when it names one); false, with a message, when it cannot.
bool Open(Output& out) {
  if (out.path.empty() || out.path == "-") return true;
  out.file.open(out.path);
  if (!out.file) CannotWrite(out);
  return static_cast<bool>(out.file);
}

// Writes `text` to `out` (nothing when it has no path); false, with a message, on failure.
bool Write(Output& out, const std::string& text) {
  if (out.path.empty()) return true;
  if (out.path == "-") {
    std::cout << text << std::flush;
    return true;
  }
  if (!(out.file << text) || !out.file.flush()) {
    CannotWrite(out);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "onemodel-load: concurrent sessions running a step against onemodeld, closed-loop or at a "
      "fixed arrival rate (--rate, --sweep), with throughput, latency percentiles per RPC and "
      "per step, errors and the server's memory before and after; --csv writes the time series "
      "(draw it with onemodel-load-plot)");
  LoadOptions options;
  AddLoadFlags(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  Output json{"--json", options.json_path, {}};
  Output csv{"--csv", options.csv_path, {}};
  if (!Open(json) || !Open(csv)) return 2;
  const bool progress = options.progress > 0 || (options.progress == 0 && isatty(STDERR_FILENO));
  ProgressCallback on_progress;
  if (progress) {
    on_progress = [](const LoadProgress& p) {
      std::fprintf(stderr, "\r%s", FormatLoadProgress(p).c_str());
      std::fflush(stderr);
    };
  }
  LoadResult result;
  try {
    onemodel::client::Client client = onemodel::cli::Connect(options.connection);
    result = RunLoad(client, options, on_progress);
  } catch (const std::exception& e) {
    if (progress) std::fputc('\n', stderr);
    std::cerr << "onemodel-load: " << e.what()
              << onemodel::cli::ConnectionAdvice(e, options.connection) << "\n";
    return 3;
  }
  if (progress) std::fputc('\n', stderr);
  // With the JSON on stdout, the table goes to stderr so that stdout stays parseable.
  (options.json_path == "-" ? std::cerr : std::cout) << FormatTable(result) << std::flush;
  if (!Write(json, FormatJson(result)) || !Write(csv, FormatCsv(result.series))) return 3;
  return options.check && !CheckFailures(result).empty() ? 1 : 0;
}
