// The two forms of a load report: a table for people and JSON for programs. Both carry the
// same numbers. JSON fields (latencies in microseconds, sizes in bytes, times in seconds); the
// time series goes to --csv (time_series.h), not here:
//
//   schema_version  kLoadReportSchemaVersion; fields are only added within a version
//   tool        "onemodel-load"
//   config      server, sessions, kernels ("default", "fast", "exact"), step ("mlp": batch,
//               width; "chain": size, chain_length; "transfer": transfer_bytes),
//               requests_per_step, requests (or null), duration_s (null with requests),
//               warmup_s, rate_per_s (--rate or null), sweep_rates_per_s (or null),
//               p99_bound_ms (with a sweep, else null)
//   warmup      seconds, steps, requests, errors
//   seconds, steps, steps_per_s, requests, requests_per_s     the measured phases
//   latency_us  mean, min, p50, p90, p99, p99_9, max         per request, measured phases
//   rpc_latency_us  {"Run": {count, mean, ..., max}, "Backward", "Put", "Get"}: the RPCs made
//   step_latency_us  as latency_us, per step whose requests all succeeded (open loop: from its
//               intended send time); failed_step_latency_us  count and the same for the steps a
//               failed request ended
//   errors      total, by_code {"UNAVAILABLE": n, ...}        measured phases
//   rates       open loop, one per rate: rate_per_s, seconds, due_steps, unsent_steps, steps,
//               requests, requests_per_s, errors, latency_us, step_latency_us,
//               failed_step_latency_us ([] closed loop)
//   knee        --sweep: p99_bound_ms, found, rate_per_s (null when not found), limited (a
//               rate broke the bound; false: the knee is above the sweep); else null
//   server      before, after_warmup, end, after_close: {ok, error (when not ok),
//               pool {rented_bytes, rented_buffers, idle_bytes, peak_rented_bytes, hits,
//               misses, sessions_open}, sessions [{arena_chunks, arena_reserved_bytes,
//               arena_resets, arena_allocations, arena_growth_events, handles, pool_buffers,
//               requests}] (after_warmup and end: one per load session)}
//   flatness    known, rented_bytes_delta, pool_misses, arena_growth_events,
//               arena_allocations (end minus after_warmup; the check wants the first and
//               third at most 0; allocations are slices served from warm chunks)
//   check       enabled (--check), passed, failures [sentences]
//
//   std::cout << FormatTable(result);
//   std::ofstream("load.json") << FormatJson(result);
#pragma once

#include <string>

#include "client/load/load_result.h"

namespace onemodel::load {

// Version 1 had no schema_version field; 2 added it with rpc_latency_us, step_latency_us,
// rates, knee and config's rate_per_s, sweep_rates_per_s, p99_bound_ms and transfer_bytes; 3
// counts only the steps that succeeded in step_latency_us and adds failed_step_latency_us.
inline constexpr int kLoadReportSchemaVersion = 3;

// The human-readable summary, several lines ending in a newline.
std::string FormatTable(const LoadResult& result);
// The JSON document described above, ending in a newline.
std::string FormatJson(const LoadResult& result);

}  // namespace onemodel::load
