// compare_runner's memory cases: 1024 rent/return pairs per call, from onemodel's BufferPool
// and Arena and from the process's malloc/free: glibc's, as in onemodeld. compare.py times
// mimalloc by running the same cases in a second compare_runner with Debian's libmimalloc
// preloaded, so it is the whole process's allocator, as it is deployed (linking it here would
// make it that in this runner too: its exported malloc comes before glibc's). Memory is not
// touched, as in bench/memory_bench.cc: these time the allocators' bookkeeping.
//
//   pool_64k, malloc_64k, pool_16m, malloc_16m: rent and return one buffer of that size
//   arena_256, malloc_256: one 256-byte allocation (the arena resets every 1024)
//   atomic_floor: what pool_64k's pair costs in locked instructions alone: two uncontended
//       lock/unlock pairs (an exchange and a release store each), as Rent and Release take
//       the pool's spin lock
//   pool_mixed_2t, malloc_mixed_2t: two threads at once, each holding 4
//       blocks and replacing one per step (return it, take one of the next size) over a fixed
//       sequence of sizes from 64 B to 16 MiB, log-uniform; one BufferPool shared by both
#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

// malloc(bytes) then free(p), kPairsPerCall times.
Case MallocCase(size_t bytes) {
  return {kPairsPerCall, [=] {
            for (int i = 0; i < kPairsPerCall; ++i) {
              void* p = std::malloc(bytes);
              benchmark::DoNotOptimize(p);
              std::free(p);
            }
          }};
}

Case AtomicFloorCase() {
  auto lock = std::make_shared<std::atomic<bool>>(false);
  return {kPairsPerCall, [=] {
            std::atomic<bool>& l = *lock;
            for (int i = 0; i < kPairsPerCall * 2; ++i) {
              benchmark::DoNotOptimize(l.exchange(true, std::memory_order_acquire));
              l.store(false, std::memory_order_release);
            }
          }};
}

// Runs body(0) on the calling thread and body(1) on a worker kept for the object's life, at
// once; Run() returns when both are done.
class TwoThreads {
 public:
  explicit TwoThreads(std::function<void(int)> body)
      : body_(std::move(body)), worker_([this] { Work(); }) {}
  ~TwoThreads() {
    stop_.store(true);
    round_.fetch_add(1, std::memory_order_release);
    round_.notify_one();
    worker_.join();
  }
  TwoThreads(const TwoThreads&) = delete;
  TwoThreads& operator=(const TwoThreads&) = delete;

  void Run() {
    done_.store(false, std::memory_order_relaxed);
    round_.fetch_add(1, std::memory_order_release);
    round_.notify_one();
    body_(0);
    done_.wait(false, std::memory_order_acquire);
  }

 private:
  void Work() {
    for (uint64_t seen = 0;;) {
      round_.wait(seen, std::memory_order_acquire);
      seen = round_.load(std::memory_order_acquire);
      if (stop_.load()) return;
      body_(1);
      done_.store(true, std::memory_order_release);
      done_.notify_one();
    }
  }

  std::function<void(int)> body_;
  std::atomic<uint64_t> round_{0};
  std::atomic<bool> done_{false};
  std::atomic<bool> stop_{false};
  std::thread worker_;  // last: starts once the rest is set up
};

constexpr int kStepsPerThread = 4096;
constexpr int kHeldPerThread = 4;

// 1024 sizes from 64 B to 16 MiB, log-uniform, from a fixed linear congruential sequence.
std::vector<size_t> MixedSizes() {
  std::vector<size_t> sizes(1024);
  uint64_t x = 12345;
  for (size_t& s : sizes) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    const double u = static_cast<double>(x >> 11) / static_cast<double>(uint64_t{1} << 53);
    s = static_cast<size_t>(std::exp2(6.0 + 18.0 * u));
  }
  return sizes;
}

// Two threads, each replacing one of its kHeldPerThread blocks per step (give it back, take
// one of the next size); thread 1 starts half-way through the sizes. One unit of work is one
// give-and-take pair.
template <class Take, class Give>
Case MixedTwoThreadsCase(Take take, Give give) {
  auto sizes = std::make_shared<const std::vector<size_t>>(MixedSizes());
  auto threads = std::make_shared<TwoThreads>([=](int t) {
    const std::vector<size_t>& sz = *sizes;
    size_t next = t == 0 ? 0 : sz.size() / 2;
    std::array<void*, kHeldPerThread> held;
    for (void*& h : held) h = take(sz[next++ % sz.size()]);
    for (int i = 0; i < kStepsPerThread; ++i) {
      void*& h = held[static_cast<size_t>(i) % held.size()];
      give(h);
      h = take(sz[next++ % sz.size()]);
      benchmark::DoNotOptimize(h);
    }
    for (void* h : held) give(h);
  });
  return {2.0 * kStepsPerThread, [=] { threads->Run(); }};
}

Case PoolMixedTwoThreadsCase() {
  auto pool = std::make_shared<BufferPool>();
  return MixedTwoThreadsCase([=](size_t n) -> void* { return pool->Rent(static_cast<int64_t>(n)); },
                             [=](void* b) { pool->Release(static_cast<Buffer*>(b)); });
}

Case ArenaCase(int64_t bytes) {
  auto pool = std::make_shared<BufferPool>();
  auto arena = std::make_shared<Arena>(*pool);
  // The pool is captured too: the arena uses it until it is destroyed.
  return {kPairsPerCall, [pool, arena, bytes] {
            Arena& a = *arena;  // locals: the loop keeps them in registers
            const int64_t n = bytes;
            for (int i = 0; i < kPairsPerCall; ++i) benchmark::DoNotOptimize(a.Allocate(n)->data());
            a.Reset();
          }};
}

}  // namespace

void AddMemoryCases(CaseRegistry& cases) {
  for (const auto& [suffix, bytes] :
       {std::pair{"64k", size_t{64} << 10}, {"16m", size_t{16} << 20}}) {
    const std::string s = suffix;
    cases["pool_" + s] = [bytes] { return PoolCase(static_cast<int64_t>(bytes)); };
    cases["malloc_" + s] = [bytes] { return MallocCase(bytes); };
  }
  cases["arena_256"] = [] { return ArenaCase(256); };
  cases["malloc_256"] = [] { return MallocCase(256); };
  cases["atomic_floor"] = [] { return AtomicFloorCase(); };
  cases["pool_mixed_2t"] = [] { return PoolMixedTwoThreadsCase(); };
  cases["malloc_mixed_2t"] = [] {
    return MixedTwoThreadsCase([](size_t n) { return std::malloc(n); },
                               [](void* p) { std::free(p); });
  };
}

}  // namespace onemodel::bench
