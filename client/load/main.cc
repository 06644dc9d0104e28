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
// Exit codes: 0 done (and the --check passed), 1 the --check failed, 2 a usage error, 3 the
// load could not start (server unreachable, session creation refused, ...).
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

// Writes `text` to `path` ("-": stdout), given by `flag`; false, with a message, when the file
// cannot be written.
bool WriteOutput(const char* flag, const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text << std::flush;
    return true;
  }
  std::ofstream out(path);
  if (!(out << text) || !out.flush()) {
    std::cerr << "onemodel-load: cannot write the " << flag << " file '" << path
              << "': check that its directory exists and is writable\n";
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
    std::cerr << "onemodel-load: " << e.what() << "\n";
    return 3;
  }
  if (progress) std::fputc('\n', stderr);
  // With the JSON on stdout, the table goes to stderr so that stdout stays parseable.
  (options.json_path == "-" ? std::cerr : std::cout) << FormatTable(result) << std::flush;
  if (!options.json_path.empty() && !WriteOutput("--json", options.json_path, FormatJson(result))) {
    return 3;
  }
  if (!options.csv_path.empty() &&
      !WriteOutput("--csv", options.csv_path, FormatCsv(result.series))) {
    return 3;
  }
  return options.check && !CheckFailures(result).empty() ? 1 : 0;
}
