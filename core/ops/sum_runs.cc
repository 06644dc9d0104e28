#include "core/ops/internal/sum_runs.h"

#include <cstring>

namespace onemodel::ops::internal {
namespace {

typedef double Vec8d __attribute__((vector_size(64)));
typedef float Vec8f __attribute__((vector_size(32)));

// The vector form, inlined into each target's entry point (GCC vector extensions: each
// operation lane by lane, so the additions are the scalar ones).
[[gnu::always_inline]] inline void AddBlocks(const float* p, int64_t m, int64_t row_step,
                                             double* acc) {
  Vec8d sum;
  std::memcpy(&sum, acc, sizeof sum);
  int64_t q = 0;
  for (; q + 8 <= m; q += 8) {
    Vec8d r[8];  // r[u][j]: element q + j of run u
    for (int u = 0; u < 8; ++u) {
      Vec8f f;
      std::memcpy(&f, p + u * row_step + q, sizeof f);
      r[u] = __builtin_convertvector(f, Vec8d);
    }
    // Transposed in three rounds of two-input shuffles: c[j][u] = r[u][j].
    Vec8d a[8], b[8];
    for (int u = 0; u < 8; u += 2) {
      a[u] = __builtin_shufflevector(r[u], r[u + 1], 0, 8, 2, 10, 4, 12, 6, 14);
      a[u + 1] = __builtin_shufflevector(r[u], r[u + 1], 1, 9, 3, 11, 5, 13, 7, 15);
    }
    for (int h = 0; h < 8; h += 4) {  // rows 0-3, then 4-7
      b[h] = __builtin_shufflevector(a[h], a[h + 2], 0, 1, 8, 9, 4, 5, 12, 13);            // j 0, 4
      b[h + 1] = __builtin_shufflevector(a[h], a[h + 2], 2, 3, 10, 11, 6, 7, 14, 15);      // j 2, 6
      b[h + 2] = __builtin_shufflevector(a[h + 1], a[h + 3], 0, 1, 8, 9, 4, 5, 12, 13);    // 1, 5
      b[h + 3] = __builtin_shufflevector(a[h + 1], a[h + 3], 2, 3, 10, 11, 6, 7, 14, 15);  // 3, 7
    }
    const Vec8d c0 = __builtin_shufflevector(b[0], b[4], 0, 1, 2, 3, 8, 9, 10, 11);
    const Vec8d c4 = __builtin_shufflevector(b[0], b[4], 4, 5, 6, 7, 12, 13, 14, 15);
    const Vec8d c2 = __builtin_shufflevector(b[1], b[5], 0, 1, 2, 3, 8, 9, 10, 11);
    const Vec8d c6 = __builtin_shufflevector(b[1], b[5], 4, 5, 6, 7, 12, 13, 14, 15);
    const Vec8d c1 = __builtin_shufflevector(b[2], b[6], 0, 1, 2, 3, 8, 9, 10, 11);
    const Vec8d c5 = __builtin_shufflevector(b[2], b[6], 4, 5, 6, 7, 12, 13, 14, 15);
    const Vec8d c3 = __builtin_shufflevector(b[3], b[7], 0, 1, 2, 3, 8, 9, 10, 11);
    const Vec8d c7 = __builtin_shufflevector(b[3], b[7], 4, 5, 6, 7, 12, 13, 14, 15);
    sum += c0;
    sum += c1;
    sum += c2;
    sum += c3;
    sum += c4;
    sum += c5;
    sum += c6;
    sum += c7;
  }
  std::memcpy(acc, &sum, sizeof sum);
  AddRuns<8>(p + q, m - q, 1, row_step, acc);  // the last elements, fewer than 8
}

[[gnu::target("avx512f")]] void AddEightAvx512(const float* p, int64_t m, int64_t row_step,
                                               double* acc) {
  AddBlocks(p, m, row_step, acc);
}

[[gnu::target("avx2")]] void AddEightAvx2(const float* p, int64_t m, int64_t row_step,
                                          double* acc) {
  AddBlocks(p, m, row_step, acc);
}

}  // namespace

void AddEightRunsOn(SimdTarget target, const float* p, int64_t m, int64_t row_step, double* acc) {
  switch (target) {
    case SimdTarget::kAvx3:
      return AddEightAvx512(p, m, row_step, acc);
    case SimdTarget::kAvx2:
      return AddEightAvx2(p, m, row_step, acc);
    case SimdTarget::kScalar:
      break;
  }
  AddRuns<8>(p, m, 1, row_step, acc);
}

void AddEightRuns(const float* p, int64_t m, int64_t row_step, double* acc) {
  static const SimdTarget best = BestTarget();
  AddEightRunsOn(best, p, m, row_step, acc);
}

}  // namespace onemodel::ops::internal
