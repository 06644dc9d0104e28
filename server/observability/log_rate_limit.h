// LogRateLimit: how many warnings about requests the log takes a second, so a client whose
// calls fail (or crawl) on purpose cannot fill the operator's disk at its request rate.
//
//   LogRateLimit limit(100);
//   int64_t held_back = 0;
//   if (limit.Allow(std::chrono::steady_clock::now(), &held_back)) { /* log, and held_back */ }
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace onemodel::server {

class LogRateLimit {
 public:
  // At most `per_second` lines a second on average, in bursts of up to `per_second` after a
  // quiet second; 0: no limit.
  explicit LogRateLimit(int64_t per_second) : per_second_(per_second) {}

  // Whether a line may be written at `now`. When it may, *held_back is the number of lines
  // refused since the last one allowed (to be reported with it), else 0. Thread-safe.
  bool Allow(std::chrono::steady_clock::time_point now, int64_t* held_back);

  int64_t per_second() const { return per_second_; }

 private:
  const int64_t per_second_;
  std::mutex mutex_;
  double tokens_ = 0;  // lines allowed now; refilled at per_second_ a second, up to per_second_
  std::chrono::steady_clock::time_point last_{};  // when tokens_ was last refilled
  bool started_ = false;
  int64_t held_back_ = 0;
};

}  // namespace onemodel::server
