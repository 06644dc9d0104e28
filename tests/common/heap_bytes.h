// HeapBytesInUse: what glibc's malloc has handed out and not taken back, so a test can check a
// fixed per-structure charge against what the structure really takes.
//
//   const int64_t before = HeapBytesInUse();
//   ...                                      // make 100000 of them
//   if (before < 0) GTEST_SKIP();            // a sanitizer's allocator: no figures
//   const int64_t each = (HeapBytesInUse() - before) / 100000;
#pragma once

#include <malloc.h>

#include <cstdint>

namespace onemodel::testing {

// Bytes in use on glibc's heap, or -1 in a sanitizer build, whose allocator glibc does not see.
inline int64_t HeapBytesInUse() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return -1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return -1;
#else
  return static_cast<int64_t>(mallinfo2().uordblks);
#endif
#else
  return static_cast<int64_t>(mallinfo2().uordblks);
#endif
}

}  // namespace onemodel::testing
