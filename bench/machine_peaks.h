// This machine's own limits, measured (DESIGN.md section 8): STREAM-like memory bandwidth and the
// FP32 FMA peak, the denominators of bench/kernels_bench.cc's ratios.
//
// Bandwidth counts bytes read + bytes written once each (STREAM's convention; the hardware's
// write-allocate reads are not counted): a copy of n floats moves 8n bytes, a triad 12n. The
// loops use ordinary (not non-temporal) stores unless asked for streaming ones (Stores), the
// bound for kernels that stream large outputs (core/kernels/streaming_stores.h).
//
//   ThreadPool& pool = ThreadPool::Shared();
//   double s = SecondsOf([&] { StreamCopy(pool, dst, src, n); });
//   double gbs = 8.0 * n / s / 1e9;
//   double gflops = FmaFlopsPerIteration(FmaIsa::kAvx512) * iters * threads /
//                   TimeFmaLoop(FmaIsa::kAvx512, threads, iters).wall_seconds / 1e9;
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "core/kernels/thread_pool.h"

namespace onemodel::bench {

// Wall-clock seconds one call of fn() takes.
template <typename Fn>
double SecondsOf(const Fn& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs fn(begin, end) over [0, n) split into pool.threads() pieces (multiples of 64 elements),
// the split the elementwise fast kernels use.
template <typename Fn>
void ParallelSplit(ThreadPool& pool, int64_t n, const Fn& fn) {
  const int64_t tasks = pool.threads();
  const int64_t piece = ((n + tasks - 1) / tasks + 63) / 64 * 64;
  pool.ParallelFor(tasks, [&](int64_t t) {
    const int64_t begin = std::min(n, t * piece), end = std::min(n, begin + piece);
    if (begin < end) fn(begin, end);
  });
}

// Sleeps until no thread of this process has used the CPU for 20 ms (at most about 1 s).
// OpenBLAS's idle workers spin for 2^28 TSC cycles (about 128 ms here) after every call; a
// measurement taken then shares the cores with them.
void WaitUntilProcessIdle();

// How the STREAM loops write their destination: ordinary stores (STREAM's own loops; the
// hardware reads each line before it is written) or streaming stores (around the cache, no
// read-for-ownership: ordinary ones before the first 64-byte boundary and for the tail, fenced
// before each piece ends), the bound for kernels that stream large outputs.
enum class Stores { kOrdinary, kStreaming };

// dst[i] = src[i] for i < n, split over pool (AVX-512 or AVX2 loads and stores).
void StreamCopy(ThreadPool& pool, float* dst, const float* src, int64_t n,
                Stores stores = Stores::kOrdinary);
// a[i] = b[i] + s * c[i] for i < n, split over pool.
void StreamTriad(ThreadPool& pool, float* a, const float* b, const float* c, float s, int64_t n,
                 Stores stores = Stores::kOrdinary);

enum class FmaIsa { kAvx512, kAvx2 };

// "avx512", "avx2".
std::string_view FmaIsaName(FmaIsa isa);
// True when this CPU runs the loop for `isa` (AVX-512F; AVX2 and FMA).
bool FmaIsaSupported(FmaIsa isa);
// The widest supported ISA (kAvx2 when neither is, which must then not be run).
FmaIsa BestFmaIsa();
// Floating-point operations of one iteration of the loop: independent accumulators x lanes x 2
// (16 x 16 x 2 for AVX-512, 12 x 8 x 2 for AVX2, whose 16 registers hold 12 plus constants).
double FmaFlopsPerIteration(FmaIsa isa);
struct FmaTiming {
  double wall_seconds = 0;  // from the release of all threads until the last one finished
  double cpu_seconds = 0;   // the threads' CPU time, summed (time actually on a core)
};
// `threads` threads (the caller and threads-1 new ones, released together) each run
// `iterations` iterations of the FMA loop. flops / cpu_seconds is the rate a thread gets while
// it runs: it halves with two threads when they share one core's FMA units (SMT siblings),
// and other load on the machine does not lower it the way it lowers flops / wall_seconds.
FmaTiming TimeFmaLoop(FmaIsa isa, int threads, int64_t iterations);
// Iterations of the loop one thread runs in about `seconds`.
int64_t CalibrateFmaLoop(FmaIsa isa, double seconds);

}  // namespace onemodel::bench
