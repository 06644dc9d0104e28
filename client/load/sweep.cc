#include "client/load/sweep.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace onemodel::load {
namespace {

// `text` as a number, all of it; throws std::invalid_argument naming `what`.
double Number(std::string_view text, const char* what) {
  const std::string copy(text);
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(copy, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != copy.size() || !std::isfinite(value)) {
    throw std::invalid_argument(std::string(what) + " '" + copy + "' is not a number");
  }
  return value;
}

}  // namespace

std::vector<double> ParseSweep(std::string_view text) {
  const size_t first = text.find(':');
  const size_t second = first == std::string_view::npos ? first : text.find(':', first + 1);
  if (second == std::string_view::npos) {
    throw std::invalid_argument("--sweep takes FROM:TO:STEPS in requests/s, e.g. 100:10000:5");
  }
  const double from = Number(text.substr(0, first), "--sweep's first rate");
  const double to = Number(text.substr(first + 1, second - first - 1), "--sweep's last rate");
  const double steps = Number(text.substr(second + 1), "--sweep's number of steps");
  if (from <= 0 || to <= from) {
    throw std::invalid_argument("--sweep's rates must rise from above 0: FROM < TO");
  }
  if (to > kMaxRatePerS) {
    throw std::invalid_argument("--sweep's rates must be at most " +
                                std::to_string(static_cast<int64_t>(kMaxRatePerS)) +
                                " requests/s: lower TO");
  }
  if (steps != std::floor(steps) || steps < 2 || steps > 100) {
    throw std::invalid_argument("--sweep's STEPS must be a whole number from 2 to 100");
  }
  const int count = static_cast<int>(steps);
  std::vector<double> rates(count);
  for (int i = 0; i < count; ++i) {
    const double rate = from * std::pow(to / from, static_cast<double>(i) / (count - 1));
    // Snapped to a millionth when that close, so that 500 does not read 499.9999999999999.
    const double snapped = std::round(rate * 1e6) / 1e6;
    rates[i] = std::abs(snapped - rate) <= 1e-9 * rate ? snapped : rate;
  }
  return rates;
}

Knee FindKnee(std::vector<RatePoint> points, double p99_bound_us) {
  std::sort(points.begin(), points.end(),
            [](const RatePoint& a, const RatePoint& b) { return a.rate_per_s < b.rate_per_s; });
  Knee knee;
  for (const RatePoint& point : points) {
    if (point.p99_us > p99_bound_us || point.errors > 0) {
      knee.limited = true;
      break;
    }
    knee.found = true;
    knee.rate_per_s = point.rate_per_s;
  }
  return knee;
}

}  // namespace onemodel::load
