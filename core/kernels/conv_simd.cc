// conv_fast.cc's shifted taps (internal/conv_simd.h), compiled once per SIMD target by Highway
// (foreach_target) and picked at run time through ConvSimdFor(). Each image's row is a few
// vectors (16 positions on the digits CNN's 4x4 layer: one AVX-512 vector), so a tap moves a
// whole batch of images in one call instead of one call per image.
//
// Everything is copied or added, nothing computed otherwise, so every target gives the same
// bits: unfold copies each input element as it is and writes +0 for padding; fold adds +0 for
// the padding columns inside [lo, hi), as the scalar loop it replaced did. AVX-512 reads
// through masked loads, which never touch the lanes they leave out (the positions outside a
// plane's tap range may lie outside the tensor), and writes each row whole. The other targets,
// and every target under ASan, read only [lo, hi), the keep mask ANDed in, in loops the
// compiler vectorizes for the target: Highway's masked loads may read the lanes they leave
// out there (its SCALAR target loads the element whatever the mask; AVX2 counts as "might
// fault", HWY_MEM_OPS_MIGHT_FAULT), and Highway 1.0.3 does not see GCC's ASan.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/conv_simd.cc"
// Highway needs this order: foreach_target, then highway.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include "core/kernels/internal/conv_simd.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/kernels/internal/simd_tables.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace conv {
using internal::TapPlan;

#if !(HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) || HWY_IS_ASAN || \
    defined(__SANITIZE_ADDRESS__)

// v with the keep mask ANDed in: v itself, or +0 for a padding column.
HWY_INLINE float Kept(float v, uint32_t keep) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(v) & keep);
}

// Positions [lo, hi) read input elements inside the plane, so these loops read without a mask
// and vectorize for the target.
void Unfold(const TapPlan& t, const float* in, int64_t image_stride, int64_t images, float* row) {
  for (int64_t n = 0; n < images; ++n, row += t.cols) {
    const float* plane = in + n * image_stride + t.from;
    std::fill(row, row + t.lo, 0.0f);
    for (int64_t e = t.lo; e < t.hi; ++e) row[e] = Kept(plane[e - t.lo], t.keep[e]);
    std::fill(row + t.hi, row + t.cols, 0.0f);
  }
}

void Fold(const TapPlan& t, const float* row, int64_t images, float* out, int64_t image_stride) {
  for (int64_t n = 0; n < images; ++n, row += t.cols) {
    float* plane = out + n * image_stride + t.from;
    for (int64_t e = t.lo; e < t.hi; ++e) plane[e - t.lo] += Kept(row[e], t.keep[e]);
  }
}

#else

using D = hn::ScalableTag<float>;
using DU = hn::RebindToUnsigned<D>;
using M = hn::Mask<D>;

// The lanes of positions [e, e + lanes) that read input, of the first `count` lanes.
HWY_INLINE M Keep(const TapPlan& t, int64_t e, M count) {
  const DU du;
  const auto keep = hn::MaskedLoad(hn::RebindMask(du, count), du, t.keep + e);
  return hn::RebindMask(D(), hn::Ne(keep, hn::Zero(du)));
}

void Unfold(const TapPlan& t, const float* in, int64_t image_stride, int64_t images, float* row) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const M all = hn::FirstN(d, lanes);
  for (int64_t n = 0; n < images; ++n, row += t.cols) {
    // Position e's element is at e - lo + from: src[e] for the lanes that keep it.
    const float* src = in + n * image_stride + (t.from - t.lo);
    int64_t e = 0;
    for (; e + lanes <= t.cols; e += lanes) {
      hn::StoreU(hn::MaskedLoad(Keep(t, e, all), d, src + e), d, row + e);
    }
    if (e < t.cols) {
      const M tail = hn::FirstN(d, static_cast<size_t>(t.cols - e));
      hn::BlendedStore(hn::MaskedLoad(Keep(t, e, tail), d, src + e), tail, d, row + e);
    }
  }
}

void Fold(const TapPlan& t, const float* row, int64_t images, float* out, int64_t image_stride) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const M all = hn::FirstN(d, lanes);
  for (int64_t n = 0; n < images; ++n, row += t.cols) {
    float* dst = out + n * image_stride + (t.from - t.lo);  // position e adds into dst[e]
    int64_t e = t.lo;
    for (; e + lanes <= t.hi; e += lanes) {
      const auto add = hn::MaskedLoad(Keep(t, e, all), d, row + e);
      hn::StoreU(hn::Add(hn::LoadU(d, dst + e), add), d, dst + e);
    }
    if (e < t.hi) {
      const M tail = hn::FirstN(d, static_cast<size_t>(t.hi - e));
      const auto add = hn::MaskedLoad(Keep(t, e, tail), d, row + e);
      hn::BlendedStore(hn::Add(hn::MaskedLoad(tail, d, dst + e), add), tail, d, dst + e);
    }
  }
}

#endif

}  // namespace conv

const internal::ConvSimd* GetConvSimd() {
  static const internal::ConvSimd table = {&conv::Unfold, &conv::Fold};
  return &table;
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel::internal {
ONEMODEL_SIMD_TABLE_LOOKUP(ConvSimd, GetConvSimd)
}  // namespace onemodel::internal
#endif
