// Prefetch hints for the kernels' loops: a line asked for ahead of its reads, so that several
// misses overlap.
//
//   PrefetchLine(row + 16);                     // the next line of row
//   PrefetchLineAfter(x + i, 2048);             // a line 2 KiB on, which may be past x's end
#pragma once

#include <cstdint>

namespace onemodel::internal {

// Asks for the cache line holding p to be fetched into L1. A hint: it never faults, so p may
// lie past the end of its buffer. On x86 an asm statement, because GCC deletes a loop whose
// only statements are __builtin_prefetch calls (they have no side effects).
inline void PrefetchLine(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

// PrefetchLine of the address `bytes` after p, computed as an integer (it may lie past p's
// buffer, where pointer arithmetic would be undefined).
inline void PrefetchLineAfter(const void* p, uintptr_t bytes) {
  PrefetchLine(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + bytes));
}

}  // namespace onemodel::internal
