// compare_runner's optimizer case: one AdamW step (ops::AdamWStep, one fused pass over each
// parameter, its gradient and its two moment tensors) over 1M parameters in four [512, 512]
// tensors, the same as torch_runner.py's adamw_1m (torch.optim.AdamW with foreach=True).
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/compare/cases.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/optimizers.h"

namespace onemodel::bench {
namespace {

constexpr int kTensors = 4;
constexpr int64_t kSide = 512;

struct AdamW1m {
  BufferPool pool;
  FastKernels fast{BestTarget()};
  OpContext ctx{pool, fast};
  std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs;
  Tensor step = Tensor::Empty(Shape{}, DType::kInt64, pool, /*zero=*/true);

  AdamW1m() {
    uint32_t state = 7;
    const auto fill = [&](Tensor t, float scale) {
      for (float& v : t.MutableData<float>()) {
        state = state * 1664525u + 1013904223u;
        v = scale * (static_cast<float>(state >> 8) / 8388608.0f - 1.0f);
      }
      return t;
    };
    const Shape shape{kSide, kSide};
    for (int i = 0; i < kTensors; ++i) {
      params.push_back(fill(Tensor::Empty(shape, DType::kFloat, pool), 0.05f));
      grads.push_back(fill(Tensor::Empty(shape, DType::kFloat, pool), 1.0f));
      exp_avgs.push_back(Tensor::Empty(shape, DType::kFloat, pool, /*zero=*/true));
      exp_avg_sqs.push_back(Tensor::Empty(shape, DType::kFloat, pool, /*zero=*/true));
    }
  }
  void Step() {
    ops::AdamWStep(params, grads, exp_avgs, exp_avg_sqs, {}, step, {.lr = 1e-3f}, ctx).Dispose();
  }
};

}  // namespace

void AddOptimCases(CaseRegistry& cases) {
  cases["adamw_1m"] = [] {
    auto adamw = std::make_shared<AdamW1m>();
    return Case{1, [adamw] { adamw->Step(); }};
  };
}

}  // namespace onemodel::bench
