// AvgPool2d's row loop (NHWC: channel stride 1), compiled once per SIMD target by Highway
// (foreach_target) and picked at run time through AvgPoolSimdFor(). Each lane sums one
// channel: +0.0f, then the window's in-bounds elements in row-major window order, then one
// division, so every target gives the reference's bits. Up to four vectors of channels are
// summed at once, so one window position reads up to 4 vectors' worth of contiguous channels
// and the sums' chains of adds overlap. The input of the column kAvgAhead columns on is
// prefetched meanwhile: without it the loop waited on memory (the hardware prefetchers did
// not follow the window's rows; docs/kernels.md).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/avgpool_simd.cc"
// Highway needs this order: foreach_target, then highway.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <algorithm>
#include <cstdint>

#include "core/kernels/internal/avgpool.h"
#include "core/kernels/internal/prefetch.h"
#include "core/kernels/internal/simd_tables.h"
#include "hwy/cache_control.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace avgpool {

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

constexpr int kMaxGroup = 4;
constexpr int64_t kLineFloats = 16;  // a 64-byte cache line

// The input one output column reads: rows ys, columns xs, channel stride 1.
struct Window {
  internal::AvgSpan ys, xs;
};

// Channels [c0, c0 + kU * lanes) (kFull), or the first n of one vector, of one output pixel
// (window `win`, divisor `divisor`, output channel 0 at `out`); prefetches the same channels
// of window `ahead` (skipped when empty). `stream`: o is vector-aligned, so is 1, written
// around the cache.
template <int kU, bool kFull>
HWY_INLINE void PixelVectors(const internal::AvgRow& r, const Window& win, const Window& ahead,
                             float divisor, float* out, int64_t c0, int64_t n, bool stream) {
  static_assert(kFull || kU == 1);
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t y = ahead.ys.lo; y < ahead.ys.hi; ++y) {
    for (int64_t x = ahead.xs.lo; x < ahead.xs.hi; ++x) {
      const float* src = r.image + y * r.sy + x * r.sx + c0;
      for (int64_t i = 0; i < (kFull ? kU * lanes : n); i += kLineFloats) {
        internal::PrefetchLine(src + i);
      }
    }
  }
  const auto valid = hn::FirstN(d, static_cast<size_t>(n));
  V sum[kU];
  for (int u = 0; u < kU; ++u) sum[u] = hn::Zero(d);
  for (int64_t y = win.ys.lo; y < win.ys.hi; ++y) {
    for (int64_t x = win.xs.lo; x < win.xs.hi; ++x) {
      const float* src = r.image + y * r.sy + x * r.sx + c0;
      for (int u = 0; u < kU; ++u) {
        const V v = kFull ? hn::LoadU(d, src + u * lanes) : hn::MaskedLoad(valid, d, src);
        sum[u] = hn::Add(sum[u], v);
      }
    }
  }
  const V div = hn::Set(d, divisor);
  for (int u = 0; u < kU; ++u) {
    const V avg = hn::Div(sum[u], div);
    float* o = out + (c0 + u * lanes) * r.so;
    if (kFull && stream) {
      hn::Stream(avg, d, o);
    } else if (r.so == 1 && kFull) {
      hn::StoreU(avg, d, o);
    } else {
      HWY_ALIGN float buf[hn::MaxLanes(d)];
      hn::Store(avg, d, buf);
      for (int64_t i = 0; i < (kFull ? lanes : n); ++i) o[i * r.so] = buf[i];
    }
  }
}

// The columns of output column `ox` (of the next output row when ox is past this row's end)
// that ox - 1 does not read: the last stride_w of its window; empty past the image's end.
Window AheadOf(const internal::AvgRow& r, int64_t ox) {
  const internal::AvgSpan ys = ox < r.ow ? r.ys : r.next_ys;
  if (ox >= r.ow) ox -= r.ow;
  if (ox >= r.ow || ys.lo >= ys.hi) return {};
  internal::AvgSpan xs = internal::AvgClip(ox, r.stride_w, r.pad_w, r.kernel_w, r.w, false);
  xs.lo = std::max(xs.lo, xs.hi - r.stride_w);
  return {ys, xs};
}

// Whether r's output is whole 64-byte lines, each written by full vectors.
bool WholeLines(const internal::AvgRow& r) {
  return r.so == 1 && r.c % kLineFloats == 0 && r.sox % kLineFloats == 0 &&
         reinterpret_cast<uintptr_t>(r.out) % 64 == 0 &&
         static_cast<int64_t>(hn::Lanes(D())) <= kLineFloats;
}

void Row(const internal::AvgRow& r) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  const bool stream = r.stream && WholeLines(r);
  for (int64_t ox = 0; ox < r.ow; ++ox) {
    const Window win = {
        r.ys, internal::AvgClip(ox, r.stride_w, r.pad_w, r.kernel_w, r.w, r.count_include_pad)};
    const Window ahead = AheadOf(r, ox + internal::kAvgAhead);
    const float divisor = static_cast<float>(win.ys.count * win.xs.count);
    float* out = r.out + ox * r.sox;
    int64_t c0 = 0;
    for (; c0 + kMaxGroup * lanes <= r.c; c0 += kMaxGroup * lanes) {
      PixelVectors<kMaxGroup, true>(r, win, ahead, divisor, out, c0, lanes, stream);
    }
    for (; c0 + lanes <= r.c; c0 += lanes) {
      PixelVectors<1, true>(r, win, ahead, divisor, out, c0, lanes, stream);
    }
    if (c0 < r.c) PixelVectors<1, false>(r, win, ahead, divisor, out, c0, r.c - c0, stream);
  }
  if (stream) hwy::FlushStream();
}

}  // namespace avgpool

const internal::AvgPoolSimd* GetAvgPoolSimd() {
  static const internal::AvgPoolSimd table = {&avgpool::Row};
  return &table;
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel::internal {
ONEMODEL_SIMD_TABLE_LOOKUP(AvgPoolSimd, GetAvgPoolSimd)
}  // namespace onemodel::internal
#endif
