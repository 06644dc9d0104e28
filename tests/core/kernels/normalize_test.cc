// The normalization kernels (core/kernels/internal/normalize.h) on every instruction set this
// CPU has, with and without streaming stores, at outputs on every 4-byte offset from a 16-byte
// boundary: all give the baseline's bits, forward and backward.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/kernels/fast_kernels.h"
#include "core/kernels/internal/normalize.h"
#include "core/kernels/reference_kernels.h"
#include "core/kernels/simd_targets.h"

namespace onemodel::internal {
namespace {

constexpr NormIsa kIsas[] = {NormIsa::kBase, NormIsa::kAvx2, NormIsa::kAvx512};

// Rows of 301 (not a multiple of the 8 lanes) and a BatchNorm-like layout (4 blocks of 37
// per group, scale and bias per group), centred and not.
struct Layout {
  NormGroups groups;
  bool center;
};
const Layout kLayouts[] = {
    {{.groups = 9, .block = 301, .group_stride = 301}, true},
    {{.groups = 9, .block = 301, .group_stride = 301}, false},
    {{.groups = 5, .blocks = 4, .block = 37, .group_stride = 37, .block_stride = 185,
      .affine_per_group = true},
     true},
};

class NormalizeKernelTest : public ::testing::Test {
 protected:
  std::mt19937 rng_{5};
  std::vector<float> Random(size_t n) {
    std::uniform_real_distribution<float> u(-3, 3);
    std::vector<float> v(n);
    for (float& f : v) f = u(rng_);
    return v;
  }
};

// The bit patterns of v (so -0 and +0 differ).
std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

// Elements of a layout's x (and y, xhat).
int64_t Elements(const NormGroups& l) { return l.groups * l.blocks * l.block; }

TEST_F(NormalizeKernelTest, EveryInstructionSetAndStreamingGiveTheBaselineBits) {
  for (const Layout& layout : kLayouts) {
    const NormGroups& l = layout.groups;
    const size_t n = static_cast<size_t>(Elements(l));
    const std::vector<float> x = Random(n), scale = Random(301), bias = Random(301);
    // The results of one run: y and xhat at the given offsets (in floats) into their buffers.
    const auto run = [&](NormIsa isa, bool stream, size_t y_at, size_t xhat_at) {
      std::vector<float> y(n + 8), xhat(n + 8), rstd(static_cast<size_t>(l.groups));
      const NormForwardArgs a{.layout = l, .center = layout.center, .x = x.data(),
                              .scale = scale.data(), .bias = bias.data(), .y = y.data() + y_at,
                              .xhat = xhat.data() + xhat_at, .rstd = rstd.data()};
      NormalizeGroupsOn(isa, a, 0, l.groups, stream);
      y.erase(y.begin(), y.begin() + static_cast<int64_t>(y_at));
      xhat.erase(xhat.begin(), xhat.begin() + static_cast<int64_t>(xhat_at));
      y.resize(n);
      xhat.resize(n);
      return std::vector<std::vector<uint32_t>>{Bits(y), Bits(xhat), Bits(rstd)};
    };
    const auto baseline = run(NormIsa::kBase, false, 0, 0);
    for (const NormIsa isa : kIsas) {
      if (!NormIsaSupported(isa)) continue;
      for (const bool stream : {false, true}) {
        // y on each offset from a 16-byte boundary; xhat aligned as y (both stream) or not.
        for (size_t y_at = 0; y_at < 4; ++y_at) {
          for (const size_t xhat_at : {y_at + 4, (y_at + 1) % 4}) {
            EXPECT_EQ(run(isa, stream, y_at, xhat_at), baseline)
                << "isa " << static_cast<int>(isa) << " stream " << stream << " y at " << y_at
                << " xhat at " << xhat_at << " center " << layout.center;
          }
        }
      }
    }
  }
}

TEST_F(NormalizeKernelTest, EveryInstructionSetGivesTheBaselineGradientBits) {
  for (const Layout& layout : kLayouts) {
    const NormGroups& l = layout.groups;
    const size_t n = static_cast<size_t>(Elements(l));
    const std::vector<float> xhat = Random(n), g = Random(n), scale = Random(301);
    const std::vector<float> rstd = Random(static_cast<size_t>(l.groups));
    const auto run = [&](NormIsa isa) {
      std::vector<float> dx(n);
      NormalizeBackwardGroupsOn(isa,
                                {.layout = l, .center = layout.center, .xhat = xhat.data(),
                                 .rstd = rstd.data(), .scale = scale.data(), .g = g.data(),
                                 .dx = dx.data()},
                                0, l.groups);
      return Bits(dx);
    };
    const std::vector<uint32_t> baseline = run(NormIsa::kBase);
    for (const NormIsa isa : kIsas) {
      if (NormIsaSupported(isa)) {
        EXPECT_EQ(run(isa), baseline) << static_cast<int>(isa);
      }
    }
  }
}

// LayerNorm-shaped rows (AVX-512 converts rows of up to 1024 once into a per-thread cache):
// rows of 1024 and of 1031 (past the cache: the uncached loop), with and without scale and
// bias, the groups run in uneven pieces (each piece starts its own cache), every set, streaming
// or not: the baseline's bits, run whole.
TEST_F(NormalizeKernelTest, CachedAndLongerRowsInPiecesGiveTheBaselineBits) {
  for (const int64_t cols : {1024, 1031}) {
    constexpr int64_t kRows = 7;
    const NormGroups l{.groups = kRows, .block = cols, .group_stride = cols};
    const size_t n = static_cast<size_t>(kRows * cols);
    const std::vector<float> x = Random(n), scale = Random(static_cast<size_t>(cols)),
                             bias = Random(static_cast<size_t>(cols));
    for (const bool affine : {true, false}) {
      const auto run = [&](NormIsa isa, bool stream, const std::vector<int64_t>& cuts) {
        std::vector<float> y(n + 3), xhat(n + 3), rstd(kRows);
        const NormForwardArgs a{.layout = l,
                                .x = x.data(),
                                .scale = affine ? scale.data() : nullptr,
                                .bias = affine ? bias.data() : nullptr,
                                .y = y.data() + 3,
                                .xhat = xhat.data() + 3,
                                .rstd = rstd.data()};
        for (size_t c = 0; c + 1 < cuts.size(); ++c) {
          NormalizeGroupsOn(isa, a, cuts[c], cuts[c + 1], stream);
        }
        return std::vector<std::vector<uint32_t>>{Bits(y), Bits(xhat), Bits(rstd)};
      };
      const auto baseline = run(NormIsa::kBase, false, {0, kRows});
      for (const NormIsa isa : kIsas) {
        if (!NormIsaSupported(isa)) continue;
        for (const bool stream : {false, true}) {
          EXPECT_EQ(run(isa, stream, {0, 1, 4, kRows}), baseline)
              << "isa " << static_cast<int>(isa) << " stream " << stream << " cols " << cols
              << " affine " << affine;
        }
      }
    }
  }
}

// FastKernels streams an output at or above its threshold (0 here: always) and splits the
// groups over the pool: the reference's bits for RMSNorm's rows (LayerNorm's take the float
// path, layer_norm_rows_test.cc).
TEST_F(NormalizeKernelTest, FastKernelsStreamingGivesTheReferenceBits) {
  constexpr int64_t kRows = 67, kCols = 301;
  const std::vector<float> x = Random(kRows * kCols), scale = Random(kCols),
                           bias = Random(kCols);
  const auto run = [&](const TensorKernels& k) {
    std::vector<float> y(kRows * kCols + 1);
    k.Normalize({.layout = {.groups = kRows, .block = kCols, .group_stride = kCols},
                 .center = false,
                 .x = x.data(),
                 .scale = scale.data(),
                 .bias = bias.data(),
                 .y = y.data() + 1});
    return Bits(y);
  };
  const FastKernels streaming(BestTarget(), ThreadPool::Shared(), /*streaming_min_bytes=*/0);
  EXPECT_EQ(run(streaming), run(ReferenceKernels()));
}

}  // namespace
}  // namespace onemodel::internal
