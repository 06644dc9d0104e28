// The STREAM loops of bench/machine_peaks.h write exactly their destination's elements, with
// ordinary and with streaming stores, at every alignment and length (the streaming loops start
// with ordinary stores up to a 64-byte boundary and end with them for the tail).
#include "bench/machine_peaks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/kernels/thread_pool.h"

namespace onemodel::bench {
namespace {

constexpr float kSentinel = -7.0f;
constexpr float kScale = 3.0f;

// Lengths around the loops' vector and unroll widths, and one spanning many lines.
const std::vector<int64_t> kLengths = {0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129, 4109};

// Integer values, so that b + 3c is exact with or without a fused multiply-add.
std::vector<float> Values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>((i * 7 + seed) % 101 - 50);
  return v;
}

class MachinePeaksTest : public testing::TestWithParam<Stores> {};

TEST_P(MachinePeaksTest, CopyWritesEveryElementAndNothingAround) {
  for (const int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (const int64_t n : kLengths) {
      for (int64_t offset = 0; offset < 17; ++offset) {
        const std::vector<float> src = Values(n, 1);
        std::vector<float> dst(static_cast<size_t>(n + offset + 16), kSentinel);
        StreamCopy(pool, dst.data() + offset, src.data(), n, GetParam());
        for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
          const bool inside = i >= offset && i < offset + n;
          ASSERT_EQ(dst[static_cast<size_t>(i)],
                    inside ? src[static_cast<size_t>(i - offset)] : kSentinel)
              << "n " << n << ", offset " << offset << ", element " << i << ", threads " << threads;
        }
      }
    }
  }
}

TEST_P(MachinePeaksTest, TriadWritesEveryElementAndNothingAround) {
  for (const int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (const int64_t n : kLengths) {
      for (int64_t offset = 0; offset < 17; ++offset) {
        const std::vector<float> b = Values(n, 2), c = Values(n, 3);
        std::vector<float> a(static_cast<size_t>(n + offset + 16), kSentinel);
        StreamTriad(pool, a.data() + offset, b.data(), c.data(), kScale, n, GetParam());
        for (int64_t i = 0; i < static_cast<int64_t>(a.size()); ++i) {
          const size_t k = static_cast<size_t>(i - offset);
          const bool inside = i >= offset && i < offset + n;
          ASSERT_EQ(a[static_cast<size_t>(i)], inside ? b[k] + kScale * c[k] : kSentinel)
              << "n " << n << ", offset " << offset << ", element " << i << ", threads " << threads;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, MachinePeaksTest,
                         testing::Values(Stores::kOrdinary, Stores::kStreaming),
                         [](const testing::TestParamInfo<Stores>& info) {
                           return info.param == Stores::kStreaming ? "Streaming" : "Ordinary";
                         });

}  // namespace
}  // namespace onemodel::bench
