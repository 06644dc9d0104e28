// BufferPool and Arena against glibc malloc/free (issue: pool >= 3x malloc+free at 64 KiB and
// above, an arena allocation under 5 ns). Run from the release preset:
//   build/release/bench/memory_bench --benchmark_min_time=0.2
// Each pair (Pool/N vs Malloc/N) runs in the same process, one after the other.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"

namespace onemodel {
namespace {

BufferPool& SharedPool() {
  static BufferPool pool;
  return pool;
}

void BM_PoolRentRelease(benchmark::State& state) {
  BufferPool& pool = SharedPool();
  const int64_t n = state.range(0);
  for (auto _ : state) {
    Buffer* b = pool.Rent(n);
    benchmark::DoNotOptimize(b->data());
    pool.Release(b);
  }
}

void BM_MallocFree(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(n);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

void BM_AlignedAllocFree(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::aligned_alloc(64, (n + 63) / 64 * 64);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

// One arena allocation; a Reset every 1024 allocations is included in the average.
void BM_ArenaAllocate(benchmark::State& state) {
  BufferPool& pool = SharedPool();
  Arena arena(pool);
  const int64_t n = state.range(0);
  int i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(arena.Allocate(n)->data());
    if (++i == 1024) {
      arena.Reset();
      i = 0;
    }
  }
}

#define ONEMODEL_SIZES RangeMultiplier(4)->Range(64, 16 << 20)
BENCHMARK(BM_PoolRentRelease)->ONEMODEL_SIZES->Threads(1)->Threads(2);
BENCHMARK(BM_MallocFree)->ONEMODEL_SIZES->Threads(1)->Threads(2);
BENCHMARK(BM_AlignedAllocFree)->ONEMODEL_SIZES->Threads(1);
BENCHMARK(BM_ArenaAllocate)->Arg(64)->Arg(256)->Arg(4096);

}  // namespace
}  // namespace onemodel

BENCHMARK_MAIN();
