// Fast float <-> binary16 / bfloat16 conversion rows (spec 10's bit rules), one table per
// SIMD target. AVX2 and AVX-512 use F16C (vcvtps2ph with round-to-nearest-even, which quiets
// NaNs keeping the top payload bits, exactly spec 10's rule) and integer vector code for
// bfloat16; the portable fallback runs the scalar bit code of core/convert/half.h. Tests
// compare every target with that scalar code on all 65,536 16-bit patterns and millions of
// floats. Each row exists twice: with ordinary stores and with streaming stores, for outputs
// too large to stay in cache (streaming_stores.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/simd_convert.cc"
// Highway needs foreach_target before highway.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on
#include <algorithm>
#include <cstdint>

#include "core/convert/half.h"
#include "core/kernels/internal/simd_tables.h"
#include "core/kernels/streaming_stores.h"
#include "hwy/cache_control.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128

// The portable fallback stores element by element: its streaming rows are these same rows.
template <bool kStream>
void FloatToHalfRow(int64_t n, const float* in, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToHalfBits(in[i]);
}
template <bool kStream>
void HalfToFloatRow(int64_t n, const uint16_t* in, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = HalfBitsToFloat(in[i]);
}
template <bool kStream>
void FloatToBFloat16Row(int64_t n, const float* in, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToBFloat16Bits(in[i]);
}
template <bool kStream>
void BFloat16ToFloatRow(int64_t n, const uint16_t* in, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = BFloat16BitsToFloat(in[i]);
}

#else

using DF = hn::ScalableTag<float>;
using DU = hn::RebindToUnsigned<DF>;
using DH = hn::Rebind<hwy::float16_t, DF>;
using DU16 = hn::Rebind<uint16_t, DF>;

// Runs body(i) over whole vectors, the tail through scalar tail(i). kStream (the body stores
// with Put<true>): the elements before out's first 64-byte boundary go through tail(i) too,
// the input `in` is prefetched ahead, and the row fences its streaming stores before
// returning.
template <bool kStream, typename In, typename Out, typename Body, typename Tail>
HWY_INLINE void Rows(int64_t n, const In* in, const Out* out, const Body& body, const Tail& tail) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DF()));
  int64_t i = 0;
  if constexpr (kStream) {
    for (const int64_t head = ElementsBeforeLine(out, n); i < head; ++i) tail(i);
  }
  for (; i + lanes <= n; i += lanes) {
    PrefetchAhead<kStream>(in + i);
    body(i);
  }
  for (; i < n; ++i) tail(i);
  if constexpr (kStream) hwy::FlushStream();
}

// Stores the whole vector v at p: around the cache when kStream (p aligned to the vector),
// else an ordinary store.
template <bool kStream, class DX, class VX, typename T>
HWY_INLINE void Put(DX d, VX v, T* p) {
  if constexpr (kStream) {
    hn::Stream(v, d, p);
  } else {
    hn::StoreU(v, d, p);
  }
}

template <bool kStream>
void FloatToHalfRow(int64_t n, const float* in, uint16_t* out) {
  const DF df;
  const DH dh;
  Rows<kStream>(
      n, in, out,
      [&](int64_t i) {
        Put<kStream>(dh, hn::DemoteTo(dh, hn::LoadU(df, in + i)),
                     reinterpret_cast<hwy::float16_t*>(out + i));
      },
      [&](int64_t i) { out[i] = FloatToHalfBits(in[i]); });
}

template <bool kStream>
void HalfToFloatRow(int64_t n, const uint16_t* in, float* out) {
  const DF df;
  const DH dh;
  Rows<kStream>(
      n, in, out,
      [&](int64_t i) {
        Put<kStream>(
            df, hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(in + i))),
            out + i);
      },
      [&](int64_t i) { out[i] = HalfBitsToFloat(in[i]); });
}

template <bool kStream>
void FloatToBFloat16Row(int64_t n, const float* in, uint16_t* out) {
  const DF df;
  const DU du;
  const DU16 du16;
  const auto k7fff = hn::Set(du, 0x7FFFu);
  const auto one = hn::Set(du, 1u);
  const auto quiet = hn::Set(du, 0x40u);
  Rows<kStream>(
      n, in, out,
      [&](int64_t i) {
        const auto v = hn::LoadU(df, in + i);
        const auto bits = hn::BitCast(du, v);
        const auto high = hn::ShiftRight<16>(bits);
        const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(bits, k7fff), hn::And(high, one)));
        const auto r =
            hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Or(high, quiet), rounded);
        // Every value is <= 0xFFFF, so the signed saturating narrowing is exact.
        Put<kStream>(du16, hn::DemoteTo(du16, hn::BitCast(hn::RebindToSigned<DU>(), r)), out + i);
      },
      [&](int64_t i) { out[i] = FloatToBFloat16Bits(in[i]); });
}

template <bool kStream>
void BFloat16ToFloatRow(int64_t n, const uint16_t* in, float* out) {
  const DF df;
  const DU du;
  const DU16 du16;
  const auto exponent = hn::Set(du, 0x7F800000u);
  const auto quiet = hn::Set(du, 0x00400000u);
  Rows<kStream>(
      n, in, out,
      [&](int64_t i) {
        const auto bits = hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(du16, in + i)));
        const auto abs = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
        const auto nan = hn::Gt(abs, exponent);
        Put<kStream>(df, hn::BitCast(df, hn::IfThenElse(nan, hn::Or(bits, quiet), bits)), out + i);
      },
      [&](int64_t i) { out[i] = BFloat16BitsToFloat(in[i]); });
}

#endif

const internal::ConvertSimd* GetConvertSimd() {
  static const internal::ConvertSimd table = {
      &FloatToHalfRow<false>,     &HalfToFloatRow<false>,   &FloatToBFloat16Row<false>,
      &BFloat16ToFloatRow<false>, &FloatToHalfRow<true>,    &HalfToFloatRow<true>,
      &FloatToBFloat16Row<true>,  &BFloat16ToFloatRow<true>};
  return &table;
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel::internal {
ONEMODEL_SIMD_TABLE_LOOKUP(ConvertSimd, GetConvertSimd)
}  // namespace onemodel::internal
#endif
