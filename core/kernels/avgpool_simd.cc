// AvgPool2d's pixel loop (NHWC: channel stride 1), compiled once per SIMD target by Highway
// (foreach_target) and picked at run time through AvgPoolSimdFor(). Each lane sums one
// channel: +0.0f, then the window's in-bounds elements in row-major window order, then one
// division, so every target gives the reference's bits. Up to four vectors of channels are
// summed at once, so one window position reads up to 4 vectors' worth of contiguous channels
// and the sums' chains of adds overlap.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/avgpool_simd.cc"
// Highway needs this order: foreach_target, then highway.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <cstdint>

#include "core/kernels/internal/avgpool.h"
#include "core/kernels/internal/simd_tables.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace avgpool {

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

constexpr int kMaxGroup = 4;

// Channels [c0, c0 + kU * lanes) (kFull), or the first n of one vector, of one output pixel.
template <int kU, bool kFull>
HWY_INLINE void PixelVectors(const internal::AvgPixel& px, int64_t c0, int64_t n) {
  static_assert(kFull || kU == 1);
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto valid = hn::FirstN(d, static_cast<size_t>(n));
  V sum[kU];
  for (int u = 0; u < kU; ++u) sum[u] = hn::Zero(d);
  for (int64_t y = px.ys.lo; y < px.ys.hi; ++y) {
    for (int64_t x = px.xs.lo; x < px.xs.hi; ++x) {
      const float* src = px.image + y * px.sy + x * px.sx + c0;
      for (int u = 0; u < kU; ++u) {
        const V v = kFull ? hn::LoadU(d, src + u * lanes) : hn::MaskedLoad(valid, d, src);
        sum[u] = hn::Add(sum[u], v);
      }
    }
  }
  const V divisor = hn::Set(d, px.divisor);
  for (int u = 0; u < kU; ++u) {
    const V avg = hn::Div(sum[u], divisor);
    float* o = px.out + (c0 + u * lanes) * px.so;
    if (px.so == 1 && kFull) {
      hn::StoreU(avg, d, o);
    } else {
      HWY_ALIGN float buf[hn::MaxLanes(d)];
      hn::Store(avg, d, buf);
      for (int64_t i = 0; i < (kFull ? lanes : n); ++i) o[i * px.so] = buf[i];
    }
  }
}

void Pixel(const internal::AvgPixel& px) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D()));
  int64_t c0 = 0;
  for (; c0 + kMaxGroup * lanes <= px.c; c0 += kMaxGroup * lanes) {
    PixelVectors<kMaxGroup, true>(px, c0, lanes);
  }
  for (; c0 + lanes <= px.c; c0 += lanes) PixelVectors<1, true>(px, c0, lanes);
  if (c0 < px.c) PixelVectors<1, false>(px, c0, px.c - c0);
}

}  // namespace avgpool

const internal::AvgPoolSimd* GetAvgPoolSimd() {
  static const internal::AvgPoolSimd table = {&avgpool::Pixel};
  return &table;
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel::internal {
ONEMODEL_SIMD_TABLE_LOOKUP(AvgPoolSimd, GetAvgPoolSimd)
}  // namespace onemodel::internal
#endif
