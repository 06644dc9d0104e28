#include "core/kernels/internal/normalize.h"

#include <immintrin.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/common/cancellation.h"
#include "core/kernels/internal/prefetch.h"

namespace onemodel::internal {
namespace {

constexpr int kLanes = 8;
using Lanes = std::array<double, kLanes>;

// The lanes of s (a Lanes or a Vec8d) added in the header's fixed tree.
template <typename S>
double Total(const S& s) {
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
[[gnu::always_inline]] inline double SumGroup(const NormGroups& l, int64_t k, const Term& term) {
  Lanes s{};
  for (int64_t b = 0; b < l.blocks; ++b) {
    const int64_t at = k * l.group_stride + b * l.block_stride;
    AddBlock(s, l.block, [&](int64_t i) { return term(at, i); });
  }
  return Total(s);
}

// Eight doubles or floats: lane j of a Vec8d is lane j of a Lanes. Each operation on them is
// the scalar double operation lane by lane (-ffp-contract=off: none is fused), so a vector
// form gives the scalar form's bits on every instruction set, only fewer instructions.
typedef double Vec8d __attribute__((vector_size(64)));
typedef float Vec8f __attribute__((vector_size(32)));

using Isa = NormIsa;

// For lambdas: inlined into the target-specific callers, so they get those callers' registers.
#define ONEMODEL_INLINE __attribute__((always_inline))

// x[0..8) as doubles. GCC 12 lowers __builtin_convertvector of 8 floats in four instructions
// whatever the target, so for GCC the AVX-512 set (the only one using Vec8d, below) says it in
// one. Inline assembly, not intrinsics: this is inlined into the target-specific entry point
// only after the templates between are, which the intrinsics' target checks refuse. Clang
// (which checks an asm operand's size against the template's own target) lowers the
// conversion well by itself.
template <Isa kIsa>
[[gnu::always_inline]] inline Vec8d Load8(const float* x) {
  Vec8f f;
  std::memcpy(&f, x, sizeof f);
#ifndef __clang__
  if constexpr (kIsa == Isa::kAvx512) {
    Vec8d v;
    asm("vcvtps2pd %1, %0" : "=v"(v) : "v"(f));
    return v;
  }
#endif
  return __builtin_convertvector(f, Vec8d);
}

// Stores v at y, around the cache when kStream (y 16-byte aligned), else an ordinary store.
template <bool kStream>
[[gnu::always_inline]] inline void Store8(const Vec8d& v, float* y) {
  const Vec8f f = __builtin_convertvector(v, Vec8f);
  if constexpr (kStream) {
    __m128 half[2];
    std::memcpy(half, &f, sizeof f);
    _mm_stream_ps(y, half[0]);
    _mm_stream_ps(y + 4, half[1]);
  } else {
    std::memcpy(y, &f, sizeof f);
  }
}

// totals[r] = the total of f(r, x) over group k[r]'s elements for r < kN (f takes and returns
// a double or a Vec8d), each in the order of the header. kN groups in one loop: their
// additions are kN independent chains, where one group alone keeps the CPU waiting on each.
template <Isa kIsa, int kN, typename F>
[[gnu::always_inline]] inline void SumsOf(const NormGroups& l, const float* x,
                                          const int64_t (&k)[kN], const F& f,
                                          double (&totals)[kN]) {
  Vec8d acc[kN] = {};
  for (int64_t b = 0; b < l.blocks; ++b) {
    const float* at[kN];
    for (int r = 0; r < kN; ++r) at[r] = x + k[r] * l.group_stride + b * l.block_stride;
    int64_t i = 0;
    for (; i + kLanes <= l.block; i += kLanes) {
#pragma GCC unroll 2
      for (int r = 0; r < kN; ++r) acc[r] += f(r, Load8<kIsa>(at[r] + i));
    }
    for (; i < l.block; ++i) {
      for (int r = 0; r < kN; ++r) acc[r][i % kLanes] += f(r, double{at[r][i]});
    }
  }
  for (int r = 0; r < kN; ++r) totals[r] = Total(acc[r]);
}

// Where WriteBlock reads x, scale and bias: floats, scale and bias stepping by kScaleStep and
// kBiasStep per element (1: one per element, 0: one for the block, or the constant 1 or 0 when
// absent). X, Scale and Bias give element i as a double, the *8 forms elements [i, i + 8).
template <Isa kIsa, int kScaleStep, int kBiasStep>
struct FloatRow {
  [[gnu::always_inline]] FloatRow(const float* x, const float* scale, const float* bias)
      : x(x),
        scale(scale),
        bias(bias),
        scale0(Vec8d{} + double{scale[0]}),
        bias0(Vec8d{} + double{bias[0]}) {}
  const float *x, *scale, *bias;
  Vec8d scale0, bias0;  // scale[0] and bias[0] in every lane
  [[gnu::always_inline]] double X(int64_t i) const { return x[i]; }
  [[gnu::always_inline]] double Scale(int64_t i) const { return scale[i * kScaleStep]; }
  [[gnu::always_inline]] double Bias(int64_t i) const { return bias[i * kBiasStep]; }
  [[gnu::always_inline]] Vec8d X8(int64_t i) const { return Load8<kIsa>(x + i); }
  [[gnu::always_inline]] Vec8d Scale8(int64_t i) const {
    return kScaleStep ? Load8<kIsa>(scale + i) : scale0;
  }
  [[gnu::always_inline]] Vec8d Bias8(int64_t i) const {
    return kBiasStep ? Load8<kIsa>(bias + i) : bias0;
  }
  [[gnu::always_inline]] void Ahead(int64_t) const {}
};

// The same, from x, scale and bias already converted to doubles (one per element each). Ahead(i)
// asks for ahead[i]'s line (a row read later; null: none) to be fetched into L1, so that the
// reads of memory overlap the writes.
struct DoubleRow {
  const double *x, *scale, *bias;
  const float* ahead;
  [[gnu::always_inline]] void Ahead(int64_t i) const {
    if (ahead) PrefetchLine(ahead + i);
  }
  [[gnu::always_inline]] double X(int64_t i) const { return x[i]; }
  [[gnu::always_inline]] double Scale(int64_t i) const { return scale[i]; }
  [[gnu::always_inline]] double Bias(int64_t i) const { return bias[i]; }
  [[gnu::always_inline]] static Vec8d At(const double* p) {
    Vec8d v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  [[gnu::always_inline]] Vec8d X8(int64_t i) const { return At(x + i); }
  [[gnu::always_inline]] Vec8d Scale8(int64_t i) const { return At(scale + i); }
  [[gnu::always_inline]] Vec8d Bias8(int64_t i) const { return At(bias + i); }
};

// y (and xhat) of one block of n elements read from `row` (a FloatRow or DoubleRow): xhat =
// (x - mean) * rstd, y = xhat * scale + bias. kStream: the outputs are written with streaming
// stores from y's first 16-byte boundary (ordinary ones before and for the tail); the caller
// fences.
template <Isa kIsa, bool kXhat, bool kStream, typename Row>
[[gnu::always_inline]] inline void WriteBlock(const Row& row, int64_t n, double mean, double rstd,
                                              float* y, float* xhat) {
  const auto one = [&](int64_t i) ONEMODEL_INLINE {
    const double h = (row.X(i) - mean) * rstd;
    if constexpr (kXhat) xhat[i] = static_cast<float>(h);
    y[i] = static_cast<float>(h * row.Scale(i) + row.Bias(i));
  };
  int64_t i = 0;
  if constexpr (kIsa != Isa::kAvx512) {
    // Narrower sets: GCC vectorizes the scalar loop better than it splits a Vec8d, and they
    // write with ordinary stores.
    for (; i < n; ++i) one(i);
    return;
  }
  if constexpr (kStream) {
    if (kXhat && (reinterpret_cast<uintptr_t>(y) - reinterpret_cast<uintptr_t>(xhat)) % 16 != 0) {
      // y and xhat cannot both reach a 16-byte boundary at one i: ordinary stores.
      return WriteBlock<kIsa, kXhat, false>(row, n, mean, rstd, y, xhat);
    }
    for (; i < n && reinterpret_cast<uintptr_t>(y + i) % 16 != 0; ++i) one(i);
  }
  for (; i + kLanes <= n; i += kLanes) {
    row.Ahead(i);
    const Vec8d h = (row.X8(i) - mean) * rstd;
    const Vec8d yv = h * row.Scale8(i) + row.Bias8(i);
    if constexpr (kXhat) Store8<kStream>(h, xhat + i);
    Store8<kStream>(yv, y + i);
  }
  for (; i < n; ++i) one(i);
}

// WriteBlock with the steps chosen at run time.
template <Isa kIsa, bool kXhat, bool kStream>
[[gnu::always_inline]] inline void WriteAs(bool scale_steps, bool bias_steps, const float* x,
                                           int64_t n, double mean, double rstd, const float* scale,
                                           const float* bias, float* y, float* xhat) {
  if (scale_steps && bias_steps) {
    return WriteBlock<kIsa, kXhat, kStream>(FloatRow<kIsa, 1, 1>{x, scale, bias}, n, mean, rstd, y,
                                            xhat);
  }
  if (scale_steps) {
    return WriteBlock<kIsa, kXhat, kStream>(FloatRow<kIsa, 1, 0>{x, scale, bias}, n, mean, rstd, y,
                                            xhat);
  }
  if (bias_steps) {
    return WriteBlock<kIsa, kXhat, kStream>(FloatRow<kIsa, 0, 1>{x, scale, bias}, n, mean, rstd, y,
                                            xhat);
  }
  WriteBlock<kIsa, kXhat, kStream>(FloatRow<kIsa, 0, 0>{x, scale, bias}, n, mean, rstd, y, xhat);
}

// WriteBlock with the steps, xhat and streaming chosen at run time.
template <Isa kIsa>
[[gnu::always_inline]] inline void Write(bool scale_steps, bool bias_steps, bool stream,
                                         const float* x, int64_t n, double mean, double rstd,
                                         const float* scale, const float* bias, float* y,
                                         float* xhat) {
  if (stream) {
    xhat ? WriteAs<kIsa, true, true>(scale_steps, bias_steps, x, n, mean, rstd, scale, bias, y, xhat)
         : WriteAs<kIsa, false, true>(scale_steps, bias_steps, x, n, mean, rstd, scale, bias, y,
                                      xhat);
  } else {
    xhat ? WriteAs<kIsa, true, false>(scale_steps, bias_steps, x, n, mean, rstd, scale, bias, y,
                                      xhat)
         : WriteAs<kIsa, false, false>(scale_steps, bias_steps, x, n, mean, rstd, scale, bias, y,
                                       xhat);
  }
}

// Group k's rstd from its mean and variance (count elements); writes it to a.rstd and updates
// the running statistics when the call asks for them.
[[gnu::always_inline]] inline double Statistics(const NormForwardArgs& a, int64_t k, double mean,
                                                double var, double count) {
  const double rstd = 1.0 / std::sqrt(var + double{a.eps});
  if (a.rstd) a.rstd[k] = static_cast<float>(rstd);
  if (a.running_mean) {
    const double m = a.momentum;
    a.running_mean[k] = static_cast<float>(m * mean + (1 - m) * a.running_mean[k]);
    a.running_var[k] =
        static_cast<float>(m * var * count / (count - 1) + (1 - m) * a.running_var[k]);
  }
  return rstd;
}

// Rows of up to this many elements go through a RowCache.
constexpr int64_t kCachedRow = 1024;

// One thread's doubles for ForwardCached: the row being written, the next row, scale and bias
// (32 KiB: with the next row's floats it stays in a 48 KiB L1).
struct RowCache {
  alignas(64) double rows[2][kCachedRow];
  alignas(64) double scale[kCachedRow];
  alignas(64) double bias[kCachedRow];
};

// Sums over n elements, in the order of the header: with kVar, var = the sum of (row[i] -
// mean)^2; with kNext, next_sum = the sum of next[i], each converted into next_row on the way.
template <Isa kIsa, bool kVar, bool kNext>
[[gnu::always_inline]] inline void CachedSums(const double* row, double mean, const float* next,
                                              double* next_row, int64_t n, double& var,
                                              double& next_sum) {
  Vec8d var_lanes{}, sum_lanes{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    if constexpr (kNext) {
      const Vec8d v = Load8<kIsa>(next + i);
      std::memcpy(next_row + i, &v, sizeof v);
      sum_lanes += v;
    }
    if constexpr (kVar) {
      const Vec8d d = DoubleRow::At(row + i) - mean;
      var_lanes += d * d;
    }
  }
  for (; i < n; ++i) {
    if constexpr (kNext) {
      next_row[i] = next[i];
      sum_lanes[i % kLanes] += next_row[i];
    }
    if constexpr (kVar) {
      const double d = row[i] - mean;
      var_lanes[i % kLanes] += d * d;
    }
  }
  var = Total(var_lanes);
  next_sum = Total(sum_lanes);
}

// The forward of rows [begin, end) (begin < end) of a centred layout of single blocks of at most
// kCachedRow elements, scale and bias per element or absent, statistics computed (LayerNorm).
// Each row is converted to doubles once, into the cache, in the loop that takes the previous
// row's variance; that variance and the write read the doubles, and scale and bias are
// converted once per call. The operations and their order are Forward's, so are the bits.
template <Isa kIsa, bool kXhat, bool kStream>
[[gnu::always_inline]] inline void ForwardCached(const NormForwardArgs& a, int64_t begin,
                                                 int64_t end, RowCache& c) {
  const NormGroups& l = a.layout;
  const int64_t n = l.block;
  const double count = static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    c.scale[i] = a.scale ? a.scale[i] : 1.0;
    c.bias[i] = a.bias ? a.bias[i] : 0.0;
  }
  const CancelToken* cancel = CurrentCancelToken();
  double next_sum, unused;
  CachedSums<kIsa, false, true>(nullptr, 0, a.x + begin * l.group_stride, c.rows[0], n, unused,
                                next_sum);
  for (int64_t k = begin; k < end && !Cancelled(cancel); ++k) {
    const double* row = c.rows[(k - begin) % 2];
    const double mean = next_sum / count;
    double var;
    if (k + 1 < end) {
      CachedSums<kIsa, true, true>(row, mean, a.x + (k + 1) * l.group_stride,
                                   c.rows[(k - begin + 1) % 2], n, var, next_sum);
    } else {
      CachedSums<kIsa, true, false>(row, mean, nullptr, nullptr, n, var, unused);
    }
    var /= count;
    const double rstd = Statistics(a, k, mean, var, count);
    const int64_t at = k * l.group_stride;
    // Row k + 1 is in the cache, k + 2 converted next: kNormRowsAhead (3) is the first to fetch.
    const float* ahead =
        k + kNormRowsAhead < end ? a.x + (k + kNormRowsAhead) * l.group_stride : nullptr;
    WriteBlock<kIsa, kXhat, kStream>(DoubleRow{row, c.scale, c.bias, ahead}, n, mean, rstd,
                                     a.y + at, kXhat ? a.xhat + at : nullptr);
  }
}

// The forward of groups [begin, end), as NormalizeGroups.
template <Isa kIsa>
[[gnu::always_inline]] inline void Forward(const NormForwardArgs& a, int64_t begin, int64_t end,
                                           bool stream) {
  const NormGroups& l = a.layout;
  const double count = static_cast<double>(l.blocks * l.block);
  const float one = 1, zero = 0;
  const CancelToken* cancel = CurrentCancelToken();
  const float* x = a.x;
  // Group k's sum of squared deviations is taken in one loop with group k + 1's sum (its
  // mean's), so each pass has two chains of additions and reads one new group.
  const auto deviation_or_sum = [](double mean) {
    return [mean](int r, auto v) ONEMODEL_INLINE {
      const auto d = v - mean;
      return r == 0 ? d * d : v;
    };
  };
  const auto sum = [](int, auto v) ONEMODEL_INLINE { return v; };
  if constexpr (kIsa == Isa::kAvx512) {
    if (a.center && !a.mean && l.blocks == 1 && !l.affine_per_group && l.block <= kCachedRow &&
        begin < end) {
      RowCache cache;
      if (stream) {
        a.xhat ? ForwardCached<kIsa, true, true>(a, begin, end, cache)
               : ForwardCached<kIsa, false, true>(a, begin, end, cache);
        return _mm_sfence();
      }
      a.xhat ? ForwardCached<kIsa, true, false>(a, begin, end, cache)
             : ForwardCached<kIsa, false, false>(a, begin, end, cache);
      return;
    }
  }
  double next_sum[1] = {0};
  if (kIsa == Isa::kAvx512 && !a.mean && a.center && begin < end) {
    SumsOf<kIsa, 1>(l, x, {begin}, sum, next_sum);
  }
  for (int64_t k = begin; k < end && !Cancelled(cancel); ++k) {
    double mean = 0, var;
    if (a.mean) {
      mean = a.mean[k];
      var = a.var[k];
    } else if (kIsa != Isa::kAvx512 && a.center) {
      // Narrower sets: GCC keeps a Lanes in registers there, not a Vec8d.
      mean = SumGroup(l, k, [x](int64_t at, int64_t i) { return double{x[at + i]}; }) / count;
      var = SumGroup(l, k,
                     [x, mean](int64_t at, int64_t i) {
                       const double d = x[at + i] - mean;
                       return d * d;
                     }) /
            count;
    } else if (a.center) {
      mean = next_sum[0] / count;
      if (k + 1 < end) {
        double t[2];
        SumsOf<kIsa, 2>(l, x, {k, k + 1}, deviation_or_sum(mean), t);
        var = t[0] / count;
        next_sum[0] = t[1];
      } else {
        double t[1];
        SumsOf<kIsa, 1>(l, x, {k}, deviation_or_sum(mean), t);
        var = t[0] / count;
      }
    } else {
      double t[1];
      SumsOf<kIsa, 1>(l, x, {k}, [](int, auto v) ONEMODEL_INLINE { return v * v; }, t);
      var = t[0] / count;
    }
    const double rstd = Statistics(a, k, mean, var, count);
    const float* scale = a.scale ? (l.affine_per_group ? a.scale + k : a.scale) : &one;
    const float* bias = a.bias ? (l.affine_per_group ? a.bias + k : a.bias) : &zero;
    const bool scale_steps = a.scale && !l.affine_per_group;
    const bool bias_steps = a.bias && !l.affine_per_group;
    for (int64_t b = 0; b < l.blocks; ++b) {
      const int64_t at = k * l.group_stride + b * l.block_stride;
      Write<kIsa>(scale_steps, bias_steps, stream, x + at, l.block, mean, rstd, scale, bias,
                  a.y + at, a.xhat ? a.xhat + at : nullptr);
    }
  }
  if (stream) _mm_sfence();
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

// The backward of groups [begin, end), as NormalizeBackwardGroups.
template <Isa>
[[gnu::always_inline]] inline void Backward(const NormBackwardArgs& a, int64_t begin,
                                            int64_t end) {
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

// Each entry point is compiled for AVX-512, AVX2 and the baseline: the same operations in the
// same order on each (this file is built with -ffp-contract=off, so none fuses a multiply and
// an add), only wider registers.
[[gnu::target("avx512f")]] void ForwardAvx512(const NormForwardArgs& a, int64_t begin,
                                             int64_t end, bool stream) {
  Forward<Isa::kAvx512>(a, begin, end, stream);
}
[[gnu::target("avx2")]] void ForwardAvx2(const NormForwardArgs& a, int64_t begin, int64_t end,
                                         bool stream) {
  Forward<Isa::kAvx2>(a, begin, end, stream);
}
[[gnu::target("avx512f")]] void BackwardAvx512(const NormBackwardArgs& a, int64_t begin,
                                              int64_t end) {
  Backward<Isa::kAvx512>(a, begin, end);
}
[[gnu::target("avx2")]] void BackwardAvx2(const NormBackwardArgs& a, int64_t begin, int64_t end) {
  Backward<Isa::kAvx2>(a, begin, end);
}

}  // namespace

NormIsa BestNormIsa() {
  static const NormIsa best = NormIsaSupported(NormIsa::kAvx512) ? NormIsa::kAvx512
                              : NormIsaSupported(NormIsa::kAvx2)  ? NormIsa::kAvx2
                                                                  : NormIsa::kBase;
  return best;
}

bool NormIsaSupported(NormIsa isa) {
  switch (isa) {
    case NormIsa::kAvx512:
      return __builtin_cpu_supports("avx512f");
    case NormIsa::kAvx2:
      return __builtin_cpu_supports("avx2");
    case NormIsa::kBase:
      break;
  }
  return true;
}

void NormalizeGroupsOn(NormIsa isa, const NormForwardArgs& a, int64_t begin, int64_t end,
                       bool stream) {
  switch (isa) {
    case NormIsa::kAvx512:
      return ForwardAvx512(a, begin, end, stream);
    case NormIsa::kAvx2:
      return ForwardAvx2(a, begin, end, stream);
    case NormIsa::kBase:
      break;
  }
  Forward<Isa::kBase>(a, begin, end, stream);
}

void NormalizeBackwardGroupsOn(NormIsa isa, const NormBackwardArgs& a, int64_t begin,
                               int64_t end) {
  switch (isa) {
    case NormIsa::kAvx512:
      return BackwardAvx512(a, begin, end);
    case NormIsa::kAvx2:
      return BackwardAvx2(a, begin, end);
    case NormIsa::kBase:
      break;
  }
  Backward<Isa::kBase>(a, begin, end);
}

void NormalizeGroups(const NormForwardArgs& a, int64_t begin, int64_t end, bool stream) {
  NormalizeGroupsOn(BestNormIsa(), a, begin, end, stream);
}

void NormalizeBackwardGroups(const NormBackwardArgs& a, int64_t begin, int64_t end) {
  NormalizeBackwardGroupsOn(BestNormIsa(), a, begin, end);
}

}  // namespace onemodel::internal
