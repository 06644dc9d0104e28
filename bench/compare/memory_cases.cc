// compare_runner's memory cases: 1024 rent/return pairs per call, from onemodel's BufferPool
// and Arena and from glibc malloc/free and mimalloc (Debian's libmimalloc, called directly
// as mi_malloc/mi_free, not interposed). Memory is not touched, as in bench/memory_bench.cc:
// these time the allocators' bookkeeping (and for glibc at 16 MiB, its mmap/munmap).
//
//   pool_64k, malloc_64k, mimalloc_64k, pool_16m, malloc_16m, mimalloc_16m:
//       rent and return one buffer of that size
//   arena_256, malloc_256, mimalloc_256: one 256-byte allocation (the arena resets every 1024)
#include <benchmark/benchmark.h>
#include <mimalloc.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "bench/compare/cases.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"

namespace onemodel::bench {
namespace {

constexpr int kPairsPerCall = 1024;

Case PoolCase(int64_t bytes) {
  auto pool = std::make_shared<BufferPool>();
  return {kPairsPerCall, [=] {
            for (int i = 0; i < kPairsPerCall; ++i) {
              Buffer* b = pool->Rent(bytes);
              benchmark::DoNotOptimize(b->data());
              pool->Release(b);
            }
          }};
}

// alloc(bytes) then release(p), kPairsPerCall times.
template <void* (*Alloc)(size_t), void (*Free)(void*)>
Case MallocCase(size_t bytes) {
  return {kPairsPerCall, [=] {
            for (int i = 0; i < kPairsPerCall; ++i) {
              void* p = Alloc(bytes);
              benchmark::DoNotOptimize(p);
              Free(p);
            }
          }};
}

Case ArenaCase(int64_t bytes) {
  auto pool = std::make_shared<BufferPool>();
  auto arena = std::make_shared<Arena>(*pool);
  return {kPairsPerCall, [=] {
            Arena& a = *arena;  // locals: the loop keeps them in registers
            const int64_t n = bytes;
            for (int i = 0; i < kPairsPerCall; ++i) benchmark::DoNotOptimize(a.Allocate(n)->data());
            a.Reset();
          }};
}

}  // namespace

void AddMemoryCases(CaseRegistry& cases) {
  constexpr auto kGlibc = MallocCase<std::malloc, std::free>;
  constexpr auto kMimalloc = MallocCase<mi_malloc, mi_free>;
  for (const auto& [suffix, bytes] :
       {std::pair{"64k", size_t{64} << 10}, {"16m", size_t{16} << 20}}) {
    const std::string s = suffix;
    cases["pool_" + s] = [bytes] { return PoolCase(static_cast<int64_t>(bytes)); };
    cases["malloc_" + s] = [bytes] { return kGlibc(bytes); };
    cases["mimalloc_" + s] = [bytes] { return kMimalloc(bytes); };
  }
  cases["arena_256"] = [] { return ArenaCase(256); };
  cases["malloc_256"] = [] { return kGlibc(256); };
  cases["mimalloc_256"] = [] { return kMimalloc(256); };
}

}  // namespace onemodel::bench
