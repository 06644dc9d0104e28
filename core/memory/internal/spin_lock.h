// A small test-and-test-and-set lock for the pool's short critical sections (a pointer pop or
// push and a few counters). Yields to the scheduler when contended, so it never burns a core
// waiting for a descheduled holder.
#pragma once

#include <atomic>
#include <thread>

namespace onemodel::internal {

class SpinLock {
 public:
  // Acquires the lock; spins briefly, then yields until it is free. The uncontended case is
  // one exchange inline; the waiting is out of line, so callers keep their values in
  // registers across the lock instead of spilling them around a possible call.
  void lock() {
    if (locked_.exchange(true, std::memory_order_acquire)) LockContended();
  }
  // Releases the lock.
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  [[gnu::noinline]] void LockContended() {
    for (int spins = 0;; ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }

  std::atomic<bool> locked_{false};
};

}  // namespace onemodel::internal
