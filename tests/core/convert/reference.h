// Independent references for the conversion tests.
//
// Nothing here uses the bit formulas of spec 10. Values come from the sign, exponent and
// mantissa fields through std::ldexp; rounding finds the two neighbours of x by binary search
// in a sorted table of every finite non-negative value of the format and picks the nearer,
// ties to the one with even bits. The table ends with the format's first value past its
// largest finite one (2^16 for binary16, 2^128 for bfloat16) standing for infinity, so the
// overflow threshold follows from the same nearest rule instead of being written down.
//
//   EXPECT_EQ(FloatToHalfBits(x), ReferenceHalfBits(x));
//   EXPECT_EQ(HalfBitsToFloat(h), HalfValue(h));
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace onemodel::reference {

// The value of binary16 bits h from its fields (NaN for every NaN pattern).
inline double HalfValue(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  double magnitude;
  if (exponent == 0x1F) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  } else {
    magnitude = std::ldexp(static_cast<double>(1024 + mantissa), exponent - 25);
  }
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

// The value of bfloat16 bits b from its fields (NaN for every NaN pattern).
inline double BFloat16Value(uint16_t b) {
  const int exponent = (b >> 7) & 0xFF;
  const int mantissa = b & 0x7F;
  double magnitude;
  if (exponent == 0xFF) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -133);
  } else {
    magnitude = std::ldexp(static_cast<double>(128 + mantissa), exponent - 134);
  }
  return (b & 0x8000) != 0 ? -magnitude : magnitude;
}

// Bits of the value in table (indexed by bits) nearest to x, ties to even bits. x not NaN.
// The last table entry is the value just past the largest finite one; its index is infinity.
inline uint16_t NearestInTable(const std::vector<double>& table, double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double ax = std::fabs(x);
  const size_t infinity = table.size() - 1;
  const auto upper = std::upper_bound(table.begin(), table.end(), ax);
  if (upper == table.end()) return static_cast<uint16_t>(sign | infinity);
  const size_t hi = static_cast<size_t>(upper - table.begin());  // table[hi] > ax, hi >= 1
  const size_t lo = hi - 1;                                      // table[lo] <= ax
  if (table[lo] == ax) return static_cast<uint16_t>(sign | lo);
  // The midpoint of two neighbours needs one bit more than the format: exact in double.
  const double mid = (table[lo] + table[hi]) / 2;
  size_t pick;
  if (ax < mid) {
    pick = lo;
  } else if (ax > mid) {
    pick = hi;
  } else {
    pick = lo % 2 == 0 ? lo : hi;
  }
  return static_cast<uint16_t>(sign | pick);
}

// Every finite non-negative binary16 value by bits, then 2^16 for infinity.
inline const std::vector<double>& HalfTable() {
  static const std::vector<double> table = [] {
    std::vector<double> t;
    for (uint32_t h = 0; h < 0x7C00; ++h) t.push_back(HalfValue(static_cast<uint16_t>(h)));
    t.push_back(65536.0);
    return t;
  }();
  return table;
}

// Every finite non-negative bfloat16 value by bits, then 2^128 for infinity.
inline const std::vector<double>& BFloat16Table() {
  static const std::vector<double> table = [] {
    std::vector<double> t;
    for (uint32_t b = 0; b < 0x7F80; ++b) t.push_back(BFloat16Value(static_cast<uint16_t>(b)));
    t.push_back(std::ldexp(1.0, 128));
    return t;
  }();
  return table;
}

// The binary16 nearest to x (not NaN), ties to even, |x| >= 65520 to infinity.
inline uint16_t ReferenceHalfBits(double x) { return NearestInTable(HalfTable(), x); }

// The bfloat16 nearest to x (not NaN), ties to even, overflow to infinity.
inline uint16_t ReferenceBFloat16Bits(double x) { return NearestInTable(BFloat16Table(), x); }

// The nearest value with `precision` (<= 53) significant bits to the integer magnitude, ties
// to even, as an exact double. Works on the integer itself: no floating-point rounding.
inline double ReferenceRoundUnsigned(uint64_t magnitude, int precision) {
  const int width = std::bit_width(magnitude);
  if (width <= precision) return static_cast<double>(magnitude);  // exact
  const int shift = width - precision;
  const uint64_t lower = magnitude >> shift;  // the neighbours are lower and lower + 1 units
  const uint64_t below = magnitude - (lower << shift);
  const uint64_t half_unit = uint64_t{1} << (shift - 1);
  uint64_t pick = lower;
  if (below > half_unit || (below == half_unit && lower % 2 == 1)) pick = lower + 1;
  return std::ldexp(static_cast<double>(pick), shift);
}

// As above for a signed integer (the sign is kept, the magnitude rounded).
inline double ReferenceRoundInteger(int64_t v, int precision) {
  uint64_t magnitude = static_cast<uint64_t>(v);
  if (v < 0) magnitude = 0 - magnitude;
  const double rounded = ReferenceRoundUnsigned(magnitude, precision);
  return v < 0 ? -rounded : rounded;
}

}  // namespace onemodel::reference
