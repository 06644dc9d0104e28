// Eight double sums side by side over contiguous runs (SumKeepDims's inner loop for eight
// outputs whose reduced elements lie in unit-stride runs: a convolution's bias gradient).
//
//   double acc[8] = {};
//   AddEightRuns(g, 64, 64, acc);   // acc[u] += g[u * 64 + q], q = 0 .. 63 in order
#pragma once

#include <cstdint>

#include "core/kernels/simd_targets.h"

namespace onemodel::ops::internal {

// acc[u] += p[u * chain_step + q * step] for q = 0, 1, ..., m - 1 in that order, u < kCount:
// kCount double sums side by side, each in its own order (the scalar form of them all).
template <int64_t kCount>
void AddRuns(const float* p, int64_t m, int64_t step, int64_t chain_step, double* acc) {
  for (int64_t q = 0; q < m; ++q) {
    for (int64_t u = 0; u < kCount; ++u) acc[u] += p[u * chain_step + q * step];
  }
}

// AddRuns<8>(p, m, 1, row_step, acc): acc[u] += p[u * row_step + q] for q = 0, 1, ..., m - 1
// in that order, each float widened to double, for u < 8, with the scalar loop's bits. Where the
// CPU has AVX-512 or AVX2, eight q at a time: the 8 x 8 block is widened and transposed in
// registers, so one vector addition adds element q of all eight runs and the eight chains wait on
// one latency instead of eight scalar additions each. Runs BestTarget()'s loop.
void AddEightRuns(const float* p, int64_t m, int64_t row_step, double* acc);

// AddEightRuns with `target`'s loop (the tests force each): AVX-512 for kAvx3, AVX2 for
// kAvx2, the scalar loop for kScalar. The CPU must support `target` (TargetSupported).
void AddEightRunsOn(SimdTarget target, const float* p, int64_t m, int64_t row_step, double* acc);

}  // namespace onemodel::ops::internal
