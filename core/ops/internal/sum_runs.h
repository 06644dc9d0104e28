// Eight double sums side by side over contiguous runs (SumKeepDims's inner loop for eight
// outputs whose reduced elements lie in unit-stride runs: a convolution's bias gradient).
//
//   double acc[8] = {};
//   AddEightRuns(g, 64, 64, acc);   // acc[u] += g[u * 64 + q], q = 0 .. 63 in order
#pragma once

#include <cstdint>

namespace onemodel::ops::internal {

// acc[u] += p[u * row_step + q] for q = 0, 1, ..., m - 1 in that order, each float widened to
// double, for u < 8: the scalar loop's additions and bits. Where the CPU has AVX-512 or AVX2,
// eight q at a time: the 8 x 8 block is widened and transposed in registers, so one vector
// addition adds element q of all eight runs and the eight chains wait on one latency instead
// of eight scalar additions each.
void AddEightRuns(const float* p, int64_t m, int64_t row_step, double* acc);

// The instruction sets AddEightRuns picks from (the best the CPU has), for the tests.
enum class SumIsa { kBase, kAvx2, kAvx512 };
bool SumIsaSupported(SumIsa isa);
// AddEightRuns with `isa`'s loop, which must be supported.
void AddEightRunsOn(SumIsa isa, const float* p, int64_t m, int64_t row_step, double* acc);

}  // namespace onemodel::ops::internal
