// The rate sweep of `onemodel-load --sweep R1:R2:N`: N arrival rates from R1 to R2 requests/s,
// spaced evenly on a log scale (so one sweep spans a light load and an overload whatever the
// server's capacity), each run open-loop for --duration; and its knee, the highest rate the
// server held with its p99 latency under --p99-bound-ms.
//
//   std::vector<double> rates = ParseSweep("100:10000:5");   // 100, 316.2, 1000, 3162, 10000
//   Knee knee = FindKnee({{100, 800, 0}, {316, 900, 0}, {1000, 45000, 0}}, /*bound_us=*/10000);
//   // knee.found, knee.rate_per_s == 316, knee.limited (a higher rate broke the bound)
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace onemodel::load {

// The highest arrival rate of --rate and --sweep, in requests/s.
inline constexpr double kMaxRatePerS = 1e6;

// The rates "R1:R2:N" names (0 < R1 < R2 <= kMaxRatePerS, 2 <= N <= 100), ascending; throws
// std::invalid_argument saying what is wrong.
std::vector<double> ParseSweep(std::string_view text);

// What one rate of a sweep measured.
struct RatePoint {
  double rate_per_s = 0;  // asked
  double p99_us = 0;      // of the steps, from their intended send times
  int64_t errors = 0;
};

struct Knee {
  bool found = false;     // the lowest rate held
  double rate_per_s = 0;  // the last rate held before the first one that did not
  bool limited = false;   // some rate was not held (false: the knee is above the sweep)
};

// Walks `points` by rising rate: a rate is held when its p99 is at most `p99_bound_us` and no
// request failed. The knee is the last rate held before the first one that was not (rates
// above that one that happen to pass again are noise of an overloaded server).
Knee FindKnee(std::vector<RatePoint> points, double p99_bound_us);

}  // namespace onemodel::load
