#include "core/convert/cast.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/common/exceptions.h"
#include "core/convert/half.h"
#include "tests/core/convert/reference.h"

namespace onemodel {
namespace {

using reference::BFloat16Value;
using reference::HalfValue;
using reference::ReferenceBFloat16Bits;
using reference::ReferenceHalfBits;
using reference::ReferenceRoundInteger;
using reference::ReferenceRoundUnsigned;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------------
// Test-side type machinery, independent of cast.cc's dispatch.

template <typename T>
struct TypeTag {
  using Type = T;
};

// Calls f(TypeTag<T>{}) for the storage type of each of the thirteen supported types.
template <typename F>
void ForEachType(F&& f) {
  f(TypeTag<float>{});
  f(TypeTag<uint8_t>{});
  f(TypeTag<int8_t>{});
  f(TypeTag<uint16_t>{});
  f(TypeTag<int16_t>{});
  f(TypeTag<int32_t>{});
  f(TypeTag<int64_t>{});
  f(TypeTag<bool>{});
  f(TypeTag<Float16>{});
  f(TypeTag<double>{});
  f(TypeTag<uint32_t>{});
  f(TypeTag<uint64_t>{});
  f(TypeTag<BFloat16>{});
}

template <typename F>
void ForEachIntegerType(F&& f) {
  ForEachType([&](auto tag) {
    using T = typename decltype(tag)::Type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) f(tag);
  });
}

template <typename F>
void ForEachFloatingType(F&& f) {
  f(TypeTag<float>{});
  f(TypeTag<double>{});
  f(TypeTag<Float16>{});
  f(TypeTag<BFloat16>{});
}

// Storage of T in a buffer: a BOOL element is one byte.
template <typename T>
using Storage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// A floating-point value of type T holding d (rounded by the references for 16-bit types).
template <typename T>
T MakeFloating(double d) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16{std::isnan(d) ? static_cast<uint16_t>(std::signbit(d) ? 0xFE00 : 0x7E00)
                                 : ReferenceHalfBits(d)};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{std::isnan(d) ? static_cast<uint16_t>(std::signbit(d) ? 0xFFC0 : 0x7FC0)
                                  : ReferenceBFloat16Bits(d)};
  } else {
    return static_cast<T>(d);
  }
}

// A small non-negative integer v as type T's storage.
template <typename T>
Storage<T> MakeSmall(int v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0 ? 1 : 0;
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return MakeFloating<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// The value held in type T's storage, as a double (exact for every small value used here).
template <typename T>
double ReadAsDouble(Storage<T> s) {
  if constexpr (std::is_same_v<T, bool>) {
    return s != 0 ? 1.0 : 0.0;
  } else if constexpr (std::is_same_v<T, Float16>) {
    return HalfValue(s.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16Value(s.bits);
  } else {
    return static_cast<double>(s);
  }
}

// One element through CastElements, the public path.
template <typename To, typename From>
To CastOne(From v) {
  To out{};
  CastElements(DTypeOf<From>(), &v, DTypeOf<To>(), &out, 1);
  return out;
}

// The nearest float to the value (checked against ReferenceRoundInteger's 24-bit rounding).
double FloatValue(float f) { return static_cast<double>(f); }

std::string Name(DType t) { return std::string(OnnxName(t)); }

// ---------------------------------------------------------------------------------------------
// float -> integer: truncation, saturation, NaN

TEST(CastFloatToInteger, LargeFloatSaturatesToInt32Max) {
  EXPECT_EQ(CastOne<int32_t>(3e9f), 2147483647);
  EXPECT_EQ(CastOne<int32_t>(-3e9f), -2147483647 - 1);
  EXPECT_EQ(CastOne<int32_t>(2147483648.0f), 2147483647);  // 2^31, the first float past max
}

TEST(CastFloatToInteger, NegativeInfinityToInt8IsMinimum) {
  EXPECT_EQ(CastOne<int8_t>(-std::numeric_limits<float>::infinity()), -128);
  EXPECT_EQ(CastOne<int8_t>(-128.9f), -128);
  EXPECT_EQ(CastOne<int8_t>(-129.0f), -128);
  EXPECT_EQ(CastOne<int8_t>(127.9f), 127);
  EXPECT_EQ(CastOne<int8_t>(1000.0f), 127);
}

TEST(CastFloatToInteger, PositiveInfinityToUint8IsMaximum) {
  EXPECT_EQ(CastOne<uint8_t>(std::numeric_limits<float>::infinity()), 255);
  EXPECT_EQ(CastOne<uint8_t>(255.9f), 255);
  EXPECT_EQ(CastOne<uint8_t>(256.0f), 255);
  EXPECT_EQ(CastOne<uint8_t>(300.0f), 255);  // saturates; only integer sources wrap
}

TEST(CastFloatToInteger, NegativeToUnsignedIsZero) {
  EXPECT_EQ(CastOne<uint32_t>(-1.5f), 0u);
  EXPECT_EQ(CastOne<uint32_t>(-0.5f), 0u);
  EXPECT_EQ(CastOne<uint32_t>(-0.0f), 0u);
  EXPECT_EQ(CastOne<uint64_t>(-1e300), 0u);
  EXPECT_EQ(CastOne<uint16_t>(-kInf), 0u);
  EXPECT_EQ(CastOne<uint8_t>(Float16{0xBC00}), 0u);  // -1 in binary16
}

TEST(CastFloatToInteger, NaNIsZeroForEveryIntegerTypeFromEveryFloatingType) {
  int checked = 0;
  ForEachFloatingType([&](auto from_tag) {
    using From = typename decltype(from_tag)::Type;
    ForEachIntegerType([&](auto to_tag) {
      using To = typename decltype(to_tag)::Type;
      for (double nan : {kNaN, -kNaN}) {
        EXPECT_EQ(CastOne<To>(MakeFloating<From>(nan)), To{0})
            << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
        ++checked;
      }
    });
  });
  // Signalling and payload-carrying NaNs too.
  for (uint32_t bits : {0x7F800001u, 0xFFFFFFFFu, 0x7FC12345u}) {
    EXPECT_EQ(CastOne<int32_t>(std::bit_cast<float>(bits)), 0);
    EXPECT_EQ(CastOne<uint64_t>(std::bit_cast<float>(bits)), 0u);
  }
  EXPECT_EQ(checked, 4 * 8 * 2);  // 4 floating types, 8 integer types, 2 signs
}

TEST(CastFloatToInteger, InfinitiesSaturateForEveryIntegerTypeFromEveryFloatingType) {
  ForEachFloatingType([&](auto from_tag) {
    using From = typename decltype(from_tag)::Type;
    ForEachIntegerType([&](auto to_tag) {
      using To = typename decltype(to_tag)::Type;
      EXPECT_EQ(CastOne<To>(MakeFloating<From>(kInf)), std::numeric_limits<To>::max())
          << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
      EXPECT_EQ(CastOne<To>(MakeFloating<From>(-kInf)), std::numeric_limits<To>::min())
          << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
    });
  });
}

TEST(CastFloatToInteger, Int64Edges) {
  const double two63 = std::ldexp(1.0, 63);
  EXPECT_EQ(CastOne<int64_t>(two63), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(CastOne<int64_t>(-two63), std::numeric_limits<int64_t>::min());  // exact
  EXPECT_EQ(CastOne<int64_t>(std::nextafter(two63, 0.0)), int64_t{0x7FFFFFFFFFFFFC00});
  EXPECT_EQ(CastOne<int64_t>(std::nextafter(-two63, -kInf)), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(CastOne<int64_t>(static_cast<float>(two63)), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(CastOne<int64_t>(static_cast<float>(-two63)), std::numeric_limits<int64_t>::min());
}

TEST(CastFloatToInteger, Uint64Edges) {
  const double two64 = std::ldexp(1.0, 64);
  EXPECT_EQ(CastOne<uint64_t>(two64), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(CastOne<uint64_t>(std::nextafter(two64, 0.0)), uint64_t{0xFFFFFFFFFFFFF800});
  EXPECT_EQ(CastOne<uint64_t>(std::ldexp(1.0, 63)), uint64_t{1} << 63);
  EXPECT_EQ(CastOne<uint64_t>(1e30f), std::numeric_limits<uint64_t>::max());
}

TEST(CastFloatToInteger, Int32EdgesFromDouble) {
  EXPECT_EQ(CastOne<int32_t>(2147483647.9), 2147483647);
  EXPECT_EQ(CastOne<int32_t>(2147483648.0), 2147483647);
  EXPECT_EQ(CastOne<int32_t>(-2147483648.9), -2147483647 - 1);
  EXPECT_EQ(CastOne<int32_t>(-2147483649.0), -2147483647 - 1);
  EXPECT_EQ(CastOne<uint32_t>(4294967295.5), 4294967295u);
  EXPECT_EQ(CastOne<uint32_t>(4294967296.0), 4294967295u);
}

TEST(CastFloatToInteger, TruncatesTowardZero) {
  EXPECT_EQ(CastOne<int32_t>(-2.7), -2);
  EXPECT_EQ(CastOne<int32_t>(2.7), 2);
  EXPECT_EQ(CastOne<int32_t>(-2.7f), -2);
  EXPECT_EQ(CastOne<int64_t>(-0.999), 0);
  EXPECT_EQ(CastOne<int16_t>(-32768.5), -32768);
  EXPECT_EQ(CastOne<int8_t>(-1.5f), -1);
  EXPECT_EQ(CastOne<uint8_t>(254.99f), 254);
  EXPECT_EQ(CastOne<int32_t>(std::numeric_limits<double>::denorm_min()), 0);
}

TEST(CastFloatToInteger, SixteenBitFloatSources) {
  EXPECT_EQ(CastOne<int16_t>(Float16{0x7BFF}), 32767);   // 65504 saturates
  EXPECT_EQ(CastOne<int16_t>(Float16{0xFBFF}), -32768);  // -65504
  EXPECT_EQ(CastOne<uint16_t>(Float16{0x7BFF}), 65504);
  EXPECT_EQ(CastOne<int32_t>(Float16{0x63D1}), 1000);  // 1000.5 truncates
  EXPECT_EQ(CastOne<int32_t>(BFloat16{0xC020}), -2);   // -2.5 truncates toward zero
  EXPECT_EQ(CastOne<int64_t>(BFloat16{0x5F00}), std::numeric_limits<int64_t>::max());  // 2^63
  EXPECT_EQ(CastOne<int64_t>(BFloat16{0xDF00}), std::numeric_limits<int64_t>::min());  // -2^63
}

// Truncation and saturation computed in long double, which holds every 64-bit integer.
template <typename Int>
Int ReferenceTruncate(double d) {
  static_assert(std::numeric_limits<long double>::digits >= 64);
  if (std::isnan(d)) return 0;
  const long double t = std::trunc(static_cast<long double>(d));
  if (t <= static_cast<long double>(std::numeric_limits<Int>::min())) {
    return std::numeric_limits<Int>::min();
  }
  if (t >= static_cast<long double>(std::numeric_limits<Int>::max())) {
    return std::numeric_limits<Int>::max();
  }
  return static_cast<Int>(t);
}

TEST(CastFloatToInteger, RandomDoublesMatchLongDoubleReferenceForEveryIntegerType) {
  std::mt19937_64 rng(42);
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i) {
    // Mantissa in [-1, 1), exponent up to 2^70: around every type's limits.
    const double mantissa = static_cast<double>(static_cast<int64_t>(rng())) * std::ldexp(1.0, -63);
    values.push_back(std::ldexp(mantissa, static_cast<int>(rng() % 72)));
  }
  for (int i = 0; i < 2000; ++i) values.push_back(std::bit_cast<double>(rng()));
  ForEachIntegerType([&](auto tag) {
    using To = typename decltype(tag)::Type;
    std::vector<To> out(values.size());
    CastElements(DType::kDouble, values.data(), DTypeOf<To>(), out.data(),
                 static_cast<int64_t>(values.size()));
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(out[i], ReferenceTruncate<To>(values[i]))
          << values[i] << " -> " << Name(DTypeOf<To>());
    }
  });
}

// ---------------------------------------------------------------------------------------------
// integer -> integer: wrap modulo 2^bits

TEST(CastIntegerToInteger, WrapsModuloTwoToTheBits) {
  EXPECT_EQ(CastOne<uint8_t>(int32_t{300}), 44);
  EXPECT_EQ(CastOne<uint64_t>(int32_t{-1}), 18446744073709551615u);
  EXPECT_EQ(CastOne<int16_t>(int32_t{70000}), 4464);
  EXPECT_EQ(CastOne<int64_t>(std::numeric_limits<uint64_t>::max()), -1);
  EXPECT_EQ(CastOne<int8_t>(int16_t{-129}), 127);
  EXPECT_EQ(CastOne<uint32_t>(int64_t{0x100000005}), 5u);
  EXPECT_EQ(CastOne<int32_t>(std::numeric_limits<int64_t>::min()), 0);
  EXPECT_EQ(CastOne<int8_t>(uint8_t{200}), -56);
  EXPECT_EQ(CastOne<uint16_t>(int8_t{-1}), 65535);
}

// v modulo 2^bits of To, as a To, computed on the 64-bit pattern.
template <typename To>
To ReferenceWrap(uint64_t v) {
  constexpr int kBits = std::numeric_limits<To>::digits + (std::is_signed_v<To> ? 1 : 0);
  if constexpr (kBits == 64) {
    return std::bit_cast<To>(v);
  } else {
    const uint64_t low = v & ((uint64_t{1} << kBits) - 1);
    if (std::is_signed_v<To> && low >= (uint64_t{1} << (kBits - 1))) {
      return static_cast<To>(static_cast<int64_t>(low) - (int64_t{1} << kBits));
    }
    return static_cast<To>(low);
  }
}

TEST(CastIntegerToInteger, RandomValuesMatchModularReferenceForEveryPair) {
  std::mt19937_64 rng(99);
  std::vector<uint64_t> patterns;
  for (int i = 0; i < 512; ++i) patterns.push_back(rng());
  ForEachIntegerType([&](auto from_tag) {
    using From = typename decltype(from_tag)::Type;
    std::vector<From> src;
    for (uint64_t p : patterns) src.push_back(static_cast<From>(p));
    ForEachIntegerType([&](auto to_tag) {
      using To = typename decltype(to_tag)::Type;
      std::vector<To> out(src.size());
      CastElements(DTypeOf<From>(), src.data(), DTypeOf<To>(), out.data(),
                   static_cast<int64_t>(src.size()));
      for (size_t i = 0; i < src.size(); ++i) {
        ASSERT_EQ(out[i], ReferenceWrap<To>(static_cast<uint64_t>(src[i])))
            << +src[i] << ": " << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// integer -> float: round to nearest even, once

TEST(CastIntegerToFloat, Int32ToFloatRoundsToNearestEven) {
  EXPECT_EQ(CastOne<float>(int32_t{16777217}), 16777216.0f);  // tie: even is 2^24
  EXPECT_EQ(CastOne<float>(int32_t{16777219}), 16777220.0f);  // tie: even is 2^24 + 4
  EXPECT_EQ(CastOne<float>(int32_t{-16777217}), -16777216.0f);
  EXPECT_EQ(CastOne<float>(int32_t{16777221}), 16777220.0f);
  EXPECT_EQ(CastOne<float>(int32_t{2147483647}), 2147483648.0f);
}

TEST(CastIntegerToFloat, SixtyFourBitEdges) {
  EXPECT_EQ(CastOne<float>(std::numeric_limits<int64_t>::max()), std::ldexp(1.0f, 63));
  EXPECT_EQ(CastOne<float>(std::numeric_limits<int64_t>::min()), -std::ldexp(1.0f, 63));
  EXPECT_EQ(CastOne<float>(std::numeric_limits<uint64_t>::max()), std::ldexp(1.0f, 64));
  EXPECT_EQ(CastOne<double>(std::numeric_limits<uint64_t>::max()), std::ldexp(1.0, 64));
  EXPECT_EQ(CastOne<double>(int64_t{(int64_t{1} << 53) + 1}), std::ldexp(1.0, 53));
  EXPECT_EQ(CastOne<double>(int64_t{(int64_t{1} << 53) + 3}), std::ldexp(1.0, 53) + 4);
  // A tie in float32 that only the low bits of a uint64 break.
  EXPECT_EQ(CastOne<float>(uint64_t{0x8000008000000001}), std::ldexp(1.0f, 63) + 0x10000000000);
  EXPECT_EQ(CastOne<float>(uint64_t{0x8000008000000000}), std::ldexp(1.0f, 63));
}

// Random integers of every width with random trailing zeros (many exact ties), sign included.
std::vector<uint64_t> RandomIntegerPatterns(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) {
    const uint64_t r = rng();
    const int right = static_cast<int>(rng() % 64);  // shorten to a random width
    const int zeros = static_cast<int>(rng() % 40);  // then clear some low bits
    uint64_t v = (r >> right) & ~((uint64_t{1} << zeros) - 1);
    if (rng() % 4 == 0) v |= uint64_t{1} << (zeros > 0 ? zeros - 1 : 0);  // ties and near-ties
    out.push_back(v);
  }
  for (uint64_t v :
       {uint64_t{0}, uint64_t{1}, ~uint64_t{0}, uint64_t{1} << 63, (uint64_t{1} << 63) - 1,
        uint64_t{0x7FFFFFFF}, uint64_t{0x80000000}, uint64_t{0xFFFFFFFF}}) {
    out.push_back(v);
  }
  return out;
}

template <typename Int>
double ReferenceRound(Int v, int precision) {
  if constexpr (std::is_signed_v<Int>) {
    return ReferenceRoundInteger(v, precision);
  } else {
    return ReferenceRoundUnsigned(v, precision);
  }
}

TEST(CastIntegerToFloat, EveryIntegerTypeToFloatAndDoubleMatchesIntegerReference) {
  const std::vector<uint64_t> patterns = RandomIntegerPatterns(1234, 20000);
  ForEachIntegerType([&](auto tag) {
    using From = typename decltype(tag)::Type;
    for (uint64_t p : patterns) {
      const From v = static_cast<From>(p);
      ASSERT_EQ(FloatValue(CastOne<float>(v)), ReferenceRound(v, 24))
          << +v << " " << Name(DTypeOf<From>());
      ASSERT_EQ(CastOne<double>(v), ReferenceRound(v, 53)) << +v << " " << Name(DTypeOf<From>());
    }
  });
}

TEST(CastIntegerToFloat, Float16IsTheNearestHalfForEveryInt32Near65504) {
  std::vector<int32_t> src;
  for (int32_t v = -70000; v <= 70000; ++v) src.push_back(v);
  std::vector<Float16> out(src.size());
  CastElements(DType::kInt32, src.data(), DType::kFloat16, out.data(),
               static_cast<int64_t>(src.size()));
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_EQ(out[i].bits, ReferenceHalfBits(src[i])) << src[i];
  }
}

TEST(CastIntegerToFloat, Float16RoundsOnceForEveryIntegerType) {
  // Through float32 is a single rounding: exact below 2^24, infinity above 65520 either way.
  const std::vector<uint64_t> patterns = RandomIntegerPatterns(77, 20000);
  ForEachIntegerType([&](auto tag) {
    using From = typename decltype(tag)::Type;
    for (uint64_t p : patterns) {
      const From v = static_cast<From>(p);
      const double exact = static_cast<double>(static_cast<long double>(v));
      const double value = std::fabs(exact) < 0x1p53 ? exact : std::copysign(kInf, exact);
      ASSERT_EQ(CastOne<Float16>(v).bits, ReferenceHalfBits(value))
          << +v << " " << Name(DTypeOf<From>());
    }
  });
  EXPECT_EQ(CastOne<Float16>(int32_t{65519}).bits, 0x7BFF);
  EXPECT_EQ(CastOne<Float16>(int32_t{65520}).bits, 0x7C00);
  EXPECT_EQ(CastOne<Float16>(int32_t{-65520}).bits, 0xFC00);
  EXPECT_EQ(CastOne<Float16>(int32_t{2049}).bits, 0x6800);  // tie: even is 2048
  EXPECT_EQ(CastOne<Float16>(int32_t{2051}).bits, 0x6802);  // tie: even is 2052
  EXPECT_EQ(CastOne<Float16>(std::numeric_limits<uint64_t>::max()).bits, 0x7C00);
  EXPECT_EQ(CastOne<Float16>(std::numeric_limits<int64_t>::min()).bits, 0xFC00);
}

TEST(CastIntegerToFloat, BFloat16RoundsOnceNotThroughFloat32) {
  // 2^30 + 2^22 + 1 is just above the midpoint between two bfloat16 values. Rounding first to
  // float32 drops the +1 and leaves an exact tie, which would go down to the even 2^30.
  const int32_t v = (1 << 30) + (1 << 22) + 1;
  EXPECT_EQ(CastOne<BFloat16>(v).bits, 0x4E81);                   // 2^30 + 2^23
  EXPECT_EQ(FloatToBFloat16Bits(static_cast<float>(v)), 0x4E80);  // the double rounding
  EXPECT_EQ(CastOne<BFloat16>(-v).bits, 0xCE81);
  EXPECT_EQ(CastOne<BFloat16>(int64_t{v}).bits, 0x4E81);
  EXPECT_EQ(CastOne<BFloat16>(uint32_t{0x80800001}).bits, 0x4F01);  // 2^31 + 2^24
  EXPECT_EQ(CastOne<BFloat16>(uint64_t{0x8080000000000001}).bits, 0x5F01);
  EXPECT_EQ(CastOne<BFloat16>(int32_t{257}).bits, 0x4380);  // tie: even is 256
  EXPECT_EQ(CastOne<BFloat16>(int32_t{259}).bits, 0x4382);  // tie: even is 260
  EXPECT_EQ(CastOne<BFloat16>(std::numeric_limits<int64_t>::min()).bits, 0xDF00);
  EXPECT_EQ(CastOne<BFloat16>(std::numeric_limits<uint64_t>::max()).bits, 0x5F80);  // 2^64
}

TEST(CastIntegerToFloat, BFloat16MatchesIntegerReferenceForEveryIntegerType) {
  const std::vector<uint64_t> patterns = RandomIntegerPatterns(5150, 20000);
  ForEachIntegerType([&](auto tag) {
    using From = typename decltype(tag)::Type;
    for (uint64_t p : patterns) {
      const From v = static_cast<From>(p);
      ASSERT_EQ(BFloat16Value(CastOne<BFloat16>(v).bits), ReferenceRound(v, 8))
          << +v << " " << Name(DTypeOf<From>());
    }
  });
}

TEST(CastIntegerToFloat, EverySixteenBitIntegerToBFloat16) {
  for (int32_t v = -32768; v <= 65535; ++v) {
    const double expected = ReferenceRoundInteger(v, 8);
    if (v <= 32767) {
      ASSERT_EQ(BFloat16Value(CastOne<BFloat16>(static_cast<int16_t>(v)).bits), expected) << v;
    }
    if (v >= 0) {
      ASSERT_EQ(BFloat16Value(CastOne<BFloat16>(static_cast<uint16_t>(v)).bits), expected) << v;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// float -> float

TEST(CastFloatToFloat, DoubleToFloat16RoundsTwiceThroughFloat32) {
  // Just above the midpoint between 1 and 1 + 2^-10, by less than half a float32 ulp.
  const double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(ReferenceHalfBits(d), 0x3C01);                         // direct rounding goes up
  EXPECT_EQ(static_cast<float>(d), 1.0f + std::ldexp(1.0f, -11));  // float32 makes it a tie
  EXPECT_EQ(CastOne<Float16>(d).bits, 0x3C00);                     // which goes to even
  EXPECT_EQ(CastOne<Float16>(-d).bits, 0xBC00);
  EXPECT_EQ(CastValue<Float16>(d).bits, 0x3C00);
}

TEST(CastFloatToFloat, DoubleToBFloat16RoundsTwiceThroughFloat32) {
  const double d = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(ReferenceBFloat16Bits(d), 0x3F81);
  EXPECT_EQ(CastOne<BFloat16>(d).bits, 0x3F80);
  EXPECT_EQ(CastOne<BFloat16>(-d).bits, 0xBF80);
}

TEST(CastFloatToFloat, RandomDoublesToSixteenBitsGoThroughFloat32) {
  std::mt19937_64 rng(2718);
  std::vector<double> src;
  for (int i = 0; i < 50000; ++i) {
    const double mantissa = static_cast<double>(static_cast<int64_t>(rng())) * 0x1p-63;
    src.push_back(std::ldexp(mantissa, static_cast<int>(rng() % 60) - 30));
  }
  std::vector<Float16> half(src.size());
  std::vector<BFloat16> bf16(src.size());
  CastElements(DType::kDouble, src.data(), DType::kFloat16, half.data(),
               static_cast<int64_t>(src.size()));
  CastElements(DType::kDouble, src.data(), DType::kBFloat16, bf16.data(),
               static_cast<int64_t>(src.size()));
  for (size_t i = 0; i < src.size(); ++i) {
    const double through = static_cast<float>(src[i]);
    ASSERT_EQ(half[i].bits, ReferenceHalfBits(through)) << src[i];
    ASSERT_EQ(bf16[i].bits, ReferenceBFloat16Bits(through)) << src[i];
  }
}

TEST(CastFloatToFloat, DoubleToFloatRoundsToNearestEven) {
  EXPECT_EQ(CastOne<float>(1.0 + std::ldexp(1.0, -24)), 1.0f);  // tie: even is 1
  EXPECT_EQ(CastOne<float>(1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -50)),
            1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(CastOne<float>(1.0 + 3 * std::ldexp(1.0, -24)),
            1.0f + std::ldexp(1.0f, -22));  // tie: even is 1 + 2 ulp
  EXPECT_EQ(CastOne<float>(1e300), std::numeric_limits<float>::infinity());
  EXPECT_EQ(CastOne<float>(-1e300), -std::numeric_limits<float>::infinity());
  const double max_tie = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);  // FLT_MAX to 2^128
  EXPECT_EQ(CastOne<float>(max_tie), std::numeric_limits<float>::infinity());
  EXPECT_EQ(CastOne<float>(std::nextafter(max_tie, 0.0)), std::numeric_limits<float>::max());
  EXPECT_EQ(CastOne<float>(std::numeric_limits<double>::denorm_min()), 0.0f);
}

TEST(CastFloatToFloat, EveryHalfToBFloat16IsTheNearest) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const uint16_t got = CastOne<BFloat16>(Float16{bits}).bits;
    if (std::isnan(HalfValue(bits))) {
      ASSERT_EQ(got & 0x7FC0, 0x7FC0) << std::hex << h;  // a quiet NaN
      ASSERT_EQ(got & 0x8000, h & 0x8000) << std::hex << h;
    } else {
      ASSERT_EQ(got, ReferenceBFloat16Bits(HalfValue(bits))) << std::hex << h;
    }
  }
}

TEST(CastFloatToFloat, EveryBFloat16ToHalfIsTheNearest) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const uint16_t got = CastOne<Float16>(BFloat16{bits}).bits;
    if (std::isnan(BFloat16Value(bits))) {
      ASSERT_EQ(got & 0x7E00, 0x7E00) << std::hex << b;
      ASSERT_EQ(got & 0x8000, b & 0x8000) << std::hex << b;
    } else {
      ASSERT_EQ(got, ReferenceHalfBits(BFloat16Value(bits))) << std::hex << b;
    }
  }
}

TEST(CastFloatToFloat, SixteenBitsToFloatAndDoubleAreExact) {
  for (uint32_t p = 0; p <= 0xFFFF; ++p) {
    const uint16_t bits = static_cast<uint16_t>(p);
    if (!std::isnan(HalfValue(bits))) {
      ASSERT_EQ(CastOne<double>(Float16{bits}), HalfValue(bits));
      ASSERT_EQ(static_cast<double>(CastOne<float>(Float16{bits})), HalfValue(bits));
    }
    if (!std::isnan(BFloat16Value(bits))) {
      ASSERT_EQ(CastOne<double>(BFloat16{bits}), BFloat16Value(bits));
      ASSERT_EQ(static_cast<double>(CastOne<float>(BFloat16{bits})), BFloat16Value(bits));
    }
  }
}

TEST(CastFloatToFloat, NaNStaysNaNWithItsSign) {
  ForEachFloatingType([&](auto from_tag) {
    using From = typename decltype(from_tag)::Type;
    ForEachFloatingType([&](auto to_tag) {
      using To = typename decltype(to_tag)::Type;
      for (double nan : {kNaN, -kNaN}) {
        const double back = ReadAsDouble<To>(CastOne<To>(MakeFloating<From>(nan)));
        EXPECT_TRUE(std::isnan(back)) << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
        EXPECT_EQ(std::signbit(back), std::signbit(nan))
            << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
      }
    });
  });
}

TEST(CastFloatToFloat, SignedZerosAndInfinitiesSurviveEveryPair) {
  ForEachFloatingType([&](auto from_tag) {
    using From = typename decltype(from_tag)::Type;
    ForEachFloatingType([&](auto to_tag) {
      using To = typename decltype(to_tag)::Type;
      for (double v : {0.0, -0.0, kInf, -kInf}) {
        const double back = ReadAsDouble<To>(CastOne<To>(MakeFloating<From>(v)));
        EXPECT_EQ(back, v) << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
        EXPECT_EQ(std::signbit(back), std::signbit(v))
            << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// bool

TEST(CastBool, AnyNonzeroByteReadsAsOne) {
  const uint8_t src[] = {0, 1, 2, 0x80, 0xFF};
  float f[5];
  int32_t i[5];
  Float16 h[5];
  CastElements(DType::kBool, src, DType::kFloat, f, 5);
  CastElements(DType::kBool, src, DType::kInt32, i, 5);
  CastElements(DType::kBool, src, DType::kFloat16, h, 5);
  for (int k = 0; k < 5; ++k) {
    const int expected = src[k] != 0 ? 1 : 0;
    EXPECT_EQ(f[k], static_cast<float>(expected)) << +src[k];
    EXPECT_EQ(i[k], expected) << +src[k];
    EXPECT_EQ(h[k].bits, expected != 0 ? 0x3C00 : 0x0000) << +src[k];
  }
}

TEST(CastBool, BoolToEveryTypeIsZeroOrOne) {
  const uint8_t src[] = {0, 1, 7};
  ForEachType([&](auto tag) {
    using To = typename decltype(tag)::Type;
    Storage<To> out[3];
    CastElements(DType::kBool, src, DTypeOf<To>(), out, 3);
    EXPECT_EQ(ReadAsDouble<To>(out[0]), 0.0) << Name(DTypeOf<To>());
    EXPECT_EQ(ReadAsDouble<To>(out[1]), 1.0) << Name(DTypeOf<To>());
    if constexpr (!std::is_same_v<To, bool>) {
      EXPECT_EQ(ReadAsDouble<To>(out[2]), 1.0) << Name(DTypeOf<To>());
    }
  });
}

TEST(CastBool, FloatingToBoolIsNotEqualToZero) {
  const double src[] = {0.0, -0.0, 0.5, -1e-300, kNaN, -kNaN, kInf, -kInf, 2.0};
  const uint8_t expected[] = {0, 0, 1, 1, 1, 1, 1, 1, 1};
  uint8_t out[9];
  CastElements(DType::kDouble, src, DType::kBool, out, 9);
  for (int k = 0; k < 9; ++k) EXPECT_EQ(out[k], expected[k]) << src[k];
  EXPECT_TRUE(CastOne<bool>(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_FALSE(CastOne<bool>(-0.0f));
  EXPECT_TRUE(CastOne<bool>(0.5f));
  EXPECT_TRUE(CastOne<bool>(std::numeric_limits<float>::denorm_min()));
}

TEST(CastBool, SixteenBitFloatsToBool) {
  EXPECT_FALSE(CastOne<bool>(Float16{0x0000}));
  EXPECT_FALSE(CastOne<bool>(Float16{0x8000}));  // -0
  EXPECT_TRUE(CastOne<bool>(Float16{0x0001}));   // smallest subnormal
  EXPECT_TRUE(CastOne<bool>(Float16{0x7E00}));   // NaN
  EXPECT_TRUE(CastOne<bool>(Float16{0xFC00}));   // -inf
  EXPECT_FALSE(CastOne<bool>(BFloat16{0x8000}));
  EXPECT_TRUE(CastOne<bool>(BFloat16{0x0001}));
  EXPECT_TRUE(CastOne<bool>(BFloat16{0xFFC0}));
}

TEST(CastBool, IntegerToBoolIsNotEqualToZeroNotAWrap) {
  EXPECT_TRUE(CastOne<bool>(int32_t{256}));  // would be 0 if it wrapped to 8 bits
  EXPECT_TRUE(CastOne<bool>(int64_t{1} << 40));
  EXPECT_TRUE(CastOne<bool>(int8_t{-1}));
  EXPECT_FALSE(CastOne<bool>(uint64_t{0}));
}

TEST(CastBool, OutputBytesAreExactlyZeroOrOne) {
  const int32_t src[] = {0, 5, -7, 256, 0, 1};
  uint8_t out[6];
  std::memset(out, 0xCC, sizeof(out));
  CastElements(DType::kInt32, src, DType::kBool, out, 6);
  const uint8_t expected[] = {0, 1, 1, 1, 0, 1};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(out[k], expected[k]);
}

// ---------------------------------------------------------------------------------------------
// CastElements as a whole

TEST(CastElements, EveryPairRunsAndSameTypeIsIdentity) {
  constexpr int kCount = 8;
  uint8_t src[kCount * 8];
  for (int k = 0; k < kCount * 8; ++k) src[k] = static_cast<uint8_t>(k * 37 + 11);
  int pairs = 0;
  for (int32_t f = 0; f <= kMaxOnnxCode; ++f) {
    for (int32_t t = 0; t <= kMaxOnnxCode; ++t) {
      const DType from = static_cast<DType>(f), to = static_cast<DType>(t);
      if (!IsSupported(from) || !IsSupported(to)) continue;
      ++pairs;
      uint8_t dst[kCount * 8] = {};
      EXPECT_NO_THROW(CastElements(from, src, to, dst, kCount)) << Name(from) << " -> " << Name(to);
      if (from == to) {
        EXPECT_EQ(std::memcmp(src, dst, kCount * static_cast<size_t>(ElementSize(from))), 0)
            << Name(from);
      }
    }
  }
  EXPECT_EQ(pairs, 13 * 13);
}

TEST(CastElements, SmallExactValuesSurviveEveryPair) {
  const int values[] = {0, 1, 2, 3, 100, 127};
  int pairs = 0;
  ForEachType([&](auto from_tag) {
    using From = typename decltype(from_tag)::Type;
    Storage<From> src[6];
    for (int k = 0; k < 6; ++k) src[k] = MakeSmall<From>(values[k]);
    ForEachType([&](auto to_tag) {
      using To = typename decltype(to_tag)::Type;
      Storage<To> dst[6];
      CastElements(DTypeOf<From>(), src, DTypeOf<To>(), dst, 6);
      const bool boolean = std::is_same_v<From, bool> || std::is_same_v<To, bool>;
      for (int k = 0; k < 6; ++k) {
        const double expected = boolean ? (values[k] != 0 ? 1.0 : 0.0) : values[k];
        EXPECT_EQ(ReadAsDouble<To>(dst[k]), expected)
            << values[k] << ": " << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
      }
      ++pairs;
    });
  });
  EXPECT_EQ(pairs, 169);
}

TEST(CastElements, DispatchMatchesCastValueForEveryPairAndWritesNothingPastCount) {
  // Random source bytes (BOOL bytes included) through the type-pair switch, compared with the
  // single-value rule; a sentinel after the output catches a wrong element size.
  constexpr int kCount = 97;
  std::mt19937_64 rng(31337);
  std::vector<uint8_t> bytes(kCount * 8);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  ForEachType([&](auto from_tag) {
    using From = typename decltype(from_tag)::Type;
    std::vector<Storage<From>> src(kCount);
    std::memcpy(src.data(), bytes.data(), kCount * sizeof(Storage<From>));
    ForEachType([&](auto to_tag) {
      using To = typename decltype(to_tag)::Type;
      if constexpr (!std::is_same_v<From, To>) {
        std::vector<uint8_t> out((kCount + 4) * sizeof(Storage<To>), 0xAB);
        CastElements(DTypeOf<From>(), src.data(), DTypeOf<To>(), out.data(), kCount);
        for (int k = 0; k < kCount; ++k) {
          From value;
          if constexpr (std::is_same_v<From, bool>) {
            value = src[static_cast<size_t>(k)] != 0;
          } else {
            value = src[static_cast<size_t>(k)];
          }
          const To expected = CastValue<To>(value);
          Storage<To> expected_storage;
          if constexpr (std::is_same_v<To, bool>) {
            expected_storage = expected ? 1 : 0;
          } else {
            expected_storage = expected;
          }
          ASSERT_EQ(std::memcmp(out.data() + k * sizeof(Storage<To>), &expected_storage,
                                sizeof(Storage<To>)),
                    0)
              << "element " << k << ": " << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
        }
        for (size_t b = kCount * sizeof(Storage<To>); b < out.size(); ++b) {
          ASSERT_EQ(out[b], 0xAB) << Name(DTypeOf<From>()) << " -> " << Name(DTypeOf<To>());
        }
      }
    });
  });
}

TEST(CastElements, UnsupportedTypeThrowsNamingBothTypes) {
  float f = 1.0f;
  float out = 0.0f;
  struct Case {
    DType from, to;
    const char* from_name;
    const char* to_name;
  };
  const Case cases[] = {
      {DType::kString, DType::kFloat, "STRING", "FLOAT"},
      {DType::kFloat, DType::kComplex64, "FLOAT", "COMPLEX64"},
      {DType::kUndefined, DType::kFloat16, "UNDEFINED", "FLOAT16"},
      {DType::kBFloat16, DType::kFloat8E4M3FN, "BFLOAT16", "FLOAT8E4M3FN"},
      {DType::kInt4, DType::kInt4, "INT4", "INT4"},
      {static_cast<DType>(99), DType::kInt32, "99", "INT32"},
  };
  for (const Case& c : cases) {
    try {
      CastElements(c.from, &f, c.to, &out, 1);
      ADD_FAILURE() << "no exception for " << c.from_name << " -> " << c.to_name;
    } catch (const TensorTypeException& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(c.from_name), std::string::npos) << message;
      EXPECT_NE(message.find(c.to_name), std::string::npos) << message;
    }
  }
  EXPECT_EQ(out, 0.0f);
}

TEST(CastElements, UnsupportedTypeThrowsEvenForZeroCount) {
  EXPECT_THROW(CastElements(DType::kString, nullptr, DType::kFloat, nullptr, 0),
               TensorTypeException);
}

TEST(CastElements, NegativeCountThrows) {
  float f = 1.0f;
  int32_t out = 7;
  EXPECT_THROW(CastElements(DType::kFloat, &f, DType::kInt32, &out, -1), TensorShapeException);
  EXPECT_EQ(out, 7);
}

TEST(CastElements, ZeroCountTouchesNothing) {
  EXPECT_NO_THROW(CastElements(DType::kFloat, nullptr, DType::kInt32, nullptr, 0));
  EXPECT_NO_THROW(CastElements(DType::kFloat, nullptr, DType::kFloat, nullptr, 0));
}

TEST(CastElements, ConcurrentCallsAgree) {
  // No shared state: threads casting at once get the single-threaded answer.
  std::vector<float> src(4096);
  std::mt19937_64 rng(8);
  for (float& x : src) x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  std::vector<Float16> expected(src.size());
  CastElements(DType::kFloat, src.data(), DType::kFloat16, expected.data(),
               static_cast<int64_t>(src.size()));
  std::vector<std::vector<Float16>> results(4, std::vector<Float16>(src.size()));
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&src, &result] {
      CastElements(DType::kFloat, src.data(), DType::kFloat16, result.data(),
                   static_cast<int64_t>(src.size()));
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

// ---------------------------------------------------------------------------------------------
// CastValue

TEST(CastValue, UsableInConstantExpressions) {
  static_assert(CastValue<uint8_t>(int32_t{300}) == 44);
  static_assert(CastValue<int32_t>(3e9f) == 2147483647);
  static_assert(CastValue<int32_t>(-2.7) == -2);
  static_assert(!CastValue<bool>(-0.0));
  static_assert(CastValue<Float16>(int64_t{65520}).bits == 0x7C00);
  static_assert(CastValue<BFloat16>((1 << 30) + (1 << 22) + 1).bits == 0x4E81);
  static_assert(CastValue<float>(true) == 1.0f);
  SUCCEED();
}

TEST(CastValue, AgreesWithCastElements) {
  EXPECT_EQ(CastValue<int16_t>(int32_t{70000}), CastOne<int16_t>(int32_t{70000}));
  EXPECT_EQ(CastValue<Float16>(1.0 / 3.0).bits, CastOne<Float16>(1.0 / 3.0).bits);
  EXPECT_EQ(CastValue<uint32_t>(-1.5f), CastOne<uint32_t>(-1.5f));
}

}  // namespace
}  // namespace onemodel
