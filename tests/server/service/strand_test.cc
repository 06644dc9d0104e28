#include "server/sessions/strand.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace onemodel::server {
namespace {

using namespace std::chrono_literals;

constexpr auto Releasing = &Strand::Releasing;

TEST(Strand, TasksOfOneStrandRunAloneAndInOrder) {
  WorkerPool workers(4);
  Strand strand(workers);
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::vector<int> order;
  std::promise<void> done;
  constexpr int kTasks = 200;
  for (int i = 0; i < kTasks; ++i) {
    strand.Post([&, i] {
      if (inside.fetch_add(1) != 0) overlapped = true;
      order.push_back(i);  // unsynchronized on purpose: only safe if tasks never overlap
      inside.fetch_sub(1);
      if (i == kTasks - 1) done.set_value();
    });
  }
  done.get_future().wait();
  EXPECT_FALSE(overlapped);
  ASSERT_EQ(order.size(), static_cast<size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
}

TEST(Strand, DifferentStrandsRunInParallel) {
  WorkerPool workers(2);
  Strand a(workers), b(workers);
  std::promise<void> a_started, b_started;
  std::future<void> a_sees = a_started.get_future(), b_sees = b_started.get_future();
  std::atomic<int> met{0};
  std::promise<void> finished_a, finished_b;
  // Each waits for the other to start: only possible when both run at once.
  a.Post([&] {
    a_started.set_value();
    if (b_sees.wait_for(5s) == std::future_status::ready) ++met;
    finished_a.set_value();
  });
  b.Post([&] {
    b_started.set_value();
    if (a_sees.wait_for(5s) == std::future_status::ready) ++met;
    finished_b.set_value();
  });
  finished_a.get_future().wait();
  finished_b.get_future().wait();
  EXPECT_EQ(met, 2);
}

TEST(Strand, AnAsyncTaskHoldsTheStrandUntilDone) {
  WorkerPool workers(2);
  Strand strand(workers);
  Strand::Done release;
  std::promise<void> started;
  std::atomic<bool> second_ran{false};
  strand.PostAsync([&](Strand::Done done) {
    release = std::move(done);
    started.set_value();
  });
  started.get_future().wait();
  std::promise<void> second_done;
  strand.Post([&] {
    second_ran = true;
    second_done.set_value();
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(second_ran) << "the strand is held until done() is called";
  EXPECT_TRUE(strand.busy());
  release();
  second_done.get_future().wait();
  EXPECT_TRUE(second_ran);
}

TEST(Strand, IsIdleWhenNothingRunsOrWaits) {
  WorkerPool workers(1);
  Strand strand(workers);
  EXPECT_FALSE(strand.busy());
  std::promise<void> done;
  strand.Post([&] { done.set_value(); });
  done.get_future().wait();
  for (int i = 0; i < 100 && strand.busy(); ++i) std::this_thread::sleep_for(1ms);
  EXPECT_FALSE(strand.busy());
}

TEST(Strand, RunHereOrPostRunsOnTheCallingThreadWhenIdleAndAsked) {
  WorkerPool workers(1);
  Strand strand(workers);
  std::thread::id ran_on;
  bool asked = false;
  EXPECT_TRUE(strand.RunHereOrPost(Releasing([&] { ran_on = std::this_thread::get_id(); }), [&] {
    asked = true;
    return strand.busy();  // held while it decides
  }));
  EXPECT_TRUE(asked);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_FALSE(strand.busy()) << "let go once the task returned";
}

TEST(Strand, ATaskRunHereHoldsTheStrandUntilDone) {
  WorkerPool workers(1);
  Strand strand(workers);
  Strand::Done release;
  EXPECT_TRUE(strand.RunHereOrPost([&](Strand::Done done) { release = std::move(done); },
                                   [] { return true; }));
  std::promise<void> second_done;
  strand.Post([&] { second_done.set_value(); });
  std::future<void> second = second_done.get_future();
  EXPECT_EQ(second.wait_for(100ms), std::future_status::timeout) << "held until done()";
  EXPECT_TRUE(strand.busy());
  release();
  EXPECT_EQ(second.wait_for(5s), std::future_status::ready);
}

TEST(Strand, RunHereOrPostSendsWhatItIsNotAskedToRunHereToAWorker) {
  WorkerPool workers(1);
  Strand strand(workers);
  std::promise<std::thread::id> ran_on;
  EXPECT_FALSE(strand.RunHereOrPost(
      Releasing([&] { ran_on.set_value(std::this_thread::get_id()); }), [] { return false; }));
  std::future<std::thread::id> on = ran_on.get_future();
  ASSERT_EQ(on.wait_for(5s), std::future_status::ready);
  EXPECT_NE(on.get(), std::this_thread::get_id());
}

TEST(Strand, RunHereOrPostWaitsBehindARunningTaskWithoutAsking) {
  WorkerPool workers(1);
  Strand strand(workers);
  std::promise<void> started, release;
  strand.Post([&] {
    started.set_value();
    release.get_future().wait();
  });
  started.get_future().wait();
  std::atomic<bool> asked{false};
  std::promise<std::thread::id> ran_on;
  EXPECT_FALSE(
      strand.RunHereOrPost(Releasing([&] { ran_on.set_value(std::this_thread::get_id()); }),
                           [&] { return asked = true; }));
  EXPECT_FALSE(asked) << "a busy strand queues the task; only an idle one asks";
  release.set_value();
  std::future<std::thread::id> on = ran_on.get_future();
  ASSERT_EQ(on.wait_for(5s), std::future_status::ready);
  EXPECT_NE(on.get(), std::this_thread::get_id());
}

TEST(Strand, TasksRunHereAndOnWorkersNeverOverlapAndKeepEachPostersOrder) {
  WorkerPool workers(2);
  Strand strand(workers);
  constexpr int kPosters = 4;
  constexpr int kTasks = 500;
  static_assert(kTasks / 2 % 3 == 1, "task kTasks / 2 asks to run here");
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::atomic<int> here{0};
  std::vector<std::vector<int>> order(kPosters);  // written only by the strand's tasks
  std::atomic<int> posted{0}, finished{0};
  std::promise<void> all_done;
  // Halfway, every poster stops until all it posted has run, so the strand is idle at least
  // once whatever the load: the first task after it asks, and must run here.
  std::barrier halfway(kPosters);
  std::vector<std::thread> posters;
  for (int p = 0; p < kPosters; ++p) {
    posters.emplace_back([&, p] {
      for (int i = 0; i < kTasks; ++i) {
        if (i == kTasks / 2) {
          halfway.arrive_and_wait();
          while (finished.load() != posted.load()) std::this_thread::yield();
          halfway.arrive_and_wait();
        }
        auto task = [&, p, i] {
          if (inside.fetch_add(1) != 0) overlapped = true;
          order[static_cast<size_t>(p)].push_back(i);  // safe only if tasks never overlap
          if (i % 7 == 0) std::this_thread::yield();   // a "large" task takes longer
          inside.fetch_sub(1);
          if (finished.fetch_add(1) + 1 == kPosters * kTasks) all_done.set_value();
        };
        if (i % 10 == 0) std::this_thread::sleep_for(1ms);  // the strand may go idle
        ++posted;
        if (i % 3 == 0) {
          strand.Post(task);
        } else if (strand.RunHereOrPost(Releasing(task), [i] { return i % 3 == 1; })) {
          ++here;
        }
      }
    });
  }
  for (std::thread& t : posters) t.join();
  ASSERT_EQ(all_done.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(overlapped);
  EXPECT_GT(here, 0) << "some tasks found the strand idle";
  for (int p = 0; p < kPosters; ++p) {
    const std::vector<int>& seen = order[static_cast<size_t>(p)];
    ASSERT_EQ(seen.size(), static_cast<size_t>(kTasks)) << "poster " << p;
    for (int i = 0; i < kTasks; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i) << "poster " << p;
  }
}

TEST(Strand, MayBeDestroyedAsSoonAsItsLastTaskHasRun) {
  WorkerPool workers(1);
  for (int i = 0; i < 10000; ++i) {
    auto strand = std::make_unique<Strand>(workers);
    std::promise<void> ran;
    strand->Post([&] { ran.set_value(); });
    ran.get_future().wait();
    // The worker may still be letting the task go; without the wait in ~Strand, it would use
    // the freed strand (ASan: heap-use-after-free; otherwise "Invalid argument" from a mutex).
    strand.reset();
  }
}

TEST(WorkerPool, RunsEverythingQueuedBeforeJoining) {
  std::atomic<int> ran{0};
  {
    WorkerPool workers(2);
    for (int i = 0; i < 1000; ++i) workers.Post([&] { ++ran; });
  }
  EXPECT_EQ(ran, 1000);
}

TEST(WorkerPool, ZeroThreadsMeansOnePerCore) {
  std::promise<void> ran;
  WorkerPool workers(0);
  workers.Post([&] { ran.set_value(); });
  EXPECT_EQ(ran.get_future().wait_for(5s), std::future_status::ready);
}

}  // namespace
}  // namespace onemodel::server
