#include "client/load/load_clock.h"

#include <thread>

namespace onemodel::load {
namespace {

class SteadyClock final : public LoadClock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  void SleepUntil(TimePoint when) override { std::this_thread::sleep_until(when); }
};

}  // namespace

LoadClock& SteadyLoadClock() {
  static SteadyClock clock;
  return clock;
}

}  // namespace onemodel::load
