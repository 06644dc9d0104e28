// QuietHeapTrim: gives the C library's free heap pages back to the system once the server has
// been quiet, so that its resident memory falls back after a burst (docs/reliability.md,
// "Memory after a burst").
//
// glibc keeps what a burst of large requests freed (gRPC's receive slices, parsed messages,
// replies) for reuse, and returns it only from the top of each heap. Measured on the release
// server: four sessions each putting and getting a 60 MiB tensor three times took its RSS from
// 27 to 228 MiB, where it stayed with nothing held; malloc_trim(0) brought it to 29 MiB. The
// pool's idle blocks are not affected: they are rented from glibc's point of view and counted
// in the pool's statistics.
//
// A thread looks every `quiet`: when no call has begun since its last look and one has begun
// since the last trim, it trims once. So a busy server never trims (no latency cost), an idle
// one trims once after each burst, and a long upload or Run alone does not hold it off.
//
//   QuietHeapTrim trim([&] { return service.CallsBegun(); }, std::chrono::seconds(1));
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace onemodel::server {

// When to trim, given what a counter of calls begun read at each look (no thread, no clock).
class TrimPolicy {
 public:
  // True when `calls_begun` has not moved since the previous look and has moved since the
  // last time this returned true. The first look only remembers the count.
  bool ShouldTrim(int64_t calls_begun);

 private:
  int64_t previous_ = -1;
  int64_t trimmed_at_ = 0;
};

// Bytes the C library returned to the system (the drop in resident memory around
// malloc_trim(0)); 0 where there is no malloc_trim or under a sanitizer's allocator.
int64_t TrimHeap();

class QuietHeapTrim {
 public:
  using Trim = std::function<int64_t()>;
  // Starts the thread: every `quiet` it reads `calls_begun` and calls `trim` (TrimHeap, or a
  // test's) when TrimPolicy says so, logging what was returned at debug level.
  QuietHeapTrim(std::function<int64_t()> calls_begun, std::chrono::milliseconds quiet,
                Trim trim = TrimHeap);
  // Stops and joins the thread (at most one trim's time).
  ~QuietHeapTrim();
  QuietHeapTrim(const QuietHeapTrim&) = delete;
  QuietHeapTrim& operator=(const QuietHeapTrim&) = delete;

  // Trims done so far.
  int64_t trims() const;

 private:
  void Loop();

  const std::function<int64_t()> calls_begun_;
  const std::chrono::milliseconds quiet_;
  const Trim trim_;
  mutable std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  int64_t trims_ = 0;
  std::thread thread_;  // last: starts once the fields above are set
};

}  // namespace onemodel::server
