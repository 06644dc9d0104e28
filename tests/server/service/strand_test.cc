#include "server/strand.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace onemodel::server {
namespace {

using namespace std::chrono_literals;

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
