// LoadResult: everything one `onemodel-load` run measured (the requests of the warm-up and of
// the measured phase, and the server's statistics at four moments), and the checks --check
// applies to it.
//
//   LoadResult result = RunLoad(client, options, {});
//   Flatness flat = FlatnessOf(result);        // rented bytes and arena growth after warm-up
//   for (const std::string& failure : CheckFailures(result)) std::cerr << failure << "\n";
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/load/load_options.h"
#include "client/load/request_log.h"

namespace onemodel::load {

// The shared pool (v1::PoolStats) and the open sessions, at one moment.
struct PoolSample {
  int64_t rented_bytes = 0;
  int64_t rented_buffers = 0;
  int64_t idle_bytes = 0;
  int64_t peak_rented_bytes = 0;
  int64_t hits = 0;
  int64_t misses = 0;  // rentals the pool had to get from the system
  int64_t sessions_open = 0;
};

// One load session (v1::SessionStats: its arena, handles and pool buffers), at one moment.
struct SessionSample {
  int64_t arena_chunks = 0;
  int64_t arena_reserved_bytes = 0;
  int64_t arena_resets = 0;
  int64_t arena_allocations = 0;    // slices the arena handed out over its life
  int64_t arena_growth_events = 0;  // times the arena had to get memory (0 once warm)
  int64_t handles = 0;
  int64_t pool_buffers = 0;
  int64_t requests = 0;
};

// The server's statistics at one moment; `error` says why they could not be read.
struct ServerSample {
  bool ok = false;
  std::string error;
  PoolSample pool;
  std::vector<SessionSample> sessions;  // one per load session, in order; empty when none open
};

struct LoadResult {
  LoadOptions options;
  double warmup_seconds = 0;  // how long the warm-up took (until every session was done)
  double seconds = 0;         // how long the measured phase took
  RequestLog warmup;          // all sessions' warm-up requests
  RequestLog measured;        // all sessions' measured requests
  ServerSample before;        // before the sessions were created
  ServerSample after_warmup;  // every session paused between its last warm-up step and the load
  ServerSample end;           // every session done, not yet closed
  ServerSample after_close;   // the sessions closed
};

// How the server's memory moved between the end of the warm-up and the end of the run.
struct Flatness {
  bool known = false;               // both samples were read
  int64_t rented_bytes_delta = 0;   // pool rented bytes, end minus after warm-up
  int64_t pool_misses = 0;          // pool rentals from the system after warm-up
  int64_t arena_growth_events = 0;  // all sessions' arena growth events after warm-up
  int64_t arena_allocations = 0;    // all sessions' arena slices after warm-up (expected > 0)
};

// Flatness between result.after_warmup and result.end.
Flatness FlatnessOf(const LoadResult& result);
// Why the run fails --check, one sentence each: errors, rented bytes grown, arena growth after
// warm-up, statistics that could not be read. Empty: it passes.
std::vector<std::string> CheckFailures(const LoadResult& result);

}  // namespace onemodel::load
