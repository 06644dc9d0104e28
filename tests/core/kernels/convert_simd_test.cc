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

// The streaming rows against the ordinary ones: outputs starting at every 2-byte offset of a
// 64-byte line, lengths that leave heads, whole vectors and tails, sentinels on both sides.
TEST_P(ConvertSimdTest, StreamingRowsGiveTheSameBitsAtAnyAlignmentAndLength) {
  const internal::ConvertSimd& simd = internal::ConvertSimdFor(GetParam());
  const std::vector<float> floats = Inputs();
  std::vector<uint16_t> halves(floats.size());
  simd.float_to_half(static_cast<int64_t>(floats.size()), floats.data(), halves.data());
  constexpr uint16_t kSentinel16 = 0xA5A5;
  constexpr uint32_t kSentinel32 = 0x7FE5A5A5;
  // Runs row(n, in, out + shift) into a sentinel-filled buffer; checks the sentinels and that
  // the n results equal `expected`'s.
  const auto check = [](auto row, int64_t n, int64_t shift, const auto* in, auto sentinel,
                        const auto& expected, const char* name) {
    using Out = decltype(sentinel);
    std::vector<Out> buffer(static_cast<size_t>(n + 64), sentinel);
    row(n, in, buffer.data() + 32 + shift);
    for (int64_t i = 0; i < n + 64; ++i) {
      const bool inside = i >= 32 + shift && i < 32 + shift + n;
      const Out want = inside ? expected[static_cast<size_t>(i - 32 - shift)] : sentinel;
      ASSERT_EQ(buffer[static_cast<size_t>(i)], want)
          << name << ": n " << n << ", shift " << shift << ", at " << i - 32 - shift;
    }
  };
  for (int64_t n : {1, 7, 31, 32, 33, 100, 1025, 70001}) {
    std::vector<uint16_t> h(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    std::vector<uint32_t> hf(static_cast<size_t>(n)), bf(static_cast<size_t>(n));
    simd.float_to_half(n, floats.data(), h.data());
    simd.float_to_bfloat16(n, floats.data(), b.data());
    simd.half_to_float(n, halves.data(), reinterpret_cast<float*>(hf.data()));
    simd.bfloat16_to_float(n, halves.data(), reinterpret_cast<float*>(bf.data()));
    for (int64_t shift = 0; shift < 32; ++shift) {
      check(simd.float_to_half_streaming, n, shift, floats.data(), kSentinel16, h, "to half");
      check(simd.float_to_bfloat16_streaming, n, shift, floats.data(), kSentinel16, b,
            "to bfloat16");
      if (shift % 2 == 0) {  // floats: every 4-byte offset of a line
        const auto widen = [](auto row) {
          return [row](int64_t k, const uint16_t* in, uint32_t* out) {
            row(k, in, reinterpret_cast<float*>(out));
          };
        };
        check(widen(simd.half_to_float_streaming), n, shift / 2, halves.data(), kSentinel32, hf,
              "from half");
        check(widen(simd.bfloat16_to_float_streaming), n, shift / 2, halves.data(), kSentinel32, bf,
              "from bfloat16");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, ConvertSimdTest,
                         ::testing::ValuesIn(kernel_test::SupportedTargets()),
                         kernel_test::ParamName);

}  // namespace
}  // namespace onemodel
