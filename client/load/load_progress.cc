#include "client/load/load_progress.h"

#include <algorithm>
#include <cstdio>

namespace onemodel::load {
namespace {

constexpr int kBarWidth = 20;

}  // namespace

std::string FormatLoadProgress(const LoadProgress& progress) {
  const bool counted = !progress.warming_up && progress.total_requests > 0;
  double fraction = 1;
  if (counted) {
    fraction =
        static_cast<double>(progress.requests) / static_cast<double>(progress.total_requests);
  } else if (progress.total_seconds > 0) {
    fraction = progress.seconds / progress.total_seconds;
  }
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kBarWidth);
  char amount[64];
  if (counted) {
    std::snprintf(amount, sizeof amount, "%lld/%lld requests",
                  static_cast<long long>(progress.requests),
                  static_cast<long long>(progress.total_requests));
  } else {
    std::snprintf(amount, sizeof amount, "%.1f/%.1f s", progress.seconds, progress.total_seconds);
  }
  const double rate =
      progress.seconds > 0 ? static_cast<double>(progress.requests) / progress.seconds : 0;
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "] %3d%%  %16s  %8.0f req/s  %lld errors",
                static_cast<int>(fraction * 100), amount, rate,
                static_cast<long long>(progress.errors));
  return std::string(progress.warming_up ? "warm-up" : "load   ") + " [" +
         std::string(filled, '#') + std::string(kBarWidth - filled, '.') + numbers;
}

}  // namespace onemodel::load
