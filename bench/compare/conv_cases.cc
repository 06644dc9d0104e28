// compare_runner's convolution cases (issue 16): ResNet-50 and MobileNet layer shapes through
// ops::Conv2d with the fast kernels, as a session runs them (outputs and scratch from an arena
// reset before each call, as a session's is before each Run), and one SGD step of the LeNet of
// tests/common/lenet.h. The same shapes as torch_runner.py's and ort_runner.mjs's conv cases.
//
// Inputs are NHWC, the activations' best layout here (and PyTorch's, channels-last); weights
// (K, C / groups, KH, KW) contiguous, no bias (a batch norm follows these layers in ResNet).
#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "bench/compare/cases.h"
#include "core/autograd/engine.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/conv.h"
#include "tests/common/lenet.h"

namespace onemodel::bench {
namespace {

// One convolution layer: x (n, c, h, w) and w (k, c / groups, kh, kw).
struct ConvLayer {
  int64_t n, c, h, w, k, kh, kw;
  Conv2dParams p;

  // Multiply-adds x 2 of the forward pass.
  double Flops() const {
    const int64_t oh = ConvOutputExtent(h, static_cast<int32_t>(kh), p.stride_h, p.pad_top,
                                        p.pad_bottom, p.dilation_h);
    const int64_t ow = ConvOutputExtent(w, static_cast<int32_t>(kw), p.stride_w, p.pad_left,
                                        p.pad_right, p.dilation_w);
    return 2.0 * static_cast<double>(n * k * oh * ow * (c / p.groups) * kh * kw);
  }
};

constexpr Conv2dParams kPad1{.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1};
constexpr ConvLayer kResnet3x3{8, 64, 56, 56, 64, 3, 3, kPad1};
constexpr ConvLayer kResnet1x1{8, 256, 56, 56, 64, 1, 1, {}};
constexpr Conv2dParams kStride2Pad3{
    .stride_h = 2, .stride_w = 2, .pad_top = 3, .pad_left = 3, .pad_bottom = 3, .pad_right = 3};
constexpr ConvLayer kStem7x7{1, 3, 224, 224, 64, 7, 7, kStride2Pad3};
constexpr Conv2dParams kDepthwisePad1{
    .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .groups = 32};
constexpr ConvLayer kDepthwise{8, 32, 112, 112, 32, 3, 3, kDepthwisePad1};

// The pool, fast kernels and arena behind every case (compare_runner runs one case at a time).
struct Runtime {
  BufferPool pool;
  Arena arena{pool};
  FastKernels fast{BestTarget()};
  OpContext pool_ctx{pool, fast};
  OpContext arena_ctx{arena, fast};
};
Runtime& Shared() {
  static Runtime runtime;
  return runtime;
}

// The layer's params as ours runs them: NHWC in, NHWC out (keep_layout).
Conv2dParams Params(const ConvLayer& layer) {
  Conv2dParams p = layer.p;
  p.keep_layout = 1;
  return p;
}

// x (NHWC) and w of `layer`, deterministic values in [-1, 1).
struct LayerInputs {
  Tensor x, w;
  explicit LayerInputs(const ConvLayer& l)
      : x(Filled(Shape{l.n, l.c, l.h, l.w}, 31, Shared().pool)
              .ToLayout(Layout::kNhwc, Shared().pool)),
        w(Filled(Shape{l.k, l.c / l.p.groups, l.kh, l.kw}, 32, Shared().pool)) {}
};

// The forward convolution, not recording.
Case ConvForward(const ConvLayer& layer) {
  auto in = std::make_shared<LayerInputs>(layer);
  const Conv2dParams p = Params(layer);
  return {layer.Flops(), [in, p] {
            Runtime& r = Shared();
            r.arena.Reset();
            ops::Conv2d(in->x, in->w, nullptr, p, r.arena_ctx);
          }};
}

// The input and weight gradients of a recorded convolution (the graph retained), through the
// autograd engine into the arena; work: the two gradients' flops (twice the forward's).
Case ConvBackward(const ConvLayer& layer) {
  struct State {
    Tensor x, w, y, g;
  };
  const LayerInputs in(layer);
  auto s = std::make_shared<State>();
  s->x = in.x.WithRequiresGrad();
  s->w = in.w.WithRequiresGrad();
  s->y = ops::Conv2d(s->x, s->w, nullptr, Params(layer), Shared().pool_ctx);
  s->g = Filled(s->y.shape(), 33, Shared().pool).ToLayout(s->y.layout(), Shared().pool);
  return {2 * layer.Flops(), [s] {
            Runtime& r = Shared();
            r.arena.Reset();
            const Tensor inputs[] = {s->x, s->w};
            Backward(s->y, &s->g, inputs, r.arena_ctx, {.retain_graph = true});
          }};
}

// One SGD step (forward, loss, backward, update) of tests/common/lenet.h's CNN on a batch of 64
// 28x28 images, lr 0.01.
Case CnnStep() {
  struct State {
    std::mt19937 rng{16};
    test_models::LeNet net{28, rng, Shared().pool};
    Tensor x = Filled(Shape{64, 1, 28, 28}, 34, Shared().pool);
    Tensor labels = Tensor::Empty(Shape{64}, DType::kInt64, Shared().pool);
    Tensor lr = Tensor::Empty(Shape{}, DType::kFloat, Shared().pool);
  };
  auto s = std::make_shared<State>();
  for (int64_t i = 0; i < 64; ++i) s->labels.MutableData<int64_t>()[i] = i % 10;
  s->lr.Fill(0.01f);
  return {1, [s] {
            Runtime& r = Shared();
            r.arena.Reset();
            s->net.Step(s->x, s->labels, s->lr, r.arena_ctx);
          }};
}

}  // namespace

void AddConvCases(CaseRegistry& cases) {
  cases["conv_resnet_3x3"] = [] { return ConvForward(kResnet3x3); };
  cases["conv_resnet_1x1"] = [] { return ConvForward(kResnet1x1); };
  cases["conv_stem_7x7"] = [] { return ConvForward(kStem7x7); };
  cases["conv_depthwise"] = [] { return ConvForward(kDepthwise); };
  cases["conv_resnet_3x3_backward"] = [] { return ConvBackward(kResnet3x3); };
  cases["cnn_step"] = CnnStep;
}

}  // namespace onemodel::bench
