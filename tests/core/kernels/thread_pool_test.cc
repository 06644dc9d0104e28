#include "core/kernels/thread_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
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

// `callers` threads each run 200 rounds of ParallelFor(tasks) on `pool`, each round inside a
// Warm scope of its own when `warm`; returns the sum of every task's index they all saw.
int64_t SumOverCallers(ThreadPool& pool, int callers, int64_t tasks, bool warm) {
  std::vector<std::thread> threads;
  std::atomic<int64_t> total{0};
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        std::optional<ThreadPool::Warm> scope;
        if (warm) scope.emplace(pool);
        pool.ParallelFor(tasks, [&](int64_t i) { total.fetch_add(i); });
      }
    });
  }
  for (auto& t : threads) t.join();
  return total.load();
}

TEST(ThreadPoolTest, ManyCallersAtOnceAllComplete) {
  ThreadPool pool(2);
  EXPECT_EQ(SumOverCallers(pool, 6, 16, false), 6 * 200 * (15 * 16 / 2));
}

TEST(ThreadPoolTest, CallersInsideWarmScopesAllComplete) {
  ThreadPool pool(3);
  EXPECT_EQ(SumOverCallers(pool, 4, 7, true), 4 * 200 * (6 * 7 / 2));
}

// The thread id of one of the pool's workers, which has just finished a job: two tasks that
// wait (up to 100 ms) for each other, until one ran off the caller and recorded its id.
pid_t WorkerTid(ThreadPool& pool) {
  const auto caller = std::this_thread::get_id();
  for (;;) {
    std::atomic<int> started{0};
    std::atomic<pid_t> tid{0};
    pool.ParallelFor(2, [&](int64_t) {
      started.fetch_add(1);
      if (std::this_thread::get_id() != caller) tid.store(gettid());
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      while (started.load() < 2 && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
      }
    });
    if (tid.load() != 0) return tid.load();
  }
}

// The scheduler state of thread `tid` of this process: 'R' running or runnable (a polling
// worker, even when other work holds the core), 'S' asleep (a worker waiting for a job).
char StateOf(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');  // "tid (name) S ..."
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

// Whether thread `tid` is asleep within `limit`, sampled every millisecond.
bool SleepsWithin(pid_t tid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (StateOf(tid) != 'S') {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Inside a Warm scope an idle worker polls for the next job instead of sleeping (it stays
// runnable: on a loaded machine it yields, but it does not block) until the scope closes, then
// sleeps. The pool's poll limit is 10 s here, so only the scope's end can stop it.
TEST(ThreadPoolTest, WarmWorkersPollUntilTheScopeCloses) {
  ThreadPool pool(2, std::chrono::seconds(10));
  pid_t worker = 0;
  {
    const ThreadPool::Warm warm(pool);
    worker = WorkerTid(pool);
    int runnable = 0;
    for (int sample = 0; sample < 20; ++sample) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      runnable += StateOf(worker) == 'R';
    }
    EXPECT_GE(runnable, 15) << "the worker slept inside a Warm scope";
  }
  EXPECT_TRUE(SleepsWithin(worker, std::chrono::seconds(2))) << "still polling after the scope";
}

// ... and for at most the pool's poll limit (kWarmPoll, 1 ms) after its last job.
TEST(ThreadPoolTest, WarmWorkersPollForABoundedTimeAfterTheirLastJob) {
  ThreadPool pool(2);
  const ThreadPool::Warm warm(pool);
  EXPECT_TRUE(SleepsWithin(WorkerTid(pool), std::chrono::seconds(2)));
}

// With as many scopes open as the pool has threads, every core is presumably busy: idle
// workers sleep at once (the 10 s poll limit would keep a polling one runnable).
TEST(ThreadPoolTest, WorkersSleepWhenScopesFillEveryThread) {
  ThreadPool pool(2, std::chrono::seconds(10));
  const ThreadPool::Warm first(pool), second(pool);
  EXPECT_TRUE(SleepsWithin(WorkerTid(pool), std::chrono::seconds(2)));
}

TEST(ThreadPoolTest, SharedPoolHasAtLeastOneThread) {
  EXPECT_GE(ThreadPool::Shared().threads(), 1);
}

}  // namespace
}  // namespace onemodel
