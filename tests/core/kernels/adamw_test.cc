// AdamWUpdate (core/kernels/adamw.h): SIMD and split over the pool, yet every element gets the
// bits of AdamWElement, with and without amsgrad, whatever its place in a vector or a chunk.
#include "core/kernels/adamw.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace onemodel {
namespace {

std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

TEST(AdamWUpdateTest, GivesTheScalarDefinitionsBitsOnEveryElement) {
  // Several chunks of the pool, and a tail shorter than any vector.
  constexpr int64_t kN = 3 * (int64_t{1} << 16) + 13;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  const auto random = [&](float scale) {
    std::vector<float> v(kN);
    for (float& f : v) f = scale * u(rng);
    return v;
  };
  std::vector<float> g = random(1);
  g[5] = std::numeric_limits<float>::quiet_NaN();
  g[kN - 2] = std::numeric_limits<float>::infinity();
  const AdamWScalars s{0.999f, 0.9f, 0.1f, 0.999f, 0.001f, -1e-3f / 0.271f, 0.0447f, 1e-8f};
  for (const bool amsgrad : {false, true}) {
    std::vector<float> p = random(0.05f), m = random(0.1f), v = random(0.01f);
    for (float& x : v) x *= x;
    std::vector<float> vmax = v;
    vmax[7] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> ep = p, em = m, ev = v, evmax = vmax;
    for (int64_t i = 0; i < kN; ++i) {
      AdamWElement(s, ep[i], g[i], em[i], ev[i], amsgrad ? &evmax[i] : nullptr);
    }
    AdamWUpdate(ThreadPool::Shared(), s, kN, p.data(), g.data(), m.data(), v.data(),
                amsgrad ? vmax.data() : nullptr);
    EXPECT_EQ(Bits(p), Bits(ep)) << "amsgrad " << amsgrad;
    EXPECT_EQ(Bits(m), Bits(em));
    EXPECT_EQ(Bits(v), Bits(ev));
    EXPECT_EQ(Bits(vmax), Bits(evmax));
  }
}

}  // namespace
}  // namespace onemodel
