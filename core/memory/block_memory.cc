#include "core/memory/block_memory.h"

#include <sys/mman.h>

#include <cstdlib>

#include "core/memory/buffer.h"

namespace onemodel {

void* AllocateBlockMemory(int64_t size) {
  if (size < kHugePageBytes) return std::aligned_alloc(kBufferAlignment, static_cast<size_t>(size));
  void* block = std::aligned_alloc(kHugePageBytes, static_cast<size_t>(size));
#ifdef MADV_HUGEPAGE
  // Failure (EINVAL without CONFIG_TRANSPARENT_HUGEPAGE) leaves ordinary pages: nothing to do.
  if (block) madvise(block, static_cast<size_t>(size), MADV_HUGEPAGE);
#endif
  return block;
}

}  // namespace onemodel
