// LoadResult: everything one `onemodel-load` run measured (the requests of the warm-up and of
// the measured phases, each open-loop rate on its own, the time series, and the server's
// statistics at four moments), and the checks --check applies to it.
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
#include "client/load/server_sample.h"
#include "client/load/sweep.h"
#include "client/load/time_series.h"

namespace onemodel::load {

// One measured phase at a fixed arrival rate (--rate, or one rate of --sweep).
struct RatePhase {
  double rate_per_s = 0;  // requests/s asked
  double seconds = 0;     // how long it took
  RequestLog log;         // all sessions' requests; step latencies from intended send times
  int64_t due = 0;        // steps the schedule had arrive
  int64_t unsent = 0;     // of them, still waiting for a free session when the phase ended
};

struct LoadResult {
  LoadOptions options;
  double warmup_seconds = 0;        // how long the warm-up took (until every session was done)
  double seconds = 0;               // how long the measured phases took
  RequestLog warmup;                // all sessions' warm-up requests
  RequestLog measured;              // all sessions' measured requests (of every phase)
  std::vector<RatePhase> rates;     // open loop: one per rate (--rate: one); closed loop: none
  std::vector<SeriesPoint> series;  // the measured phases, second by second
  ServerSample before;              // before the sessions were created
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
// The knee of result.rates under options.p99_bound_ms (steps' p99).
Knee KneeOf(const LoadResult& result);
// Why the run fails --check, one sentence each: errors, rented bytes grown, arena growth after
// warm-up, statistics that could not be read. Empty: it passes.
std::vector<std::string> CheckFailures(const LoadResult& result);

}  // namespace onemodel::load
