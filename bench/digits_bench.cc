// The grains of small work (docs/kernels.md, "Small work stays on the caller"): the digits
// CNN's poolings (2x2 stride 2 on [N, 8, 8, 8], with indices, forward and backward) and Relu
// of 2^16-2^20 floats, each through FastKernels on the shared pool (last argument 0) and on a
// 1-thread pool (1). Run from the release preset:
//   build/release/bench/digits_bench --benchmark_min_time=0.2 --benchmark_repetitions=3
// Arguments: BM_Pool*: /C/H=W/one thread/N; BM_Relu: /elements/one thread.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "core/kernels/fast_kernels.h"
#include "core/memory/buffer_pool.h"

namespace onemodel {
namespace {
BufferPool& Pool() {
  static BufferPool pool;
  return pool;
}
Tensor Filled(const Shape& s) {
  Tensor t = Tensor::Empty(s, DType::kFloat, Pool());
  uint32_t state = 1;
  for (float& v : t.MutableData<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) * 0x1p-24f - 0.5f;
  }
  return t;
}
// FastKernels on the shared pool, or (one) on a pool of one thread.
const FastKernels& K(bool one) {
  static ThreadPool single(1);
  static const FastKernels shared(BestTarget()), alone(BestTarget(), single);
  return one ? alone : shared;
}
void BM_Pool(benchmark::State& state) {
  const int64_t c = state.range(0), hw = state.range(1);
  const int64_t n = state.range(3);
  const Tensor x = Filled(Shape{n, c, hw, hw});
  Tensor out = Tensor::Empty(Shape{n, c, hw / 2, hw / 2}, DType::kFloat, Pool());
  Tensor idx = Tensor::Empty(Shape{n, c, hw / 2, hw / 2}, DType::kInt32, Pool());
  const MaxPool2dParams p{2, 2, 2, 2, 0, 0};
  for (auto _ : state) K(state.range(2)).MaxPool2d(x, p, out, &idx);
}
void BM_PoolBackward(benchmark::State& state) {
  const int64_t c = state.range(0), hw = state.range(1), n = state.range(3);
  const Tensor x = Filled(Shape{n, c, hw, hw});
  Tensor out = Tensor::Empty(Shape{n, c, hw / 2, hw / 2}, DType::kFloat, Pool());
  Tensor idx = Tensor::Empty(Shape{n, c, hw / 2, hw / 2}, DType::kInt32, Pool());
  const MaxPool2dParams p{2, 2, 2, 2, 0, 0};
  K(true).MaxPool2d(x, p, out, &idx);
  Tensor gx = Tensor::Empty(Shape{n, c, hw, hw}, DType::kFloat, Pool());
  for (auto _ : state) K(state.range(2)).MaxPool2dBackward(out, idx, gx);
}
void BM_Relu(benchmark::State& state) {
  const Tensor x = Filled(Shape{state.range(0)});
  Tensor out = Tensor::Empty(Shape{state.range(0)}, DType::kFloat, Pool());
  for (auto _ : state) K(state.range(1)).Unary(UnaryOp::kRelu, x, out);
}
BENCHMARK(BM_Pool)->ArgsProduct({{8}, {8}, {0, 1}, {256, 512, 1024, 2048}});
BENCHMARK(BM_PoolBackward)->ArgsProduct({{8}, {8}, {0, 1}, {256, 512, 1024, 2048}});
BENCHMARK(BM_Relu)->ArgsProduct({{65536, 131072, 262144, 524288, 1048576}, {0, 1}});
}  // namespace
}  // namespace onemodel
BENCHMARK_MAIN();
