#include "client/load/load_result.h"

#include <algorithm>

namespace onemodel::load {
namespace {

// "UNAVAILABLE 3, INTERNAL 1": the error codes `log` counted.
std::string ErrorCodes(const RequestLog& log) {
  std::string text;
  for (int code = 1; code < kStatusCodeCount; ++code) {
    if (log.by_code[code] == 0) continue;
    if (!text.empty()) text += ", ";
    text += std::string(StatusCodeName(code)) + " " + std::to_string(log.by_code[code]);
  }
  return text;
}

}  // namespace

Flatness FlatnessOf(const LoadResult& result) {
  Flatness flat;
  const ServerSample& from = result.after_warmup;
  const ServerSample& to = result.end;
  if (!from.ok || !to.ok) return flat;
  flat.known = true;
  flat.rented_bytes_delta = to.server.pool().rented_bytes() - from.server.pool().rented_bytes();
  flat.pool_misses = to.server.pool().misses() - from.server.pool().misses();
  const size_t sessions = std::min(from.sessions.size(), to.sessions.size());
  for (size_t i = 0; i < sessions; ++i) {
    const v1::ArenaStats& before = from.sessions[i].arena();
    const v1::ArenaStats& after = to.sessions[i].arena();
    flat.arena_growth_events += after.growth_events() - before.growth_events();
    flat.arena_allocations += after.allocations() - before.allocations();
  }
  return flat;
}

Knee KneeOf(const LoadResult& result) {
  std::vector<RatePoint> points;
  for (const RatePhase& phase : result.rates) {
    points.push_back({.rate_per_s = phase.rate_per_s,
                      .p99_us = phase.log.step_latency.PercentileMicros(99),
                      .errors = phase.log.errors()});
  }
  return FindKnee(std::move(points), result.options.p99_bound_ms * 1e3);
}

std::vector<std::string> CheckFailures(const LoadResult& result) {
  std::vector<std::string> failures;
  RequestLog all = result.warmup;
  all.Merge(result.measured);
  if (all.errors() > 0) {
    failures.push_back(std::to_string(all.errors()) + " requests failed (" + ErrorCodes(all) +
                       "; " + std::to_string(result.warmup.errors()) +
                       " of them during warm-up): the server's log says why");
  }
  if (result.measured.requests() == 0) {
    failures.push_back("no request ran after warm-up: give a longer --duration or more --requests");
  }
  for (const auto& [sample, when] :
       {std::pair{&result.after_warmup, "after warm-up"}, std::pair{&result.end, "at the end"}}) {
    if (!sample->ok) {
      failures.push_back("the server's statistics could not be read " + std::string(when) + " (" +
                         sample->error + "), so memory flatness is unknown");
    }
  }
  const Flatness flat = FlatnessOf(result);
  if (flat.known && flat.rented_bytes_delta > 0) {
    failures.push_back("the pool's rented bytes grew by " +
                       std::to_string(flat.rented_bytes_delta) + " after warm-up (from " +
                       std::to_string(result.after_warmup.server.pool().rented_bytes()) + " to " +
                       std::to_string(result.end.server.pool().rented_bytes()) +
                       "): the server keeps memory per request, unless another client of the "
                       "same server rented it");
  }
  if (flat.known && flat.arena_growth_events != 0) {
    failures.push_back("the sessions' arenas grew " + std::to_string(flat.arena_growth_events) +
                       " times after warm-up (expected 0): the server allocates per step even "
                       "when warm; if the first steps are slow, lengthen --warmup");
  }
  return failures;
}

}  // namespace onemodel::load
