// ThreadPool: the shared intra-op pool for large kernels.
//
// ParallelFor(n, fn) runs fn(0) ... fn(n-1) on the pool's workers and the calling thread,
// and returns when all are done. The caller always works on its own job, so many sessions can
// call at once without deadlock, and a pool of one thread runs everything on the caller.
// Nothing is allocated per call.
//
//   pool.ParallelFor(tasks, [&](int64_t t) { Process(t * chunk, (t + 1) * chunk); });
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace onemodel {

class ThreadPool {
 public:
  // A pool whose ParallelFor uses `threads` threads in all (the caller plus threads-1 workers).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process-wide pool: ONEMODEL_THREADS threads if set, else one per core.
  static ThreadPool& Shared();

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

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
    Job* link = nullptr;           // the queue of jobs with unclaimed tasks
  };

  void Run(int64_t tasks, void (*call)(const void*, int64_t), const void* fn);
  // Claims and runs tasks of `job` until none is left; returns how many it ran.
  static int64_t Work(Job& job);
  void WorkerLoop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  Job* queue_ = nullptr;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace onemodel
