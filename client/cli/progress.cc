#include "client/cli/progress.h"

#include <chrono>
#include <cstdio>
#include <memory>

namespace onemodel::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBarWidth = 20;
constexpr double kMiB = 1024.0 * 1024.0;

// Redraws the bar when enough time passed or the transfer completed.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)) {}

  void Update(int64_t done, int64_t total) {
    const Clock::time_point now = Clock::now();
    const bool complete = done >= total;
    if (!complete && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r%s%s", FormatProgress(label_, done, total, seconds).c_str(),
                 complete ? "\n" : "");
    std::fflush(stderr);
  }

 private:
  std::string label_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_;
};

}  // namespace

std::string FormatProgress(const std::string& label, int64_t done, int64_t total, double seconds) {
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1;
  const int filled = static_cast<int>(fraction * kBarWidth);
  const double rate = seconds > 0 ? static_cast<double>(done) / kMiB / seconds : 0;
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "] %3d%%  %7.1f/%.1f MiB  %.1f MiB/s",
                static_cast<int>(fraction * 100), static_cast<double>(done) / kMiB,
                static_cast<double>(total) / kMiB, rate);
  return label + " [" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + numbers;
}

client::Progress TransferProgress(std::string label, bool enabled) {
  if (!enabled) return {};
  auto bar = std::make_shared<ProgressBar>(std::move(label));
  return [bar](int64_t done, int64_t total) {
    if (total >= kProgressMinBytes) bar->Update(done, total);
  };
}

}  // namespace onemodel::cli
