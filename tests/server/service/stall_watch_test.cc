// StallWatch: the lock around a transfer's steps, and the stall alarm (silence and trickles).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "server/rpc/stream_reactors.h"

namespace onemodel::server {
namespace {

using namespace std::chrono_literals;

// A step that finishes a transfer may see gRPC delete the transfer (OnDone on another thread)
// before the step returns. The guard keeps the lock's memory alive until it unlocks; a lock
// that lived in the deleted transfer was unlocked after free (glibc aborted in
// __pthread_tpp_change_priority once in the malformed-request table; ASan reports it here).
TEST(StallWatchTest, TheLockOutlivesATransferDeletedWhileItIsHeld) {
  auto watch = std::make_unique<StallWatch>(10s, 0, [] {});
  const StallWatch::Guard guard = watch->Lock();
  watch->Stop();
  watch.reset();
}

TEST(StallWatchTest, AWaitThatLastsTheTimeoutStalls) {
  std::atomic<int> stalls{0};
  StallWatch watch(50ms, 0, [&] { ++stalls; });
  {
    const StallWatch::Guard guard = watch.Lock();
    watch.Waiting();
  }
  for (int i = 0; i < 400 && stalls == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(stalls, 1);
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(stalls, 1);  // once only
  const StallWatch::Guard guard = watch.Lock();
  EXPECT_EQ(watch.reason(), "nothing for 0.05 s (--stream-idle-timeout)");
  watch.Stop();
}

// Waits on the "client" `rounds` times for `wait` each, moving `bytes` after each, until the
// watch stalls; returns the number of rounds that ran.
int Trickle(StallWatch& watch, const std::atomic<int>& stalls, int rounds,
            std::chrono::milliseconds wait, int64_t bytes) {
  int round = 0;
  for (; round < rounds && stalls == 0; ++round) {
    {
      const StallWatch::Guard guard = watch.Lock();
      watch.Waiting();
    }
    std::this_thread::sleep_for(wait);
    const StallWatch::Guard guard = watch.Lock();
    if (stalls == 0) watch.Moved(bytes);
  }
  return round;
}

TEST(StallWatchTest, ATrickleBelowTheMinimumRateStalls) {
  std::atomic<int> stalls{0};
  StallWatch watch(200ms, 1000, [&] { ++stalls; });         // at least 200 bytes per 200 ms waited
  const int rounds = Trickle(watch, stalls, 400, 10ms, 1);  // about 100 bytes/s
  EXPECT_EQ(stalls, 1);
  EXPECT_GE(rounds, 2) << "stalled as silent, not as slow";
  const StallWatch::Guard guard = watch.Lock();
  EXPECT_NE(watch.reason().find("less than --stream-min-bytes-per-second (1000 B/s)"),
            std::string::npos)
      << watch.reason();
  watch.Stop();
}

TEST(StallWatchTest, AClientAboveTheMinimumRateNeverStalls) {
  std::atomic<int> stalls{0};
  StallWatch watch(200ms, 1000, [&] { ++stalls; });
  Trickle(watch, stalls, 60, 10ms, 1000);  // about 100 KB/s for 0.6 s: three windows
  EXPECT_EQ(stalls, 0);
  const StallWatch::Guard guard = watch.Lock();
  watch.Stop();
}

TEST(StallWatchTest, AStoppedWatchNeverStalls) {
  std::atomic<int> stalls{0};
  StallWatch watch(50ms, 0, [&] { ++stalls; });
  {
    const StallWatch::Guard guard = watch.Lock();
    watch.Waiting();
    watch.Stop();
  }
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(stalls, 0);
}

}  // namespace
}  // namespace onemodel::server
