#include "bench/machine_peaks.h"

#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/kernels/streaming_stores.h"

namespace onemodel::bench {
namespace {

// The copy and triad loops are written with intrinsics so the compiler can neither turn them
// into memcpy (which switches to non-temporal stores for large sizes) nor pick another width.
// kStream: the destination is written with streaming stores (around the cache, no
// read-for-ownership) from its first 64-byte boundary, ordinary stores before it and for the
// tail, then a store fence so the joining thread sees it; a streaming copy also asks for its
// one input stream ahead, as the kernels' streaming rows with one input do (docs/kernels.md).

// With kStream, the first index from which dst + i is 64-byte aligned (at most n): ordinary
// stores before it. Otherwise 0.
template <bool kStream>
int64_t StreamingStart(const float* dst, int64_t n) {
  return kStream ? ElementsBeforeLine(dst, n) : 0;
}

template <bool kStream>
__attribute__((target("avx512f"))) void Store512(float* p, __m512 v) {
  if constexpr (kStream) {
    _mm512_stream_ps(p, v);
  } else {
    _mm512_storeu_ps(p, v);
  }
}

template <bool kStream>
__attribute__((target("avx"))) void Store256(float* p, __m256 v) {
  if constexpr (kStream) {
    _mm256_stream_ps(p, v);
  } else {
    _mm256_storeu_ps(p, v);
  }
}

template <bool kStream>
__attribute__((target("avx512f"))) void CopyAvx512(float* __restrict dst,
                                                   const float* __restrict src, int64_t n) {
  int64_t i = StreamingStart<kStream>(dst, n);
  for (int64_t j = 0; j < i; ++j) dst[j] = src[j];
  for (; i + 64 <= n; i += 64) {
    for (int line = 0; line < 4; ++line) PrefetchAhead<kStream>(src + i + 16 * line);
    const __m512 v0 = _mm512_loadu_ps(src + i);
    const __m512 v1 = _mm512_loadu_ps(src + i + 16);
    const __m512 v2 = _mm512_loadu_ps(src + i + 32);
    const __m512 v3 = _mm512_loadu_ps(src + i + 48);
    Store512<kStream>(dst + i, v0);
    Store512<kStream>(dst + i + 16, v1);
    Store512<kStream>(dst + i + 32, v2);
    Store512<kStream>(dst + i + 48, v3);
  }
  for (; i < n; ++i) dst[i] = src[i];
  if constexpr (kStream) _mm_sfence();
}

template <bool kStream>
__attribute__((target("avx2"))) void CopyAvx2(float* __restrict dst, const float* __restrict src,
                                              int64_t n) {
  int64_t i = StreamingStart<kStream>(dst, n);
  for (int64_t j = 0; j < i; ++j) dst[j] = src[j];
  for (; i + 32 <= n; i += 32) {
    for (int line = 0; line < 2; ++line) PrefetchAhead<kStream>(src + i + 16 * line);
    const __m256 v0 = _mm256_loadu_ps(src + i);
    const __m256 v1 = _mm256_loadu_ps(src + i + 8);
    const __m256 v2 = _mm256_loadu_ps(src + i + 16);
    const __m256 v3 = _mm256_loadu_ps(src + i + 24);
    Store256<kStream>(dst + i, v0);
    Store256<kStream>(dst + i + 8, v1);
    Store256<kStream>(dst + i + 16, v2);
    Store256<kStream>(dst + i + 24, v3);
  }
  for (; i < n; ++i) dst[i] = src[i];
  if constexpr (kStream) _mm_sfence();
}

template <bool kStream>
__attribute__((target("avx512f"))) void TriadAvx512(float* __restrict a, const float* __restrict b,
                                                    const float* __restrict c, float s, int64_t n) {
  const __m512 vs = _mm512_set1_ps(s);
  int64_t i = StreamingStart<kStream>(a, n);
  for (int64_t j = 0; j < i; ++j) a[j] = b[j] + s * c[j];
  for (; i + 32 <= n; i += 32) {
    const __m512 r0 = _mm512_fmadd_ps(vs, _mm512_loadu_ps(c + i), _mm512_loadu_ps(b + i));
    const __m512 r1 = _mm512_fmadd_ps(vs, _mm512_loadu_ps(c + i + 16), _mm512_loadu_ps(b + i + 16));
    Store512<kStream>(a + i, r0);
    Store512<kStream>(a + i + 16, r1);
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
  if constexpr (kStream) _mm_sfence();
}

template <bool kStream>
__attribute__((target("avx2,fma"))) void TriadAvx2(float* __restrict a, const float* __restrict b,
                                                   const float* __restrict c, float s, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  int64_t i = StreamingStart<kStream>(a, n);
  for (int64_t j = 0; j < i; ++j) a[j] = b[j] + s * c[j];
  for (; i + 16 <= n; i += 16) {
    const __m256 r0 = _mm256_fmadd_ps(vs, _mm256_loadu_ps(c + i), _mm256_loadu_ps(b + i));
    const __m256 r1 = _mm256_fmadd_ps(vs, _mm256_loadu_ps(c + i + 8), _mm256_loadu_ps(b + i + 8));
    Store256<kStream>(a + i, r0);
    Store256<kStream>(a + i + 8, r1);
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
  if constexpr (kStream) _mm_sfence();
}

// acc = acc * mul + add on independent accumulators: enough of them to cover the FMA latency
// on every FMA pipe, all in registers. mul < 1 keeps the values finite and normal.
constexpr int kAvx512Accumulators = 16;
constexpr int kAvx2Accumulators = 12;

__attribute__((target("avx512f"))) float FmaLoopAvx512(int64_t iterations) {
  __m512 acc[kAvx512Accumulators];
  for (int k = 0; k < kAvx512Accumulators; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.01f * k);
  const __m512 mul = _mm512_set1_ps(0.9999999f);
  const __m512 add = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kAvx512Accumulators; ++k) acc[k] = _mm512_fmadd_ps(acc[k], mul, add);
  }
  __m512 sum = acc[0];
  for (int k = 1; k < kAvx512Accumulators; ++k) sum = _mm512_add_ps(sum, acc[k]);
  // Through memory: GCC 12's _mm512_reduce_add_ps warns about an uninitialized temporary.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float FmaLoopAvx2(int64_t iterations) {
  __m256 acc[kAvx2Accumulators];
  for (int k = 0; k < kAvx2Accumulators; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.01f * k);
  const __m256 mul = _mm256_set1_ps(0.9999999f);
  const __m256 add = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kAvx2Accumulators; ++k) acc[k] = _mm256_fmadd_ps(acc[k], mul, add);
  }
  __m256 sum = acc[0];
  for (int k = 1; k < kAvx2Accumulators; ++k) sum = _mm256_add_ps(sum, acc[k]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

float FmaLoop(FmaIsa isa, int64_t iterations) {
  return isa == FmaIsa::kAvx512 ? FmaLoopAvx512(iterations) : FmaLoopAvx2(iterations);
}

// Keeps the loops' results alive.
std::atomic<float> g_sink{0};

bool HasAvx512() { return __builtin_cpu_supports("avx512f"); }

double CpuSeconds(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
double ThreadCpuSeconds() { return CpuSeconds(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace

void WaitUntilProcessIdle() {
  for (int i = 0; i < 50; ++i) {
    const double start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - start < 0.002) return;
  }
}

void StreamCopy(ThreadPool& pool, float* dst, const float* src, int64_t n, Stores stores) {
  const bool stream = stores == Stores::kStreaming;
  const auto loop = HasAvx512() ? (stream ? &CopyAvx512<true> : &CopyAvx512<false>)
                                : (stream ? &CopyAvx2<true> : &CopyAvx2<false>);
  ParallelSplit(pool, n,
                [&](int64_t begin, int64_t end) { loop(dst + begin, src + begin, end - begin); });
}

void StreamTriad(ThreadPool& pool, float* a, const float* b, const float* c, float s, int64_t n,
                 Stores stores) {
  const bool stream = stores == Stores::kStreaming;
  const auto loop = HasAvx512() ? (stream ? &TriadAvx512<true> : &TriadAvx512<false>)
                                : (stream ? &TriadAvx2<true> : &TriadAvx2<false>);
  ParallelSplit(pool, n, [&](int64_t begin, int64_t end) {
    loop(a + begin, b + begin, c + begin, s, end - begin);
  });
}

std::string_view FmaIsaName(FmaIsa isa) { return isa == FmaIsa::kAvx512 ? "avx512" : "avx2"; }

bool FmaIsaSupported(FmaIsa isa) {
  if (isa == FmaIsa::kAvx512) return HasAvx512();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

FmaIsa BestFmaIsa() { return FmaIsaSupported(FmaIsa::kAvx512) ? FmaIsa::kAvx512 : FmaIsa::kAvx2; }

double FmaFlopsPerIteration(FmaIsa isa) {
  return isa == FmaIsa::kAvx512 ? kAvx512Accumulators * 16 * 2 : kAvx2Accumulators * 8 * 2;
}

FmaTiming TimeFmaLoop(FmaIsa isa, int threads, int64_t iterations) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> cpu(static_cast<size_t>(threads), 0.0);
  // Runs the loop, records this thread's CPU seconds in cpu[t].
  const auto run = [&](int t) {
    const double start = ThreadCpuSeconds();
    g_sink.store(FmaLoop(isa, iterations), std::memory_order_relaxed);
    cpu[static_cast<size_t>(t)] = ThreadCpuSeconds() - start;
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      run(t);
    });
  }
  while (ready.load() < threads - 1) std::this_thread::yield();
  FmaTiming timing;
  timing.wall_seconds = SecondsOf([&] {
    go.store(true, std::memory_order_release);
    run(0);
    for (std::thread& w : workers) w.join();
  });
  for (double s : cpu) timing.cpu_seconds += s;
  return timing;
}

int64_t CalibrateFmaLoop(FmaIsa isa, double seconds) {
  int64_t iterations = 1 << 16;
  for (;;) {
    const double s = TimeFmaLoop(isa, 1, iterations).wall_seconds;
    if (s >= 0.005) return std::max<int64_t>(1, static_cast<int64_t>(iterations * seconds / s));
    iterations *= 4;
  }
}

}  // namespace onemodel::bench
