// Where streaming stores start to pay on this machine (docs/kernels.md, "Streaming stores for
// large outputs"): the fast Add writing with streaming stores against ordinary stores, at
// outputs of 1 to 64 MiB, alone and followed by a reader of its output (Relu into a fourth
// tensor, the case streaming can lose). Both forms are sampled in turn in each of 7 rounds;
// a round's figure is the median of its repetitions, the table shows medians over rounds.
//
//   build/release/bench/streaming_threshold
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "bench/machine_peaks.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/tensor.h"

namespace onemodel::bench {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds of `reps` calls of fn.
template <typename Fn>
double MedianSeconds(int reps, const Fn& fn) {
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) s.push_back(SecondsOf(fn));
  return Median(s);
}

int Run() {
  BufferPool pool;
  const FastKernels ordinary(BestTarget(), ThreadPool::Shared(),
                             std::numeric_limits<int64_t>::max());
  const FastKernels streaming(BestTarget(), ThreadPool::Shared(), 0);
  std::printf("default threshold: %lld bytes (last-level cache %lld bytes)\n",
              static_cast<long long>(DefaultStreamingMinBytes()),
              static_cast<long long>(LastLevelCacheBytes()));
  std::printf("%-8s %-34s %s\n", "output", "Add alone: streaming/ordinary speed",
              "Add then Relu of it: ordinary/streaming time");
  for (int64_t mib : {1, 2, 4, 8, 16, 32, 64}) {
    const Shape shape{mib << 18};
    Tensor a = Tensor::Empty(shape, DType::kFloat, pool),
           b = Tensor::Empty(shape, DType::kFloat, pool);
    Tensor c = Tensor::Empty(shape, DType::kFloat, pool),
           e = Tensor::Empty(shape, DType::kFloat, pool);
    for (Tensor* t : {&a, &b, &c, &e}) t->Fill(1.0f);
    const int reps = static_cast<int>(std::max<int64_t>(5, 1000 / mib));
    std::vector<double> alone, chained;
    for (int round = 0; round < 7; ++round) {
      const auto add = [&](const FastKernels& k) {
        return MedianSeconds(reps, [&] { k.Binary(BinaryOp::kAdd, a, b, c); });
      };
      const auto add_then_relu = [&](const FastKernels& k) {
        return MedianSeconds(reps, [&] {
          k.Binary(BinaryOp::kAdd, a, b, c);
          ordinary.Unary(UnaryOp::kRelu, c, e);
        });
      };
      alone.push_back(add(ordinary) / add(streaming));
      chained.push_back(add_then_relu(ordinary) / add_then_relu(streaming));
    }
    std::printf("%3lld MiB  %-34.2f %.2f\n", static_cast<long long>(mib), Median(alone),
                Median(chained));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace onemodel::bench

int main() { return onemodel::bench::Run(); }
