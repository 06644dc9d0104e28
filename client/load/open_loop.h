// The open-loop scheduler: steps arrive at a fixed rate whatever the server does, as wrk2's
// do. Arrival k is due at start + k / steps_per_s. The sessions' threads share one schedule:
// a free session claims the next arrival, waits for its intended time (or sends at once when
// it is already late) and times the step from that intended time, so a stalled answer makes
// the steps queued behind it count their wait. At most one step per session is outstanding;
// arrivals still waiting when the phase ends are not sent and are counted (`Unsent`).
//
//   ArrivalSchedule schedule(clock.Now(), clock.Now() + 10s, /*steps_per_s=*/500);
//   // each session's thread:
//   sent += RunOpenLoop(schedule, clock, [&](LoadClock::TimePoint intended) {
//     log.TimeStep(intended, [&] { step.Run(log); });
//   });
//   // after every thread returned:
//   int64_t unsent = schedule.Unsent(total_sent);
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>

#include "client/load/load_clock.h"

namespace onemodel::load {

class ArrivalSchedule {
 public:
  // Arrivals every 1/steps_per_s seconds (steps_per_s > 0) from `start`, the last one before
  // `end`.
  ArrivalSchedule(LoadClock::TimePoint start, LoadClock::TimePoint end, double steps_per_s);

  // The intended send time of the next unclaimed arrival; nullopt once it would be at or after
  // the end. Thread-safe.
  std::optional<LoadClock::TimePoint> Claim();

  LoadClock::TimePoint end() const { return end_; }
  // Arrivals due before the end.
  int64_t due() const { return due_; }
  // The arrivals due that were not sent, given how many the sessions sent.
  int64_t Unsent(int64_t sent) const { return due_ - sent; }

 private:
  LoadClock::TimePoint start_;
  LoadClock::TimePoint end_;
  double interval_ns_;
  int64_t due_;
  std::atomic<int64_t> next_{0};
};

// One session's share of an open-loop phase: claims arrivals from `schedule`, sleeps on
// `clock` until each one's intended time and calls `send` with it, until the schedule has no
// more or `clock` is past the end (the arrival claimed then is not sent); then waits for the
// end, so that the phase lasts its whole time at any rate. Returns the number of arrivals sent.
int64_t RunOpenLoop(ArrivalSchedule& schedule, LoadClock& clock,
                    const std::function<void(LoadClock::TimePoint intended)>& send);

}  // namespace onemodel::load
