#include "server/sessions/heap_trim.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "server/observability/process_stats.h"

namespace onemodel::server {

bool TrimPolicy::ShouldTrim(int64_t calls_begun) {
  const bool quiet = calls_begun == previous_;
  previous_ = calls_begun;
  if (!quiet || calls_begun == trimmed_at_) return false;
  trimmed_at_ = calls_begun;
  return true;
}

int64_t TrimHeap() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  const int64_t before = ReadProcessStats().resident_memory_bytes;
  malloc_trim(0);
  const int64_t after = ReadProcessStats().resident_memory_bytes;
  return before > after ? before - after : 0;
#else
  return 0;  // a sanitizer's allocator does not use glibc's heap
#endif
}

QuietHeapTrim::QuietHeapTrim(std::function<int64_t()> calls_begun, std::chrono::milliseconds quiet,
                             Trim trim)
    : calls_begun_(std::move(calls_begun)),
      quiet_(quiet),
      trim_(std::move(trim)),
      thread_([this] { Loop(); }) {}

QuietHeapTrim::~QuietHeapTrim() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  thread_.join();
}

int64_t QuietHeapTrim::trims() const {
  std::lock_guard guard(mutex_);
  return trims_;
}

void QuietHeapTrim::Loop() {
  TrimPolicy policy;
  std::unique_lock lock(mutex_);
  while (!stop_.wait_for(lock, quiet_, [this] { return stopping_; })) {
    if (!policy.ShouldTrim(calls_begun_())) continue;
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    const int64_t returned = trim_();
    const auto took = std::chrono::steady_clock::now() - start;
    spdlog::debug("quiet: returned {} KiB of freed heap to the system in {} us", returned >> 10,
                  std::chrono::duration_cast<std::chrono::microseconds>(took).count());
    lock.lock();
    ++trims_;
  }
}

}  // namespace onemodel::server
