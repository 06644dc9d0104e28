// StallWatch: the lock around a transfer's steps, and the stall alarm.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "server/stream_reactors.h"

namespace onemodel::server {
namespace {

using namespace std::chrono_literals;

// A step that finishes a transfer may see gRPC delete the transfer (OnDone on another thread)
// before the step returns. The guard keeps the lock's memory alive until it unlocks; a lock
// that lived in the deleted transfer was unlocked after free (glibc aborted in
// __pthread_tpp_change_priority once in the malformed-request table; ASan reports it here).
TEST(StallWatchTest, TheLockOutlivesATransferDeletedWhileItIsHeld) {
  auto watch = std::make_unique<StallWatch>(10s, [] {});
  const StallWatch::Guard guard = watch->Lock();
  watch->Stop();
  watch.reset();
}

TEST(StallWatchTest, AWaitThatLastsTheTimeoutStalls) {
  std::atomic<int> stalls{0};
  StallWatch watch(50ms, [&] { ++stalls; });
  {
    const StallWatch::Guard guard = watch.Lock();
    watch.Waiting();
  }
  for (int i = 0; i < 400 && stalls == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(stalls, 1);
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(stalls, 1);  // once only
  const StallWatch::Guard guard = watch.Lock();
  watch.Stop();
}

TEST(StallWatchTest, AStoppedWatchNeverStalls) {
  std::atomic<int> stalls{0};
  StallWatch watch(50ms, [&] { ++stalls; });
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
