#include "core/memory/block_memory.h"

#include <sys/mman.h>

#include <cstdlib>

#include "core/memory/buffer.h"

namespace onemodel {

// posix_memalign, not aligned_alloc: C11 makes aligned_alloc's size a multiple of the
// alignment, which a 3 MiB block is not (ASan refuses it; glibc happens to accept it).
void* AllocateBlockMemory(int64_t size) {
  const bool huge = size >= kHugePageBytes;
  void* block = nullptr;
  if (posix_memalign(&block, static_cast<size_t>(huge ? kHugePageBytes : kBufferAlignment),
                     static_cast<size_t>(size)) != 0) {
    return nullptr;
  }
#ifdef MADV_HUGEPAGE
  // Failure (EINVAL without CONFIG_TRANSPARENT_HUGEPAGE) leaves ordinary pages: nothing to do.
  if (huge) madvise(block, static_cast<size_t>(size), MADV_HUGEPAGE);
#endif
  return block;
}

}  // namespace onemodel
