// WorkerPool and Strand: where session work runs, off gRPC's own threads.
//
// The gRPC callback threads only receive requests and post them; kernels run on the
// WorkerPool, so a long MatMul never keeps the server from answering health checks, pings or
// other sessions. A Strand serializes one session's requests on that pool without parking a
// thread while it waits: tasks run one at a time, in order. A task that finishes later (a
// streamed download still writing) holds the strand until it calls its `done`. A small task
// may run on the posting thread itself when the strand is idle (RunHereOrPost), still one at
// a time and in order.
//
//   WorkerPool workers(4);
//   Strand strand(workers);
//   strand.Post([] { /* runs alone among this strand's tasks */ });
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace onemodel::server {

class WorkerPool {
 public:
  // `threads` workers; 0 (or less) means one per CPU core.
  explicit WorkerPool(int threads);
  // Runs what is queued, then joins.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task` (FIFO) for one of the threads.
  void Post(std::function<void()> task);

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

class Strand {
 public:
  using Done = std::function<void()>;
  explicit Strand(WorkerPool& pool) : pool_(pool) {}
  // Waits until the strand has let its last task go: a worker still uses the strand after a
  // task's last statement (which may be what its owner waits for) to start the next task or
  // go idle. Never destroy a strand from one of its own tasks, nor with tasks queued that
  // nothing will let run.
  ~Strand();
  Strand(const Strand&) = delete;
  Strand& operator=(const Strand&) = delete;

  // Runs `task` after every task posted before it has finished.
  void Post(std::function<void()> task);
  // Like Post, but the strand stays held until `task` calls the Done it is given (once).
  void PostAsync(std::function<void(Done)> task);
  // Runs `task` now, on the calling thread, when the strand is idle (nothing runs or waits) and
  // `here()` says so; otherwise as PostAsync, still ahead of anything posted after this call.
  // Either way the strand stays held until `task` calls its Done. `here` is asked with the
  // strand held (no other task of it runs), so it may read state only the strand's tasks
  // touch; it must not throw. Returns true when `task` ran here.
  bool RunHereOrPost(std::function<void(Done)> task, const std::function<bool()>& here);
  // `task` as a task for PostAsync or RunHereOrPost that lets the strand go when it returns.
  static std::function<void(Done)> Releasing(std::function<void()> task);
  // True while a task runs or waits.
  bool busy() const;

 private:
  // Runs the first queued task on the pool.
  void RunNext();
  // Called when the running task is finished: starts the next one or goes idle.
  void Finish();

  WorkerPool& pool_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;  // notified (under mutex_) when running_ becomes false
  std::deque<std::function<void(Done)>> queue_;
  bool running_ = false;
};

}  // namespace onemodel::server
