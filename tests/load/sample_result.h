// A LoadResult with known numbers, for the tests of the checks and the reports: 2 sessions of
// mlp, 100 measured requests (one of them UNAVAILABLE), memory flat after warm-up.
//
//   LoadResult result = SampleResult();
//   result.end.server.mutable_pool()->set_rented_bytes(...);   // now the check fails
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
  for (int i = 1; i <= 100; ++i) {
    const auto latency = std::chrono::microseconds(i * 10);
    result.measured.latency.Record(latency);
    result.measured.by_rpc[RpcIndex(i % 2 ? Rpc::kRun : Rpc::kBackward)].Record(latency);
  }
  for (int i = 1; i <= 50; ++i) {
    result.measured.step_latency.Record(std::chrono::microseconds(i * 40));
  }
  result.measured.by_code[grpc::StatusCode::OK] = 99;
  result.measured.by_code[grpc::StatusCode::UNAVAILABLE] = 1;
  result.measured.steps = 49;
  result.warmup.by_code[grpc::StatusCode::OK] = 20;
  result.warmup.steps = 10;
  v1::SessionStats warm;
  warm.mutable_arena()->set_chunks(1);
  warm.mutable_arena()->set_reserved_bytes(1 << 20);
  warm.mutable_arena()->set_resets(5);
  warm.mutable_arena()->set_allocations(75);
  warm.mutable_arena()->set_growth_events(20);
  warm.set_handles(13);
  warm.set_pool_buffers(4);
  warm.set_requests(14);
  v1::SessionStats end = warm;
  end.mutable_arena()->set_resets(warm.arena().resets() + 25);
  end.mutable_arena()->set_allocations(warm.arena().allocations() + 375);
  end.set_requests(warm.requests() + 50);
  result.before.ok = true;
  result.after_warmup.ok = true;
  v1::PoolStats& pool = *result.after_warmup.server.mutable_pool();
  pool.set_rented_bytes(2 << 20);
  pool.set_rented_buffers(10);
  pool.set_misses(10);
  result.after_warmup.server.mutable_sessions()->set_open(2);
  result.after_warmup.sessions = {warm, warm};
  result.end = result.after_warmup;
  result.end.sessions = {end, end};
  result.after_close.ok = true;
  result.after_close.server.mutable_pool()->set_idle_bytes(2 << 20);
  result.after_close.server.mutable_pool()->set_misses(10);
  return result;
}

// A sample that could not be read, failing with `error`.
inline ServerSample UnreadableSample(std::string error) {
  ServerSample sample;
  sample.error = std::move(error);
  return sample;
}

// Adds `delta` to the pool's rented bytes of `sample`.
inline void AddRentedBytes(ServerSample& sample, int64_t delta) {
  v1::PoolStats& pool = *sample.server.mutable_pool();
  pool.set_rented_bytes(pool.rented_bytes() + delta);
}

// Adds `delta` to the arena growth events of `session`.
inline void AddGrowthEvents(v1::SessionStats& session, int64_t delta) {
  v1::ArenaStats& arena = *session.mutable_arena();
  arena.set_growth_events(arena.growth_events() + delta);
}

}  // namespace onemodel::load
