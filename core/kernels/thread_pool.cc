#include "core/kernels/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace onemodel {
namespace {

// Polls until done() holds, give_up() holds or `limit` has passed, pausing between looks; every
// 64 looks it checks give_up() and the time and yields the core (a thread woken onto the core
// of the thread it waits for would hold that core from it otherwise).
template <typename Done, typename GiveUp>
void PollUntil(const Done& done, std::chrono::microseconds limit, const GiveUp& give_up) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (int spin = 0; !done(); ++spin) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
    if (spin % 64 == 0) {
      if (give_up() || std::chrono::steady_clock::now() > until) return;
      std::this_thread::yield();
    }
  }
}

}  // namespace

ThreadPool::ThreadPool(int threads, std::chrono::microseconds warm_poll)
    : threads_(std::max(threads, 1)), warm_poll_(warm_poll) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

ThreadPool& ThreadPool::Shared() {
  static ThreadPool pool([] {
    if (const char* env = std::getenv("ONEMODEL_THREADS")) {
      const int n = std::atoi(env);
      if (n > 0) return n;
    }
    const unsigned cores = std::thread::hardware_concurrency();
    return cores ? static_cast<int>(cores) : 1;
  }());
  return pool;
}

int64_t ThreadPool::Work(Job& job) {
  int64_t ran = 0;
  for (int64_t i; (i = job.next.fetch_add(1, std::memory_order_relaxed)) < job.tasks; ++ran) {
    job.call(job.fn, i);
  }
  return ran;
}

void ThreadPool::Run(int64_t tasks, void (*call)(const void*, int64_t), const void* fn) {
  Job job;
  job.call = call;
  job.fn = fn;
  job.tasks = tasks;
  {
    std::lock_guard guard(mutex_);
    job.link = queue_;
    queue_ = &job;
    published_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  int64_t ran = Work(job);
  std::unique_lock lock(mutex_);
  // Unlink: nobody may pick the job up once it leaves this function.
  for (Job** p = &queue_; *p; p = &(*p)->link) {
    if (*p == &job) {
      *p = job.link;
      break;
    }
  }
  job.done += ran;
  const auto settled = [&] { return job.done == tasks && job.active == 0; };
  if (!settled() && Warmed()) {  // the workers' last tasks are short: poll before sleeping
    lock.unlock();
    PollUntil([&] { return job.settled.load(std::memory_order_acquire); }, warm_poll_,
              [] { return false; });
    lock.lock();
  }
  // Workers still inside the job may touch it: wait until they have all left.
  finished_.wait(lock, settled);
}

ThreadPool::Warm::Warm(ThreadPool& pool) : pool_(pool) {
  // The first scope wakes sleeping workers now, so they are polling by the first kernel.
  if (pool_.warm_.fetch_add(1, std::memory_order_relaxed) == 0 && pool_.Warmed()) {
    std::lock_guard guard(pool_.mutex_);
    ++pool_.warm_epoch_;
    pool_.wake_.notify_all();
  }
}

ThreadPool::Warm::~Warm() { pool_.warm_.fetch_sub(1, std::memory_order_relaxed); }

bool ThreadPool::Warmed() const {
  const int warm = warm_.load(std::memory_order_relaxed);
  return warm > 0 && warm < threads();
}

void ThreadPool::Poll(uint64_t seen) const {
  PollUntil([&] { return published_.load(std::memory_order_acquire) != seen; }, warm_poll_,
            [&] { return !Warmed(); });
}

void ThreadPool::WorkerLoop() {
  std::unique_lock lock(mutex_);
  // The warm epoch in which this worker last polled without finding a job; it polls again
  // after its next job or in the next epoch.
  uint64_t cooled_in = ~uint64_t{0};
  const auto may_poll = [&] { return Warmed() && cooled_in != warm_epoch_; };
  for (;;) {
    if (!stopping_ && queue_ == nullptr && may_poll()) {
      const uint64_t seen = published_.load(std::memory_order_relaxed);
      const uint64_t epoch = warm_epoch_;
      lock.unlock();
      Poll(seen);
      lock.lock();
      if (published_.load(std::memory_order_relaxed) == seen) cooled_in = epoch;
      continue;
    }
    wake_.wait(lock, [&] { return stopping_ || queue_ != nullptr || may_poll(); });
    if (queue_ == nullptr && !stopping_) continue;  // woken to poll
    if (stopping_) return;
    Job& job = *queue_;
    if (job.next.load(std::memory_order_relaxed) >= job.tasks) {
      queue_ = job.link;  // fully claimed: nothing left here for anyone
      continue;
    }
    ++job.active;
    cooled_in = ~uint64_t{0};
    lock.unlock();
    const int64_t ran = Work(job);
    lock.lock();
    job.done += ran;
    if (--job.active == 0 && job.done == job.tasks) {
      job.settled.store(true, std::memory_order_release);
      finished_.notify_all();
    }
  }
}

}  // namespace onemodel
