#include "core/convert/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tests/core/convert/reference.h"

namespace onemodel {
namespace {

using reference::BFloat16Table;
using reference::BFloat16Value;
using reference::HalfTable;
using reference::HalfValue;
using reference::ReferenceBFloat16Bits;
using reference::ReferenceHalfBits;

constexpr float kInf = std::numeric_limits<float>::infinity();

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }
uint16_t Index(size_t i) { return static_cast<uint16_t>(i); }
bool IsHalfNaN(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }
bool IsBFloat16NaN(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0; }

// Spec 10's explicit NaN rules, written out separately from the value references.
uint16_t ExpectedHalfNaN(uint32_t float_bits) {
  return static_cast<uint16_t>(((float_bits >> 16) & 0x8000) | 0x7E00 |
                               ((float_bits >> 13) & 0x1FF));
}
uint16_t ExpectedBFloat16NaN(uint32_t float_bits) {
  return static_cast<uint16_t>((float_bits >> 16) | 0x40);
}

// Checks float -> half and float -> bfloat16 of x against the references (or the NaN rules).
void ExpectBothMatchReference(float x) {
  const uint32_t bits = Bits(x);
  if (std::isnan(x)) {
    ASSERT_EQ(FloatToHalfBits(x), ExpectedHalfNaN(bits)) << std::hex << bits;
    ASSERT_EQ(FloatToBFloat16Bits(x), ExpectedBFloat16NaN(bits)) << std::hex << bits;
    return;
  }
  ASSERT_EQ(FloatToHalfBits(x), ReferenceHalfBits(x)) << std::hex << "float bits 0x" << bits;
  ASSERT_EQ(FloatToBFloat16Bits(x), ReferenceBFloat16Bits(x))
      << std::hex << "float bits 0x" << bits;
}

// ---------------------------------------------------------------------------------------------
// binary16 -> float

TEST(HalfToFloat, AllNonNaNPatternsEqualTheirFieldValue) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    if (IsHalfNaN(bits)) continue;
    const float got = HalfBitsToFloat(bits);
    ASSERT_EQ(static_cast<double>(got), HalfValue(bits)) << std::hex << h;
    ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << std::hex << h;
  }
}

TEST(HalfToFloat, AllNaNPatternsAreNaNWithShiftedPayloadAndQuietBit) {
  int nans = 0;
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    if (!IsHalfNaN(bits)) continue;
    ++nans;
    const float got = HalfBitsToFloat(bits);
    ASSERT_TRUE(std::isnan(got)) << std::hex << h;
    const uint32_t expected =
        ((h & 0x8000u) << 16) | 0x7F800000u | 0x400000u | ((h & 0x3FFu) << 13);
    ASSERT_EQ(Bits(got), expected) << std::hex << h;
  }
  EXPECT_EQ(nans, 2 * 1023);
}

TEST(HalfToFloat, SubnormalsAreMantissaTimesTwoToMinus24) {
  for (uint32_t m = 1; m < 0x400; ++m) {
    ASSERT_EQ(HalfBitsToFloat(static_cast<uint16_t>(m)), std::ldexp(static_cast<float>(m), -24));
    ASSERT_EQ(HalfBitsToFloat(static_cast<uint16_t>(0x8000 | m)),
              -std::ldexp(static_cast<float>(m), -24));
  }
}

TEST(HalfToFloat, KnownValues) {
  EXPECT_EQ(HalfBitsToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfBitsToFloat(0xC000), -2.0f);
  EXPECT_EQ(HalfBitsToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfBitsToFloat(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(HalfBitsToFloat(0x7C00), kInf);
  EXPECT_EQ(HalfBitsToFloat(0xFC00), -kInf);
  EXPECT_EQ(Bits(HalfBitsToFloat(0x0000)), 0x00000000u);
  EXPECT_EQ(Bits(HalfBitsToFloat(0x8000)), 0x80000000u);
}

// ---------------------------------------------------------------------------------------------
// bfloat16 -> float

TEST(BFloat16ToFloat, AllNonNaNPatternsEqualTheirFieldValue) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    if (IsBFloat16NaN(bits)) continue;
    const float got = BFloat16BitsToFloat(bits);
    ASSERT_EQ(static_cast<double>(got), BFloat16Value(bits)) << std::hex << b;
    ASSERT_EQ(std::signbit(got), (b & 0x8000) != 0) << std::hex << b;
  }
}

TEST(BFloat16ToFloat, AllNaNPatternsAreNaNWithQuietBitForced) {
  int nans = 0;
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    if (!IsBFloat16NaN(bits)) continue;
    ++nans;
    const float got = BFloat16BitsToFloat(bits);
    ASSERT_TRUE(std::isnan(got)) << std::hex << b;
    ASSERT_EQ(Bits(got), (b << 16) | 0x400000u) << std::hex << b;
  }
  EXPECT_EQ(nans, 2 * 127);
}

TEST(BFloat16ToFloat, NonNaNIsTheBitsShiftedLeft16) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    if (IsBFloat16NaN(static_cast<uint16_t>(b))) continue;
    ASSERT_EQ(Bits(BFloat16BitsToFloat(static_cast<uint16_t>(b))), b << 16) << std::hex << b;
  }
}

TEST(BFloat16ToFloat, KnownValues) {
  EXPECT_EQ(BFloat16BitsToFloat(0x3F80), 1.0f);
  EXPECT_EQ(BFloat16BitsToFloat(0x4049), 3.140625f);
  EXPECT_EQ(BFloat16BitsToFloat(0x7F7F), FromBits(0x7F7F0000));
  EXPECT_EQ(BFloat16BitsToFloat(0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(BFloat16BitsToFloat(0xFF80), -kInf);
}

// ---------------------------------------------------------------------------------------------
// float -> binary16

TEST(FloatToHalf, EveryNonNaNHalfRoundTrips) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    if (IsHalfNaN(bits)) continue;
    ASSERT_EQ(FloatToHalfBits(HalfBitsToFloat(bits)), bits) << std::hex << h;
  }
}

TEST(FloatToHalf, NaNRoundTripKeepsPayloadAndSetsQuietBit) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    if (!IsHalfNaN(bits)) continue;
    ASSERT_EQ(FloatToHalfBits(HalfBitsToFloat(bits)), bits | 0x0200) << std::hex << h;
  }
}

TEST(FloatToHalf, TwoMillionRandomFloatsMatchNearestReference) {
  std::mt19937_64 rng(0x5EED0F16);
  for (int i = 0; i < 1'000'000; ++i) {
    const uint64_t r = rng();
    const float a = FromBits(static_cast<uint32_t>(r));
    const float b = FromBits(static_cast<uint32_t>(r >> 32));
    ASSERT_EQ(FloatToHalfBits(a), std::isnan(a) ? ExpectedHalfNaN(Bits(a)) : ReferenceHalfBits(a))
        << std::hex << Bits(a);
    ASSERT_EQ(FloatToHalfBits(b), std::isnan(b) ? ExpectedHalfNaN(Bits(b)) : ReferenceHalfBits(b))
        << std::hex << Bits(b);
  }
}

TEST(FloatToHalf, RandomFloatsInTheHalfRangeMatchNearestReference) {
  // Uniform bit patterns rarely land in |x| < 65536; these all do, sign included.
  std::mt19937_64 rng(0xF16F16);
  std::uniform_int_distribution<uint32_t> pattern(0x30000000u, 0x47800000u);
  for (int i = 0; i < 500'000; ++i) {
    const uint32_t bits = pattern(rng) | (i % 2 == 0 ? 0u : 0x80000000u);
    ASSERT_EQ(FloatToHalfBits(FromBits(bits)), ReferenceHalfBits(FromBits(bits)))
        << std::hex << bits;
  }
}

TEST(FloatToHalf, ExactMidpointsTieToEven) {
  // Every pair of adjacent non-negative halves, 65504 and 65536 (infinity) included. The
  // midpoint has 12 significant bits, so float holds it exactly.
  const std::vector<double>& table = HalfTable();
  for (size_t i = 0; i + 1 < table.size(); ++i) {
    const float mid = static_cast<float>((table[i] + table[i + 1]) / 2);
    ASSERT_EQ(static_cast<double>(mid), (table[i] + table[i + 1]) / 2);
    const uint16_t even = static_cast<uint16_t>(i % 2 == 0 ? i : i + 1);
    ASSERT_EQ(FloatToHalfBits(mid), even) << "between half bits " << std::hex << i;
    ASSERT_EQ(FloatToHalfBits(-mid), 0x8000 | even) << "between half bits " << std::hex << i;
    ASSERT_EQ(ReferenceHalfBits(mid), even);
  }
}

TEST(FloatToHalf, FloatsAdjacentToEveryMidpointRoundToTheNearerSide) {
  const std::vector<double>& table = HalfTable();
  for (size_t i = 0; i + 1 < table.size(); ++i) {
    const float mid = static_cast<float>((table[i] + table[i + 1]) / 2);
    const float below = std::nextafter(mid, 0.0f);
    const float above = std::nextafter(mid, kInf);
    ASSERT_EQ(FloatToHalfBits(below), Index(i)) << std::hex << i;
    ASSERT_EQ(FloatToHalfBits(above), Index(i + 1)) << std::hex << i;
    ASSERT_EQ(FloatToHalfBits(-below), 0x8000 | Index(i)) << std::hex << i;
    ASSERT_EQ(FloatToHalfBits(-above), 0x8000 | Index(i + 1)) << std::hex << i;
    ExpectBothMatchReference(below);
    ExpectBothMatchReference(above);
  }
}

TEST(FloatToHalf, EveryFloatExponentBoundary) {
  // 2^e, its float neighbours and the largest float below 2^(e+1), for every float exponent.
  for (uint32_t e = 0; e < 255; ++e) {
    for (uint32_t bits : {e << 23, (e << 23) + 1, (e << 23) + 2, (e << 23) | 0x7FFFFFu,
                          (e << 23) | 0x7FFFFEu, (e << 23) | 0x400000u, (e << 23) | 0x001000u,
                          (e << 23) | 0x002000u, (e << 23) | 0x003000u}) {
      ExpectBothMatchReference(FromBits(bits));
      ExpectBothMatchReference(FromBits(bits | 0x80000000u));
    }
  }
}

TEST(FloatToHalf, WholeSubnormalRangeMatchesSweptReference) {
  // Every float from 2^-26 to 2^-14 (the half subnormals and the zero/one-unit boundary),
  // against a reference that walks the table alongside (ties to even by bits).
  const std::vector<double>& table = HalfTable();
  size_t lo = 0;
  for (uint32_t bits = 0x32800000u; bits <= 0x38800000u; ++bits) {
    const double x = FromBits(bits);
    while (table[lo + 1] <= x) ++lo;
    const double mid = (table[lo] + table[lo + 1]) / 2;
    const size_t expected = x < mid ? lo : x > mid ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
    const uint16_t got = FloatToHalfBits(FromBits(bits));
    if (got != Index(expected)) {
      ASSERT_EQ(got, Index(expected)) << std::hex << "float bits 0x" << bits;
    }
  }
}

TEST(FloatToHalf, SubnormalTiesRoundToEven) {
  const float unit = std::ldexp(1.0f, -24);
  EXPECT_EQ(FloatToHalfBits(0.5f * unit), 0x0000);  // tie between 0 and 1: even is 0
  EXPECT_EQ(FloatToHalfBits(1.5f * unit), 0x0002);  // tie between 1 and 2
  EXPECT_EQ(FloatToHalfBits(2.5f * unit), 0x0002);  // tie between 2 and 3
  EXPECT_EQ(FloatToHalfBits(3.5f * unit), 0x0004);  // tie between 3 and 4
  EXPECT_EQ(FloatToHalfBits(1022.5f * unit), 0x03FE);
  EXPECT_EQ(FloatToHalfBits(1023.5f * unit), 0x0400);  // carries into the smallest normal
  EXPECT_EQ(FloatToHalfBits(-1.5f * unit), 0x8002);
}

TEST(FloatToHalf, UnderflowThreshold) {
  EXPECT_EQ(FloatToHalfBits(FromBits(0x33000000u)), 0x0000);  // 2^-25, tie with 0 goes to 0
  EXPECT_EQ(FloatToHalfBits(FromBits(0x33000001u)), 0x0001);  // just above: smallest subnormal
  EXPECT_EQ(FloatToHalfBits(FromBits(0x32FFFFFFu)), 0x0000);
  EXPECT_EQ(FloatToHalfBits(FromBits(0xB3000000u)), 0x8000);
  EXPECT_EQ(FloatToHalfBits(FromBits(0xB3000001u)), 0x8001);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::min()), 0x0000);
}

TEST(FloatToHalf, OverflowThreshold) {
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65519.99f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7C00);  // the tie between 65504 and 2^16 goes up
  EXPECT_EQ(Bits(65520.0f), 0x477FF000u);
  EXPECT_EQ(FloatToHalfBits(65536.0f), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(1e10f), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::max()), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-65519.99f), 0xFBFF);
  EXPECT_EQ(FloatToHalfBits(-65520.0f), 0xFC00);
  EXPECT_EQ(FloatToHalfBits(-std::numeric_limits<float>::max()), 0xFC00);
}

TEST(FloatToHalf, SignedZerosAndInfinities) {
  EXPECT_EQ(FloatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(kInf), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-kInf), 0xFC00);
}

TEST(FloatToHalf, KnownValues) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalfBits(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(FloatToHalfBits(0.1f), 0x2E66);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(FloatToHalfBits(2049.0f), 0x6800);  // tie between 2048 and 2050: even is 2048
  EXPECT_EQ(FloatToHalfBits(2051.0f), 0x6802);  // tie between 2050 and 2052: even is 2052
}

TEST(FloatToHalf, NaNKeepsSignAndTopNinePayloadBitsAndIsQuiet) {
  std::vector<uint32_t> payloads = {1,        2,        0x1FFF,   0x2000,   0x3FFFFF, 0x400000,
                                    0x400001, 0x7FFFFF, 0x555555, 0x2AAAAA, 0x7FE000, 0x001FFF};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) payloads.push_back(static_cast<uint32_t>(rng()) & 0x7FFFFF);
  for (uint32_t payload : payloads) {
    if (payload == 0) continue;
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t bits = sign | 0x7F800000u | payload;
      const uint16_t got = FloatToHalfBits(FromBits(bits));
      ASSERT_EQ(got, ExpectedHalfNaN(bits)) << std::hex << bits;
      ASSERT_TRUE(IsHalfNaN(got)) << std::hex << bits;
      ASSERT_EQ(got & 0x0200, 0x0200) << std::hex << bits;
      ASSERT_EQ((got & 0x8000) != 0, sign != 0) << std::hex << bits;
    }
  }
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(FloatToHalfBits(FromBits(0x7F800001u)), 0x7E00);  // signalling, low payload lost
  EXPECT_EQ(FloatToHalfBits(FromBits(0xFFFFFFFFu)), 0xFFFF);
}

// ---------------------------------------------------------------------------------------------
// float -> bfloat16

TEST(FloatToBFloat16, EveryNonNaNBFloat16RoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    if (IsBFloat16NaN(bits)) continue;
    ASSERT_EQ(FloatToBFloat16Bits(BFloat16BitsToFloat(bits)), bits) << std::hex << b;
  }
}

TEST(FloatToBFloat16, NaNRoundTripSetsQuietBit) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    if (!IsBFloat16NaN(bits)) continue;
    ASSERT_EQ(FloatToBFloat16Bits(BFloat16BitsToFloat(bits)), bits | 0x40) << std::hex << b;
  }
}

TEST(FloatToBFloat16, TwoMillionRandomFloatsMatchNearestReference) {
  std::mt19937_64 rng(0xB16B16);
  for (int i = 0; i < 1'000'000; ++i) {
    const uint64_t r = rng();
    for (float x : {FromBits(static_cast<uint32_t>(r)), FromBits(static_cast<uint32_t>(r >> 32))}) {
      const uint16_t expected =
          std::isnan(x) ? ExpectedBFloat16NaN(Bits(x)) : ReferenceBFloat16Bits(x);
      ASSERT_EQ(FloatToBFloat16Bits(x), expected) << std::hex << Bits(x);
    }
  }
}

TEST(FloatToBFloat16, ExactMidpointsTieToEven) {
  // Every pair of adjacent non-negative bfloat16 values, the largest finite and 2^128
  // (infinity) included; midpoints have 9 significant bits and are floats.
  const std::vector<double>& table = BFloat16Table();
  for (size_t i = 0; i + 1 < table.size(); ++i) {
    const double mid = (table[i] + table[i + 1]) / 2;
    const uint16_t even = static_cast<uint16_t>(i % 2 == 0 ? i : i + 1);
    const float f = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(f), mid);
    ASSERT_EQ(FloatToBFloat16Bits(f), even) << std::hex << i;
    ASSERT_EQ(FloatToBFloat16Bits(-f), 0x8000 | even) << std::hex << i;
    ASSERT_EQ(ReferenceBFloat16Bits(f), even);
  }
}

TEST(FloatToBFloat16, FloatsAdjacentToEveryMidpointRoundToTheNearerSide) {
  const std::vector<double>& table = BFloat16Table();
  for (size_t i = 0; i + 1 < table.size(); ++i) {
    const float mid = static_cast<float>((table[i] + table[i + 1]) / 2);
    const float below = std::nextafter(mid, 0.0f);
    const float above = std::nextafter(mid, kInf);
    ASSERT_EQ(FloatToBFloat16Bits(below), Index(i)) << std::hex << i;
    ASSERT_EQ(FloatToBFloat16Bits(above), Index(i + 1)) << std::hex << i;
    ASSERT_EQ(FloatToBFloat16Bits(-below), 0x8000 | Index(i)) << std::hex << i;
    ASSERT_EQ(FloatToBFloat16Bits(-above), 0x8000 | Index(i + 1)) << std::hex << i;
  }
}

TEST(FloatToBFloat16, SubnormalFloatsMatchNearestReference) {
  // Every 97th float subnormal (they map onto bfloat16 subnormals and the smallest normal).
  for (uint32_t bits = 0; bits <= 0x00800000u; bits += 97) {
    ExpectBothMatchReference(FromBits(bits));
    ExpectBothMatchReference(FromBits(bits | 0x80000000u));
  }
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x00008000u)), 0x0000);  // tie with 0
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x00008001u)), 0x0001);
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x00018000u)), 0x0002);  // tie between 1 and 2
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x007FFFFFu)), 0x0080);  // up to the smallest normal
}

TEST(FloatToBFloat16, OverflowToInfinity) {
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x7F7F0000u)), 0x7F7F);  // largest finite bfloat16
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x7F7F7FFFu)), 0x7F7F);
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x7F7F8000u)), 0x7F80);  // tie goes to even: infinity
  EXPECT_EQ(FloatToBFloat16Bits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(FloatToBFloat16Bits(-std::numeric_limits<float>::max()), 0xFF80);
}

TEST(FloatToBFloat16, SignedZerosAndInfinities) {
  EXPECT_EQ(FloatToBFloat16Bits(0.0f), 0x0000);
  EXPECT_EQ(FloatToBFloat16Bits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBFloat16Bits(kInf), 0x7F80);
  EXPECT_EQ(FloatToBFloat16Bits(-kInf), 0xFF80);
}

TEST(FloatToBFloat16, KnownValues) {
  EXPECT_EQ(FloatToBFloat16Bits(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBFloat16Bits(3.14159265f), 0x4049);
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x3F808000u)), 0x3F80);  // tie: even is 0x3F80
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x3F818000u)), 0x3F82);  // tie: even is 0x3F82
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x3F808001u)), 0x3F81);
}

TEST(FloatToBFloat16, NaNIsTopBitsWithQuietBit) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 4000; ++i) {
    const uint32_t payload = (static_cast<uint32_t>(rng()) & 0x7FFFFFu) | (i < 23 ? 1u << i : 0u);
    if (payload == 0) continue;
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t bits = sign | 0x7F800000u | payload;
      const uint16_t got = FloatToBFloat16Bits(FromBits(bits));
      ASSERT_EQ(got, ExpectedBFloat16NaN(bits)) << std::hex << bits;
      ASSERT_TRUE(IsBFloat16NaN(got)) << std::hex << bits;
      ASSERT_EQ((got & 0x8000) != 0, sign != 0) << std::hex << bits;
    }
  }
  // A payload only in the low 16 bits would truncate to infinity; the quiet bit prevents it.
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x7F800001u)), 0x7FC0);
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0xFF80FFFFu)), 0xFFC0);
  EXPECT_EQ(FloatToBFloat16Bits(FromBits(0x7FFFFFFFu)), 0x7FFF);
}

// ---------------------------------------------------------------------------------------------
// The typed wrappers

TEST(HalfWrappers, AgreeWithTheBitFunctions) {
  for (float x : {0.0f, -0.0f, 1.0f, -1.5f, 65519.0f, 1e-6f, 3.0e38f, kInf}) {
    EXPECT_EQ(ToFloat16(x).bits, FloatToHalfBits(x));
    EXPECT_EQ(ToBFloat16(x).bits, FloatToBFloat16Bits(x));
    EXPECT_EQ(ToFloat(ToFloat16(x)), HalfBitsToFloat(FloatToHalfBits(x)));
    EXPECT_EQ(ToFloat(ToBFloat16(x)), BFloat16BitsToFloat(FloatToBFloat16Bits(x)));
  }
}

TEST(HalfWrappers, UsableInConstantExpressions) {
  static_assert(ToFloat16(1.0f).bits == 0x3C00);
  static_assert(ToBFloat16(-2.0f).bits == 0xC000);
  static_assert(ToFloat(Float16{0x3555}) == 0.333251953125f);
  static_assert(ToFloat(BFloat16{0x4049}) == 3.140625f);
  static_assert(FloatToHalfBits(65520.0f) == 0x7C00);
  SUCCEED();
}

}  // namespace
}  // namespace onemodel
