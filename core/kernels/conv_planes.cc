#include "core/kernels/internal/conv_planes.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/common/cancellation.h"

namespace onemodel::internal {
namespace {

constexpr int kLanes = 16;  // floats in a vector
constexpr int kMaxVectors = kConvPlanesMaxPlane / kLanes;

// Per tap and vector of the destination plane: the lane of the source plane (0 to 63) each of
// its lanes reads, the lanes that read one (the others get +0) and those whose source lies in
// the source's vectors 2 and 3.
struct TapTables {
  alignas(64) int32_t lane[kConvPlanesMaxTaps][kMaxVectors][kLanes];
  uint16_t reads[kConvPlanesMaxTaps][kMaxVectors];
  uint16_t high[kConvPlanesMaxTaps][kMaxVectors];
  int taps;
};

// The forward tables (source: an input plane, destination: an output plane) or, with
// `inverse`, the input gradient's (source: an output gradient plane, destination: an input
// plane). A tap moves each input element to at most one output position, so both are
// permutations of the lanes that read.
TapTables TablesOf(const ConvDims& d, const Conv2dParams& p, bool inverse) {
  TapTables t{};
  t.taps = static_cast<int>(d.kh * d.kw);
  for (int64_t i = 0; i < d.kh; ++i) {
    for (int64_t j = 0; j < d.kw; ++j) {
      const int64_t tap = i * d.kw + j;
      for (int64_t oy = 0; oy < d.oh; ++oy) {
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          const int64_t iy = oy * p.stride_h - p.pad_top + i * p.dilation_h;
          const int64_t ix = ox * p.stride_w - p.pad_left + j * p.dilation_w;
          if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) continue;
          const int64_t out_lane = oy * d.ow + ox, in_lane = iy * d.w + ix;
          const int64_t to = inverse ? in_lane : out_lane, from = inverse ? out_lane : in_lane;
          const int64_t v = to / kLanes, bit = to % kLanes;
          t.lane[tap][v][bit] = static_cast<int32_t>(from);
          t.reads[tap][v] = static_cast<uint16_t>(t.reads[tap][v] | 1u << bit);
          if (from >= 2 * kLanes) {
            t.high[tap][v] = static_cast<uint16_t>(t.high[tap][v] | 1u << bit);
          }
        }
      }
    }
  }
  return t;
}

// One pass's operands: `outs` destination planes per image from `ins` source planes, in
// `groups` groups (out_group and in_group channels each); the weight of destination o and
// source i of group g is w[g * w_group + o * wo + i * wi + tap].
struct Pass {
  TapTables t;
  const float* in;
  int64_t ins, in_group, in_plane;
  const float* w;
  int64_t w_group, wo, wi;
  float* out;
  int64_t outs, out_group, out_plane;
  const float* bias;  // forward: added to every output (null: +0); input gradient: none
  bool add_bias;
  int64_t bias_stride;
  int64_t groups;
};

// The lanes of vector q of a plane of `plane` floats that lie inside it.
inline __mmask16 LanesOf(int64_t plane, int q) {
  const int64_t n = std::clamp<int64_t>(plane - q * kLanes, 0, kLanes);
  return static_cast<__mmask16>((uint32_t{1} << n) - 1);
}

// The vectors a plane takes: 1, 2 or 4 (a plane of 3 takes 4, the last all +0).
int VectorsOf(int64_t plane) { return plane <= kLanes ? 1 : plane <= 2 * kLanes ? 2 : 4; }

// A plane in kV vectors, +0 past its end. Masked loads read nothing past the plane.
template <int kV>
struct Plane {
  __m512 v[kV];
};
template <int kV>
[[gnu::target("avx512f")]] inline Plane<kV> LoadPlane(const float* at, int64_t plane) {
  Plane<kV> p;
  for (int q = 0; q < kV; ++q) p.v[q] = _mm512_maskz_loadu_ps(LanesOf(plane, q), at + q * kLanes);
  return p;
}

// Stores lanes of vector q of a plane of `plane` floats at `at` (the plane's start), nothing
// past the plane.
[[gnu::target("avx512f")]] inline void StoreVector(__m512 v, float* at, int64_t plane, int q) {
  _mm512_mask_storeu_ps(at + q * kLanes, LanesOf(plane, q), v);
}

// Vector q of the destination plane of `tap` from source plane p: one lane permutation (two
// and a blend for a source of 4 vectors), +0 where nothing is read.
template <int kV>
[[gnu::target("avx512f")]] inline __m512 Moved(const TapTables& t, int tap, int q,
                                               const Plane<kV>& p) {
  const __m512i lane = _mm512_load_si512(t.lane[tap][q]);
  const __mmask16 reads = t.reads[tap][q];
  if constexpr (kV == 1) {
    return _mm512_maskz_permutexvar_ps(reads, lane, p.v[0]);
  } else if constexpr (kV == 2) {
    return _mm512_maskz_permutex2var_ps(reads, p.v[0], lane, p.v[1]);
  } else {
    const __mmask16 high = t.high[tap][q];
    const __m512 low = _mm512_maskz_permutex2var_ps(reads & ~high, p.v[0], lane, p.v[1]);
    return _mm512_mask_blend_ps(high, low,
                                _mm512_maskz_permutex2var_ps(reads & high, p.v[2], lane, p.v[3]));
  }
}

// The weights of destinations [o, o + kB) of group g, packed as packed[(i * taps + tap) * kB +
// b] (source i, destination o + b): the block's loop then reads them at fixed offsets.
void Pack(const Pass& s, int64_t g, int64_t o, int kB, float* packed) {
  const float* w = s.w + g * s.w_group + o * s.wo;
  for (int64_t i = 0; i < s.in_group; ++i) {
    for (int tap = 0; tap < s.t.taps; ++tap) {
      for (int b = 0; b < kB; ++b) *packed++ = w[b * s.wo + i * s.wi + tap];
    }
  }
}

// kB destination planes of one image from its group's source planes `in` (kV vectors each),
// with the block's packed weights; bias (when added) at destination 0. kTaps: the tap count
// when known at compile time (then the tap loop unrolls and the accumulators stay in
// registers), else 0. One destination vector at a time.
template <int kB, int kTaps, int kV>
[[gnu::target("avx512f")]] inline void Block(const Pass& s, const float* in, const float* packed,
                                             const float* bias, float* out) {
  const int taps = kTaps ? kTaps : s.t.taps;
  const int vectors = VectorsOf(s.out_plane);
  for (int q = 0; q < vectors; ++q) {
    const float* w = packed;
    __m512 acc[kB];
#pragma GCC unroll 16
    for (int b = 0; b < kB; ++b) acc[b] = _mm512_setzero_ps();
    for (int64_t i = 0; i < s.in_group; ++i) {
      const Plane<kV> v = LoadPlane<kV>(in + i * s.in_plane, s.in_plane);
#pragma GCC unroll 9
      for (int tap = 0; tap < taps; ++tap, w += kB) {
        const __m512 moved = Moved<kV>(s.t, tap, q, v);
#pragma GCC unroll 16
        for (int b = 0; b < kB; ++b) acc[b] = _mm512_fmadd_ps(_mm512_set1_ps(w[b]), moved, acc[b]);
      }
    }
#pragma GCC unroll 16
    for (int b = 0; b < kB; ++b) {
      const float bias_b = bias ? bias[b * s.bias_stride] : 0.0f;
      StoreVector(s.add_bias ? _mm512_add_ps(_mm512_set1_ps(bias_b), acc[b]) : acc[b],
                  out + b * s.out_plane, s.out_plane, q);
    }
  }
}

// Block<kB, kTaps, kV> with the tap count (3x3 fixed) and the source's vectors chosen.
template <int kB>
[[gnu::target("avx512f")]] inline void BlockOf(const Pass& s, const float* in, const float* packed,
                                               const float* bias, float* out) {
  const int v = VectorsOf(s.in_plane);
  if (s.t.taps == 9) {
    return v == 1   ? Block<kB, 9, 1>(s, in, packed, bias, out)
           : v == 2 ? Block<kB, 9, 2>(s, in, packed, bias, out)
                    : Block<kB, 9, 4>(s, in, packed, bias, out);
  }
  return v == 1   ? Block<kB, 0, 1>(s, in, packed, bias, out)
         : v == 2 ? Block<kB, 0, 2>(s, in, packed, bias, out)
                  : Block<kB, 0, 4>(s, in, packed, bias, out);
}

// Block<kB> (16, 8, 4, 2 or 1) for images [n0, n1) of group g, destinations [o, o + kB).
template <int kB>
[[gnu::target("avx512f")]] void Images(const Pass& s, int64_t g, int64_t o, const float* packed,
                                       int64_t n0, int64_t n1, const CancelToken* cancel) {
  const int64_t dest = g * s.out_group + o;
  const float* bias = s.bias ? s.bias + dest * s.bias_stride : nullptr;
  for (int64_t n = n0; n < n1 && !Cancelled(cancel); ++n) {
    const float* in = s.in + (n * s.ins + g * s.in_group) * s.in_plane;
    float* out = s.out + (n * s.outs + dest) * s.out_plane;
    BlockOf<kB>(s, in, packed, bias, out);
  }
}

// Every destination plane of images [n0, n1): each group's in blocks of 16, then 8, 4, 2, 1,
// each block's weights packed once.
void Task(const Pass& s, int64_t n0, int64_t n1, const CancelToken* cancel) {
  alignas(64) float packed[kLanes * kConvPlanesMaxInputs];
  for (int64_t g = 0; g < s.groups; ++g) {
    for (int64_t o = 0; o < s.out_group;) {
      int kB = kLanes;
      while (o + kB > s.out_group) kB /= 2;
      Pack(s, g, o, kB, packed);
      switch (kB) {
        case 16:
          Images<16>(s, g, o, packed, n0, n1, cancel);
          break;
        case 8:
          Images<8>(s, g, o, packed, n0, n1, cancel);
          break;
        case 4:
          Images<4>(s, g, o, packed, n0, n1, cancel);
          break;
        case 2:
          Images<2>(s, g, o, packed, n0, n1, cancel);
          break;
        default:
          Images<1>(s, g, o, packed, n0, n1, cancel);
      }
      o += kB;
    }
  }
}

// Runs the pass over every image, split over `pool` in contiguous runs (each image's planes
// are one task's, so the bits do not depend on the split); stops between images once the
// caller's CancelToken is cancelled.
void RunPass(ThreadPool& pool, const Pass& s, int64_t images) {
  if (images == 0) return;
  constexpr int64_t kTaskWork = int64_t{1} << 16;  // multiply-add vectors per task, about
  const int64_t per_image =
      std::max<int64_t>(s.outs * s.in_group * s.t.taps * VectorsOf(s.out_plane), 1);
  const int64_t tasks = std::clamp<int64_t>(images * per_image / kTaskWork, 1,
                                            std::min<int64_t>(images, pool.threads() * 4));
  const CancelToken* cancel = CurrentCancelToken();
  pool.ParallelFor(tasks, [&](int64_t task) {
    Task(s, images * task / tasks, images * (task + 1) / tasks, cancel);
  });
}

// The weight gradient's operands: gw[k, c, tap] = the sum over images n and output positions
// of grad_y[n, k] x x[n, c] moved by the tap (dense NCHW; gw (K, C / groups, KH, KW)).
struct WeightPass {
  TapTables t;  // forward tables: x planes onto output planes
  const ConvDims& d;
  const float* grad_y;
  const float* x;
  float* gw;
};

// The 16 lanes of v added in halves (lane j + 8, then j + 4, j + 2, j + 1).
[[gnu::target("avx512f")]] inline float LaneSum(__m512 v) {
  alignas(64) float q[kLanes];
  _mm512_store_ps(q, v);
  for (int half = kLanes / 2; half > 0; half /= 2) {
    for (int j = 0; j < half; ++j) q[j] += q[j + half];
  }
  return q[0];
}

// One unit of the weight gradient over planes of one vector: output channels [k, k + kB) and
// the (input channel, tap) pairs [pair, pair + kP) of group g (pair = c * taps + tap). Each
// weight's lanes add the images in order (one vector per weight), then its 16 lanes are added
// (LaneSum).
template <int kB, int kP>
[[gnu::target("avx512f")]] void WeightUnit(const WeightPass& s, int64_t g, int64_t k, int64_t pair,
                                           const CancelToken* cancel) {
  if (Cancelled(cancel)) return;  // per unit: a call in the loop would spill the accumulators
  const ConvDims& d = s.d;
  const int64_t in_plane = d.h * d.w, out_plane = d.oh * d.ow;
  int64_t c[kP];
  int tap[kP];
  for (int j = 0; j < kP; ++j) {
    c[j] = (pair + j) / s.t.taps;
    tap[j] = static_cast<int>((pair + j) % s.t.taps);
  }
  // Moved<1>'s permutation with its tables loaded once per unit, not per image (calling Moved
  // took the digits 4x4 layer's weight gradient from 0.097 to 0.107 ms).
  __m512i lane[kP];
  __mmask16 reads[kP];
  for (int j = 0; j < kP; ++j) {
    lane[j] = _mm512_load_si512(s.t.lane[tap[j]][0]);
    reads[j] = s.t.reads[tap[j]][0];
  }
  const __mmask16 in_lanes = LanesOf(in_plane, 0), out_lanes = LanesOf(out_plane, 0);
  __m512 acc[kB * kP];
#pragma GCC unroll 16
  for (int a = 0; a < kB * kP; ++a) acc[a] = _mm512_setzero_ps();
  const float* gy = s.grad_y + (g * d.kg + k) * out_plane;
  const float* xs = s.x + g * d.cg * in_plane;
  for (int64_t n = 0; n < d.n; ++n, gy += d.k * out_plane, xs += d.c * in_plane) {
    __m512 gv[kB];
#pragma GCC unroll 4
    for (int b = 0; b < kB; ++b) gv[b] = _mm512_maskz_loadu_ps(out_lanes, gy + b * out_plane);
#pragma GCC unroll 4
    for (int j = 0; j < kP; ++j) {
      const __m512 moved = _mm512_maskz_permutexvar_ps(
          reads[j], lane[j], _mm512_maskz_loadu_ps(in_lanes, xs + c[j] * in_plane));
#pragma GCC unroll 4
      for (int b = 0; b < kB; ++b) acc[b * kP + j] = _mm512_fmadd_ps(gv[b], moved, acc[b * kP + j]);
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < kB; ++b) {
#pragma GCC unroll 4
    for (int j = 0; j < kP; ++j) {
      s.gw[((g * d.kg + k + b) * d.cg + c[j]) * s.t.taps + tap[j]] = LaneSum(acc[b * kP + j]);
    }
  }
}

// WeightUnit for kB of 4, 2 or 1 and kP of 4, 2 or 1.
template <int kB>
[[gnu::target("avx512f")]] void WeightUnitOf(int kP, const WeightPass& s, int64_t g, int64_t k,
                                             int64_t pair, const CancelToken* cancel) {
  switch (kP) {
    case 4:
      return WeightUnit<kB, 4>(s, g, k, pair, cancel);
    case 2:
      return WeightUnit<kB, 2>(s, g, k, pair, cancel);
    default:
      return WeightUnit<kB, 1>(s, g, k, pair, cancel);
  }
}

// [0, total) cut into blocks of 4, then at most one of 2 and one of 1: how many, and block
// `index`'s start and size.
int64_t BlockCount(int64_t total) { return total / 4 + std::popcount(uint64_t(total % 4)); }
struct Block4 {
  int64_t start;
  int size;
};
Block4 BlockAt(int64_t total, int64_t index) {
  const int64_t full = total / 4, rest = total % 4;
  if (index < full) return {4 * index, 4};
  if (index == full && rest >= 2) return {4 * full, 2};
  return {total - 1, 1};
}

// The forward's pass (x planes to y planes) or, with `inverse`, the input gradient's (grad_y
// planes to grad_x planes): the same loop with the roles of the planes and of the weights'
// two channel axes exchanged, and no bias.
Pass PassOf(const ConvDims& d, const Conv2dParams& p, bool inverse, const float* in, const float* w,
            const float* bias, int64_t bias_stride, float* out) {
  const int64_t taps = d.kh * d.kw, x_plane = d.h * d.w, y_plane = d.oh * d.ow;
  return Pass{.t = TablesOf(d, p, inverse),
              .in = in,
              .ins = inverse ? d.k : d.c,
              .in_group = inverse ? d.kg : d.cg,
              .in_plane = inverse ? y_plane : x_plane,
              .w = w,
              .w_group = d.kg * d.cg * taps,
              .wo = inverse ? taps : d.cg * taps,
              .wi = inverse ? d.cg * taps : taps,
              .out = out,
              .outs = inverse ? d.c : d.k,
              .out_group = inverse ? d.cg : d.kg,
              .out_plane = inverse ? x_plane : y_plane,
              .bias = bias,
              .add_bias = !inverse,
              .bias_stride = bias_stride,
              .groups = d.groups};
}

}  // namespace

bool ConvPlanesApply(const ConvDims& d, SimdTarget target) {
  const int64_t in = d.h * d.w, out = d.oh * d.ow;
  const int64_t taps = d.kh * d.kw;
  return target == SimdTarget::kAvx3 && TargetSupported(target) && in >= 1 &&
         in <= kConvPlanesMaxPlane && out >= 1 && out <= kConvPlanesMaxPlane &&
         taps <= kConvPlanesMaxTaps && std::max(d.cg, d.kg) * taps <= kConvPlanesMaxInputs;
}

bool ConvPlanesWeightApply(const ConvDims& d, SimdTarget target) {
  return ConvPlanesApply(d, target) && d.h * d.w <= kLanes && d.oh * d.ow <= kLanes;
}

void ConvPlanesForward(ThreadPool& pool, const ConvDims& d, const Conv2dParams& p, const float* x,
                       const float* w, const float* bias, int64_t bias_stride, float* y) {
  RunPass(pool, PassOf(d, p, /*inverse=*/false, x, w, bias, bias_stride, y), d.n);
}

void ConvPlanesBackwardInput(ThreadPool& pool, const ConvDims& d, const Conv2dParams& p,
                             const float* grad_y, const float* w, float* grad_x) {
  RunPass(pool, PassOf(d, p, /*inverse=*/true, grad_y, w, nullptr, 0, grad_x), d.n);
}

void ConvPlanesBackwardWeight(ThreadPool& pool, const ConvDims& d, const Conv2dParams& p,
                              const float* grad_y, const float* x, float* grad_w) {
  const WeightPass s{TablesOf(d, p, /*inverse=*/false), d, grad_y, x, grad_w};
  const int64_t pairs = d.cg * s.t.taps;
  const int64_t k_blocks = BlockCount(d.kg), pair_blocks = BlockCount(pairs);
  const CancelToken* cancel = CurrentCancelToken();
  // One unit per task, in a fixed order (group, output channel block, pair block): the bits do
  // not depend on the thread count.
  pool.ParallelFor(d.groups * k_blocks * pair_blocks, [&](int64_t unit) {
    const int64_t g = unit / (k_blocks * pair_blocks);
    const Block4 k = BlockAt(d.kg, unit / pair_blocks % k_blocks);
    const Block4 pair = BlockAt(pairs, unit % pair_blocks);
    switch (k.size) {
      case 4:
        return WeightUnitOf<4>(pair.size, s, g, k.start, pair.start, cancel);
      case 2:
        return WeightUnitOf<2>(pair.size, s, g, k.start, pair.start, cancel);
      default:
        return WeightUnitOf<1>(pair.size, s, g, k.start, pair.start, cancel);
    }
  });
}

}  // namespace onemodel::internal
