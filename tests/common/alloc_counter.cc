#include "tests/common/alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<int64_t> g_allocations{0};
std::atomic<size_t> g_largest{0};
}  // namespace

namespace onemodel::testing {
int64_t HeapAllocations() { return g_allocations.load(std::memory_order_relaxed); }
size_t LargestAllocation() { return g_largest.load(std::memory_order_relaxed); }
void ResetLargestAllocation() { g_largest.store(0, std::memory_order_relaxed); }
}  // namespace onemodel::testing

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  size_t largest = g_largest.load(std::memory_order_relaxed);
  while (size > largest && !g_largest.compare_exchange_weak(largest, size)) {
  }
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }

// These operators pair with the malloc above; GCC cannot see that and warns when it inlines.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
