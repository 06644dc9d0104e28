// LoadOptions: what one run of `onemodel-load` does (how many sessions, which step, for how
// long, what to report and check) and the command-line flags that set it.
//
//   CLI::App app("onemodel-load");
//   LoadOptions options;
//   AddLoadFlags(app, options);   // --sessions, --step, --rate/--sweep, --duration, --check, ...
//   app.parse(argc, argv);        // CLI::ValidationError for inconsistent flags
//   // options.sessions == 32, options.step == StepKind::kMlp, PhaseRates(options) == {0}, ...
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/cli/connection_flags.h"

namespace onemodel::load {

enum class StepKind {
  kMlp,       // Run (forward, 6 operations) + Backward to the three parameters: 2 requests
  kChain,     // Run of chain_length elementwise operations without recording: 1 request
  kTransfer,  // Put of transfer_bytes into the same tensor, then Get of it: 2 requests
};

struct LoadOptions {
  cli::ConnectionFlags connection;
  int sessions = 4;
  v1::KernelChoice kernels = v1::KERNEL_CHOICE_UNSPECIFIED;
  StepKind step = StepKind::kMlp;
  int64_t batch = 32;                         // mlp: rows of the input
  int64_t width = 128;                        // mlp: features of the input, hidden layer and output
  int64_t size = 4096;                        // chain: elements of the tensor
  int chain_length = 8;                       // chain: operations per step
  int64_t transfer_bytes = int64_t{1} << 20;  // transfer: bytes of the tensor (float32)
  double rate = 0;            // > 0: open loop, steps arriving at this many requests/s
  std::vector<double> sweep;  // not empty: open loop at each of these requests/s in turn
  double p99_bound_ms = 10;   // the sweep's knee: the highest rate with its p99 under this
  int64_t requests = 0;       // > 0: stop after this many requests after warm-up (whole steps)
  double duration_s = 10;     // when requests == 0: seconds of load after warm-up (of each rate)
  double warmup_s = 2;        // seconds of unmeasured steps before the measurement
  std::string json_path;      // where the JSON report goes ("-": stdout); empty: none
  std::string csv_path;       // where the time series goes (CSV, per second); empty: none
  int progress = 0;           // > 0: draw the bar; < 0: never; 0: when stderr is a terminal
  bool check = false;         // exit 1 unless no errors and memory stayed flat after warm-up
};

// The largest --transfer-bytes: the server's largest single buffer (2^31 - 1 bytes) rounded
// down to whole float32 elements.
inline constexpr int64_t kMaxTransferBytes = 2147483644;
// The longest --duration and --warmup: one day.
inline constexpr double kMaxSeconds = 86400;
// The most --requests (a closed loop counts them in an int64_t, a step at a time).
inline constexpr int64_t kMaxRequests = 1'000'000'000'000;

// "mlp", "chain" or "transfer".
std::string_view StepName(StepKind step);
// Requests one step makes (2 for mlp and transfer, 1 for chain).
int RequestsPerStep(StepKind step);
// The arrival rates of the measured phases in requests/s, in order: {0} for the closed loop
// (each session sends its next step when the last one answered), {rate} or the sweep's rates.
std::vector<double> PhaseRates(const LoadOptions& options);

// Adds the connection flags and the load flags to `app`, and checks after parsing that they
// fit together (throwing CLI::ValidationError with what to change).
void AddLoadFlags(CLI::App& app, LoadOptions& options);

}  // namespace onemodel::load
