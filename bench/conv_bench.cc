// Conv2d forward on ResNet-50 / MobileNet layer shapes, in GFLOPS (2 * multiply-adds / s):
// the fast kernels with NHWC input and keep_layout (oneDNN) against NCHW (im2col + OpenBLAS),
// scratch rented once. The input and weight gradients of the 3x3 layer likewise. The
// measured choice is in docs/kernels.md ("Conv2d: oneDNN for NHWC, im2col for the rest").
// Run from the release preset:
//   build/release/bench/conv_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
// Arguments: /shape (0: 64->64 3x3 56x56 batch 8, 1: 256->64 1x1 56x56 batch 8, 2: 3->64 7x7
// stride 2 pad 3 224x224 batch 1, 3: 32-channel depthwise 3x3 112x112 batch 8, 4 and 5: the
// digits CNN's 1->8 3x3 pad 1 on 8x8 and 8->16 on 4x4, batch 256, with bias)/nhwc (0, 1).
// BM_Conv2dBiasGradient: the digits layers' bias gradients (ops::Sum over N, OH, OW).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "core/kernels/fast_kernels.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/reduce.h"
#include "core/tensor/layout.h"

namespace onemodel {
namespace {

struct Case {
  int64_t n, c, h, w, k, kernel;
  Conv2dParams p;
  bool bias = false;
};

constexpr Case kCases[] = {
    {8, 64, 56, 56, 64, 3, {.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1}},
    {8, 256, 56, 56, 64, 1, {}},
    {1,
     3,
     224,
     224,
     64,
     7,
     {.stride_h = 2, .stride_w = 2, .pad_top = 3, .pad_left = 3, .pad_bottom = 3, .pad_right = 3}},
    {8,
     32,
     112,
     112,
     32,
     3,
     {.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .groups = 32}},
    {256, 1, 8, 8, 8, 3, {.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1}, true},
    {256, 8, 4, 4, 16, 3, {.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1}, true},
};

BufferPool& Pool() {
  static BufferPool pool;
  return pool;
}

// A float tensor of logical shape `nchw` (NHWC when asked) filled with small values.
Tensor Filled(const Shape& nchw, bool nhwc) {
  Tensor t = Tensor::Empty(nchw, DType::kFloat, Pool());
  uint32_t state = 1;
  for (float& v : t.MutableData<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) * 0x1p-24f - 0.5f;
  }
  return nhwc ? t.ToLayout(Layout::kNhwc, Pool()) : t;
}

// The tensors of one case: x, w, the bias (when the case has one), the output (also the output
// gradient) and grad_x.
struct Problem {
  Case c;
  Conv2dParams p;
  Tensor x, w, b, y, gx;
  Tensor scratch;
  double flops;
  Problem(const FastKernels& kernels, int index, bool nhwc) : c(kCases[index]), p(c.p) {
    p.keep_layout = nhwc ? 1 : 0;
    const int64_t oh = ConvOutputExtent(c.h, c.kernel, p.stride_h, p.pad_top, p.pad_bottom, 1);
    const int64_t ow = ConvOutputExtent(c.w, c.kernel, p.stride_w, p.pad_left, p.pad_right, 1);
    x = Filled(Shape{c.n, c.c, c.h, c.w}, nhwc);
    w = Filled(Shape{c.k, c.c / p.groups, c.kernel, c.kernel}, false);
    if (c.bias) b = Filled(Shape{c.k}, false);
    y = Filled(Shape{c.n, c.k, oh, ow}, nhwc);
    gx = Filled(x.shape(), nhwc);
    scratch = Tensor::Empty(Shape{kernels.Conv2dScratchFloats(x.shape(), w.shape(), p)},
                            DType::kFloat, Pool());
    flops = 2.0 * c.n * c.k * oh * ow * (c.c / p.groups) * c.kernel * c.kernel;
  }
};

const FastKernels& Kernels() {
  static const FastKernels kernels(BestTarget());
  return kernels;
}

void Report(benchmark::State& state, const Problem& q) {
  state.counters["GFLOPS"] =
      benchmark::Counter(q.flops * 1e-9 * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_Conv2dForward(benchmark::State& state) {
  Problem q(Kernels(), static_cast<int>(state.range(0)), state.range(1) != 0);
  for (auto _ : state) {
    Kernels().Conv2d(q.x, q.w, q.c.bias ? &q.b : nullptr, q.p, q.y, q.scratch.MutableData<float>());
  }
  Report(state, q);
}
BENCHMARK(BM_Conv2dForward)
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Args({4, 0})
    ->Args({5, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Conv2dBackwardInput(benchmark::State& state) {
  Problem q(Kernels(), static_cast<int>(state.range(0)), state.range(1) != 0);
  for (auto _ : state) {
    Kernels().Conv2dBackwardInput(q.y, q.w, q.p, q.gx, q.scratch.MutableData<float>());
  }
  Report(state, q);
}
BENCHMARK(BM_Conv2dBackwardInput)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({5, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Conv2dBackwardWeight(benchmark::State& state) {
  Problem q(Kernels(), static_cast<int>(state.range(0)), state.range(1) != 0);
  Tensor gw = Filled(q.w.shape(), false);
  for (auto _ : state) {
    Kernels().Conv2dBackwardWeight(q.y, q.x, q.p, gw, q.scratch.MutableData<float>());
  }
  Report(state, q);
}
BENCHMARK(BM_Conv2dBackwardWeight)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({4, 0})
    ->Args({5, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The bias gradient of a case with a bias: the output gradient summed over N, OH and OW
// (ops::Sum, as the convolution's backward runs it).
void BM_Conv2dBiasGradient(benchmark::State& state) {
  Problem q(Kernels(), static_cast<int>(state.range(0)), false);
  const OpContext ctx{Pool(), Kernels()};
  const int axes[] = {0, 2, 3};
  for (auto _ : state) benchmark::DoNotOptimize(ops::Sum(q.y, axes, false, ctx));
}
BENCHMARK(BM_Conv2dBiasGradient)->Arg(4)->Arg(5)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace onemodel

BENCHMARK_MAIN();
