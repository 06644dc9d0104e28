// The fast conversion rows of every SIMD target this CPU runs against spec 10's scalar bit code.
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <vector>

#include "core/convert/half.h"
#include "core/kernels/internal/simd_tables.h"
#include "tests/core/kernels/kernel_variants.h"

namespace onemodel {
namespace {

// One row per SIMD target this CPU runs (kernel_variants.h).
class ConvertSimdTest : public ::testing::TestWithParam<SimdTarget> {};

// Random floats over all bit patterns, plus ties, boundaries and NaN payloads of both formats.
std::vector<float> Inputs() {
  std::vector<float> v;
  std::mt19937 rng(9);
  for (int i = 0; i < 2000000; ++i) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint32_t f = std::bit_cast<uint32_t>(HalfBitsToFloat(static_cast<uint16_t>(h)));
    for (uint32_t delta : {0u, 1u, 0xFFFu, 0x1000u, 0x1001u, 0x2000u}) {
      v.push_back(std::bit_cast<float>(f + delta));  // exact, ties and neighbours
    }
    v.push_back(std::bit_cast<float>((h << 16) | 0x8000u));  // bfloat16 ties
    v.push_back(std::bit_cast<float>((h << 16) | 0x7FFFu));
  }
  return v;
}

TEST_P(ConvertSimdTest, FloatToHalfMatchesTheBitRules) {
  const std::vector<float> in = Inputs();
  std::vector<uint16_t> out(in.size());
  internal::ConvertSimdFor(GetParam())
      .float_to_half(static_cast<int64_t>(in.size()), in.data(), out.data());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(out[i], FloatToHalfBits(in[i]))
        << "input 0x" << std::hex << std::bit_cast<uint32_t>(in[i]);
  }
}

TEST_P(ConvertSimdTest, FloatToBFloat16MatchesTheBitRules) {
  const std::vector<float> in = Inputs();
  std::vector<uint16_t> out(in.size());
  internal::ConvertSimdFor(GetParam())
      .float_to_bfloat16(static_cast<int64_t>(in.size()), in.data(), out.data());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(out[i], FloatToBFloat16Bits(in[i]))
        << "input 0x" << std::hex << std::bit_cast<uint32_t>(in[i]);
  }
}

TEST_P(ConvertSimdTest, AllSixteenBitPatternsWidenExactly) {
  std::vector<uint16_t> in(0x10000 + 7);  // + a tail that is not a whole vector
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i * 40503u);
  for (uint32_t h = 0; h < 0x10000; ++h) in[h] = static_cast<uint16_t>(h);
  std::vector<float> out(in.size());
  internal::ConvertSimdFor(GetParam())
      .half_to_float(static_cast<int64_t>(in.size()), in.data(), out.data());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(HalfBitsToFloat(in[i])))
        << "half 0x" << std::hex << in[i];
  }
  internal::ConvertSimdFor(GetParam())
      .bfloat16_to_float(static_cast<int64_t>(in.size()), in.data(), out.data());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(BFloat16BitsToFloat(in[i])))
        << "bfloat16 0x" << std::hex << in[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, ConvertSimdTest,
                         ::testing::ValuesIn(kernel_test::SupportedTargets()),
                         kernel_test::ParamName);

}  // namespace
}  // namespace onemodel
