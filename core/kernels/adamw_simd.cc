// AdamWUpdate (adamw.h): Highway rows, one per target, picked by the CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/adamw_simd.cc"
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <algorithm>
#include <cstdint>

#include "core/kernels/adamw.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements [0, n) as AdamWElement: whole vectors, then the tail one element at a time.
template <bool kAmsgrad>
void AdamWRowT(const AdamWScalars& s, int64_t n, float* HWY_RESTRICT p,
               const float* HWY_RESTRICT g, float* HWY_RESTRICT m, float* HWY_RESTRICT v,
               float* HWY_RESTRICT vmax) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto decay = hn::Set(d, s.decay), beta1 = hn::Set(d, s.beta1),
             one_minus_beta1 = hn::Set(d, s.one_minus_beta1), beta2 = hn::Set(d, s.beta2),
             one_minus_beta2 = hn::Set(d, s.one_minus_beta2),
             neg_step_size = hn::Set(d, s.neg_step_size), bc2_sqrt = hn::Set(d, s.bc2_sqrt),
             eps = hn::Set(d, s.eps);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto gi = hn::LoadU(d, g + i);
    const auto pi = hn::Mul(hn::LoadU(d, p + i), decay);
    const auto mi = hn::Add(hn::Mul(hn::LoadU(d, m + i), beta1), hn::Mul(one_minus_beta1, gi));
    auto vi = hn::Add(hn::Mul(hn::LoadU(d, v + i), beta2),
                      hn::Mul(hn::Mul(one_minus_beta2, gi), gi));
    hn::StoreU(mi, d, m + i);
    hn::StoreU(vi, d, v + i);
    if constexpr (kAmsgrad) {
      const auto old = hn::LoadU(d, vmax + i);
      vi = hn::IfThenElse(hn::Lt(old, vi), vi, old);  // std::max(old, vi), NaNs included
      hn::StoreU(vi, d, vmax + i);
    }
    const auto denom = hn::Add(hn::Div(hn::Sqrt(vi), bc2_sqrt), eps);
    hn::StoreU(hn::Add(pi, hn::Mul(neg_step_size, hn::Div(mi, denom))), d, p + i);
  }
  for (; i < n; ++i) AdamWElement(s, p[i], g[i], m[i], v[i], kAmsgrad ? vmax + i : nullptr);
}

void AdamWRow(const AdamWScalars& s, int64_t n, float* p, const float* g, float* m, float* v,
              float* vmax) {
  vmax ? AdamWRowT<true>(s, n, p, g, m, v, vmax) : AdamWRowT<false>(s, n, p, g, m, v, vmax);
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel {
HWY_EXPORT(AdamWRow);

void AdamWUpdate(ThreadPool& pool, const AdamWScalars& s, int64_t n, float* p, const float* g,
                 float* m, float* v, float* vmax) {
  constexpr int64_t kGrain = int64_t{1} << 16;
  const auto row = [](auto&&... args) { HWY_DYNAMIC_DISPATCH(AdamWRow)(args...); };
  const int64_t tasks = std::min<int64_t>(int64_t{pool.threads()} * 2, (n + kGrain - 1) / kGrain);
  if (tasks <= 1) return row(s, n, p, g, m, v, vmax);
  pool.ParallelFor(tasks, [&](int64_t t) {
    // Chunk bounds on multiples of 16 elements, so every vector but the last is whole.
    const int64_t begin = n * t / tasks / 16 * 16;
    const int64_t end = t + 1 == tasks ? n : n * (t + 1) / tasks / 16 * 16;
    row(s, end - begin, p + begin, g + begin, m + begin, v + begin, vmax ? vmax + begin : nullptr);
  });
}
}  // namespace onemodel
#endif
