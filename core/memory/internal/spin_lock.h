// A small test-and-test-and-set lock for the pool's short critical sections (a pointer pop or
// push and a few counters). Yields to the scheduler when contended, so it never burns a core
// waiting for a descheduled holder.
#pragma once

#include <atomic>
#include <thread>

namespace onemodel::internal {

class SpinLock {
 public:
  // Acquires the lock; spins briefly, then yields until it is free.
  void lock() {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire); ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
      }
    }
  }
  // Releases the lock.
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace onemodel::internal
