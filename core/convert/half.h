// Conversions between float and the two 16-bit floating-point formats (spec 10), bit for bit.
//
// Integer bit code only: the results depend on no FPU rounding mode, no F16C instructions and
// no compiler choice, and every function is constexpr. float -> 16 bits rounds to nearest,
// ties to even; 16 bits -> float is exact.
//
//   Float16 h = ToFloat16(1.0f / 3.0f);  // bits 0x3555
//   float back = ToFloat(h);             // 0.333251953125, exactly the stored value
//   BFloat16 b = ToBFloat16(3.14159265f);  // bits 0x4049 (3.140625)
//   ToFloat16(70000.0f).bits;              // 0x7C00: |x| >= 65520 overflows to infinity
#pragma once

#include <bit>
#include <cstdint>

#include "core/dtype/dtype.h"

namespace onemodel {

// float -> IEEE binary16 bits, round to nearest even; NaN keeps its sign and top payload bits.
constexpr uint16_t FloatToHalfBits(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t a = bits & 0x7FFFFFFFu;
  uint32_t magnitude;
  if (a > 0x7F800000u) {
    // NaN: quiet, with the top nine payload bits.
    magnitude = 0x7E00u | ((a >> 13) & 0x1FFu);
  } else if (a >= 0x477FF000u) {
    // Infinity, or |x| >= 65520: at or past the midpoint between 65504 and 2^16.
    magnitude = 0x7C00u;
  } else if (a >= 0x38800000u) {
    // Normal: rebias the exponent (127 -> 15), round the 13 dropped bits to nearest even.
    // A carry out of the mantissa correctly increments the exponent.
    const uint32_t m = a - (112u << 23);
    magnitude = (m + 0xFFFu + ((m >> 13) & 1u)) >> 13;
  } else if (a <= 0x33000000u) {
    // |x| <= 2^-25, at most half the smallest subnormal: rounds to zero.
    magnitude = 0;
  } else {
    // Subnormal result: units of 2^-24. Rounding up to 0x400 yields the smallest normal.
    const uint32_t e = a >> 23;
    const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14 .. 24
    uint32_t r = mant >> shift;
    const uint32_t remainder = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (remainder > half || (remainder == half && (r & 1u) != 0)) ++r;
    magnitude = r;
  }
  return static_cast<uint16_t>(sign | magnitude);
}

// IEEE binary16 bits -> float, exact; a NaN keeps its payload (shifted left 13), made quiet.
constexpr float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1Fu) {
    bits = mantissa == 0 ? 0x7F800000u : 0x7F800000u | 0x400000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = 0;
  } else {
    // Subnormal mantissa * 2^-24: normalize so the leading one becomes the implicit bit.
    const uint32_t top = static_cast<uint32_t>(std::bit_width(mantissa)) - 1u;  // 0 .. 9
    bits = ((top + 103u) << 23) | ((mantissa << (23u - top)) & 0x7FFFFFu);
  }
  return std::bit_cast<float>(sign | bits);
}

// float -> bfloat16 bits, round to nearest even; NaN keeps sign and top payload bits, quiet.
constexpr uint16_t FloatToBFloat16Bits(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// bfloat16 bits -> float, exact; a NaN is made quiet.
constexpr float BFloat16BitsToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) bits |= 0x400000u;
  return std::bit_cast<float>(bits);
}

// float -> Float16 by FloatToHalfBits.
constexpr Float16 ToFloat16(float x) { return Float16{FloatToHalfBits(x)}; }

// float -> BFloat16 by FloatToBFloat16Bits.
constexpr BFloat16 ToBFloat16(float x) { return BFloat16{FloatToBFloat16Bits(x)}; }

// Float16 -> float, exact.
constexpr float ToFloat(Float16 h) { return HalfBitsToFloat(h.bits); }

// BFloat16 -> float, exact.
constexpr float ToFloat(BFloat16 b) { return BFloat16BitsToFloat(b.bits); }

}  // namespace onemodel
