// MaxPool2d 3x3, stride 2, pad 1 on [8, 64, 112, 112] (ResNet's first pooling layer): fast
// (best SIMD target, shared pool) against the reference, NCHW and NHWC input (output in the
// same layout), with and without indices. BM_ReadInputOnce is the floor: one pass reading
// the input, on 1 and on all threads. Run from the release preset:
//   build/release/bench/maxpool_bench --benchmark_min_time=0.2
// Arguments: /layout (0 NCHW, 1 NHWC)/indices (0, 1). BM_DigitsPool: the digits CNN's pools.
#include <benchmark/benchmark.h>

#include <bit>
#include <cstdint>
#include <span>

#include "core/kernels/fast_kernels.h"
#include "core/kernels/reference_kernels.h"
#include "core/memory/buffer_pool.h"

namespace onemodel {
namespace {

constexpr MaxPool2dParams kParams{3, 3, 2, 2, 1, 1};

BufferPool& Pool() {
  static BufferPool pool;
  return pool;
}

// The input, filled once: NCHW, or the same values in NHWC.
const Tensor& Input(bool nhwc) {
  static const Tensor nchw = [] {
    Tensor t = Tensor::Empty(Shape{8, 64, 112, 112}, DType::kFloat, Pool());
    uint32_t state = 1;
    for (float& v : t.MutableData<float>()) {
      state = state * 1664525u + 1013904223u;
      v = static_cast<float>(state >> 8) * 0x1p-24f - 0.5f;
    }
    return t;
  }();
  static const Tensor as_nhwc = nchw.ToLayout(Layout::kNhwc, Pool());
  return nhwc ? as_nhwc : nchw;
}

// An output of logical (8, 64, 56, 56) in NCHW or NHWC.
Tensor Output(bool nhwc, DType dtype) {
  if (!nhwc) return Tensor::Empty(Shape{8, 64, 56, 56}, dtype, Pool());
  return Tensor::Empty(Shape{8, 56, 56, 64}, dtype, Pool()).Permute({0, 3, 1, 2});
}

void Run(benchmark::State& state, const TensorKernels& kernels) {
  const bool nhwc = state.range(0) != 0, with_indices = state.range(1) != 0;
  const Tensor& x = Input(nhwc);
  Tensor out = Output(nhwc, DType::kFloat);
  Tensor idx = Output(nhwc, DType::kInt32);
  for (auto _ : state) {
    kernels.MaxPool2d(x, kParams, out, with_indices ? &idx : nullptr);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * x.ElementCount() * 4);
  state.SetLabel(std::string(kernels.name()) + (nhwc ? " NHWC" : " NCHW") +
                 (with_indices ? " +indices" : ""));
}

void BM_MaxPoolFast(benchmark::State& state) {
  static const FastKernels fast(BestTarget());
  Run(state, fast);
}

void BM_MaxPoolFastOneThread(benchmark::State& state) {
  static ThreadPool one(1);
  static const FastKernels fast(BestTarget(), one);
  Run(state, fast);
}

void BM_MaxPoolReference(benchmark::State& state) {
  static const ReferenceKernels reference;
  Run(state, reference);
}

// The digits CNN's two 2x2 pools at stride 2 (tests/proofs/digits_model.py, batch 256):
// /layer 0 pools [256, 8, 8, 8], 1 pools [256, 16, 4, 4]; /backward 0 is the forward with
// indices, 1 the backward from those indices; /fast 1 the fast kernels (shared pool), 0 the
// reference.
void BM_DigitsPool(benchmark::State& state) {
  static const FastKernels fast(BestTarget());
  static const ReferenceKernels reference;
  const TensorKernels& kernels =
      state.range(2) ? static_cast<const TensorKernels&>(fast) : reference;
  const Shape in = state.range(0) ? Shape{256, 16, 4, 4} : Shape{256, 8, 8, 8};
  const Shape out{in[0], in[1], in[2] / 2, in[3] / 2};
  constexpr MaxPool2dParams kTwoByTwo{2, 2, 2, 2, 0, 0};
  Tensor x = Tensor::Empty(in, DType::kFloat, Pool());
  uint32_t seed = 7;
  for (float& v : x.MutableData<float>()) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) * 0x1p-24f - 0.5f;
  }
  Tensor y = Tensor::Empty(out, DType::kFloat, Pool());
  Tensor idx = Tensor::Empty(out, DType::kInt32, Pool());
  Tensor gx = Tensor::Empty(in, DType::kFloat, Pool());
  kernels.MaxPool2d(x, kTwoByTwo, y, &idx);
  const bool backward = state.range(1) != 0;
  for (auto _ : state) {
    if (backward) {
      kernels.MaxPool2dBackward(y, idx, gx);  // y as the output gradient: any values do
    } else {
      kernels.MaxPool2d(x, kTwoByTwo, y, &idx);
    }
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::string(kernels.name()) + " " + in.ToString() +
                 (backward ? " backward" : " forward"));
}
BENCHMARK(BM_DigitsPool)
    ->ArgNames({"layer", "backward", "fast"})
    ->ArgsProduct({{0, 1}, {0, 1}, {1, 0}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Sums the input's bits once (a pass bounded by memory bandwidth), split over `threads`.
void BM_ReadInputOnce(benchmark::State& state) {
  const std::span<const float> data = Input(false).Data<float>();
  const int64_t tasks = state.range(0);
  ThreadPool& pool = ThreadPool::Shared();
  const int64_t n = static_cast<int64_t>(data.size());
  for (auto _ : state) {
    uint32_t sums[64] = {};
    pool.ParallelFor(tasks, [&](int64_t t) {
      uint32_t sum = 0;
      for (int64_t i = n * t / tasks; i < n * (t + 1) / tasks; ++i) {
        sum += std::bit_cast<uint32_t>(data[static_cast<size_t>(i)]);
      }
      sums[t] = sum;
    });
    benchmark::DoNotOptimize(sums);
  }
  state.SetBytesProcessed(state.iterations() * n * 4);
}

#define ONEMODEL_POOL_ARGS            \
  ArgNames({"nhwc", "indices"})       \
      ->Args({0, 0})                  \
      ->Args({0, 1})                  \
      ->Args({1, 0})                  \
      ->Args({1, 1})                  \
      ->Unit(benchmark::kMillisecond) \
      ->UseRealTime()
BENCHMARK(BM_MaxPoolFast)->ONEMODEL_POOL_ARGS;
BENCHMARK(BM_MaxPoolFastOneThread)->ONEMODEL_POOL_ARGS;
BENCHMARK(BM_MaxPoolReference)->ONEMODEL_POOL_ARGS;
BENCHMARK(BM_ReadInputOnce)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace onemodel

BENCHMARK_MAIN();
