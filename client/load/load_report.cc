#include "client/load/load_report.h"

#include <cmath>
#include <cstdio>

#include "bench/report.h"

namespace onemodel::load {
namespace {

// A JSON object built one member at a time.
class JsonObject {
 public:
  JsonObject& Raw(std::string_view key, const std::string& json) {
    body_ += (body_.empty() ? "" : ",") + bench::JsonString(key) + ":" + json;
    return *this;
  }
  JsonObject& Int(std::string_view key, int64_t value) { return Raw(key, std::to_string(value)); }
  JsonObject& Num(std::string_view key, double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return Raw(key, std::isfinite(value) ? text : "null");
  }
  JsonObject& Bool(std::string_view key, bool value) { return Raw(key, value ? "true" : "false"); }
  JsonObject& Str(std::string_view key, std::string_view value) {
    return Raw(key, bench::JsonString(value));
  }
  std::string str() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

// `items` as a JSON array.
std::string JsonArray(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? "," : "") + items[i];
  return text + "]";
}

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

// The sum over all sessions of `samples`.
SessionSample Total(const std::vector<SessionSample>& samples) {
  SessionSample total;
  for (const SessionSample& s : samples) {
    total.arena_chunks += s.arena_chunks;
    total.arena_reserved_bytes += s.arena_reserved_bytes;
    total.arena_resets += s.arena_resets;
    total.arena_allocations += s.arena_allocations;
    total.arena_growth_events += s.arena_growth_events;
    total.handles += s.handles;
    total.pool_buffers += s.pool_buffers;
    total.requests += s.requests;
  }
  return total;
}

// The fields of `session` (by member pointer), with their JSON and table names.
struct SessionField {
  const char* name;
  const char* label;
  int64_t SessionSample::*member;
};
constexpr SessionField kSessionFields[] = {
    {"arena_chunks", "chunks", &SessionSample::arena_chunks},
    {"arena_reserved_bytes", "reserved bytes", &SessionSample::arena_reserved_bytes},
    {"arena_resets", "resets", &SessionSample::arena_resets},
    {"arena_allocations", "allocations", &SessionSample::arena_allocations},
    {"arena_growth_events", "growth events", &SessionSample::arena_growth_events},
    {"handles", "handles", &SessionSample::handles},
    {"pool_buffers", "pool buffers", &SessionSample::pool_buffers},
    {"requests", "requests", &SessionSample::requests},
};

struct PoolField {
  const char* name;
  const char* label;
  int64_t PoolSample::*member;
};
constexpr PoolField kPoolFields[] = {
    {"rented_bytes", "rented bytes", &PoolSample::rented_bytes},
    {"rented_buffers", "rented buffers", &PoolSample::rented_buffers},
    {"idle_bytes", "idle bytes", &PoolSample::idle_bytes},
    {"peak_rented_bytes", "peak rented bytes", &PoolSample::peak_rented_bytes},
    {"hits", "hits", &PoolSample::hits},
    {"misses", "misses", &PoolSample::misses},
    {"sessions_open", "open sessions", &PoolSample::sessions_open},
};

std::string SampleJson(const ServerSample& sample) {
  JsonObject json;
  json.Bool("ok", sample.ok);
  if (!sample.ok) json.Str("error", sample.error);
  JsonObject pool;
  for (const PoolField& f : kPoolFields) pool.Int(f.name, sample.pool.*f.member);
  json.Raw("pool", pool.str());
  std::vector<std::string> sessions;
  for (const SessionSample& s : sample.sessions) {
    JsonObject session;
    for (const SessionField& f : kSessionFields) session.Int(f.name, s.*f.member);
    sessions.push_back(session.str());
  }
  return json.Raw("sessions", JsonArray(sessions)).str();
}

std::string ConfigJson(const LoadOptions& options) {
  JsonObject json;
  json.Str("server", options.connection.server)
      .Int("sessions", options.sessions)
      .Str("kernels", KernelsName(options.kernels))
      .Str("step", StepName(options.step));
  if (options.step == StepKind::kMlp) {
    json.Int("batch", options.batch).Int("width", options.width);
  } else {
    json.Int("size", options.size).Int("chain_length", options.chain_length);
  }
  json.Int("requests_per_step", RequestsPerStep(options.step));
  if (options.requests > 0) {
    json.Int("requests", options.requests).Raw("duration_s", "null");
  } else {
    json.Raw("requests", "null").Num("duration_s", options.duration_s);
  }
  return json.Num("warmup_s", options.warmup_s).str();
}

std::string ErrorsJson(const RequestLog& log) {
  JsonObject by_code;
  for (int code = 1; code < kStatusCodeCount; ++code) {
    if (log.by_code[code] > 0) by_code.Int(StatusCodeName(code), log.by_code[code]);
  }
  return JsonObject().Int("total", log.errors()).Raw("by_code", by_code.str()).str();
}

std::string LatencyJson(const LatencyHistogram& latency) {
  return JsonObject()
      .Num("mean", latency.MeanMicros())
      .Num("min", latency.MinMicros())
      .Num("p50", latency.PercentileMicros(50))
      .Num("p90", latency.PercentileMicros(90))
      .Num("p99", latency.PercentileMicros(99))
      .Num("p99_9", latency.PercentileMicros(99.9))
      .Num("max", latency.MaxMicros())
      .str();
}

// "mlp (batch 32, width 128)" or "chain (size 4096, 8 operations)".
std::string StepDescription(const LoadOptions& options) {
  if (options.step == StepKind::kMlp) {
    return "mlp (batch " + std::to_string(options.batch) + ", width " +
           std::to_string(options.width) + "; Run + Backward per step)";
  }
  return "chain (size " + std::to_string(options.size) + ", " +
         std::to_string(options.chain_length) + " operations; one Run per step)";
}

// printf into a std::string.
template <typename... Args>
std::string Format(const char* format, Args... args) {
  char line[256];
  std::snprintf(line, sizeof line, format, args...);
  return line;
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
  const LatencyHistogram& latency = log.latency;
  std::string text =
      Format("onemodel-load: %d sessions, step %s, %s kernels\n", options.sessions,
             StepDescription(options).c_str(), std::string(KernelsName(options.kernels)).c_str());
  text += Format("measured %.1f s after a %.1f s warm-up (%lld requests, %lld errors)\n\n",
                 result.seconds, result.warmup_seconds,
                 static_cast<long long>(result.warmup.requests()),
                 static_cast<long long>(result.warmup.errors()));
  text += Format("%-16s %14s %14s\n", "", "count", "per second");
  text += Format("%-16s %14lld %14.1f\n", "requests", static_cast<long long>(log.requests()),
                 PerSecond(log.requests(), result.seconds));
  text += Format("%-16s %14lld %14.1f\n", "steps", static_cast<long long>(log.steps),
                 PerSecond(log.steps, result.seconds));
  text += Format("%-16s %14lld", "errors", static_cast<long long>(log.errors()));
  for (int code = 1; code < kStatusCodeCount; ++code) {
    if (log.by_code[code] > 0) {
      text += Format("  %s %lld", std::string(StatusCodeName(code)).c_str(),
                     static_cast<long long>(log.by_code[code]));
    }
  }
  text +=
      Format("\n\nlatency ms  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  mean %.3f\n\n",
             latency.PercentileMicros(50) / 1e3, latency.PercentileMicros(90) / 1e3,
             latency.PercentileMicros(99) / 1e3, latency.PercentileMicros(99.9) / 1e3,
             latency.MaxMicros() / 1e3, latency.MeanMicros() / 1e3);

  const ServerSample* samples[] = {&result.before, &result.after_warmup, &result.end,
                                   &result.after_close};
  text += Format("%-18s %14s %14s %14s %14s\n", "server pool", "before", "after warm-up", "end",
                 "after close");
  for (const PoolField& f : kPoolFields) {
    text += Format("%-18s", f.label);
    for (const ServerSample* s : samples) {
      text += s->ok ? Format(" %14lld", static_cast<long long>(s->pool.*f.member))
                    : Format(" %14s", "?");
    }
    text += "\n";
  }
  const SessionSample warm = Total(result.after_warmup.sessions);
  const SessionSample end = Total(result.end.sessions);
  text += Format("\n%-18s %14s %14s %14s\n", "arenas (all)", "after warm-up", "end", "delta");
  for (const SessionField& f : kSessionFields) {
    text += Format("%-18s %14lld %14lld %+14lld\n", f.label, static_cast<long long>(warm.*f.member),
                   static_cast<long long>(end.*f.member),
                   static_cast<long long>(end.*f.member - warm.*f.member));
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
  std::vector<std::string> failure_strings;
  for (const std::string& f : failures) failure_strings.push_back(bench::JsonString(f));
  JsonObject json;
  json.Str("tool", "onemodel-load")
      .Raw("config", ConfigJson(result.options))
      .Raw("warmup", JsonObject()
                         .Num("seconds", result.warmup_seconds)
                         .Int("steps", result.warmup.steps)
                         .Int("requests", result.warmup.requests())
                         .Int("errors", result.warmup.errors())
                         .str())
      .Num("seconds", result.seconds)
      .Int("steps", log.steps)
      .Num("steps_per_s", PerSecond(log.steps, result.seconds))
      .Int("requests", log.requests())
      .Num("requests_per_s", PerSecond(log.requests(), result.seconds))
      .Raw("latency_us", LatencyJson(log.latency))
      .Raw("errors", ErrorsJson(log))
      .Raw("server", JsonObject()
                         .Raw("before", SampleJson(result.before))
                         .Raw("after_warmup", SampleJson(result.after_warmup))
                         .Raw("end", SampleJson(result.end))
                         .Raw("after_close", SampleJson(result.after_close))
                         .str())
      .Raw("flatness", JsonObject()
                           .Bool("known", flat.known)
                           .Int("rented_bytes_delta", flat.rented_bytes_delta)
                           .Int("pool_misses", flat.pool_misses)
                           .Int("arena_growth_events", flat.arena_growth_events)
                           .Int("arena_allocations", flat.arena_allocations)
                           .str())
      .Raw("check", JsonObject()
                        .Bool("enabled", result.options.check)
                        .Bool("passed", failures.empty())
                        .Raw("failures", JsonArray(failure_strings))
                        .str());
  return json.str() + "\n";
}

}  // namespace onemodel::load
