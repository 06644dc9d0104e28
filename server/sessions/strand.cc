#include "server/sessions/strand.h"

#include <algorithm>
#include <utility>

namespace onemodel::server {
std::function<void(Strand::Done)> Strand::Releasing(std::function<void()> task) {
  return [task = std::move(task)](Done done) {
    task();
    done();
  };
}

WorkerPool::WorkerPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Post(std::function<void()> task) {
  {
    std::lock_guard guard(mutex_);
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
}

void WorkerPool::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and everything queued has run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

Strand::~Strand() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return !running_; });
}

void Strand::Post(std::function<void()> task) { PostAsync(Releasing(std::move(task))); }

void Strand::PostAsync(std::function<void(Done)> task) {
  {
    std::lock_guard guard(mutex_);
    queue_.push_back(std::move(task));
    if (running_) return;
    running_ = true;
  }
  pool_.Post([this] { RunNext(); });
}

bool Strand::RunHereOrPost(std::function<void(Done)> task, const std::function<bool()>& here) {
  {
    std::lock_guard guard(mutex_);
    if (running_) {
      queue_.push_back(std::move(task));
      return false;
    }
    running_ = true;  // held: tasks posted from now on wait behind this one
  }
  if (here()) {
    task([this] { Finish(); });
    return true;
  }
  {
    std::lock_guard guard(mutex_);
    queue_.push_front(std::move(task));
  }
  pool_.Post([this] { RunNext(); });
  return false;
}

bool Strand::busy() const {
  std::lock_guard guard(mutex_);
  return running_;
}

void Strand::RunNext() {
  std::function<void(Done)> task;
  {
    std::lock_guard guard(mutex_);
    task = std::move(queue_.front());
    queue_.pop_front();
  }
  task([this] { Finish(); });
}

void Strand::Finish() {
  {
    std::lock_guard guard(mutex_);
    if (queue_.empty()) {
      running_ = false;
      idle_.notify_all();  // under the lock: a waiting destructor returns only after we unlock
      return;
    }
  }
  pool_.Post([this] { RunNext(); });
}

}  // namespace onemodel::server
