#include "client/load/load_options.h"

#include <cmath>
#include <map>
#include <stdexcept>

#include "client/load/sweep.h"

namespace onemodel::load {

namespace {

// A check that a flag's value is a finite number from `low` (excluded when `low_excluded`) to
// `high`. Its error reads "--flag: must be <rule>, not '<value>'"; the help shows `range`.
CLI::Validator NumberIn(double low, bool low_excluded, double high, const std::string& rule,
                        const std::string& range) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        size_t used = 0;
        double value = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;  // not a number, or beyond a double
        }
        const bool ok = used > 0 && used == text.size() && std::isfinite(value) &&
                        (low_excluded ? value > low : value >= low) && value <= high;
        return ok ? "" : "must be " + rule + ", not '" + text + "'";
      },
      range);
}

// A check that a flag's value is a whole number from `low` to `high` ("a number of <what>").
CLI::Validator WholeIn(int64_t low, int64_t high, const std::string& what) {
  const std::string from = std::to_string(low);
  const std::string to = std::to_string(high);
  return NumberIn(static_cast<double>(low), false, static_cast<double>(high),
                  "a number of " + what + " from " + from + " to " + to, from + ".." + to);
}

}  // namespace

std::string_view StepName(StepKind step) {
  switch (step) {
    case StepKind::kMlp:
      return "mlp";
    case StepKind::kChain:
      return "chain";
    case StepKind::kTransfer:
      return "transfer";
  }
  return "?";
}

int RequestsPerStep(StepKind step) { return step == StepKind::kChain ? 1 : 2; }

std::vector<double> PhaseRates(const LoadOptions& options) {
  if (!options.sweep.empty()) return options.sweep;
  return {options.rate};
}

void AddLoadFlags(CLI::App& app, LoadOptions& options) {
  cli::AddConnectionFlags(app, options.connection);
  app.add_option("--sessions", options.sessions, "concurrent sessions, one thread each")
      ->check(WholeIn(1, 4096, "sessions"))
      ->capture_default_str();
  const std::map<std::string, v1::KernelChoice> kernels = {{"fast", v1::KERNEL_CHOICE_FAST},
                                                           {"exact", v1::KERNEL_CHOICE_EXACT}};
  app.add_option("--kernels", options.kernels, "fast or exact (default: the server's)")
      ->transform(CLI::CheckedTransformer(kernels, CLI::ignore_case))
      ->option_text("fast|exact");
  const std::map<std::string, StepKind> steps = {
      {"mlp", StepKind::kMlp}, {"chain", StepKind::kChain}, {"transfer", StepKind::kTransfer}};
  app.add_option("--step", options.step,
                 "mlp: Run (MatMul, Add, Relu, MatMul, LogSoftmax, Mean) + Backward to the "
                 "weights, 2 requests; chain: one Run of --chain-length elementwise operations; "
                 "transfer: Put of --transfer-bytes into one tensor, then Get of it, 2 requests")
      ->transform(CLI::CheckedTransformer(steps, CLI::ignore_case))
      ->option_text("mlp|chain|transfer (default mlp)");
  auto* batch = app.add_option("--batch", options.batch, "mlp: rows of the input")
                    ->check(WholeIn(1, int64_t{1} << 20, "rows"))
                    ->capture_default_str();
  auto* width =
      app.add_option("--width", options.width, "mlp: features of the input and both layers")
          ->check(WholeIn(1, int64_t{1} << 14, "features"))
          ->capture_default_str();
  auto* size = app.add_option("--size", options.size, "chain: elements of the tensor")
                   ->check(WholeIn(1, int64_t{1} << 28, "elements"))
                   ->capture_default_str();
  auto* length =
      app.add_option("--chain-length", options.chain_length, "chain: operations per step")
          ->check(WholeIn(1, 4096, "operations"))
          ->capture_default_str();
  auto* transfer =
      app.add_option("--transfer-bytes", options.transfer_bytes,
                     "transfer: bytes put and got per step (a multiple of 4: float32 elements; "
                     "at most 2147483644, the server's largest single buffer)")
          ->check(WholeIn(4, kMaxTransferBytes, "bytes"))
          ->capture_default_str();
  auto* rate = app.add_option("--rate", options.rate,
                              "open loop: steps arrive at this many requests/s in all, whatever "
                              "the server does; latency counts from each step's intended send "
                              "time, and at most --sessions steps are outstanding (arrivals "
                              "still waiting at the end are counted as unsent)")
                   ->check(NumberIn(0, true, kMaxRatePerS,
                                    "a positive number of requests per second up to 1000000",
                                    "0<R<=1000000"));
  auto* sweep = app.add_option_function<std::string>(
                       "--sweep",
                       [&options](const std::string& text) {
                         try {
                           options.sweep = ParseSweep(text);
                         } catch (const std::invalid_argument& e) {
                           throw CLI::ValidationError(e.what());
                         }
                       },
                       "open loop at STEPS (2 to 100) rates from FROM to TO requests/s "
                       "(0 < FROM < TO <= 1000000, log-spaced), "
                       "--duration each, then the knee: the highest rate held with p99 under "
                       "--p99-bound-ms")
                    ->option_text("FROM:TO:STEPS");
  auto* bound = app.add_option("--p99-bound-ms", options.p99_bound_ms,
                               "--sweep: the p99 step latency a rate must stay under")
                    ->check(NumberIn(0, true, kMaxSeconds * 1e3,
                                     "a positive number of milliseconds up to 86400000 (a day)",
                                     "0<MS<=86400000"))
                    ->capture_default_str();
  auto* requests =
      app.add_option("--requests", options.requests,
                     "closed loop: stop after this many requests after warm-up (whole steps)")
          ->check(WholeIn(1, kMaxRequests, "requests"));
  auto* duration =
      app.add_option("--duration", options.duration_s,
                     "seconds of load after warm-up (when --requests is not given); "
                     "with --sweep, of each rate")
          ->check(NumberIn(0, true, kMaxSeconds, "a positive number of seconds up to 86400 (a day)",
                           "0<S<=86400"))
          ->capture_default_str();
  app.add_option("--warmup", options.warmup_s,
                 "seconds of unmeasured steps first (0: none; above 0, each session runs at "
                 "least one)")
      ->check(NumberIn(0, false, kMaxSeconds,
                       "0 or a positive number of seconds up to 86400 (a day)", "0<=S<=86400"))
      ->capture_default_str();
  app.add_option("--json", options.json_path,
                 "also write the report as JSON to FILE ('-': stdout)");
  app.add_option(
      "--csv", options.csv_path,
      "also write the time series to FILE ('-': stdout): per second, requests/s, steps/s, errors, "
      "step p50/p99, the pool's rented and idle bytes, the arenas' reserved bytes "
      "(onemodel-load-plot draws it)");
  app.add_flag("--progress,!--no-progress", options.progress,
               "draw a progress bar on stderr (default: when stderr is a terminal)");
  app.add_flag("--check", options.check,
               "exit 1 if any request failed, the pool's rented bytes grew after warm-up, or an "
               "arena grew after warm-up");
  app.callback([=, &options] {
    if (requests->count() > 0 && duration->count() > 0) {
      throw CLI::ValidationError("--requests and --duration both end the run: give only one");
    }
    if (rate->count() > 0 && sweep->count() > 0) {
      throw CLI::ValidationError("--rate and --sweep both set the arrival rate: give only one");
    }
    if (requests->count() > 0 && (rate->count() > 0 || sweep->count() > 0)) {
      throw CLI::ValidationError(
          "--requests counts a closed loop's requests; an open loop (--rate, --sweep) runs for "
          "--duration");
    }
    if (bound->count() > 0 && sweep->count() == 0) {
      throw CLI::ValidationError("--p99-bound-ms judges the rates of a --sweep: add --sweep");
    }
    // Each step's sizing flags, and the step they size.
    const struct {
      StepKind step;
      bool given;
      const char* flags;
    } sizing[] = {
        {StepKind::kMlp, batch->count() > 0 || width->count() > 0, "--batch and --width"},
        {StepKind::kChain, size->count() > 0 || length->count() > 0, "--size and --chain-length"},
        {StepKind::kTransfer, transfer->count() > 0, "--transfer-bytes"}};
    for (const auto& s : sizing) {
      if (s.given && s.step != options.step) {
        throw CLI::ValidationError(std::string(s.flags) + " size the " +
                                   std::string(StepName(s.step)) + " step: add --step " +
                                   std::string(StepName(s.step)) + ", or drop them");
      }
    }
    if (options.json_path == "-" && options.csv_path == "-") {
      throw CLI::ValidationError(
          "--json - and --csv - would both write to stdout: give one a file");
    }
    if (options.transfer_bytes % 4 != 0) {
      throw CLI::ValidationError("--transfer-bytes must be a multiple of 4 (float32 elements)");
    }
    if (options.check && options.warmup_s <= 0) {
      throw CLI::ValidationError(
          "--check needs --warmup above 0: a session's first steps grow its arena, so memory "
          "can only be judged flat after a warm-up");
    }
  });
}

}  // namespace onemodel::load
