// onemodel-load: a load generator for onemodeld. Runs --sessions concurrent sessions, each
// repeating a step (mlp: forward Run + Backward; chain: elementwise Run) with its arena reset
// every step, and reports requests/s, latency percentiles, errors by status code and the
// server's pool and arena statistics before and after. `onemodel-load --help` lists the flags.
//
//   onemodel-load --server host:50051 --sessions 32 --duration 60 --warmup 10 --check
//   onemodel-load --step chain --size 65536 --chain-length 16 --requests 100000 --json -
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

namespace {

using namespace onemodel::load;

// Writes `json` to `path` ("-": stdout); false, with a message, when the file cannot be written.
bool WriteJson(const std::string& path, const std::string& json) {
  if (path == "-") {
    std::cout << json << std::flush;
    return true;
  }
  std::ofstream out(path);
  if (!(out << json) || !out.flush()) {
    std::cerr << "onemodel-load: cannot write the --json file '" << path
              << "': check that its directory exists and is writable\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "onemodel-load: concurrent sessions running a step against onemodeld, with throughput, "
      "latency percentiles, errors and the server's memory before and after");
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
  if (!options.json_path.empty() && !WriteJson(options.json_path, FormatJson(result))) return 3;
  return options.check && !CheckFailures(result).empty() ? 1 : 0;
}
