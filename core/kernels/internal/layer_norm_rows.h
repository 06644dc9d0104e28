// LayerNorm's forward in float, the fast kernels' path for rows (docs/kernels.md).
//
// The reference (normalize.h) takes each group's statistics in double, which makes a row of
// 1024 about three times the work of reading and writing it. Here a row's statistics and
// output are float operations in a fixed order, as PyTorch's are float, so the fast kernels
// keep up with memory; the bits are the same on every CPU and however the rows are split over
// threads, and close to the reference's (tested).
//
// For a row x[0, n), with the row's first element s as a shift:
//   Sum(f) = the sum of f(x[i]) over 64 partial sums: element i goes to partial i mod 64,
//            each partial adds its elements in order from +0; then q[j] = (p[j] + p[16 + j]) +
//            (p[32 + j] + p[48 + j]) for j < 16, and q's 16 values are added in halves
//            (q[j] + q[j + 8], then j + 4, j + 2, j + 1)
//   d(x) = (x - s) - m, where m = Sum(x - s) / n (the mean of the shifted row)
//   var = Sum(d(x)^2) / n       rstd = 1 / sqrt(var + eps), taken in double, rounded to float
//   xhat = d(x) * rstd          y = xhat * scale + bias (scale 1 and bias 0 when absent)
// Every operation is one float operation, none fused. The shift keeps rows whose mean is large
// against their spread accurate: x - s is exact for elements within a factor of 2 of s, and m
// is small. Rows whose elements reach half of the float range can overflow here where the
// reference's doubles do not.
#pragma once

#include <cstdint>

#include "core/kernels/internal/normalize.h"
#include "core/kernels/kernels.h"

namespace onemodel::internal {

// Whether `a` is LayerNorm-shaped: centred, statistics computed, one block per group, scale
// and bias per element or absent, no running statistics.
bool FloatRowsApply(const NormForwardArgs& a);

// The forward of rows [begin, end) of such an `a` (writes y, and xhat and rstd when given);
// stops early once the thread's CancelToken is cancelled. `stream`: y and xhat are written with
// streaming stores (the same bits; fenced before return).
void NormalizeRowsFloat(const NormForwardArgs& a, int64_t begin, int64_t end, bool stream);
// The same on one instruction set (tests run each the CPU supports).
void NormalizeRowsFloatOn(NormIsa isa, const NormForwardArgs& a, int64_t begin, int64_t end,
                          bool stream);

}  // namespace onemodel::internal
