// A LoadResult with known numbers, for the tests of the checks and the reports: 2 sessions of
// mlp, 100 measured requests (one of them UNAVAILABLE), memory flat after warm-up.
//
//   LoadResult result = SampleResult();
//   result.end.pool.rented_bytes += 64;   // now the rented-bytes check fails
//   result.end = UnreadableSample("Stats failed: UNAVAILABLE");
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "client/load/load_result.h"

namespace onemodel::load {

inline LoadResult SampleResult() {
  LoadResult result;
  result.options.sessions = 2;
  result.options.duration_s = 5;
  result.options.warmup_s = 1;
  result.options.check = true;
  result.warmup_seconds = 1;
  result.seconds = 5;
  for (int i = 1; i <= 100; ++i) result.measured.latency.Record(std::chrono::microseconds(i * 10));
  result.measured.by_code[grpc::StatusCode::OK] = 99;
  result.measured.by_code[grpc::StatusCode::UNAVAILABLE] = 1;
  result.measured.steps = 49;
  result.warmup.by_code[grpc::StatusCode::OK] = 20;
  result.warmup.steps = 10;
  const SessionSample warm{.arena_chunks = 1,
                           .arena_reserved_bytes = 1 << 20,
                           .arena_resets = 5,
                           .arena_allocations = 75,
                           .arena_growth_events = 20,
                           .handles = 13,
                           .pool_buffers = 4,
                           .requests = 14};
  SessionSample end = warm;
  end.arena_resets += 25;
  end.arena_allocations += 375;
  end.requests += 50;
  result.before.ok = true;
  result.after_warmup.ok = true;
  result.after_warmup.pool.rented_bytes = 2 << 20;
  result.after_warmup.pool.rented_buffers = 10;
  result.after_warmup.pool.misses = 10;
  result.after_warmup.pool.sessions_open = 2;
  result.after_warmup.sessions = {warm, warm};
  result.end = result.after_warmup;
  result.end.sessions = {end, end};
  result.after_close.ok = true;
  result.after_close.pool.idle_bytes = 2 << 20;
  result.after_close.pool.misses = 10;
  return result;
}

// A sample that could not be read, failing with `error`.
inline ServerSample UnreadableSample(std::string error) {
  ServerSample sample;
  sample.error = std::move(error);
  return sample;
}

}  // namespace onemodel::load
