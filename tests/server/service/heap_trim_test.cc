// QuietHeapTrim: the C heap's free pages go back to the system once per quiet spell after
// calls, never while calls keep beginning (server/sessions/heap_trim.h).
#include "server/sessions/heap_trim.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/common/heap_bytes.h"

namespace onemodel::server {
namespace {

using std::chrono::milliseconds;

TEST(TrimPolicyTest, TrimsOnceWhenTheCountStopsMovingAfterCalls) {
  TrimPolicy policy;
  EXPECT_FALSE(policy.ShouldTrim(5));  // the first look only remembers
  EXPECT_TRUE(policy.ShouldTrim(5));   // quiet since, and calls since the start
  EXPECT_FALSE(policy.ShouldTrim(5));  // still quiet: nothing new to give back
  EXPECT_FALSE(policy.ShouldTrim(5));
}

TEST(TrimPolicyTest, NeverTrimsWhileCallsKeepBeginning) {
  TrimPolicy policy;
  for (int64_t begun = 0; begun < 100; ++begun) EXPECT_FALSE(policy.ShouldTrim(begun));
  EXPECT_TRUE(policy.ShouldTrim(99));
}

TEST(TrimPolicyTest, ANewBurstEarnsANewTrim) {
  TrimPolicy policy;
  policy.ShouldTrim(1);
  EXPECT_TRUE(policy.ShouldTrim(1));
  EXPECT_FALSE(policy.ShouldTrim(3));  // a burst: not quiet
  EXPECT_TRUE(policy.ShouldTrim(3));
  EXPECT_FALSE(policy.ShouldTrim(3));
}

TEST(TrimPolicyTest, AServerThatWasNeverCalledNeverTrims) {
  TrimPolicy policy;
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(policy.ShouldTrim(0));
}

// Waits up to 5 s for `trims` to reach `count`.
bool AwaitTrims(const QuietHeapTrim& trim, int64_t count) {
  for (int i = 0; i < 500 && trim.trims() < count; ++i)
    std::this_thread::sleep_for(milliseconds(10));
  return trim.trims() == count;
}

TEST(QuietHeapTrimTest, TrimsAfterEachBurstOnceQuietAndNotBefore) {
  std::atomic<int64_t> begun{0};
  std::atomic<int> trimmed{0};
  QuietHeapTrim trim([&] { return begun.load(); }, milliseconds(10),
                     [&] {
                       ++trimmed;
                       return int64_t{0};
                     });
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(trim.trims(), 0);  // no call yet
  begun = 7;
  ASSERT_TRUE(AwaitTrims(trim, 1));
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(trim.trims(), 1);  // quiet, nothing new
  begun = 8;
  ASSERT_TRUE(AwaitTrims(trim, 2));
  EXPECT_EQ(trimmed.load(), 2);
}

TEST(QuietHeapTrimTest, ABusyServerIsNeverTrimmed) {
  std::atomic<int64_t> begun{0};
  QuietHeapTrim trim([&] { return ++begun; }, milliseconds(5), [] { return int64_t{0}; });
  std::this_thread::sleep_for(milliseconds(200));  // each look sees a new call
  EXPECT_EQ(trim.trims(), 0);
  EXPECT_GT(begun.load(), 2);
}

TEST(QuietHeapTrimTest, StopsAtOnceWhateverItsPeriod) {
  const auto start = std::chrono::steady_clock::now();
  {
    QuietHeapTrim trim([] { return int64_t{1}; }, std::chrono::hours(1));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// 64 MiB freed below a live block stays resident (glibc trims only a heap's top) until
// TrimHeap() gives it back, and says how much it gave.
TEST(TrimHeapTest, GivesBackFreedMemoryBelowTheHeapsTopAndSaysHowMuch) {
  if (onemodel::testing::HeapBytesInUse() < 0) GTEST_SKIP() << "a sanitizer's allocator";
  TrimHeap();  // what earlier tests of this process freed goes first
  constexpr size_t kBlock = 16 << 10;
  std::vector<void*> blocks(4096);
  for (void*& b : blocks) b = std::memset(std::malloc(kBlock), 1, kBlock);
  void* top = std::memset(std::malloc(kBlock), 1, kBlock);  // keeps the heap from shrinking
  for (void* b : blocks) std::free(b);
  const int64_t returned = TrimHeap();
  std::free(top);
  EXPECT_GE(returned, int64_t{48} << 20);
  EXPECT_LE(returned, int64_t{80} << 20);
}

}  // namespace
}  // namespace onemodel::server
