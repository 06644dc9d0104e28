#include "core/kernels/internal/layer_norm_rows.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/common/cancellation.h"
#include "core/kernels/internal/prefetch.h"

namespace onemodel::internal {
namespace {

// The header's partial sums: kChains runs of kLanes, element i in partial i mod kStep.
constexpr int kLanes = 16;
constexpr int kChains = 4;
constexpr int kStep = kLanes * kChains;

// W floats, one register on the set that runs it (4: SSE2, 8: AVX2, 16: AVX-512). Every
// operation on them is the float operation lane by lane (-ffp-contract=off), so a row gets the
// same bits whatever W.
template <int W>
struct Floats;
template <>
struct Floats<4> {
  typedef float V __attribute__((vector_size(16)));
};
template <>
struct Floats<8> {
  typedef float V __attribute__((vector_size(32)));
};
template <>
struct Floats<16> {
  typedef float V __attribute__((vector_size(64)));
};

template <int W>
[[gnu::always_inline]] inline typename Floats<W>::V Load(const float* p) {
  typename Floats<W>::V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Stores v at p: around the cache when kStream (p 16-byte aligned), else an ordinary store.
template <int W, bool kStream>
[[gnu::always_inline]] inline void Store(const typename Floats<W>::V& v, float* p) {
  if constexpr (kStream) {
    __m128 quarter[W / 4];
    std::memcpy(quarter, &v, sizeof v);
    for (int t = 0; t < W / 4; ++t) _mm_stream_ps(p + 4 * t, quarter[t]);
  } else {
    std::memcpy(p, &v, sizeof v);
  }
}

// The header's Sum(f) over x[0, n): f takes and returns a float or a Floats<W>::V.
template <int W, typename F>
[[gnu::always_inline]] inline float Sum(const float* x, int64_t n, const F& f) {
  using V = typename Floats<W>::V;
  constexpr int kParts = kLanes / W;  // registers per chain
  V p[kChains][kParts] = {};
  int64_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    for (int c = 0; c < kChains; ++c) {
      for (int j = 0; j < kParts; ++j) p[c][j] += f(Load<W>(x + i + c * kLanes + j * W));
    }
  }
  for (; i < n; ++i) {
    const int r = static_cast<int>(i % kStep);
    p[r / kLanes][r % kLanes / W][r % W] += f(x[i]);
  }
  float q[kLanes];
  for (int j = 0; j < kParts; ++j) {
    const V chains = (p[0][j] + p[1][j]) + (p[2][j] + p[3][j]);
    std::memcpy(q + j * W, &chains, sizeof chains);
  }
  for (int half = kLanes / 2; half > 0; half /= 2) {
    for (int j = 0; j < half; ++j) q[j] += q[j + half];
  }
  return q[0];
}

// y (and xhat) of one row: xhat = ((x - shift) - mean) * rstd, y = xhat * scale + bias, mean
// being the shifted row's. kStream: from y's first 16-byte boundary on, with streaming stores
// (ordinary ones before and for the tail, and throughout when y and xhat cannot both be
// aligned), and the row `ahead_bytes` after x asked for as it goes (kNormRowsAhead); the
// caller fences.
template <int W, bool kXhat, bool kStream>
[[gnu::always_inline]] inline void WriteRow(const float* x, int64_t n, float shift, float mean,
                                            float rstd, const float* scale, const float* bias,
                                            float* y, float* xhat, uintptr_t ahead_bytes) {
  using V = typename Floats<W>::V;
  const auto one = [&](int64_t i) __attribute__((always_inline)) {
    const float h = ((x[i] - shift) - mean) * rstd;
    if constexpr (kXhat) xhat[i] = h;
    y[i] = h * (scale ? scale[i] : 1.0f) + (bias ? bias[i] : 0.0f);
  };
  int64_t i = 0;
  if constexpr (kStream) {
    if (kXhat && (reinterpret_cast<uintptr_t>(y) - reinterpret_cast<uintptr_t>(xhat)) % 16 != 0) {
      return WriteRow<W, kXhat, false>(x, n, shift, mean, rstd, scale, bias, y, xhat, 0);
    }
    for (; i < n && reinterpret_cast<uintptr_t>(y + i) % 16 != 0; ++i) one(i);
  }
  const V ones = V{} + 1.0f, zeros = V{};
  for (; i + W <= n; i += W) {
    if constexpr (kStream) PrefetchLineAfter(x + i, ahead_bytes);
    const V h = ((Load<W>(x + i) - shift) - mean) * rstd;
    const V yv = h * (scale ? Load<W>(scale + i) : ones) + (bias ? Load<W>(bias + i) : zeros);
    if constexpr (kXhat) Store<W, kStream>(h, xhat + i);
    Store<W, kStream>(yv, y + i);
  }
  for (; i < n; ++i) one(i);
}

template <int W, bool kXhat, bool kStream>
[[gnu::always_inline]] inline void Rows(const NormForwardArgs& a, int64_t begin, int64_t end) {
  const NormGroups& l = a.layout;
  const int64_t n = l.block;
  const float count = static_cast<float>(n);
  const CancelToken* cancel = CurrentCancelToken();
  // Past the last row the hint reads nothing of use, and never faults.
  const uintptr_t ahead_bytes =
      static_cast<uintptr_t>(kNormRowsAhead * l.group_stride) * sizeof(float);
  for (int64_t k = begin; k < end && !Cancelled(cancel); ++k) {
    const int64_t at = k * l.group_stride;
    const float* x = a.x + at;
    const float shift = n > 0 ? x[0] : 0.0f;
    const float mean =
        Sum<W>(
            x, n, [shift](auto v) __attribute__((always_inline)) { return v - shift; }) /
        count;
    const float var = Sum<W>(
                          x, n, [ shift, mean ](auto v) __attribute__((always_inline)) {
                            const auto d = (v - shift) - mean;
                            return d * d;
                          }) /
                      count;
    const float rstd = static_cast<float>(1.0 / std::sqrt(double{var} + double{a.eps}));
    if (a.rstd) a.rstd[k] = rstd;
    WriteRow<W, kXhat, kStream>(x, n, shift, mean, rstd, a.scale, a.bias, a.y + at,
                                kXhat ? a.xhat + at : nullptr, ahead_bytes);
  }
  if constexpr (kStream) _mm_sfence();
}

// Rows with xhat and streaming chosen at run time.
template <int W>
[[gnu::always_inline]] inline void RowsAs(const NormForwardArgs& a, int64_t begin, int64_t end,
                                          bool stream) {
  if (stream) {
    a.xhat ? Rows<W, true, true>(a, begin, end) : Rows<W, false, true>(a, begin, end);
  } else {
    a.xhat ? Rows<W, true, false>(a, begin, end) : Rows<W, false, false>(a, begin, end);
  }
}

// One entry point per instruction set: the same operations in the same order, only wider
// registers.
[[gnu::target("avx512f")]] void RowsAvx512(const NormForwardArgs& a, int64_t begin, int64_t end,
                                           bool stream) {
  RowsAs<16>(a, begin, end, stream);
}
[[gnu::target("avx2")]] void RowsAvx2(const NormForwardArgs& a, int64_t begin, int64_t end,
                                      bool stream) {
  RowsAs<8>(a, begin, end, stream);
}

}  // namespace

bool FloatRowsApply(const NormForwardArgs& a) {
  const NormGroups& l = a.layout;
  return a.center && !a.mean && !a.running_mean && l.blocks == 1 && !l.affine_per_group;
}

void NormalizeRowsFloatOn(NormIsa isa, const NormForwardArgs& a, int64_t begin, int64_t end,
                          bool stream) {
  switch (isa) {
    case NormIsa::kAvx512:
      return RowsAvx512(a, begin, end, stream);
    case NormIsa::kAvx2:
      return RowsAvx2(a, begin, end, stream);
    case NormIsa::kBase:
      break;
  }
  RowsAs<4>(a, begin, end, stream);
}

void NormalizeRowsFloat(const NormForwardArgs& a, int64_t begin, int64_t end, bool stream) {
  NormalizeRowsFloatOn(BestNormIsa(), a, begin, end, stream);
}

}  // namespace onemodel::internal
