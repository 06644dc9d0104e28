// Fast float <-> binary16 / bfloat16 conversion rows (spec 10's bit rules), one table per
// SIMD target. AVX2 and AVX-512 use F16C (vcvtps2ph with round-to-nearest-even, which quiets
// NaNs keeping the top payload bits, exactly spec 10's rule) and integer vector code for
// bfloat16; the portable fallback runs the scalar bit code of core/convert/half.h. Tests
// compare every target with that scalar code on all 65,536 16-bit patterns and millions of
// floats.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/simd_convert.cc"
// Highway needs foreach_target before highway.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include "core/convert/half.h"
#include "core/kernels/internal/simd_tables.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128

void FloatToHalfRow(int64_t n, const float* in, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToHalfBits(in[i]);
}
void HalfToFloatRow(int64_t n, const uint16_t* in, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = HalfBitsToFloat(in[i]);
}
void FloatToBFloat16Row(int64_t n, const float* in, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToBFloat16Bits(in[i]);
}
void BFloat16ToFloatRow(int64_t n, const uint16_t* in, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = BFloat16BitsToFloat(in[i]);
}

#else

using DF = hn::ScalableTag<float>;
using DU = hn::RebindToUnsigned<DF>;
using DH = hn::Rebind<hwy::float16_t, DF>;
using DU16 = hn::Rebind<uint16_t, DF>;

// Runs body(i) over whole vectors, then the tail through scalar fallback(i).
template <typename Body, typename Tail>
HWY_INLINE void Rows(int64_t n, const Body& body, const Tail& tail) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DF()));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) body(i);
  for (; i < n; ++i) tail(i);
}

void FloatToHalfRow(int64_t n, const float* in, uint16_t* out) {
  const DF df;
  const DH dh;
  Rows(
      n,
      [&](int64_t i) {
        hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, in + i)), dh,
                   reinterpret_cast<hwy::float16_t*>(out + i));
      },
      [&](int64_t i) { out[i] = FloatToHalfBits(in[i]); });
}

void HalfToFloatRow(int64_t n, const uint16_t* in, float* out) {
  const DF df;
  const DH dh;
  Rows(
      n,
      [&](int64_t i) {
        hn::StoreU(
            hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(in + i))), df,
            out + i);
      },
      [&](int64_t i) { out[i] = HalfBitsToFloat(in[i]); });
}

void FloatToBFloat16Row(int64_t n, const float* in, uint16_t* out) {
  const DF df;
  const DU du;
  const DU16 du16;
  const auto k7fff = hn::Set(du, 0x7FFFu);
  const auto one = hn::Set(du, 1u);
  const auto quiet = hn::Set(du, 0x40u);
  Rows(
      n,
      [&](int64_t i) {
        const auto v = hn::LoadU(df, in + i);
        const auto bits = hn::BitCast(du, v);
        const auto high = hn::ShiftRight<16>(bits);
        const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(bits, k7fff), hn::And(high, one)));
        const auto r =
            hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Or(high, quiet), rounded);
        // Every value is <= 0xFFFF, so the signed saturating narrowing is exact.
        hn::StoreU(hn::DemoteTo(du16, hn::BitCast(hn::RebindToSigned<DU>(), r)), du16, out + i);
      },
      [&](int64_t i) { out[i] = FloatToBFloat16Bits(in[i]); });
}

void BFloat16ToFloatRow(int64_t n, const uint16_t* in, float* out) {
  const DF df;
  const DU du;
  const DU16 du16;
  const auto exponent = hn::Set(du, 0x7F800000u);
  const auto quiet = hn::Set(du, 0x00400000u);
  Rows(
      n,
      [&](int64_t i) {
        const auto bits = hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(du16, in + i)));
        const auto abs = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
        const auto nan = hn::Gt(abs, exponent);
        hn::StoreU(hn::BitCast(df, hn::IfThenElse(nan, hn::Or(bits, quiet), bits)), df, out + i);
      },
      [&](int64_t i) { out[i] = BFloat16BitsToFloat(in[i]); });
}

#endif

const internal::ConvertSimd* GetConvertSimd() {
  static const internal::ConvertSimd table = {&FloatToHalfRow, &HalfToFloatRow, &FloatToBFloat16Row,
                                              &BFloat16ToFloatRow};
  return &table;
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel::internal {
ONEMODEL_SIMD_TABLE_LOOKUP(ConvertSimd, GetConvertSimd)
}  // namespace onemodel::internal
#endif
