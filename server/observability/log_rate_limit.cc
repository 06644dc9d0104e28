#include "server/observability/log_rate_limit.h"

#include <algorithm>

namespace onemodel::server {

bool LogRateLimit::Allow(std::chrono::steady_clock::time_point now, int64_t* held_back) {
  *held_back = 0;
  if (per_second_ == 0) return true;
  std::lock_guard guard(mutex_);
  const double full = static_cast<double>(per_second_);
  if (!started_) {
    started_ = true;
    tokens_ = full;
  } else if (now > last_) {
    const double seconds = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(full, tokens_ + seconds * full);
  }
  last_ = std::max(last_, now);
  if (tokens_ < 1) {
    ++held_back_;
    return false;
  }
  tokens_ -= 1;
  *held_back = held_back_;
  held_back_ = 0;
  return true;
}

}  // namespace onemodel::server
