// When the fast kernels write their output with streaming (non-temporal) stores.
//
// An ordinary store to a line that is not in cache first reads the line from memory
// (read-for-ownership); a streaming store writes whole lines around the cache. For an output
// too large to stay in the last-level cache that read is wasted traffic: Add moves 4 streams
// for 3 of payload. Below the threshold the output is kept in cache for whoever reads it next
// (docs/kernels.md, "Streaming stores", has the measurements behind the default).
//
//   FastKernels k(BestTarget(), ThreadPool::Shared(), /*streaming_min_bytes=*/1024);  // tests
//   bool stream = out_bytes >= DefaultStreamingMinBytes();
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/kernels/internal/prefetch.h"

namespace onemodel {

// This machine's last-level cache in bytes: the highest cache level sysfs lists for cpu0,
// else sysconf(_SC_LEVEL3_CACHE_SIZE) capped at 64 MiB (CPUID's figure, which a hypervisor
// can make up: 320 MiB on a VM whose L3 is 32 MiB, 508 MiB on one whose sysfs lists no
// caches), else 32 MiB. Read once.
int64_t LastLevelCacheBytes();

// The rule above, given sysfs's figure (`listed`, 0 if none) and sysconf's (`reported`, 0 or
// less if none).
int64_t LastLevelCacheBytesFrom(int64_t listed, int64_t reported);

// Outputs of at least this many bytes are written with streaming stores by default: a quarter
// of the last-level cache (measured crossover: an output that size plus the inputs that made
// it no longer stay in cache for the next reader).
int64_t DefaultStreamingMinBytes();

// How far ahead of its reads a streaming row asks for its inputs, in bytes: an output that
// large came from inputs that are in memory too, and this core's prefetchers alone keep too
// few of their lines in flight (docs/kernels.md, "Prefetching a streaming row's inputs").
inline constexpr uintptr_t kStreamingPrefetchBytes = 2048;

// When kStream, asks for the line kStreamingPrefetchBytes after p (a hint: p may be near the
// end of its buffer); else nothing.
template <bool kStream>
inline void PrefetchAhead(const void* p) {
  if constexpr (kStream) internal::PrefetchLineAfter(p, kStreamingPrefetchBytes);
}

// How many of the first n elements from p (each a T, p aligned to T) come before the first
// 64-byte line boundary at or after p: a streaming row stores those the ordinary way and
// streams whole lines from there.
template <typename T>
inline int64_t ElementsBeforeLine(const T* p, int64_t n) {
  const auto to_line = (0 - reinterpret_cast<uintptr_t>(p)) % 64 / sizeof(T);
  return std::min(n, static_cast<int64_t>(to_line));
}

}  // namespace onemodel
