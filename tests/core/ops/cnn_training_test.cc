// Issue 16's training proof in this process: tests/common/lenet.h's CNN (Conv2d, ReluMaxPool2d,
// Relu, AvgPool2d, MatMul, LogSoftmax, NllLoss) trained 100 SGD steps on seeded random images
// (a brightened row tells the class) with the exact and the fast kernels; every step's loss must
// match PyTorch's (the same model, weights and batches in torch_reference.py) within 1e-4 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>

#include "core/kernels/kernel_set.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "tests/common/lenet.h"
#include "tests/core/ops/grad_check.h"
#include "tests/core/ops/torch_bridge.h"

namespace onemodel {
namespace {

using test_models::LeNet;

constexpr int kSteps = 100;
constexpr int64_t kImages = 64, kBatch = 16, kSize = 12;
constexpr float kLr = 0.1f;

TEST(CnnTrainingTest, LeNetTrainsLikePyTorchWithEitherKernels) {
  BufferPool pool;
  std::mt19937 rng(16);
  // Noise in [0, 1) with row `label` brightened by 1: a pattern the network can learn.
  Tensor images = ops_test::Random(Shape{kImages, 1, kSize, kSize}, rng, pool, 0, 1);
  Tensor labels = Tensor::Empty(Shape{kImages}, DType::kInt64, pool);
  Tensor label_values = Tensor::Empty(Shape{kImages}, DType::kFloat, pool);  // for the script
  for (int64_t i = 0; i < kImages; ++i) {
    const auto label = static_cast<int64_t>(rng() % LeNet::kClasses);
    labels.MutableData<int64_t>()[i] = label;
    label_values.MutableData<float>()[i] = static_cast<float>(label);
    for (int64_t col = 0; col < kSize; ++col) {
      images.Set<float>({i, 0, label, col}, images.At<float>({i, 0, label, col}) + 1.0f);
    }
  }
  const std::mt19937 init_rng(rng);  // both runs start from the same weights

  std::ostringstream in;
  in << "cnn " << kSteps << " " << torch_bridge::Hex(kLr) << " " << kBatch << "\n";
  {
    std::mt19937 r = init_rng;
    const LeNet initial(kSize, r, pool);
    for (const Tensor& p : initial.params()) torch_bridge::WriteTensor(in, "tensor", p);
  }
  torch_bridge::WriteTensor(in, "tensor", images);
  torch_bridge::WriteTensor(in, "tensor", label_values);
  in << "end\n";
  const auto lines = torch_bridge::RunTorch(in.str());
  ASSERT_EQ(lines.size(), 1u);
  const std::vector<float> torch_losses = torch_bridge::ParseValues(lines[0]);
  ASSERT_EQ(torch_losses.size(), static_cast<size_t>(kSteps));
  EXPECT_LT(torch_losses.back(), 0.5f * torch_losses.front()) << "the network learned something";

  Tensor lr = Tensor::Empty(Shape{}, DType::kFloat, pool);
  lr.Fill(kLr);
  for (KernelChoice choice : {KernelChoice::kExact, KernelChoice::kFast}) {
    const TensorKernels& kernels = KernelSet::Get(choice);
    SCOPED_TRACE(kernels.name());
    std::mt19937 r = init_rng;
    LeNet net(kSize, r, pool);
    Arena arena(pool);  // each step's activations and gradients
    const OpContext ctx{arena, kernels};
    double worst = 0;
    for (int step = 0; step < kSteps; ++step) {
      arena.Reset();
      const int64_t start = step * kBatch % kImages;
      const float ours = net.Step(images.Slice(0, start, start + kBatch, 1),
                                  labels.Slice(0, start, start + kBatch, 1), lr, ctx)
                             .At<float>({});
      const float want = torch_losses[static_cast<size_t>(step)];
      EXPECT_NEAR(ours, want, 1e-4 * std::fabs(want)) << "step " << step;
      worst = std::fmax(worst, std::fabs(ours - want) / std::fabs(want));
    }
    std::printf("[%s] largest relative loss difference over %d steps: %.3g\n",
                std::string(kernels.name()).c_str(), kSteps, worst);
  }
}

}  // namespace
}  // namespace onemodel
