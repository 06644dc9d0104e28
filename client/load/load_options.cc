#include "client/load/load_options.h"

#include <map>

namespace onemodel::load {

std::string_view StepName(StepKind step) { return step == StepKind::kMlp ? "mlp" : "chain"; }

int RequestsPerStep(StepKind step) { return step == StepKind::kMlp ? 2 : 1; }

void AddLoadFlags(CLI::App& app, LoadOptions& options) {
  cli::AddConnectionFlags(app, options.connection);
  app.add_option("--sessions", options.sessions, "concurrent sessions, one thread each")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  const std::map<std::string, v1::KernelChoice> kernels = {{"fast", v1::KERNEL_CHOICE_FAST},
                                                           {"exact", v1::KERNEL_CHOICE_EXACT}};
  app.add_option("--kernels", options.kernels, "fast or exact (default: the server's)")
      ->transform(CLI::CheckedTransformer(kernels, CLI::ignore_case))
      ->option_text("fast|exact");
  const std::map<std::string, StepKind> steps = {{"mlp", StepKind::kMlp},
                                                 {"chain", StepKind::kChain}};
  app.add_option("--step", options.step,
                 "mlp: Run (MatMul, Add, Relu, MatMul, LogSoftmax, Mean) + Backward to the "
                 "weights, 2 requests; chain: one Run of --chain-length elementwise operations")
      ->transform(CLI::CheckedTransformer(steps, CLI::ignore_case))
      ->option_text("mlp|chain (default mlp)");
  auto* batch = app.add_option("--batch", options.batch, "mlp: rows of the input")
                    ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
                    ->capture_default_str();
  auto* width =
      app.add_option("--width", options.width, "mlp: features of the input and both layers")
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 14))
          ->capture_default_str();
  auto* size = app.add_option("--size", options.size, "chain: elements of the tensor")
                   ->check(CLI::Range(int64_t{1}, int64_t{1} << 28))
                   ->capture_default_str();
  auto* length =
      app.add_option("--chain-length", options.chain_length, "chain: operations per step")
          ->check(CLI::Range(1, 4096))
          ->capture_default_str();
  auto* requests = app.add_option("--requests", options.requests,
                                  "stop after this many requests after warm-up (whole steps)")
                       ->check(CLI::PositiveNumber);
  auto* duration = app.add_option("--duration", options.duration_s,
                                  "seconds of load after warm-up (when --requests is not given)")
                       ->check(CLI::PositiveNumber)
                       ->capture_default_str();
  app.add_option("--warmup", options.warmup_s,
                 "seconds of unmeasured steps first (each session runs at least one)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--json", options.json_path,
                 "also write the report as JSON to FILE ('-': stdout)");
  app.add_flag("--progress,!--no-progress", options.progress,
               "draw a progress bar on stderr (default: when stderr is a terminal)");
  app.add_flag("--check", options.check,
               "exit 1 if any request failed, the pool's rented bytes grew after warm-up, or an "
               "arena grew after warm-up");
  app.callback([=, &options] {
    if (requests->count() > 0 && duration->count() > 0) {
      throw CLI::ValidationError("--requests and --duration both end the run: give only one");
    }
    const bool mlp_flags = batch->count() > 0 || width->count() > 0;
    const bool chain_flags = size->count() > 0 || length->count() > 0;
    if (options.step == StepKind::kMlp && chain_flags) {
      throw CLI::ValidationError(
          "--size and --chain-length size the chain step: add --step chain, or size the mlp "
          "step with --batch and --width");
    }
    if (options.step == StepKind::kChain && mlp_flags) {
      throw CLI::ValidationError(
          "--batch and --width size the mlp step: drop them, or size the chain step with --size "
          "and --chain-length");
    }
    if (options.check && options.warmup_s <= 0) {
      throw CLI::ValidationError(
          "--check needs --warmup above 0: a session's first steps grow its arena, so memory "
          "can only be judged flat after a warm-up");
    }
  });
}

}  // namespace onemodel::load
