// Element-wise conversion between the thirteen supported element types (spec 10, Cast).
//
// CastValue<To, From> is the one definition of the reference rules for a single value;
// CastElements converts a contiguous run, choosing the type pair once and then running a tight
// loop over CastValue. The rules:
//   float -> float     by half.h; float64 -> FLOAT16/BFLOAT16 goes through float32 (rounds
//                      twice, as the spec says); float64 -> float32 rounds to nearest even.
//   integer -> float   rounds once to nearest even. FLOAT16 goes through float32: that step is
//                      exact below 2^24, and every integer from 65520 up is infinity either
//                      way. BFLOAT16 from a 32/64-bit integer keeps a sticky bit in the float32
//                      step (round to odd), so the one visible rounding is the correct one.
//   float -> integer   truncates toward zero and saturates to the target range; NaN -> 0.
//   integer -> integer wraps modulo 2^bits.
//   any -> bool        is "!= 0": NaN is true, -0.0 is false.
//   bool -> number     is 0 or 1; any nonzero byte in a BOOL tensor counts as true.
//
//   std::vector<float> in = {1.5f, -2.7f, NAN, 3e9f};
//   std::vector<int32_t> out(in.size());
//   CastElements(DType::kFloat, in.data(), DType::kInt32, out.data(), 4);  // 1, -2, 0, 2^31-1
//   uint8_t wrapped = CastValue<uint8_t>(int32_t{300});                    // 44
//   Float16 h = CastValue<Float16>(int64_t{65521});                        // infinity
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/convert/half.h"
#include "core/dtype/dtype.h"

namespace onemodel {

// Converts count (>= 0) contiguous elements of type from at src into type to at dst.
// Buffers are aligned for their types and do not overlap; same type copies bytes unchanged.
// Throws TensorTypeException naming both types if either is unsupported, and
// TensorShapeException for a negative count.
void CastElements(DType from, const void* src, DType to, void* dst, int64_t count);

namespace internal {

// True for the C++ types that store the thirteen supported element types.
template <typename T>
inline constexpr bool kIsElementType =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Float16> ||
    std::is_same_v<T, BFloat16> || std::is_same_v<T, bool> || std::is_same_v<T, int8_t> ||
    std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t> ||
    std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, uint64_t>;

template <typename T>
inline constexpr bool kIsFloatingType =
    std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <typename T>
inline constexpr bool kIsIntegerType = std::is_integral_v<T> && !std::is_same_v<T, bool>;

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "the conversions assume IEEE 754 binary32 and binary64");

// A floating-point value as float32 (float64 rounds to nearest even; 16-bit types are exact).
template <typename From>
constexpr float ToFloat32(From v) {
  if constexpr (std::is_same_v<From, float>) {
    return v;
  } else if constexpr (std::is_same_v<From, double>) {
    return static_cast<float>(v);
  } else {
    return ToFloat(v);
  }
}

// A floating-point value as float64 (exact for every supported floating-point type).
template <typename From>
constexpr double ToFloat64(From v) {
  if constexpr (std::is_same_v<From, double>) {
    return v;
  } else {
    return static_cast<double>(ToFloat32(v));
  }
}

// Truncates toward zero and saturates to Int's range; NaN -> 0. No out-of-range C++ cast.
template <typename Int>
constexpr Int SaturatingTruncate(double x) {
  using Limits = std::numeric_limits<Int>;
  constexpr double kLow = static_cast<double>(Limits::min());  // 0 or -2^(bits-1), exact
  // 2^digits, one past the maximum; exact in double.
  constexpr double kHighExclusive = static_cast<double>(Limits::max() / 2 + 1) * 2.0;
  if (x != x) return 0;
  if (x <= kLow) return Limits::min();
  if (x >= kHighExclusive) return Limits::max();
  return static_cast<Int>(x);  // in (kLow, 2^digits): the truncated value fits
}

// An integer -> bfloat16 with a single rounding to nearest even.
template <typename Int>
constexpr BFloat16 IntegerToBFloat16(Int v) {
  if constexpr (std::numeric_limits<Int>::digits <= 24) {
    return ToBFloat16(static_cast<float>(v));  // exact in float32, one rounding below
  } else {
    const bool negative = v < 0;
    uint64_t magnitude = static_cast<uint64_t>(v);
    if (negative) magnitude = 0 - magnitude;  // modulo 2^64, so right for the minimum too
    const int width = std::bit_width(magnitude);
    if (width > 24) {
      // Keep 24 significant bits and OR the dropped ones into the last (round to odd). With
      // two or more bits to spare over bfloat16's 8, the rounding below is then correct.
      const int shift = width - 24;
      const uint64_t sticky = (magnitude & ((uint64_t{1} << shift) - 1)) != 0 ? 1 : 0;
      magnitude = ((magnitude >> shift) | sticky) << shift;
    }
    const float f = static_cast<float>(magnitude);  // exact: at most 24 significant bits
    return ToBFloat16(negative ? -f : f);
  }
}

}  // namespace internal

// Converts one value by the reference rules above; To and From are element storage types.
template <typename To, typename From>
constexpr To CastValue(From v) {
  static_assert(internal::kIsElementType<To> && internal::kIsElementType<From>,
                "CastValue converts between the storage types of the supported DTypes");
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (std::is_same_v<From, Float16> || std::is_same_v<From, BFloat16>) {
      return (v.bits & 0x7FFFu) != 0;  // every pattern but +-0, NaN included
    } else {
      return v != 0;  // NaN != 0; -0.0 == 0
    }
  } else if constexpr (std::is_same_v<From, bool>) {
    return CastValue<To>(static_cast<uint8_t>(v ? 1 : 0));
  } else if constexpr (internal::kIsFloatingType<From>) {
    if constexpr (internal::kIsIntegerType<To>) {
      return internal::SaturatingTruncate<To>(internal::ToFloat64(v));
    } else if constexpr (std::is_same_v<To, double>) {
      return internal::ToFloat64(v);
    } else if constexpr (std::is_same_v<To, float>) {
      return internal::ToFloat32(v);
    } else if constexpr (std::is_same_v<To, Float16>) {
      return ToFloat16(internal::ToFloat32(v));
    } else {
      return ToBFloat16(internal::ToFloat32(v));
    }
  } else {  // From is an integer type
    if constexpr (internal::kIsIntegerType<To>) {
      return static_cast<To>(v);  // modulo 2^bits (C++20)
    } else if constexpr (std::is_same_v<To, float> || std::is_same_v<To, double>) {
      return static_cast<To>(v);  // round to nearest even (IEEE default mode)
    } else if constexpr (std::is_same_v<To, Float16>) {
      // Exact in float32 when |v| < 2^24; above that both paths give infinity (>= 65520).
      return ToFloat16(static_cast<float>(v));
    } else {
      return internal::IntegerToBFloat16(v);
    }
  }
}

}  // namespace onemodel
