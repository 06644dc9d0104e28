// The two forms of a load report: a table for people and JSON for programs. Both carry the
// same numbers. JSON fields (latencies in microseconds, sizes in bytes, times in seconds):
//
//   config      server, sessions, kernels ("default", "fast", "exact"), step ("mlp": batch,
//               width; "chain": size, chain_length), requests_per_step, requests (or null),
//               duration_s (null with requests), warmup_s
//   warmup      seconds, steps, requests, errors
//   seconds, steps, steps_per_s, requests, requests_per_s     the measured phase
//   latency_us  mean, min, p50, p90, p99, p99_9, max         per request, measured phase
//   errors      total, by_code {"UNAVAILABLE": n, ...}        measured phase
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

// The human-readable summary, several lines ending in a newline.
std::string FormatTable(const LoadResult& result);
// The JSON document described above, ending in a newline.
std::string FormatJson(const LoadResult& result);

}  // namespace onemodel::load
