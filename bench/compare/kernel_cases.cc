// compare_runner's kernel cases: onemodel's fast kernels (best SIMD target, shared thread
// pool, OpenBLAS for MatMul) with preallocated outputs, and this machine's own limits measured
// the way bench/machine_peaks.h does (STREAM copy and triad, the triad with streaming stores,
// the FMA peak).
//
// Sizes match bench/compare/torch_runner.py and ort_runner.mjs: 16M floats for elementwise and
// conversions, [4096, 4096] + [4096] for the row broadcast, 1024^3 for MatMul and the small
// shapes of a training step (matmul_MxKxN), MaxPool2d 3x3 stride 2 pad 1 on [8, 64, 112, 112].
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/compare/cases.h"
#include "bench/machine_peaks.h"
#include "core/autograd/engine.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/internal/simd_tables.h"
#include "core/kernels/simd_targets.h"
#include "core/kernels/thread_pool.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/pooling.h"
#include "core/tensor/tensor.h"

namespace onemodel::bench {
namespace {

constexpr int64_t kN = int64_t{16} << 20;
constexpr MaxPool2dParams kPool{3, 3, 2, 2, 1, 1};

BufferPool& Pool() {
  static BufferPool pool;
  return pool;
}
const FastKernels& Fast() {
  static const FastKernels fast(BestTarget());
  return fast;
}

// A float tensor of `shape` in the pool with deterministic values in [-1, 1).
Tensor Filled(const Shape& shape, uint32_t seed) { return bench::Filled(shape, seed, Pool()); }

// The pooling input [8, 64, 112, 112] in `layout`, shared by the pooling cases.
Tensor PoolInput(Layout layout) {
  static const Tensor nchw = Filled(Shape{8, 64, 112, 112}, 21);
  return layout == Layout::kNchw ? nchw : nchw.ToLayout(layout, Pool());
}
// An output of logical shape (8, 64, 56, 56) laid out like `layout`.
Tensor PoolOutput(Layout layout) {
  if (layout == Layout::kNchw) return Tensor::Empty(Shape{8, 64, 56, 56}, DType::kFloat, Pool());
  return Tensor::Empty(Shape{8, 56, 56, 64}, DType::kFloat, Pool()).Permute({0, 3, 1, 2});
}

// Forward MaxPool2d as ops::MaxPool2d runs it when nothing records (no argmax).
Case MaxPoolForward(Layout layout) {
  auto x = std::make_shared<Tensor>(PoolInput(layout));
  auto y = std::make_shared<Tensor>(PoolOutput(layout));
  return {1, [=] { Fast().MaxPool2d(*x, kPool, *y, nullptr); }};
}

// ReluMaxPool2d forward (NHWC, no indices), or Relu into a temporary then MaxPool2d: what a
// network without the fused operation runs.
Case ReluMaxPool(bool fused) {
  auto x = std::make_shared<Tensor>(PoolInput(Layout::kNhwc));
  auto y = std::make_shared<Tensor>(PoolOutput(Layout::kNhwc));
  if (fused) {
    MaxPool2dParams p = kPool;
    p.relu = true;
    return {1, [=] { Fast().MaxPool2d(*x, p, *y, nullptr); }};
  }
  auto relu = std::make_shared<Tensor>(PoolInput(Layout::kNhwc));  // a fresh NHWC copy
  // Relu over the physical (N, H, W, C) order, one contiguous run: its fastest form.
  auto x_phys = std::make_shared<Tensor>(x->Permute({0, 2, 3, 1}));
  auto relu_phys = std::make_shared<Tensor>(relu->Permute({0, 2, 3, 1}));
  return {1, [=] {
            Fast().Unary(UnaryOp::kRelu, *x_phys, *relu_phys);
            Fast().MaxPool2d(*relu, kPool, *y, nullptr);
          }};
}

// AvgPool2d 3x3 stride 2 pad 1 forward (NHWC): the input read once and the output written,
// in bytes.
Case AvgPoolForward() {
  auto x = std::make_shared<Tensor>(PoolInput(Layout::kNhwc));
  auto y = std::make_shared<Tensor>(PoolOutput(Layout::kNhwc));
  const AvgPool2dParams p{3, 3, 2, 2, 1, 1};
  return {4.0 * static_cast<double>(x->ElementCount() + y->ElementCount()),
          [=] { Fast().AvgPool2d(*x, p, *y); }};
}

// Backward of a recorded MaxPool2d (NHWC) through the autograd engine, the graph retained:
// the input gradient rented from the pool, zeroed and scattered into, then returned (as a
// caller that is done with it does, so each call gets warm memory back from the pool).
Case MaxPoolBackward() {
  struct State {
    OpContext ctx{Pool(), Fast()};
    Tensor x = PoolInput(Layout::kNhwc).WithRequiresGrad();
    Tensor y = ops::MaxPool2d(x, kPool, ctx);
    Tensor g = PoolOutput(Layout::kNhwc);
  };
  auto s = std::make_shared<State>();
  s->g.Fill(1.0f);
  return {1, [s] {
            const Tensor inputs[] = {s->x};
            for (Tensor& grad : Backward(s->y, &s->g, inputs, s->ctx, {.retain_graph = true})) {
              grad.Dispose();
            }
          }};
}

// Three 16M-float arrays shared by the elementwise, STREAM and conversion cases.
struct Arrays {
  Tensor a = Filled(Shape{kN}, 1), b = Filled(Shape{kN}, 2), c = Filled(Shape{kN}, 3);
  std::vector<uint16_t> halves = std::vector<uint16_t>(static_cast<size_t>(kN));
};
std::shared_ptr<Arrays> Shared16M() {
  static const auto arrays = std::make_shared<Arrays>();
  return arrays;
}

// float -> 16-bit -> float over 16M values (12 bytes moved per value), split over the pool.
Case ConvertRoundTrip(void (*to16)(int64_t, const float*, uint16_t*),
                      void (*from16)(int64_t, const uint16_t*, float*)) {
  auto s = Shared16M();
  return {12.0 * kN, [=] {
            const float* in = s->a.Data<float>().data();
            float* out = s->c.MutableData<float>().data();
            uint16_t* mid = s->halves.data();
            ParallelSplit(ThreadPool::Shared(), kN,
                          [&](int64_t b, int64_t e) { to16(e - b, in + b, mid + b); });
            ParallelSplit(ThreadPool::Shared(), kN,
                          [&](int64_t b, int64_t e) { from16(e - b, mid + b, out + b); });
          }};
}

Case MatMul1024() {
  auto a = std::make_shared<Tensor>(Filled(Shape{1024, 1024}, 11));
  auto b = std::make_shared<Tensor>(Filled(Shape{1024, 1024}, 12));
  auto c = std::make_shared<Tensor>(Filled(Shape{1024, 1024}, 13));
  return {2.0 * 1024 * 1024 * 1024, [=] { Fast().MatMul(*a, *b, *c); }};
}

// out[m, n] = a[m, k] x b[k, n], row-major, as one MatMul of a training step runs it: in the
// server, work this size runs on a worker inside the request's ThreadPool::Warm scope (it is
// above --inline-max-bytes' default), so each call opens one, as a request of one MatMul
// would: the pool's workers are woken at its start and the caller polls for their last tasks.
Case SmallMatMul(int64_t m, int64_t k, int64_t n) {
  auto a = std::make_shared<Tensor>(Filled(Shape{m, k}, 14));
  auto b = std::make_shared<Tensor>(Filled(Shape{k, n}, 15));
  auto c = std::make_shared<Tensor>(Filled(Shape{m, n}, 16));
  return {2.0 * static_cast<double>(m * k * n), [=] {
            const ThreadPool::Warm warm(ThreadPool::Shared());
            Fast().MatMul(*a, *b, *c);
          }};
}

// The FP32 FMA loop of the widest ISA on every thread of the shared pool (machine_peaks.h).
Case FmaPeak() {
  const FmaIsa isa = BestFmaIsa();
  const int threads = ThreadPool::Shared().threads();
  const int64_t iterations = CalibrateFmaLoop(isa, 0.02);
  return {FmaFlopsPerIteration(isa) * static_cast<double>(iterations) * threads,
          [=] { TimeFmaLoop(isa, threads, iterations); }};
}

// LayerNorm over the last axis of [8192, 1024] with scale and bias, not recording (no x-hat
// written): x read once (the row's second pass hits the cache) and y written, 8 bytes per
// element.
Case LayerNorm8192x1024() {
  constexpr int64_t kRows = 8192, kCols = 1024;
  auto x = std::make_shared<Tensor>(Filled(Shape{kRows, kCols}, 31));
  auto w = std::make_shared<Tensor>(Filled(Shape{kCols}, 32));
  auto b = std::make_shared<Tensor>(Filled(Shape{kCols}, 33));
  auto y = std::make_shared<Tensor>(Filled(Shape{kRows, kCols}, 34));
  return {8.0 * kRows * kCols, [=] {
            Fast().Normalize({.layout = {.groups = kRows, .block = kCols, .group_stride = kCols},
                              .x = x->Data<float>().data(),
                              .scale = w->Data<float>().data(),
                              .bias = b->Data<float>().data(),
                              .y = y->MutableData<float>().data()});
          }};
}

}  // namespace

void AddKernelCases(CaseRegistry& cases) {
  cases["add_16m"] = [] {
    auto s = Shared16M();
    return Case{12.0 * kN, [s] { Fast().Binary(BinaryOp::kAdd, s->a, s->b, s->c); }};
  };
  cases["relu_16m"] = [] {
    auto s = Shared16M();
    return Case{8.0 * kN, [s] { Fast().Unary(UnaryOp::kRelu, s->a, s->c); }};
  };
  cases["exp_16m"] = [] {
    auto s = Shared16M();
    return Case{8.0 * kN, [s] { Fast().Unary(UnaryOp::kExp, s->a, s->c); }};
  };
  cases["add_rowbcast_16m"] = [] {
    auto s = Shared16M();
    auto x = std::make_shared<Tensor>(*s->a.TryReshape({4096, 4096}));
    auto out = std::make_shared<Tensor>(*s->c.TryReshape({4096, 4096}));
    auto row = std::make_shared<Tensor>(Filled(Shape{4096}, 5).Expand(Shape{4096, 4096}));
    return Case{8.0 * kN + 4.0 * 4096, [=] { Fast().Binary(BinaryOp::kAdd, *x, *row, *out); }};
  };
  // The STREAM loops on the same operands, with ordinary stores ("copy_16m", "triad_16m") and
  // with streaming ones ("copy_nt_16m", "triad_nt_16m"): each pair's ratio is what skipping
  // the read-for-ownership gains on this machine.
  for (const Stores stores : {Stores::kOrdinary, Stores::kStreaming}) {
    const std::string suffix = stores == Stores::kStreaming ? "_nt_16m" : "_16m";
    cases["copy" + suffix] = [stores] {
      auto s = Shared16M();
      return Case{8.0 * kN, [s, stores] {
                    StreamCopy(ThreadPool::Shared(), s->c.MutableData<float>().data(),
                               s->a.Data<float>().data(), kN, stores);
                  }};
    };
    cases["triad" + suffix] = [stores] {
      auto s = Shared16M();
      return Case{12.0 * kN, [s, stores] {
                    StreamTriad(ThreadPool::Shared(), s->c.MutableData<float>().data(),
                                s->a.Data<float>().data(), s->b.Data<float>().data(), 3.0f, kN,
                                stores);
                  }};
    };
  }
  // Both outputs (32 and 64 MiB) are above DefaultStreamingMinBytes(): the streaming rows.
  cases["half_convert_16m"] = [] {
    const internal::ConvertSimd& simd = internal::ConvertSimdFor(BestTarget());
    return ConvertRoundTrip(simd.float_to_half_streaming, simd.half_to_float_streaming);
  };
  cases["bf16_convert_16m"] = [] {
    const internal::ConvertSimd& simd = internal::ConvertSimdFor(BestTarget());
    return ConvertRoundTrip(simd.float_to_bfloat16_streaming, simd.bfloat16_to_float_streaming);
  };
  cases["matmul_1024"] = MatMul1024;
  cases["fma_peak"] = FmaPeak;
  cases["matmul_64x784x256"] = [] { return SmallMatMul(64, 784, 256); };
  cases["matmul_64x256x10"] = [] { return SmallMatMul(64, 256, 10); };
  cases["matmul_512x20x64"] = [] { return SmallMatMul(512, 20, 64); };
  cases["maxpool_nchw"] = [] { return MaxPoolForward(Layout::kNchw); };
  cases["maxpool_nhwc"] = [] { return MaxPoolForward(Layout::kNhwc); };
  cases["maxpool_backward"] = MaxPoolBackward;
  cases["relumaxpool_nhwc"] = [] { return ReluMaxPool(true); };
  cases["relu_then_maxpool_nhwc"] = [] { return ReluMaxPool(false); };
  cases["avgpool_nhwc"] = AvgPoolForward;
  cases["layernorm_8192x1024"] = LayerNorm8192x1024;
}

}  // namespace onemodel::bench
