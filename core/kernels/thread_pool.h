// ThreadPool: the shared intra-op pool for large kernels.
//
// ParallelFor(n, fn) runs fn(0) ... fn(n-1) on the pool's workers and the calling thread,
// and returns when all are done. The caller always works on its own job, so many sessions can
// call at once without deadlock, and a pool of one thread runs everything on the caller.
// Nothing is allocated per call.
//
// Idle workers sleep. While a Warm scope is open and fewer requests hold one than the pool
// has threads (so a core is presumably free), idle workers poll for the next job instead,
// for up to kWarmPoll (1 ms) after their last one: on a VM a sleeping thread may take 50-150
// µs to run again once woken, longer than a small kernel's share (docs/kernels.md, "A warm
// pool while a request runs").
//
//   pool.ParallelFor(tasks, [&](int64_t t) { Process(t * chunk, (t + 1) * chunk); });
//   { ThreadPool::Warm warm(pool); RunRequest(); }  // a request's kernels find workers awake
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace onemodel {

class ThreadPool {
 public:
  // How long an idle worker polls after its last job while the pool is warm.
  static constexpr std::chrono::microseconds kWarmPoll{1000};

  // A pool whose ParallelFor uses `threads` threads in all (the caller plus threads-1 workers);
  // its idle workers poll for `warm_poll` after a job while warm.
  explicit ThreadPool(int threads, std::chrono::microseconds warm_poll = kWarmPoll);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process-wide pool: ONEMODEL_THREADS threads if set, else one per core.
  static ThreadPool& Shared();

  int threads() const { return threads_; }

  // Keeps the pool's idle workers polling (see above) from construction to destruction: a
  // request that runs several kernels in a row holds one while it runs.
  class Warm {
   public:
    explicit Warm(ThreadPool& pool);
    ~Warm();
    Warm(const Warm&) = delete;
    Warm& operator=(const Warm&) = delete;

   private:
    ThreadPool& pool_;
  };

  // Runs fn(i) for i in [0, tasks) and waits for all of them. fn must not throw.
  template <typename Fn>
  void ParallelFor(int64_t tasks, const Fn& fn) {
    if (tasks <= 1 || workers_.empty()) {
      for (int64_t i = 0; i < tasks; ++i) fn(i);
      return;
    }
    Run(
        tasks, [](const void* f, int64_t i) { (*static_cast<const Fn*>(f))(i); }, &fn);
  }

 private:
  struct Job {
    void (*call)(const void*, int64_t);
    const void* fn;
    int64_t tasks;
    std::atomic<int64_t> next{0};  // the next unclaimed task
    int64_t done = 0;              // tasks finished (under mutex_)
    int active = 0;                // workers holding a pointer to the job (under mutex_)
    std::atomic<bool> settled{false};  // a worker saw every task done and none active
    Job* link = nullptr;           // the queue of jobs with unclaimed tasks
  };

  void Run(int64_t tasks, void (*call)(const void*, int64_t), const void* fn);
  // Claims and runs tasks of `job` until none is left; returns how many it ran.
  static int64_t Work(Job& job);
  void WorkerLoop();
  // Whether idle workers should poll: some Warm scope is open, and fewer than threads().
  bool Warmed() const;
  // Polls until a job is published after `seen` (published_'s value then), the pool is no
  // longer warm, or warm_poll has passed; called without the mutex.
  void Poll(uint64_t seen) const;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  Job* queue_ = nullptr;
  bool stopping_ = false;
  std::atomic<uint64_t> published_{0};  // jobs queued so far (changed under mutex_)
  std::atomic<int> warm_{0};            // open Warm scopes
  uint64_t warm_epoch_ = 0;             // times warm_ rose from 0 (under mutex_)
  // Fixed before the workers start (they read it while the constructor still adds workers).
  const int threads_;
  const std::chrono::microseconds warm_poll_;
  std::vector<std::thread> workers_;
};

}  // namespace onemodel
