#include "core/kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace onemodel {
namespace {

TEST(ThreadPoolTest, RunsEveryTaskExactlyOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t tasks : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(tasks));
      pool.ParallelFor(tasks, [&](int64_t i) { seen[static_cast<size_t>(i)].fetch_add(1); });
      for (auto& s : seen) ASSERT_EQ(s.load(), 1) << threads << " threads, " << tasks << " tasks";
    }
  }
}

TEST(ThreadPoolTest, OneThreadRunsEverythingOnTheCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.threads(), 1);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  pool.ParallelFor(100, [&](int64_t) {
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
  });
  EXPECT_EQ(elsewhere.load(), 0);
}

TEST(ThreadPoolTest, WorkersTakePartWhenThereAreSeveral) {
  ThreadPool pool(2);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  for (int round = 0; round < 200 && elsewhere.load() == 0; ++round) {
    pool.ParallelFor(64, [&](int64_t) {
      if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
      std::this_thread::yield();
    });
  }
  EXPECT_GT(elsewhere.load(), 0);
}

TEST(ThreadPoolTest, ManyCallersAtOnceAllComplete) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int c = 0; c < 6; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        pool.ParallelFor(16, [&](int64_t i) { total.fetch_add(i); });
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 6 * 200 * (15 * 16 / 2));
}

TEST(ThreadPoolTest, SharedPoolHasAtLeastOneThread) {
  EXPECT_GE(ThreadPool::Shared().threads(), 1);
}

}  // namespace
}  // namespace onemodel
