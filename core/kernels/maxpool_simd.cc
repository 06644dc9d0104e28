// The MaxPool2d loops, compiled once per SIMD target by Highway (foreach_target) and picked at
// run time through MaxPoolSimdFor().
//
// Every loop applies the reference rule (maxpool.h) in the reference's scan order, so values,
// NaN payloads, the sign of zero and indices all match it bit for bit: a position replaces
// the running maximum iff the maximum is not NaN and the position is NaN or strictly larger.
// Everything is selected, nothing computed. Windows are clipped to the input first, so
// padding is never read. Input rows are scanned once for NaN (NanRows); windows over rows
// without one use the equivalent cheaper rule "v > best" (one maxps without indices).
//
// rows (NCHW, x stride 1): one output row at a time, vectors of output columns. Lane i of
// window offset kx reads x = xs + kx*dilation + i*stride, loaded with LoadInterleaved{2,3,4}
// (strides 1 to 4). Columns whose windows, or loads, would leave the row take the scalar loop; the
// last vector overlaps the one before it instead of running a tail. Up to four vectors are
// in flight at once to hide the latency of each window's chain of selects. A row narrower
// than a vector takes vectors of half the lanes, or a quarter, down to 2 (RowsFitting).
// planes (contiguous NCHW input, output and indices, no padding, output rows at most half a
// vector wide: the digits CNN's 4- and 2-wide rows): each vector covers several output rows
// of a plane, or several whole planes, its lanes' window elements gathered (GatherIndex), the
// full rule at every step (no NaN scan).
// pixels (NHWC, channel stride 1): one output pixel at a time, vectors of channels; the
// channel tail uses a masked load. pairs (the planes loop's cases with 2x2 windows at stride 2
// tiling each plane: the digits CNN's pools): the four input vectors under a vector of outputs
// are loaded whole and each window element's vector picked from them with table lookups, no
// gather; pairs_grad writes the backward's cells the same way. strided: the scalar loop for
// everything else. Dilation steps window rows and columns; relu (ReluMaxPool2d) starts every
// window from +0 at index -1.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/maxpool_simd.cc"
// Highway needs this order: foreach_target, then highway.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include "core/kernels/internal/maxpool_simd.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "core/kernels/internal/simd_tables.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace maxpool {
using internal::PoolPlan;
using D = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<D>;
using V = hn::Vec<D>;
using VI = hn::Vec<DI>;
using M = hn::Mask<D>;

// The in-bounds positions lo, lo + dilation, ... (all below hi, the last one plus 1) of the
// window of output position o along one dimension; lo >= hi when there is none.
struct Span {
  int64_t lo, hi;
};
HWY_INLINE Span Clip(int64_t o, int64_t stride, int64_t pad, int64_t kernel, int64_t dilation,
                     int64_t size) {
  const int64_t start = o * stride - pad;
  const int64_t k0 = start < 0 ? (dilation - 1 - start) / dilation : 0;
  const int64_t k1 =
      start >= size ? 0 : std::min<int64_t>(kernel, (size - start + dilation - 1) / dilation);
  if (k0 >= k1) return {0, 0};
  return {start + k0 * dilation, start + (k1 - 1) * dilation + 1};
}

// The reference rule over the in-bounds positions ys x xs (steps dy, dx) of a plane (0 and -1
// when empty; with p.relu the scan starts from 0 at -1). kExact: the full rule, branch-free
// (which element wins depends on the data and would defeat branch prediction). Otherwise the
// window holds no NaN and the rule is "v > best" (maxss).
template <bool kExact = true>
HWY_INLINE void ScalarWindow(const PoolPlan& p, const float* plane, int64_t sy, int64_t sx, Span ys,
                             Span xs, float& best_out, int64_t& at_out) {
  if (ys.lo >= ys.hi || xs.lo >= xs.hi) {
    best_out = 0.0f;
    at_out = -1;
    return;
  }
  const int64_t w = p.w, dy = p.dh, dx = p.dw;
  float best = p.relu ? 0.0f : plane[ys.lo * sy + xs.lo * sx];
  int64_t at = p.relu ? -1 : ys.lo * w + xs.lo;
  for (int64_t y = ys.lo; y < ys.hi; y += dy) {
    const float* row = plane + y * sy;
    for (int64_t x = y == ys.lo && !p.relu ? xs.lo + dx : xs.lo; x < xs.hi; x += dx) {
      const float v = row[x * sx];
      if constexpr (kExact) {
        // Wins(): best is not NaN, and v is NaN or larger; selected through masks.
        const bool win = static_cast<bool>(!(v <= best) & (best == best));
        const uint32_t mask = 0u - static_cast<uint32_t>(win);
        best = std::bit_cast<float>((std::bit_cast<uint32_t>(v) & mask) |
                                    (std::bit_cast<uint32_t>(best) & ~mask));
        at = win ? y * w + x : at;
      } else {
        const bool win = v > best;
        best = win ? v : best;
        at = win ? y * w + x : at;
      }
    }
  }
  best_out = best;
  at_out = at;
}

// Lanes where v replaces the running maximum: best is not NaN, and v is NaN or larger.
template <class VF>
HWY_INLINE auto Wins(VF v, VF best) {
  return hn::AndNot(hn::Le(v, best), hn::Eq(best, best));
}

// One step of the scan: v (the next position, at `pos`) against the running maximum.
// kExact: the full rule. Otherwise the window holds no NaN and the rule is "v > best".
template <bool kExact, bool kIdx, class VF, class VI32>
HWY_INLINE void Step(VF v, VI32 pos, VF& best, VI32& at) {
#if HWY_TARGET == HWY_SCALAR
  // One lane: IfThenElse would branch on the data; select through integer masks instead.
  const float x = hn::GetLane(v), b = hn::GetLane(best);
  const bool win = kExact ? static_cast<bool>(!(x <= b) & (b == b)) : x > b;
  const uint32_t mask = 0u - static_cast<uint32_t>(win);
  best = hn::Set(hn::DFromV<VF>(), std::bit_cast<float>((std::bit_cast<uint32_t>(x) & mask) |
                                                        (std::bit_cast<uint32_t>(b) & ~mask)));
  if constexpr (kIdx) {
    const uint32_t p = static_cast<uint32_t>(hn::GetLane(pos));
    const uint32_t a = static_cast<uint32_t>(hn::GetLane(at));
    at = hn::Set(hn::DFromV<VI32>(), static_cast<int32_t>((p & mask) | (a & ~mask)));
  }
#else
  const hn::DFromV<VI32> di;
  if constexpr (kExact || kIdx) {
    const auto win = kExact ? Wins(v, best) : hn::Gt(v, best);
    best = hn::IfThenElse(win, v, best);
    if constexpr (kIdx) at = hn::IfThenElse(hn::RebindMask(di, win), pos, at);
  } else {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_EMU128
    best = hn::Max(v, best);  // maxps: v if v > best, else best (ties, signed zeros)
#else
    best = hn::IfThenElse(hn::Gt(v, best), v, best);
#endif
  }
#endif
}

// True when one of the n floats at p (unit stride) may be NaN: their sum is NaN. The sum is
// also NaN when +inf and -inf meet (or overflow does); those rows merely take the exact path.
HWY_INLINE bool RunMayHaveNaN(const float* p, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (n < lanes) {
    bool any = false;
    for (int64_t i = 0; i < n; ++i) any |= std::isnan(p[i]);
    return any;
  }
  V sum0 = hn::LoadU(d, p + n - lanes);  // the tail, overlapping
  V sum1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    sum0 = hn::Add(sum0, hn::LoadU(d, p + i));
    sum1 = hn::Add(sum1, hn::LoadU(d, p + i + lanes));
  }
  if (i + lanes <= n) sum1 = hn::Add(sum1, hn::LoadU(d, p + i));
  return !hn::AllFalse(d, hn::IsNaN(hn::Add(sum0, sum1)));
}

// Which input rows of one plane (NCHW) or image (NHWC) may hold a NaN: while a task walks its
// output rows in order, each input row is scanned at most once. Windows over rows without
// NaN take the cheap rule.
class NanRows {
 public:
  // True when one of the rows ys of `base` may hold a NaN; may_have_nan(y) scans row y.
  template <typename F>
  bool Any(const float* base, Span ys, const F& may_have_nan) {
    if (base != base_ || ys.lo < lo_) {  // a new plane: forget everything
      base_ = base;
      scanned_ = 0;
      last_nan_ = -1;
    }
    lo_ = ys.lo;
    scanned_ = std::max(scanned_, ys.lo);
    for (; scanned_ < ys.hi; ++scanned_) {
      if (may_have_nan(scanned_)) last_nan_ = scanned_;
    }
    return last_nan_ >= ys.lo;
  }

 private:
  const float* base_ = nullptr;
  int64_t lo_ = 0;         // ys.lo of the last call
  int64_t scanned_ = 0;    // rows below this are known (or never needed)
  int64_t last_nan_ = -1;  // the last scanned row that may hold a NaN
};

// Stores the first n lanes of v at p, p + s, ...
template <class DV, class VV, typename T>
HWY_INLINE void StoreLanes(DV d, VV v, T* p, int64_t s, int64_t n) {
  if (s == 1 && n == static_cast<int64_t>(hn::Lanes(d))) return hn::StoreU(v, d, p);
  HWY_ALIGN T buf[hn::MaxLanes(d)];
  hn::Store(v, d, buf);
  for (int64_t i = 0; i < n; ++i) p[i * s] = buf[i];
}

// Lanes p[kx], p[kx + S], ..., p[kx + (N-1)*S] of a unit-stride row. Reads only
// p[kx - r] ... p[kx - r + S*N - 1] with r = min(kx, S - 1): never left of p, and right of
// the last lane only when kx < S - 1.
template <int kS, class DF>
HWY_INLINE hn::Vec<DF> LoadLanes(DF d, const float* p, int64_t kx) {
  if constexpr (kS == 1) {
    return hn::LoadU(d, p + kx);
  } else {
    const int64_t r = std::min<int64_t>(kx, kS - 1);
    const float* base = p + kx - r;
    hn::Vec<DF> v0, v1, v2, v3;
    if constexpr (kS == 2) {
      hn::LoadInterleaved2(d, base, v0, v1);
      return r == 0 ? v0 : v1;
    } else if constexpr (kS == 3) {
      hn::LoadInterleaved3(d, base, v0, v1, v2);
      return r == 0 ? v0 : (r == 1 ? v1 : v2);
    } else {
      hn::LoadInterleaved4(d, base, v0, v1, v2, v3);
      return r == 0 ? v0 : (r == 1 ? v1 : (r == 2 ? v2 : v3));
    }
  }
}

// ---- rows: NCHW ----

// Up to this many output vectors are computed at once: each window is a chain of dependent
// selects, so independent vectors in flight hide the compare latency.
constexpr int kMaxGroup = 4;

// kU output vectors of one output row, starting at columns ox0[0..kU), whose windows lie
// inside the row horizontally; ys: the window rows (not empty). kKw: the kernel width when
// known at compile time (0: p.kw).
template <class DF, int kS, int kKw, int kU, bool kExact, bool kIdx>
HWY_INLINE void RowVectors(const PoolPlan& p, const float* plane, Span ys, const int64_t* ox0,
                           float* orow, int32_t* irow, hn::Vec<hn::RebindToSigned<DF>> lane_x) {
  const DF d;
  const hn::RebindToSigned<DF> di;
  const int64_t kw = kKw ? kKw : p.kw;
  const int64_t dw = kKw ? 1 : p.dw;  // kernel widths are fixed only without dilation
  const int64_t sy = p.in_stride[2];
  int64_t xs[kU];
  hn::Vec<DF> best[kU];
  hn::Vec<decltype(di)> at[kU];  // y*W + kx of the winner; lane and window offsets are added at the end
  const float* row = plane + ys.lo * sy;
  for (int u = 0; u < kU; ++u) {
    xs[u] = ox0[u] * kS - p.pw;
    // relu: from 0 at -1 (kept apart from positions, which are >= 0, until the end).
    best[u] = p.relu ? hn::Zero(d) : LoadLanes<kS>(d, row + xs[u], 0);
    at[u] = hn::Set(di, static_cast<int32_t>(p.relu ? -1 : ys.lo * p.w));
  }
  const auto step = [&](const float* r, int64_t y, int64_t kx) {
    const auto pos = hn::Set(di, static_cast<int32_t>(y * p.w + kx * dw));
    for (int u = 0; u < kU; ++u) {
      Step<kExact, kIdx>(LoadLanes<kS>(d, r + xs[u], kx * dw), pos, best[u], at[u]);
    }
  };
  for (int64_t kx = p.relu ? 0 : 1; kx < kw; ++kx) step(row, ys.lo, kx);
  for (int64_t y = ys.lo + p.dh; y < ys.hi; y += p.dh) {
    row += sy * p.dh;
    for (int64_t kx = 0; kx < kw; ++kx) step(row, y, kx);
  }
  for (int u = 0; u < kU; ++u) {
    StoreLanes(d, best[u], orow + ox0[u] * p.out_stride[3], p.out_stride[3],
               static_cast<int64_t>(hn::Lanes(d)));
    if constexpr (kIdx) {
      auto pos = hn::Add(hn::Add(at[u], lane_x), hn::Set(di, static_cast<int32_t>(xs[u])));
      if (p.relu) pos = hn::IfThenElse(hn::Lt(at[u], hn::Zero(di)), at[u], pos);
      StoreLanes(di, pos, irow + ox0[u] * p.idx_stride[3], p.idx_stride[3],
                 static_cast<int64_t>(hn::Lanes(di)));
    }
  }
}

// Every vector of one output row: columns [vlo, vhi), the last vector overlapping the one
// before it where the width is not a multiple of the lane count.
template <class DF, int kS, int kKw, bool kExact, bool kIdx>
HWY_INLINE void RowAllVectors(const PoolPlan& p, const float* plane, Span ys, int64_t vlo,
                              int64_t vhi, float* orow, int32_t* irow,
                              hn::Vec<hn::RebindToSigned<DF>> lane_x) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DF()));
  const int64_t vectors = (vhi - vlo + lanes - 1) / lanes;
  int64_t ox0[kMaxGroup];
  const auto starts = [&](int64_t i, int count) {
    for (int g = 0; g < count; ++g) ox0[g] = std::min(vlo + (i + g) * lanes, vhi - lanes);
  };
  int64_t i = 0;
  for (; i + kMaxGroup <= vectors; i += kMaxGroup) {
    starts(i, kMaxGroup);
    RowVectors<DF, kS, kKw, kMaxGroup, kExact, kIdx>(p, plane, ys, ox0, orow, irow, lane_x);
  }
  if (i + 2 <= vectors) {
    starts(i, 2);
    RowVectors<DF, kS, kKw, 2, kExact, kIdx>(p, plane, ys, ox0, orow, irow, lane_x);
    i += 2;
  }
  if (i < vectors) {
    starts(i, 1);
    RowVectors<DF, kS, kKw, 1, kExact, kIdx>(p, plane, ys, ox0, orow, irow, lane_x);
  }
}

// Output row u of the N*C*OH rows: its input plane, output and index rows, and the input rows
// its windows cover.
struct OutputRow {
  const float* plane;
  float* out;
  int32_t* idx;
  Span ys;
};
template <bool kIdx>
HWY_INLINE OutputRow RowOf(const PoolPlan& p, int64_t u) {
  const int64_t oy = u % p.oh, nc = u / p.oh, c = nc % p.c, n = nc / p.c;
  const int64_t* s = p.in_stride;
  const int64_t* so = p.out_stride;
  const int64_t* si = p.idx_stride;
  return {p.in + n * s[0] + c * s[1], p.out + n * so[0] + c * so[1] + oy * so[2],
          kIdx ? p.idx + n * si[0] + c * si[1] + oy * si[2] : nullptr,
          Clip(oy, p.sh, p.ph, p.kh, p.dh, p.h)};
}

template <class DF, int kS, int kKw, bool kIdx>
void RowsT(const PoolPlan& p, int64_t begin, int64_t end) {
  const DF d;
  const hn::RebindToSigned<DF> di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // The last element LoadLanes reads, relative to the window start of lane 0.
  const int64_t extent = (p.kw - 1) * p.dw + 1;
  const int64_t reach = extent >= kS ? extent - 1 + kS * (lanes - 1) : kS * lanes - 1;
  // Vectors start at ox0 in [first, last]: all reads inside [0, w).
  const int64_t first = (p.pw + kS - 1) / kS;
  const int64_t room = p.w - 1 - reach + p.pw;
  const int64_t last = room < 0 ? -1 : std::min(room / kS, p.ow - lanes);
  // Vectors cover the output columns [vlo, vhi); the scalar loop the rest.
  const int64_t vlo = last >= first ? first : 0;
  const int64_t vhi = last >= first ? last + lanes : 0;
  const auto lane_x = hn::Mul(hn::Iota(di, 0), hn::Set(di, kS));  // lane i: i*S
  const int64_t* s = p.in_stride;
  const int64_t* so = p.out_stride;
  const int64_t* si = p.idx_stride;
  NanRows nan_rows;

  for (int64_t u = begin; u < end; ++u) {
    // Variables rather than a structured binding: clang 14 lambdas cannot capture bindings.
    const OutputRow r = RowOf<kIdx>(p, u);
    const float* plane = r.plane;
    float* orow = r.out;
    int32_t* irow = r.idx;
    const Span ys = r.ys;
    const bool nan = ys.lo < ys.hi && nan_rows.Any(plane, ys, [&](int64_t y) {
      return RunMayHaveNaN(plane + y * s[2], p.w);
    });
    const auto scalar = [&](int64_t ox) {
      float best;
      int64_t at;
      const Span xs = Clip(ox, kS, p.pw, p.kw, p.dw, p.w);
      if (nan) {
        ScalarWindow<true>(p, plane, s[2], 1, ys, xs, best, at);
      } else {
        ScalarWindow<false>(p, plane, s[2], 1, ys, xs, best, at);
      }
      orow[ox * so[3]] = best;
      if constexpr (kIdx) irow[ox * si[3]] = static_cast<int32_t>(at);
    };
    if (ys.lo >= ys.hi || vlo >= vhi) {
      for (int64_t ox = 0; ox < p.ow; ++ox) scalar(ox);
      continue;
    }
    for (int64_t ox = 0; ox < vlo; ++ox) scalar(ox);
    if (nan) {
      RowAllVectors<DF, kS, kKw, true, kIdx>(p, plane, ys, vlo, vhi, orow, irow, lane_x);
    } else {
      RowAllVectors<DF, kS, kKw, false, kIdx>(p, plane, ys, vlo, vhi, orow, irow, lane_x);
    }
    for (int64_t ox = vhi; ox < p.ow; ++ox) scalar(ox);
  }
}

// ---- planes: contiguous NCHW, output rows narrower than half a vector ----

// Lane l of a vector reads, at window position (0, 0), the input element off[l] from the
// vector's first element and is output position pos[l] of its plane; the vector covers `rows`
// output rows of one plane, or `planes` whole planes when a plane's output fits (rows = OH).
// Lanes past the covered outputs read element 0 and are never stored.
struct PlaneLanes {
  int64_t rows, planes, used;  // used: lanes covered when every row and plane is there
  HWY_ALIGN int32_t off[hn::MaxLanes(DI())];
  HWY_ALIGN int32_t pos[hn::MaxLanes(DI())];
  explicit PlaneLanes(const PoolPlan& p) {
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
    rows = std::min(lanes / p.ow, p.oh);
    planes = std::max<int64_t>(1, lanes / (p.ow * p.oh));
    used = planes * rows * p.ow;
    for (int64_t l = 0; l < lanes; ++l) {
      const int64_t q = l / (rows * p.ow), r = l % (rows * p.ow);
      const int64_t at = (r / p.ow) * p.sh * p.w + (r % p.ow) * p.sw;
      pos[l] = static_cast<int32_t>(l < used ? at : 0);
      off[l] = static_cast<int32_t>(l < used ? q * p.h * p.w + at : 0);
    }
  }
};

// Planes [begin, end) of a contiguous NCHW input into contiguous outputs and indices, every
// window inside its plane (no padding), OW <= lanes / 2: each vector gathers its windows'
// elements for several output rows (or planes) at once instead of one short row at a time.
// The full rule (Wins) at every step, so no NaN scan is needed.
template <bool kIdx>
void PlanesT(const PoolPlan& p, int64_t begin, int64_t end) {
  const D d;
  const DI di;
  const PlaneLanes lanes(p);
  const VI off = hn::Load(di, lanes.off), pos = hn::Load(di, lanes.pos);
  const int64_t plane = p.h * p.w, per_plane = p.oh * p.ow;
  for (int64_t q = begin; q < end; q += lanes.planes) {
    const int64_t planes = std::min(lanes.planes, end - q);
    for (int64_t r = 0; r < p.oh; r += lanes.rows) {
      // Output rows [r, r + rows) of plane q, or planes [q, q + planes) whole.
      const int64_t n = (planes - 1) * per_plane + std::min(lanes.rows, p.oh - r) * p.ow;
      const int64_t first = r * p.sh * p.w;  // the window start of output row r in its plane
      const float* base = p.in + q * plane + first;
      const VI offs = hn::IfThenElseZero(hn::FirstN(di, static_cast<size_t>(n)), off);
      const VI at0 = hn::Add(pos, hn::Set(di, static_cast<int32_t>(first)));
      V best = p.relu ? hn::Zero(d) : hn::GatherIndex(d, base, offs);
      VI at = p.relu ? hn::Set(di, -1) : at0;
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        for (int64_t kx = ky == 0 && !p.relu ? 1 : 0; kx < p.kw; ++kx) {
          const VI k = hn::Set(di, static_cast<int32_t>(ky * p.dh * p.w + kx * p.dw));
          Step<true, kIdx>(hn::GatherIndex(d, base, hn::Add(offs, k)), hn::Add(at0, k), best, at);
        }
      }
      const int64_t o = q * per_plane + r * p.ow;
      StoreLanes(d, best, p.out + o, 1, n);
      if constexpr (kIdx) StoreLanes(di, at, p.idx + o, 1, n);
    }
  }
}

// ---- pairs: 2x2 windows at stride 2 tiling contiguous NCHW planes (H = 2 OH, W = 2 OW) ----

// The lanes of L consecutive outputs that start a row pair (OW divides L) read exactly the 4L
// input floats from 4 times their offset: four whole vectors. Window element k = 2 ky + kx of
// output lane j is lane lane[k][j] of vector src[k][j]; cell lane m of vector s is element
// elem[s][m] of output lane out[s][m] (the same map inverted, for the backward). at0[j]: the
// plane position of lane j's element 0, less the first row pair's rows.
struct PairLanes {
  static constexpr size_t kMax = hn::MaxLanes(DI());
  HWY_ALIGN int32_t lane[4][kMax], src[4][kMax], out[4][kMax], elem[4][kMax], at0[kMax];
  PairLanes(int64_t oh, int64_t ow) {
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(DI())), w = 2 * ow;
    for (int64_t j = 0; j < lanes; ++j) {
      const int64_t pair = j / ow, ox = j % ow;
      at0[j] = static_cast<int32_t>((pair % oh) * 2 * w + 2 * ox);
      for (int k = 0; k < 4; ++k) {
        const int64_t rel = pair * 2 * w + (k / 2) * w + 2 * ox + k % 2;
        const int64_t s = rel / lanes, m = rel % lanes;
        lane[k][j] = static_cast<int32_t>(m);
        src[k][j] = static_cast<int32_t>(s);
        out[s][m] = static_cast<int32_t>(j);
        elem[s][m] = k;
      }
    }
  }
};

// A vector whose lane j is lane `lane[j]` of v[from[j]] (from in 0..3), from four vectors held
// in registers: a table lookup in each, merged by where each lane comes from.
class Pick4 {
 public:
  Pick4(const int32_t* lane, const int32_t* from) {
    const D d;
    const DI di;
    idx_ = hn::IndicesFromVec(d, hn::Load(di, lane));
    const VI f = hn::Load(di, from);
    for (int k = 1; k < 4; ++k) from_[k - 1] = hn::RebindMask(d, hn::Eq(f, hn::Set(di, k)));
  }
  HWY_INLINE V operator()(const V (&v)[4]) const {
    V r = hn::TableLookupLanes(v[0], idx_);
    for (int k = 1; k < 4; ++k)
      r = hn::IfThenElse(from_[k - 1], hn::TableLookupLanes(v[k], idx_), r);
    return r;
  }

 private:
  decltype(hn::IndicesFromVec(D(), hn::Zero(DI()))) idx_;
  M from_[3];
};

// Plane position of element k of a window, relative to its element 0.
HWY_INLINE int32_t ElementOffset(int k, int64_t w) {
  return static_cast<int32_t>((k / 2) * w + k % 2);
}

// The plane position of each lane's element 0 for the L outputs from o, where a row pair
// starts (see PairLanesFit).
HWY_INLINE VI PairStarts(const VI at_lanes, int64_t o, int64_t oh, int64_t ow) {
  const DI di;
  return hn::Add(at_lanes, hn::Set(di, static_cast<int32_t>((o / ow) % oh * 4 * ow)));
}

// Planes [begin, end): each vector's four element vectors picked from its four input vectors,
// scanned in the reference's order with the full rule (no NaN scan). Outputs of the last
// partial vector take ScalarWindow.
template <bool kIdx>
void PairsT(const PoolPlan& p, int64_t begin, int64_t end) {
  const D d;
  const DI di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d)), per_plane = p.oh * p.ow;
  const PairLanes t(p.oh, p.ow);
  const Pick4 pick[4] = {
      {t.lane[0], t.src[0]}, {t.lane[1], t.src[1]}, {t.lane[2], t.src[2]}, {t.lane[3], t.src[3]}};
  const VI at_lanes = hn::Load(di, t.at0);
  int64_t o = begin * per_plane;
  const int64_t stop = end * per_plane;
  for (; o + lanes <= stop; o += lanes) {
    const float* x = p.in + 4 * o;
    const V in[4] = {hn::LoadU(d, x), hn::LoadU(d, x + lanes), hn::LoadU(d, x + 2 * lanes),
                     hn::LoadU(d, x + 3 * lanes)};
    const VI at0 = PairStarts(at_lanes, o, p.oh, p.ow);
    V best = p.relu ? hn::Zero(d) : pick[0](in);
    VI at = p.relu ? hn::Set(di, -1) : at0;
    for (int k = p.relu ? 0 : 1; k < 4; ++k) {
      Step<true, kIdx>(pick[k](in), hn::Add(at0, hn::Set(di, ElementOffset(k, p.w))), best, at);
    }
    hn::StoreU(best, d, p.out + o);
    if constexpr (kIdx) hn::StoreU(at, di, p.idx + o);
  }
  for (; o < stop; ++o) {
    const int64_t q = o / per_plane, oy = o % per_plane / p.ow, ox = o % p.ow;
    float best;
    int64_t at;
    ScalarWindow<true>(p, p.in + q * p.h * p.w, p.w, 1, Span{2 * oy, 2 * oy + 2},
                       Span{2 * ox, 2 * ox + 2}, best, at);
    p.out[o] = best;
    if constexpr (kIdx) p.idx[o] = static_cast<int32_t>(at);
  }
}

// PairsGradFn: per vector of outputs, element vector k holds 0 + g where the index names
// element k, else +0; the four cell vectors are picked from them and stored whole. Indices
// outside their cell are noted, not followed.
bool PairsGrad(const internal::PairsGradPlan& b, int64_t begin, int64_t end) {
  const D d;
  const DI di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d)), per_plane = b.oh * b.ow;
  const int64_t w = 2 * b.ow;
  const PairLanes t(b.oh, b.ow);
  const Pick4 pick[4] = {
      {t.out[0], t.elem[0]}, {t.out[1], t.elem[1]}, {t.out[2], t.elem[2]}, {t.out[3], t.elem[3]}};
  const VI at_lanes = hn::Load(di, t.at0);
  VI inside_all = hn::Set(di, -1);  // all bits set in lanes whose every index was in its cell
  int64_t o = begin * per_plane;
  const int64_t stop = end * per_plane;
  for (; o + lanes <= stop; o += lanes) {
    const VI idx = hn::LoadU(di, b.idx + o);
    const V g = hn::Add(hn::Zero(d), hn::LoadU(d, b.g + o));  // what the scatter stores
    const VI at0 = PairStarts(at_lanes, o, b.oh, b.ow);
    auto inside = hn::Lt(idx, hn::Zero(di));
    V element[4];
    for (int k = 0; k < 4; ++k) {
      const auto hit = hn::Eq(idx, hn::Add(at0, hn::Set(di, ElementOffset(k, w))));
      element[k] = hn::IfThenElseZero(hn::RebindMask(d, hit), g);
      inside = hn::Or(inside, hit);
    }
    inside_all = hn::And(inside_all, hn::VecFromMask(di, inside));
    float* cells = b.gx + 4 * o;
    for (int s = 0; s < 4; ++s) hn::StoreU(pick[s](element), d, cells + s * lanes);
  }
  bool ok = hn::AllTrue(di, hn::MaskFromVec(inside_all));
  for (; o < stop; ++o) {
    const int64_t oy = o % per_plane / b.ow, ox = o % b.ow;
    float* plane = b.gx + (o / per_plane) * 4 * per_plane;
    const int32_t at = b.idx[o];
    const float g = 0.0f + b.g[o];
    bool hit = at < 0;
    for (int k = 0; k < 4; ++k) {
      const int64_t cell = (2 * oy) * w + 2 * ox + ElementOffset(k, w);
      plane[cell] = at == cell ? g : 0.0f;
      hit |= at == cell;
    }
    ok &= hit;
  }
  return ok;
}

// ---- strided: anything else ----

template <bool kIdx>
void StridedT(const PoolPlan& p, int64_t begin, int64_t end) {
  const int64_t* s = p.in_stride;
  const int64_t* so = p.out_stride;
  const int64_t* si = p.idx_stride;
  for (int64_t u = begin; u < end; ++u) {
    const auto [plane, orow, irow, ys] = RowOf<kIdx>(p, u);
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      float best;
      int64_t at;
      ScalarWindow(p, plane, s[2], s[3], ys, Clip(ox, p.sw, p.pw, p.kw, p.dw, p.w), best, at);
      orow[ox * so[3]] = best;
      if constexpr (kIdx) irow[ox * si[3]] = static_cast<int32_t>(at);
    }
  }
}

// ---- pixels: NHWC ----

// kU vectors of channels c0, c0 + N, ... of one output pixel whose window (ys x xs) is not
// empty. kFull: whole vectors; else kU is 1 and only the first n channels are loaded.
template <int kU, bool kFull, bool kExact, bool kIdx>
HWY_INLINE void PixelVectors(const PoolPlan& p, const float* image, Span ys, Span xs, int64_t c0,
                             int64_t n, float* opix, int32_t* ipix) {
  static_assert(kFull || kU == 1);
  const D d;
  const DI di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t sy = p.in_stride[2], sx = p.in_stride[3];
  const M valid = hn::FirstN(d, static_cast<size_t>(n));
  const auto load = [&](const float* at) {
    return kFull ? hn::LoadU(d, at) : hn::MaskedLoad(valid, d, at);
  };
  V best[kU];
  VI at[kU];
  const float* first = image + ys.lo * sy + xs.lo * sx + c0;
  for (int u = 0; u < kU; ++u) {  // relu: from 0 at -1
    best[u] = p.relu ? hn::Zero(d) : load(first + u * lanes);
    at[u] = hn::Set(di, static_cast<int32_t>(p.relu ? -1 : ys.lo * p.w + xs.lo));
  }
  for (int64_t y = ys.lo; y < ys.hi; y += p.dh) {
    for (int64_t x = y == ys.lo && !p.relu ? xs.lo + p.dw : xs.lo; x < xs.hi; x += p.dw) {
      const float* src = image + y * sy + x * sx + c0;
      const VI pos = hn::Set(di, static_cast<int32_t>(y * p.w + x));
      for (int u = 0; u < kU; ++u) {
        Step<kExact, kIdx>(load(src + u * lanes), pos, best[u], at[u]);
      }
    }
  }
  const int64_t so = p.out_stride[1], si = p.idx_stride[1];
  for (int u = 0; u < kU; ++u) {
    const int64_t c = c0 + u * lanes;
    StoreLanes(d, best[u], opix + c * so, so, kFull ? lanes : n);
    if constexpr (kIdx) StoreLanes(di, at[u], ipix + c * si, si, kFull ? lanes : n);
  }
}

// Every channel of one output pixel whose window (ys x xs) is not empty.
template <bool kExact, bool kIdx>
HWY_INLINE void PixelAllVectors(const PoolPlan& p, const float* image, Span ys, Span xs,
                                float* opix, int32_t* ipix) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  int64_t c0 = 0;
  for (; c0 + kMaxGroup * lanes <= p.c; c0 += kMaxGroup * lanes) {
    PixelVectors<kMaxGroup, true, kExact, kIdx>(p, image, ys, xs, c0, lanes, opix, ipix);
  }
  if (c0 + 2 * lanes <= p.c) {
    PixelVectors<2, true, kExact, kIdx>(p, image, ys, xs, c0, lanes, opix, ipix);
    c0 += 2 * lanes;
  }
  if (c0 + lanes <= p.c) {
    PixelVectors<1, true, kExact, kIdx>(p, image, ys, xs, c0, lanes, opix, ipix);
    c0 += lanes;
  }
  if (c0 < p.c) {
    PixelVectors<1, false, kExact, kIdx>(p, image, ys, xs, c0, p.c - c0, opix, ipix);
  }
}

// True when row y of an image (channel stride 1) may hold a NaN.
HWY_INLINE bool ImageRowMayHaveNaN(const PoolPlan& p, const float* image, int64_t y) {
  const float* row = image + y * p.in_stride[2];
  if (p.in_stride[3] == p.c) return RunMayHaveNaN(row, p.w * p.c);  // pixels back to back
  for (int64_t x = 0; x < p.w; ++x) {
    if (RunMayHaveNaN(row + x * p.in_stride[3], p.c)) return true;
  }
  return false;
}

template <bool kIdx>
void PixelsT(const PoolPlan& p, int64_t begin, int64_t end) {
  const int64_t* so = p.out_stride;
  const int64_t* si = p.idx_stride;
  NanRows nan_rows;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t oy = u % p.oh, n = u / p.oh;
    const float* image = p.in + n * p.in_stride[0];
    float* orow = p.out + n * so[0] + oy * so[2];
    int32_t* irow = kIdx ? p.idx + n * si[0] + oy * si[2] : nullptr;
    const Span ys = Clip(oy, p.sh, p.ph, p.kh, p.dh, p.h);
    const bool nan = ys.lo < ys.hi && nan_rows.Any(image, ys, [&](int64_t y) {
      return ImageRowMayHaveNaN(p, image, y);
    });
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      const Span xs = Clip(ox, p.sw, p.pw, p.kw, p.dw, p.w);
      float* opix = orow + ox * so[3];
      int32_t* ipix = kIdx ? irow + ox * si[3] : nullptr;
      if (ys.lo >= ys.hi || xs.lo >= xs.hi) {  // no position in bounds: the reference's 0, -1
        for (int64_t c = 0; c < p.c; ++c) {
          opix[c * so[1]] = 0.0f;
          if constexpr (kIdx) ipix[c * si[1]] = -1;
        }
      } else if (nan) {
        PixelAllVectors<true, kIdx>(p, image, ys, xs, opix, ipix);
      } else {
        PixelAllVectors<false, kIdx>(p, image, ys, xs, opix, ipix);
      }
    }
  }
}

// ---- entry points: pick the instantiation once per call ----

// Kernel widths known at compile time let the compiler unroll the window; done for the
// common shapes (3x3 stride 1 and 2, 2x2 stride 2) without dilation, the others read p.kw.
// Vectors of kLanes lanes, halved (down to 2) while an output row is narrower than one: rows
// of fewer columns than a full vector (the digits CNN pools 8- and 4-wide planes) then take the
// vector loop too, not the scalar one for every column.
template <size_t kLanes, int kS, int kKw, bool kIdx>
void RowsFitting(const PoolPlan& p, int64_t begin, int64_t end) {
  using DF = hn::CappedTag<float, kLanes>;
  if constexpr (kLanes > 2) {
    if (p.ow < static_cast<int64_t>(hn::Lanes(DF()))) {
      return RowsFitting<kLanes / 2, kS, kKw, kIdx>(p, begin, end);
    }
  }
  return RowsT<DF, kS, kKw, kIdx>(p, begin, end);
}

template <int kS, int kKw>
void RowsFor(const PoolPlan& p, int64_t begin, int64_t end) {
  constexpr size_t kFull = HWY_LANES(float);
  return p.idx ? RowsFitting<kFull, kS, kKw, true>(p, begin, end)
               : RowsFitting<kFull, kS, kKw, false>(p, begin, end);
}

void Rows(const PoolPlan& p, int64_t begin, int64_t end) {
  const int64_t kw = p.dw == 1 ? p.kw : 0;
  switch (p.sw) {
    case 1:
      return kw == 3 ? RowsFor<1, 3>(p, begin, end) : RowsFor<1, 0>(p, begin, end);
    case 2:
      if (kw == 2) return RowsFor<2, 2>(p, begin, end);
      return kw == 3 ? RowsFor<2, 3>(p, begin, end) : RowsFor<2, 0>(p, begin, end);
    case 3:
      return RowsFor<3, 0>(p, begin, end);
    case 4:
      return RowsFor<4, 0>(p, begin, end);
    default:
      return p.idx ? StridedT<true>(p, begin, end) : StridedT<false>(p, begin, end);
  }
}

void Pixels(const PoolPlan& p, int64_t begin, int64_t end) {
  return p.idx ? PixelsT<true>(p, begin, end) : PixelsT<false>(p, begin, end);
}

void Planes(const PoolPlan& p, int64_t begin, int64_t end) {
  return p.idx ? PlanesT<true>(p, begin, end) : PlanesT<false>(p, begin, end);
}

void Strided(const PoolPlan& p, int64_t begin, int64_t end) {
  return p.idx ? StridedT<true>(p, begin, end) : StridedT<false>(p, begin, end);
}

void Pairs(const PoolPlan& p, int64_t begin, int64_t end) {
  return p.idx ? PairsT<true>(p, begin, end) : PairsT<false>(p, begin, end);
}

}  // namespace maxpool

const internal::MaxPoolSimd* GetMaxPoolSimd() {
  static const internal::MaxPoolSimd table = {&maxpool::Rows,
                                              &maxpool::Pixels,
                                              &maxpool::Planes,
                                              &maxpool::Strided,
                                              &maxpool::Pairs,
                                              &maxpool::PairsGrad,
                                              static_cast<int64_t>(hn::Lanes(maxpool::D()))};
  return &table;
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel::internal {
ONEMODEL_SIMD_TABLE_LOOKUP(MaxPoolSimd, GetMaxPoolSimd)
}  // namespace onemodel::internal
#endif
