// LoadClock: the time a load run reads and waits on. The runner uses SteadyLoadClock(); the
// tests of the open-loop scheduler pass a fake one whose time moves only when told.
//
//   LoadClock& clock = SteadyLoadClock();
//   clock.SleepUntil(clock.Now() + std::chrono::milliseconds(5));
#pragma once

#include <chrono>

namespace onemodel::load {

class LoadClock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~LoadClock() = default;
  virtual TimePoint Now() const = 0;
  // Returns at `when` or later (at once when `when` has passed).
  virtual void SleepUntil(TimePoint when) = 0;
};

// std::chrono::steady_clock and std::this_thread::sleep_until; shared, thread-safe.
LoadClock& SteadyLoadClock();

}  // namespace onemodel::load
