#include "client/load/load_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace onemodel::load {
namespace {

using Json = nlohmann::ordered_json;

std::string_view KernelsName(v1::KernelChoice kernels) {
  switch (kernels) {
    case v1::KERNEL_CHOICE_FAST:
      return "fast";
    case v1::KERNEL_CHOICE_EXACT:
      return "exact";
    default:
      return "default";
  }
}

double PerSecond(int64_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0;
}

// A number of the server's statistics, with its JSON and table names.
template <typename Stats>
struct Field {
  const char* name;
  const char* label;
  int64_t (*get)(const Stats&);
};

// The pool's numbers (and the open sessions) of v1::Stats.
constexpr Field<v1::Stats> kPoolFields[] = {
    {"rented_bytes", "rented bytes", [](const v1::Stats& s) { return s.pool().rented_bytes(); }},
    {"rented_buffers", "rented buffers",
     [](const v1::Stats& s) { return s.pool().rented_buffers(); }},
    {"idle_bytes", "idle bytes", [](const v1::Stats& s) { return s.pool().idle_bytes(); }},
    {"peak_rented_bytes", "peak rented bytes",
     [](const v1::Stats& s) { return s.pool().peak_rented_bytes(); }},
    {"hits", "hits", [](const v1::Stats& s) { return s.pool().hits(); }},
    {"misses", "misses", [](const v1::Stats& s) { return s.pool().misses(); }},
    {"sessions_open", "open sessions", [](const v1::Stats& s) { return s.sessions().open(); }},
};

// A load session's numbers of v1::SessionStats.
constexpr Field<v1::SessionStats> kSessionFields[] = {
    {"arena_chunks", "chunks", [](const v1::SessionStats& s) { return s.arena().chunks(); }},
    {"arena_reserved_bytes", "reserved bytes",
     [](const v1::SessionStats& s) { return s.arena().reserved_bytes(); }},
    {"arena_resets", "resets", [](const v1::SessionStats& s) { return s.arena().resets(); }},
    {"arena_allocations", "allocations",
     [](const v1::SessionStats& s) { return s.arena().allocations(); }},
    {"arena_growth_events", "growth events",
     [](const v1::SessionStats& s) { return s.arena().growth_events(); }},
    {"handles", "handles", [](const v1::SessionStats& s) { return s.handles(); }},
    {"pool_buffers", "pool buffers", [](const v1::SessionStats& s) { return s.pool_buffers(); }},
    {"requests", "requests", [](const v1::SessionStats& s) { return s.requests(); }},
};

// `field` summed over `sessions`.
int64_t Total(const std::vector<v1::SessionStats>& sessions, const Field<v1::SessionStats>& field) {
  int64_t total = 0;
  for (const v1::SessionStats& session : sessions) total += field.get(session);
  return total;
}

Json SampleJson(const ServerSample& sample) {
  Json json;
  json["ok"] = sample.ok;
  if (!sample.ok) json["error"] = sample.error;
  Json& pool = json["pool"] = Json::object();
  for (const auto& f : kPoolFields) pool[f.name] = f.get(sample.server);
  Json& sessions = json["sessions"] = Json::array();
  for (const v1::SessionStats& s : sample.sessions) {
    Json session;
    for (const auto& f : kSessionFields) session[f.name] = f.get(s);
    sessions.push_back(std::move(session));
  }
  return json;
}

// `value`, or null when it is 0 (an option not given).
Json OrNull(double value) { return value > 0 ? Json(value) : Json(nullptr); }

Json ConfigJson(const LoadOptions& options) {
  Json json;
  json["server"] = options.connection.server;
  json["sessions"] = options.sessions;
  json["kernels"] = std::string(KernelsName(options.kernels));
  json["step"] = std::string(StepName(options.step));
  switch (options.step) {
    case StepKind::kMlp:
      json["batch"] = options.batch;
      json["width"] = options.width;
      break;
    case StepKind::kChain:
      json["size"] = options.size;
      json["chain_length"] = options.chain_length;
      break;
    case StepKind::kTransfer:
      json["transfer_bytes"] = options.transfer_bytes;
      break;
  }
  json["requests_per_step"] = RequestsPerStep(options.step);
  json["requests"] = options.requests > 0 ? Json(options.requests) : Json(nullptr);
  json["duration_s"] = options.requests > 0 ? Json(nullptr) : Json(options.duration_s);
  json["warmup_s"] = options.warmup_s;
  json["rate_per_s"] = OrNull(options.rate);
  json["sweep_rates_per_s"] = options.sweep.empty() ? Json(nullptr) : Json(options.sweep);
  json["p99_bound_ms"] = options.sweep.empty() ? Json(nullptr) : Json(options.p99_bound_ms);
  return json;
}

Json ErrorsJson(const RequestLog& log) {
  Json by_code = Json::object();
  for (int code = 1; code < kStatusCodeCount; ++code) {
    if (log.by_code[code] > 0) by_code[std::string(StatusCodeName(code))] = log.by_code[code];
  }
  return {{"total", log.errors()}, {"by_code", std::move(by_code)}};
}

Json LatencyJson(const LatencyHistogram& latency) {
  return {{"mean", latency.MeanMicros()},        {"min", latency.MinMicros()},
          {"p50", latency.PercentileMicros(50)}, {"p90", latency.PercentileMicros(90)},
          {"p99", latency.PercentileMicros(99)}, {"p99_9", latency.PercentileMicros(99.9)},
          {"max", latency.MaxMicros()}};
}

// LatencyJson with the count of what was timed.
Json CountedLatencyJson(const LatencyHistogram& latency) {
  Json json = LatencyJson(latency);
  json["count"] = latency.count();
  return json;
}

// The latencies of the RPCs `log` made, by name.
Json RpcLatencyJson(const RequestLog& log) {
  Json json = Json::object();
  for (int i = 0; i < kRpcCount; ++i) {
    if (log.by_rpc[i].count() == 0) continue;
    json[std::string(kRpcNames[i])] = CountedLatencyJson(log.by_rpc[i]);
  }
  return json;
}

Json RatesJson(const std::vector<RatePhase>& rates) {
  Json json = Json::array();
  for (const RatePhase& phase : rates) {
    json.push_back({{"rate_per_s", phase.rate_per_s},
                    {"seconds", phase.seconds},
                    {"due_steps", phase.due},
                    {"unsent_steps", phase.unsent},
                    {"steps", phase.log.steps},
                    {"requests", phase.log.requests()},
                    {"requests_per_s", PerSecond(phase.log.requests(), phase.seconds)},
                    {"errors", phase.log.errors()},
                    {"latency_us", LatencyJson(phase.log.latency)},
                    {"step_latency_us", LatencyJson(phase.log.step_latency)},
                    {"failed_step_latency_us", CountedLatencyJson(phase.log.failed_step_latency)}});
  }
  return json;
}

Json KneeJson(const LoadResult& result) {
  if (result.options.sweep.empty()) return nullptr;
  const Knee knee = KneeOf(result);
  return {{"p99_bound_ms", result.options.p99_bound_ms},
          {"found", knee.found},
          {"rate_per_s", knee.found ? Json(knee.rate_per_s) : Json(nullptr)},
          {"limited", knee.limited}};
}

// "mlp (batch 32, width 128; Run + Backward per step)", "chain (...)" or "transfer (...)".
std::string StepDescription(const LoadOptions& options) {
  switch (options.step) {
    case StepKind::kMlp:
      return "mlp (batch " + std::to_string(options.batch) + ", width " +
             std::to_string(options.width) + "; Run + Backward per step)";
    case StepKind::kChain:
      return "chain (size " + std::to_string(options.size) + ", " +
             std::to_string(options.chain_length) + " operations; one Run per step)";
    case StepKind::kTransfer:
      return "transfer (" + std::to_string(options.transfer_bytes) + " bytes; Put + Get per step)";
  }
  return "?";
}

// printf into a std::string.
template <typename... Args>
std::string Format(const char* format, Args... args) {
  char line[256];
  std::snprintf(line, sizeof line, format, args...);
  return line;
}

// A rate per second: one decimal, or three significant digits below 1 (0.001, not 0.0).
std::string Rate(double per_s) {
  return per_s >= 1 || per_s == 0 ? Format("%.1f", per_s) : Format("%.3g", per_s);
}

// How the steps were sent: "closed loop ..." or "open loop at ...".
std::string LoopDescription(const LoadOptions& options) {
  if (!options.sweep.empty()) {
    return Format("open-loop sweep of %zu rates from %s to %s requests/s, %.1f s each",
                  options.sweep.size(), Rate(options.sweep.front()).c_str(),
                  Rate(options.sweep.back()).c_str(), options.duration_s);
  }
  if (options.rate > 0) return "open loop at " + Rate(options.rate) + " requests/s";
  return "closed loop (each session sends its next step when the last one answered)";
}

// One line of latency percentiles in milliseconds.
std::string LatencyRow(const char* label, const LatencyHistogram& latency) {
  return Format("%-16s %9lld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", label,
                static_cast<long long>(latency.count()), latency.PercentileMicros(50) / 1e3,
                latency.PercentileMicros(90) / 1e3, latency.PercentileMicros(99) / 1e3,
                latency.PercentileMicros(99.9) / 1e3, latency.MaxMicros() / 1e3,
                latency.MeanMicros() / 1e3);
}

std::string LatencyTable(const LoadResult& result) {
  const RequestLog& log = result.measured;
  std::string text = Format("%-16s %9s %9s %9s %9s %9s %9s %9s\n", "latency ms", "count", "p50",
                            "p90", "p99", "p99.9", "max", "mean");
  text += LatencyRow("requests", log.latency);
  for (int i = 0; i < kRpcCount; ++i) {
    if (log.by_rpc[i].count() == 0) continue;
    text += LatencyRow(("  " + std::string(kRpcNames[i])).c_str(), log.by_rpc[i]);
  }
  text += LatencyRow("steps", log.step_latency);
  if (log.failed_step_latency.count() > 0) {
    text += LatencyRow("failed steps", log.failed_step_latency);
  }
  if (!result.rates.empty()) {
    text += "(open loop: a step and its first request count from the step's intended send time)\n";
  }
  return text;
}

std::string RatesTable(const LoadResult& result) {
  if (result.rates.empty()) return "";
  std::string text = Format("\n%12s %12s %9s %9s %9s %12s %12s\n", "rate req/s", "achieved",
                            "steps", "unsent", "errors", "step p50 ms", "step p99 ms");
  for (const RatePhase& phase : result.rates) {
    text += Format("%12s %12s %9lld %9lld %9lld %12.3f %12.3f\n", Rate(phase.rate_per_s).c_str(),
                   Rate(PerSecond(phase.log.requests(), phase.seconds)).c_str(),
                   static_cast<long long>(phase.log.steps), static_cast<long long>(phase.unsent),
                   static_cast<long long>(phase.log.errors()),
                   phase.log.step_latency.PercentileMicros(50) / 1e3,
                   phase.log.step_latency.PercentileMicros(99) / 1e3);
  }
  text += Format(
      "at most %d steps outstanding (one per session); unsent: arrivals still waiting "
      "for a free session when the rate's time was up\n",
      result.options.sessions);
  if (result.options.sweep.empty()) return text;
  const Knee knee = KneeOf(result);
  const double bound = result.options.p99_bound_ms;
  if (!knee.found) {
    text += Format(
        "knee: not found: the lowest rate broke p99 <= %g ms (or had errors); sweep "
        "lower rates\n",
        bound);
  } else if (!knee.limited) {
    text +=
        Format("knee: above the sweep: every rate held p99 <= %g ms; sweep higher rates\n", bound);
  } else {
    text += Format(
        "knee: %s requests/s (the highest rate held with p99 <= %g ms and no "
        "errors)\n",
        Rate(knee.rate_per_s).c_str(), bound);
  }
  return text;
}

std::string CheckTable(const LoadResult& result) {
  if (!result.options.check) return "check: not requested (--check)\n";
  const std::vector<std::string> failures = CheckFailures(result);
  if (failures.empty()) return "check: passed\n";
  std::string text = "check: FAILED\n";
  for (const std::string& failure : failures) text += "  - " + failure + "\n";
  return text;
}

}  // namespace

std::string FormatTable(const LoadResult& result) {
  const LoadOptions& options = result.options;
  const RequestLog& log = result.measured;
  std::string text =
      Format("onemodel-load: %d sessions, step %s, %s kernels\n", options.sessions,
             StepDescription(options).c_str(), std::string(KernelsName(options.kernels)).c_str());
  text += LoopDescription(options) + "\n";
  text += Format(
      "measured %.1f s (%lld requests, %lld errors) after a %.1f s warm-up of %lld "
      "requests\n\n",
      result.seconds, static_cast<long long>(log.requests()), static_cast<long long>(log.errors()),
      result.warmup_seconds, static_cast<long long>(result.warmup.requests()));
  text += Format("%-16s %14s %14s\n", "", "count", "per second");
  text += Format("%-16s %14lld %14s\n", "requests", static_cast<long long>(log.requests()),
                 Rate(PerSecond(log.requests(), result.seconds)).c_str());
  text += Format("%-16s %14lld %14s\n", "steps", static_cast<long long>(log.steps),
                 Rate(PerSecond(log.steps, result.seconds)).c_str());
  text += Format("%-16s %14lld", "errors", static_cast<long long>(log.errors()));
  for (int code = 1; code < kStatusCodeCount; ++code) {
    if (log.by_code[code] > 0) {
      text += Format("  %s %lld", std::string(StatusCodeName(code)).c_str(),
                     static_cast<long long>(log.by_code[code]));
    }
  }
  text += "\n\n" + LatencyTable(result) + RatesTable(result) + "\n";

  const ServerSample* samples[] = {&result.before, &result.after_warmup, &result.end,
                                   &result.after_close};
  text += Format("%-18s %14s %14s %14s %14s\n", "server pool", "before", "after warm-up", "end",
                 "after close");
  for (const auto& f : kPoolFields) {
    text += Format("%-18s", f.label);
    for (const ServerSample* s : samples) {
      text += s->ok ? Format(" %14lld", static_cast<long long>(f.get(s->server)))
                    : Format(" %14s", "?");
    }
    text += "\n";
  }
  text += Format("\n%-18s %14s %14s %14s\n", "arenas (all)", "after warm-up", "end", "delta");
  const bool warm_read = result.after_warmup.ok;
  const bool end_read = result.end.ok;
  for (const auto& f : kSessionFields) {
    const int64_t warm = Total(result.after_warmup.sessions, f);
    const int64_t end = Total(result.end.sessions, f);
    text += Format("%-18s", f.label);
    text += warm_read ? Format(" %14lld", static_cast<long long>(warm)) : Format(" %14s", "?");
    text += end_read ? Format(" %14lld", static_cast<long long>(end)) : Format(" %14s", "?");
    text += warm_read && end_read ? Format(" %+14lld", static_cast<long long>(end - warm))
                                  : Format(" %14s", "?");
    text += "\n";
  }
  for (const ServerSample* s : samples) {
    if (!s->ok) text += "statistics unavailable: " + s->error + "\n";
  }
  const Flatness flat = FlatnessOf(result);
  if (flat.known) {
    text += Format(
        "\nafter warm-up: rented bytes %+lld, arena growth events %lld, pool misses %lld\n",
        static_cast<long long>(flat.rented_bytes_delta),
        static_cast<long long>(flat.arena_growth_events), static_cast<long long>(flat.pool_misses));
  }
  return text + CheckTable(result);
}

std::string FormatJson(const LoadResult& result) {
  const RequestLog& log = result.measured;
  const Flatness flat = FlatnessOf(result);
  const std::vector<std::string> failures = CheckFailures(result);
  Json json;
  json["schema_version"] = kLoadReportSchemaVersion;
  json["tool"] = "onemodel-load";
  json["config"] = ConfigJson(result.options);
  json["warmup"] = {{"seconds", result.warmup_seconds},
                    {"steps", result.warmup.steps},
                    {"requests", result.warmup.requests()},
                    {"errors", result.warmup.errors()}};
  json["seconds"] = result.seconds;
  json["steps"] = log.steps;
  json["steps_per_s"] = PerSecond(log.steps, result.seconds);
  json["requests"] = log.requests();
  json["requests_per_s"] = PerSecond(log.requests(), result.seconds);
  json["latency_us"] = LatencyJson(log.latency);
  json["rpc_latency_us"] = RpcLatencyJson(log);
  json["step_latency_us"] = LatencyJson(log.step_latency);
  json["failed_step_latency_us"] = CountedLatencyJson(log.failed_step_latency);
  json["errors"] = ErrorsJson(log);
  json["rates"] = RatesJson(result.rates);
  json["knee"] = KneeJson(result);
  json["server"] = {{"before", SampleJson(result.before)},
                    {"after_warmup", SampleJson(result.after_warmup)},
                    {"end", SampleJson(result.end)},
                    {"after_close", SampleJson(result.after_close)}};
  json["flatness"] = {{"known", flat.known},
                      {"rented_bytes_delta", flat.rented_bytes_delta},
                      {"pool_misses", flat.pool_misses},
                      {"arena_growth_events", flat.arena_growth_events},
                      {"arena_allocations", flat.arena_allocations}};
  json["check"] = {
      {"enabled", result.options.check}, {"passed", failures.empty()}, {"failures", failures}};
  return json.dump() + "\n";
}

}  // namespace onemodel::load
