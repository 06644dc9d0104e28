// Where the pool's blocks come from: the C heap, with large blocks on transparent huge pages.
//
// A block of at least kHugePageBytes starts on a 2 MiB boundary and its range is advised
// madvise(MADV_HUGEPAGE), so the kernel backs it with 2 MiB pages where it can (also when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise", the default of many
// distributions). A kernel streaming over such a block takes one TLB entry per 2 MiB instead
// of per 4 KiB (a TLB miss in a VM walks two page tables), and first touch faults once per
// 2 MiB (docs/kernels.md, "Huge pages for large blocks", has the measurements).
//
//   void* p = AllocateBlockMemory(size);  // nullptr when the system refuses
//   std::free(p);
#pragma once

#include <cstdint>

namespace onemodel {

// Blocks of at least this many bytes are huge-page aligned and advised.
inline constexpr int64_t kHugePageBytes = int64_t{2} << 20;

// size bytes aligned to kBufferAlignment (to kHugePageBytes and advised when size is at least
// that), to be released with std::free; nullptr when the system refuses. The advice is a
// hint: a kernel without transparent huge pages ignores it and the block works as any other.
void* AllocateBlockMemory(int64_t size);

}  // namespace onemodel
