// The AdamW update of one parameter tensor (ops::AdamWStep's arithmetic): one pass over the
// parameter, its gradient and its moments, SIMD (Highway, the widest target this CPU has) and
// split over a thread pool. Every element gets the bits of the scalar definition below
// whatever the target, the split or its place in a vector (adamw_simd.cc is built with
// -ffp-contract=off, so no multiply and add are fused).
//
//   AdamWUpdate(ThreadPool::Shared(), scalars, n, p, g, m, v, /*vmax=*/nullptr);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/kernels/thread_pool.h"

namespace onemodel {

// The step's scalars as floats (computed in double by the caller, as torch does in Python).
struct AdamWScalars {
  float decay, beta1, one_minus_beta1, beta2, one_minus_beta2, neg_step_size, bc2_sqrt, eps;
};

// One element: m = m * beta1 + (1 - beta1) * g, v = v * beta2 + (1 - beta2) * g * g (then
// vmax = max(vmax, v) when given, used in v's place), p = p * decay + neg_step_size * (m /
// (sqrt(v) / bc2_sqrt + eps)), each product and sum rounded to float in this order.
inline void AdamWElement(const AdamWScalars& s, float& p, float g, float& m, float& v,
                         float* vmax) {
  const float pi = p * s.decay;
  const float mi = m * s.beta1 + s.one_minus_beta1 * g;
  float vi = v * s.beta2 + s.one_minus_beta2 * g * g;
  m = mi;
  v = vi;
  if (vmax) {
    vi = std::max(*vmax, vi);
    *vmax = vi;
  }
  const float denom = std::sqrt(vi) / s.bc2_sqrt + s.eps;
  p = pi + s.neg_step_size * (mi / denom);
}

// AdamWElement for elements [0, n) of p, g, m, v (and vmax unless null), contiguous and not
// overlapping, on `pool` in chunks of about 64K elements.
void AdamWUpdate(ThreadPool& pool, const AdamWScalars& s, int64_t n, float* p, const float* g,
                 float* m, float* v, float* vmax);

}  // namespace onemodel
