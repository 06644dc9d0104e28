#include "core/kernels/thread_pool.h"

#include <cstdlib>

namespace onemodel {

ThreadPool::ThreadPool(int threads) {
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
  // Workers still inside the job may touch it: wait until they have all left.
  finished_.wait(lock, [&] { return job.done == tasks && job.active == 0; });
}

void ThreadPool::WorkerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || queue_ != nullptr; });
    if (stopping_) return;
    Job& job = *queue_;
    if (job.next.load(std::memory_order_relaxed) >= job.tasks) {
      queue_ = job.link;  // fully claimed: nothing left here for anyone
      continue;
    }
    ++job.active;
    lock.unlock();
    const int64_t ran = Work(job);
    lock.lock();
    job.done += ran;
    if (--job.active == 0 && job.done == job.tasks) finished_.notify_all();
  }
}

}  // namespace onemodel
