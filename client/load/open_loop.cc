#include "client/load/open_loop.h"

#include <cmath>

namespace onemodel::load {

ArrivalSchedule::ArrivalSchedule(LoadClock::TimePoint start, LoadClock::TimePoint end,
                                 double steps_per_s)
    : start_(start), end_(end), interval_ns_(1e9 / steps_per_s) {
  const double span_ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
  due_ = span_ns > 0 ? static_cast<int64_t>(std::ceil(span_ns / interval_ns_)) : 0;
}

std::optional<LoadClock::TimePoint> ArrivalSchedule::Claim() {
  const int64_t k = next_.fetch_add(1, std::memory_order_relaxed);
  if (k >= due_) return std::nullopt;
  return start_ + std::chrono::nanoseconds(
                      static_cast<int64_t>(std::llround(static_cast<double>(k) * interval_ns_)));
}

int64_t RunOpenLoop(ArrivalSchedule& schedule, LoadClock& clock,
                    const std::function<void(LoadClock::TimePoint intended)>& send) {
  int64_t sent = 0;
  while (const std::optional<LoadClock::TimePoint> intended = schedule.Claim()) {
    if (clock.Now() >= schedule.end()) break;
    clock.SleepUntil(*intended);
    send(*intended);
    ++sent;
  }
  // The phase lasts its whole time even when its last arrival came early (a low rate).
  clock.SleepUntil(schedule.end());
  return sent;
}

}  // namespace onemodel::load
