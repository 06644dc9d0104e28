// compare_runner's MLP case: one SGD training step of a 784-256-10 MLP on a batch of 64, in
// this process through onemodel's ops and autograd engine (no RPC), the same step as
// torch_runner.py's mlp_step:
//   z = relu(x W1 + b1) W2 + b2;  loss = sum(log_softmax(z, 1) * t), t = -onehot / 64
//   (cross-entropy written with the ops both sides have);  p -= 0.01 * dloss/dp.
#include <array>
#include <cstdint>
#include <memory>

#include "bench/compare/cases.h"
#include "core/autograd/engine.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/elementwise.h"
#include "core/ops/linear.h"
#include "core/ops/reduce.h"
#include "core/ops/softmax.h"
#include "core/tensor/grad_mode.h"

namespace onemodel::bench {
namespace {

constexpr int64_t kBatch = 64, kIn = 784, kHidden = 256, kOut = 10;

struct Mlp {
  BufferPool pool;
  Arena arena{pool};  // each step's activations and gradients, reclaimed by the next step
  FastKernels fast{BestTarget()};
  OpContext ctx{arena, fast};
  Tensor x, target, lr;
  std::array<Tensor, 4> params;  // W1 [784, 256], b1 [256], W2 [256, 10], b2 [10]

  // A float tensor of `shape`, values in [-scale, scale) from a fixed sequence.
  Tensor Random(const Shape& shape, float scale, uint32_t seed) {
    Tensor t = Tensor::Empty(shape, DType::kFloat, pool);
    for (float& v : t.MutableData<float>()) {
      seed = seed * 1664525u + 1013904223u;
      v = scale * (static_cast<float>(seed >> 8) * 0x1p-23f - 1.0f);
    }
    return t;
  }

  Mlp() {
    x = Random(Shape{kBatch, kIn}, 1.0f, 1);
    target = Tensor::Empty(Shape{kBatch, kOut}, DType::kFloat, pool, /*zero=*/true);
    for (int64_t i = 0; i < kBatch; ++i)
      target.MutableData<float>()[i * kOut + i % kOut] = -1.0f / kBatch;
    lr = Tensor::Empty(Shape{}, DType::kFloat, pool);
    lr.Fill(0.01f);
    params = {Random(Shape{kIn, kHidden}, 0.05f, 2).WithRequiresGrad(),
              Random(Shape{kHidden}, 0.05f, 3).WithRequiresGrad(),
              Random(Shape{kHidden, kOut}, 0.05f, 4).WithRequiresGrad(),
              Random(Shape{kOut}, 0.05f, 5).WithRequiresGrad()};
  }

  // Forward, backward and the in-place SGD update; the arena is reset first, as a session's is.
  void Step() {
    arena.Reset();
    const Tensor h = ops::Relu(ops::Add(ops::MatMul(x, params[0], ctx), params[1], ctx), ctx);
    const Tensor z = ops::Add(ops::MatMul(h, params[2], ctx), params[3], ctx);
    const Tensor loss = ops::Sum(ops::Mul(ops::LogSoftmax(z, 1, ctx), target, ctx), {}, false, ctx);
    const std::vector<Tensor> grads = Backward(loss, nullptr, params, ctx);
    NoGrad no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor step = ops::Mul(grads[i], lr, ctx);
      fast.Binary(BinaryOp::kSub, params[i], step, params[i]);
    }
  }
};

}  // namespace

void AddMlpCase(CaseRegistry& cases) {
  cases["mlp_step"] = [] {
    auto mlp = std::make_shared<Mlp>();
    return Case{1, [mlp] { mlp->Step(); }};
  };
}

}  // namespace onemodel::bench
