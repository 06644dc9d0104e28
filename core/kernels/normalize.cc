#include "core/kernels/internal/normalize.h"

#include <array>
#include <cmath>

#include "core/common/cancellation.h"

namespace onemodel::internal {
namespace {

constexpr int kLanes = 8;
using Lanes = std::array<double, kLanes>;

double Total(const Lanes& s) {
  return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

// Adds term(i) for i < n to the lanes: i goes to lane i % 8. Branch-free in the body, so the
// compiler vectorizes it across the lanes without changing any lane's order.
template <typename Term>
[[gnu::always_inline]] inline void AddBlock(Lanes& s, int64_t n, const Term& term) {
  Lanes acc = s;  // a local the compiler keeps in registers
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 8
    for (int j = 0; j < kLanes; ++j) acc[static_cast<size_t>(j)] += term(i + j);
  }
  for (; i < n; ++i) acc[static_cast<size_t>(i % kLanes)] += term(i);
  s = acc;
}

// The sum of term(block start, i) over group k's blocks, in the fixed order of the header.
template <typename Term>
double SumGroup(const NormGroups& l, int64_t k, const Term& term) {
  Lanes s{};
  for (int64_t b = 0; b < l.blocks; ++b) {
    const int64_t at = k * l.group_stride + b * l.block_stride;
    AddBlock(s, l.block, [&](int64_t i) { return term(at, i); });
  }
  return Total(s);
}

// y (and xhat) of one block of n elements at x: xhat = (x - mean) * rstd, y = xhat * scale +
// bias, where scale and bias step by kScaleStep and kBiasStep per element (1: one per element,
// 0: one for the block, or the constant 1 or 0 when absent).
template <int kScaleStep, int kBiasStep, bool kXhat>
[[gnu::always_inline]] inline void WriteBlock(const float* x, int64_t n, double mean, double rstd,
                                              const float* scale, const float* bias, float* y,
                                              float* xhat) {
  for (int64_t i = 0; i < n; ++i) {
    const double h = (x[i] - mean) * rstd;
    if constexpr (kXhat) xhat[i] = static_cast<float>(h);
    y[i] = static_cast<float>(h * scale[i * kScaleStep] + bias[i * kBiasStep]);
  }
}

// WriteBlock with the steps and xhat chosen at run time; inlined (into each clone below).
template <bool kXhat>
[[gnu::always_inline]] inline void Write(bool scale_steps, bool bias_steps, const float* x,
                                         int64_t n, double mean, double rstd, const float* scale,
                                         const float* bias, float* y, float* xhat) {
  if (scale_steps && bias_steps)
    return WriteBlock<1, 1, kXhat>(x, n, mean, rstd, scale, bias, y, xhat);
  if (scale_steps) return WriteBlock<1, 0, kXhat>(x, n, mean, rstd, scale, bias, y, xhat);
  if (bias_steps) return WriteBlock<0, 1, kXhat>(x, n, mean, rstd, scale, bias, y, xhat);
  WriteBlock<0, 0, kXhat>(x, n, mean, rstd, scale, bias, y, xhat);
}

// dx of one block: rstd * (g * scale - a - xhat * b), scale as in WriteBlock.
template <bool kPerElement>
[[gnu::always_inline]] inline void GradBlock(const float* g, const float* xhat, int64_t n,
                                             const float* scale, double rstd, double a, double b,
                                             float* dx) {
  for (int64_t i = 0; i < n; ++i) {
    dx[i] =
        static_cast<float>(rstd * (double{g[i]} * scale[kPerElement ? i : 0] - a - xhat[i] * b));
  }
}

}  // namespace

// Compiled once more for AVX2, picked at load time by the CPU: the same operations in the
// same order either way (this file is built with -ffp-contract=off, so no clone fuses a
// multiply and an add), only wider registers. The ThreadSanitizer build compiles one version
// (ONEMODEL_NO_TARGET_CLONES, core/kernels/CMakeLists.txt).
#ifdef ONEMODEL_NO_TARGET_CLONES
#define ONEMODEL_NORMALIZE_CLONES
#else
#define ONEMODEL_NORMALIZE_CLONES __attribute__((target_clones("avx2", "default")))
#endif

ONEMODEL_NORMALIZE_CLONES
void NormalizeGroups(const NormForwardArgs& a, int64_t begin, int64_t end) {
  const NormGroups& l = a.layout;
  const double count = static_cast<double>(l.blocks * l.block);
  const float one = 1, zero = 0;
  const CancelToken* cancel = CurrentCancelToken();
  const float* x = a.x;
  for (int64_t k = begin; k < end && !Cancelled(cancel); ++k) {
    double mean = 0, var;
    if (a.mean) {
      mean = a.mean[k];
      var = a.var[k];
    } else if (a.center) {
      mean = SumGroup(l, k, [x](int64_t at, int64_t i) { return double{x[at + i]}; }) / count;
      var = SumGroup(l, k,
                     [x, mean](int64_t at, int64_t i) {
                       const double d = x[at + i] - mean;
                       return d * d;
                     }) /
            count;
    } else {
      var = SumGroup(l, k, [x](int64_t at, int64_t i) { return double{x[at + i]} * x[at + i]; }) /
            count;
    }
    const double rstd = 1.0 / std::sqrt(var + double{a.eps});
    if (a.rstd) a.rstd[k] = static_cast<float>(rstd);
    if (a.running_mean) {
      const double m = a.momentum;
      a.running_mean[k] = static_cast<float>(m * mean + (1 - m) * a.running_mean[k]);
      a.running_var[k] =
          static_cast<float>(m * var * count / (count - 1) + (1 - m) * a.running_var[k]);
    }
    const float* scale = a.scale ? (l.affine_per_group ? a.scale + k : a.scale) : &one;
    const float* bias = a.bias ? (l.affine_per_group ? a.bias + k : a.bias) : &zero;
    const bool scale_steps = a.scale && !l.affine_per_group;
    const bool bias_steps = a.bias && !l.affine_per_group;
    for (int64_t b = 0; b < l.blocks; ++b) {
      const int64_t at = k * l.group_stride + b * l.block_stride;
      if (a.xhat) {
        Write<true>(scale_steps, bias_steps, x + at, l.block, mean, rstd, scale, bias, a.y + at,
                    a.xhat + at);
      } else {
        Write<false>(scale_steps, bias_steps, x + at, l.block, mean, rstd, scale, bias, a.y + at,
                     nullptr);
      }
    }
  }
}

ONEMODEL_NORMALIZE_CLONES
void NormalizeBackwardGroups(const NormBackwardArgs& a, int64_t begin, int64_t end) {
  const NormGroups& l = a.layout;
  const double count = static_cast<double>(l.blocks * l.block);
  const bool per_element = a.scale && !l.affine_per_group;
  const float one = 1;
  const CancelToken* cancel = CurrentCancelToken();
  const float *g = a.g, *xhat = a.xhat;
  for (int64_t k = begin; k < end && !Cancelled(cancel); ++k) {
    const float* scale = !a.scale ? &one : l.affine_per_group ? a.scale + k : a.scale;
    double mean_gh = 0, mean_ghx = 0;
    if (!a.fixed_stats) {
      if (per_element) {
        if (a.center) {
          mean_gh =
              SumGroup(l, k, [&](int64_t at, int64_t i) { return double{g[at + i]} * scale[i]; }) /
              count;
        }
        mean_ghx = SumGroup(l, k,
                            [&](int64_t at, int64_t i) {
                              return double{g[at + i]} * scale[i] * xhat[at + i];
                            }) /
                   count;
      } else {
        const double s = scale[0];
        if (a.center) {
          mean_gh = SumGroup(l, k, [&](int64_t at, int64_t i) { return g[at + i] * s; }) / count;
        }
        mean_ghx =
            SumGroup(l, k, [&](int64_t at, int64_t i) { return g[at + i] * s * xhat[at + i]; }) /
            count;
      }
    }
    const double rstd = a.rstd[k];
    for (int64_t b = 0; b < l.blocks; ++b) {
      const int64_t at = k * l.group_stride + b * l.block_stride;
      per_element
          ? GradBlock<true>(g + at, xhat + at, l.block, scale, rstd, mean_gh, mean_ghx, a.dx + at)
          : GradBlock<false>(g + at, xhat + at, l.block, scale, rstd, mean_gh, mean_ghx, a.dx + at);
    }
  }
}

}  // namespace onemodel::internal
