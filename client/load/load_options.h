// LoadOptions: what one run of `onemodel-load` does (how many sessions, which step, for how
// long, what to report and check) and the command-line flags that set it.
//
//   CLI::App app("onemodel-load");
//   LoadOptions options;
//   AddLoadFlags(app, options);   // --sessions, --step, --requests/--duration, --check, ...
//   app.parse(argc, argv);        // CLI::ValidationError for inconsistent flags
//   // options.sessions == 32, options.step == StepKind::kMlp, ...
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "client/cli/connection_flags.h"

namespace onemodel::load {

enum class StepKind {
  kMlp,    // Run (forward, 6 operations) + Backward to the three parameters: 2 requests
  kChain,  // Run of chain_length elementwise operations without recording: 1 request
};

struct LoadOptions {
  cli::ConnectionFlags connection;
  int sessions = 4;
  v1::KernelChoice kernels = v1::KERNEL_CHOICE_UNSPECIFIED;
  StepKind step = StepKind::kMlp;
  int64_t batch = 32;      // mlp: rows of the input
  int64_t width = 128;     // mlp: features of the input, hidden layer and output
  int64_t size = 4096;     // chain: elements of the tensor
  int chain_length = 8;    // chain: operations per step
  int64_t requests = 0;    // > 0: stop after this many requests after warm-up (whole steps)
  double duration_s = 10;  // when requests == 0: seconds of load after warm-up
  double warmup_s = 2;     // seconds of unmeasured steps before the measurement
  std::string json_path;   // where the JSON report goes ("-": stdout); empty: none
  int progress = 0;        // > 0: draw the bar; < 0: never; 0: when stderr is a terminal
  bool check = false;      // exit 1 unless no errors and memory stayed flat after warm-up
};

// "mlp" or "chain".
std::string_view StepName(StepKind step);
// Requests one step makes (2 for mlp, 1 for chain).
int RequestsPerStep(StepKind step);

// Adds the connection flags and the load flags to `app`, and checks after parsing that they
// fit together (throwing CLI::ValidationError with what to change).
void AddLoadFlags(CLI::App& app, LoadOptions& options);

}  // namespace onemodel::load
