// TimeSeries: a measured run second by second, for `onemodel-load --csv` and the plots: the
// steps and requests that ended in each second, their latencies, and the server's pool and
// arena bytes read in that second. Each measured phase (one, or one per rate of a sweep)
// starts its own seconds.
//
//   TimeSeries series;
//   series.StartPhase(/*rate_per_s=*/500, clock.Now());   // 0: closed loop
//   series.RecordStep(clock.Now(), step_latency, /*requests=*/2, /*errors=*/0);  // any thread
//   if (series.NeedsServer(clock.Now())) {                 // once a second
//     series.RecordServer(clock.Now(), SampleServer(client, sessions));
//   }
//   series.EndPhase(clock.Now());
//   std::ofstream("load.csv") << FormatCsv(series.points());
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "client/load/latency_histogram.h"
#include "client/load/load_clock.h"
#include "client/load/server_sample.h"

namespace onemodel::load {

// One second of one phase; its last part is shorter, or up to 1.1 s long when a part under
// 0.1 s (the steps still answering when the phase's time was up) joined it.
struct SeriesPoint {
  int phase = 0;          // 0, 1, ...: which measured phase
  double rate_per_s = 0;  // the phase's arrival rate in requests/s; 0 for a closed loop
  double t_s = 0;         // start, in seconds from the start of the first phase
  double seconds = 1;     // length: 1, except for a phase's last part (0.1 s to 1.1 s)
  int64_t steps = 0;      // steps that ended in it with every request answered OK
  int64_t requests = 0;   // the requests of every step that ended in it, failed ones included
  int64_t errors = 0;     // of them, the failed ones
  LatencyHistogram step_latency;
  bool server_read = false;  // the server's statistics were read in this second
  int64_t pool_rented_bytes = 0;
  int64_t pool_idle_bytes = 0;
  int64_t arena_reserved_bytes = 0;  // all load sessions' arenas
};

// Thread-safe.
class TimeSeries {
 public:
  // Starts a phase at `start`; later records land in its seconds.
  void StartPhase(double rate_per_s, LoadClock::TimePoint start);
  // Ends the current phase at `end` (its last part gets its real length, a part under 0.1 s
  // joining the one before).
  void EndPhase(LoadClock::TimePoint end);
  // Counts a step that ended at `end`, `latency` after its start, making `requests` of which
  // `errors` failed (it counts in `steps` only when none did; its latency counts either way).
  void RecordStep(LoadClock::TimePoint end, std::chrono::nanoseconds latency, int64_t requests,
                  int64_t errors);
  // Keeps the pool and arena bytes of `sample` (read at `at`) for its second, when it was read.
  void RecordServer(LoadClock::TimePoint at, const ServerSample& sample);
  // Whether a phase is running and the second of `at` has no server statistics yet.
  bool NeedsServer(LoadClock::TimePoint at);

  std::vector<SeriesPoint> points() const;

 private:
  // The point of `at` in the current phase, added when missing; null outside a phase.
  SeriesPoint* PointAt(LoadClock::TimePoint at);

  mutable std::mutex mutex_;
  std::vector<SeriesPoint> points_;
  int phase_ = -1;
  bool running_ = false;
  double rate_per_s_ = 0;
  size_t phase_begin_ = 0;  // index of the current phase's first point
  LoadClock::TimePoint first_start_;
  LoadClock::TimePoint phase_start_;
};

// The CSV of `points`, a header line then one line per point: phase, rate_per_s, t_s, seconds,
// requests_per_s (failed ones included), steps_per_s (the steps that succeeded, as the report's
// "steps"), errors (failed requests), p50_ms, p99_ms (of every step), pool_rented_bytes,
// pool_idle_bytes, arena_reserved_bytes (the last three empty when not read that second).
std::string FormatCsv(const std::vector<SeriesPoint>& points);

}  // namespace onemodel::load
