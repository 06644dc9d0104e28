// Forward results and gradients against PyTorch (Debian's python3-torch, run through
// /usr/bin/python3 and tests/core/ops/torch_reference.py on identical inputs), and a two-layer
// MLP trained for 100 steps whose loss curve must match PyTorch's to 1e-4 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "core/autograd/engine.h"
#include "core/kernels/kernel_set.h"
#include "core/memory/arena.h"
#include "core/ops/activation.h"
#include "core/ops/compare.h"
#include "core/ops/conv.h"
#include "core/ops/conversion.h"
#include "core/ops/cumsum.h"
#include "core/ops/elementwise.h"
#include "core/ops/indexing.h"
#include "core/ops/linear.h"
#include "core/ops/loss.h"
#include "core/ops/normalization.h"
#include "core/ops/pad_tile.h"
#include "core/ops/pooling.h"
#include "core/ops/reduce.h"
#include "core/ops/reduce_extrema.h"
#include "core/ops/softmax.h"
#include "core/ops/views.h"
#include "core/tensor/grad_mode.h"
#include "tests/core/ops/grad_check.h"
#include "tests/core/ops/torch_bridge.h"

namespace onemodel {
namespace {

using ops_test::Random;
using torch_bridge::Hex;
using torch_bridge::ParseValues;
using torch_bridge::RunTorch;
using torch_bridge::ValuesOf;
using torch_bridge::WriteTensor;
using Fn = std::function<Tensor(const std::vector<Tensor>&, const OpContext&)>;

struct Case {
  std::string name, op, attrs;
  std::vector<Tensor> inputs;  // may be non-contiguous views; PyTorch sees their values
  Fn f;
  Tensor grad;
};

void ExpectClose(const std::vector<float>& ours, const std::vector<float>& torch, double tol,
                 const std::string& what) {
  ASSERT_EQ(ours.size(), torch.size()) << what;
  for (size_t i = 0; i < ours.size(); ++i) {
    if (std::isnan(torch[i])) {  // (a mean over no element)
      EXPECT_TRUE(std::isnan(ours[i])) << what << " element " << i << " is " << ours[i];
      continue;
    }
    EXPECT_NEAR(ours[i], torch[i], tol * std::fmax(1.0, std::fabs(torch[i])))
        << what << " element " << i;
  }
}

class TorchTest : public ::testing::Test {
 protected:
  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Default()};
  std::mt19937 rng_{23};

  void Add(std::string name, std::string op, std::string attrs, std::vector<Tensor> inputs, Fn f) {
    std::vector<Tensor> tracked;
    for (const Tensor& t : inputs) tracked.push_back(t.WithRequiresGrad());
    const Tensor y = f(tracked, ctx_);
    cases_.push_back({std::move(name), std::move(op), std::move(attrs), std::move(inputs),
                      std::move(f), Random(y.shape(), rng_, pool_, -1, 1)});
  }

  // Conv2dParams as torch_reference.py reads them: strides, the 4 pads, dilations, groups.
  static std::string ConvAttrs(const Conv2dParams& p) {
    std::ostringstream attrs;
    attrs << p.stride_h << " " << p.stride_w << " " << p.pad_top << " " << p.pad_left << " "
          << p.pad_bottom << " " << p.pad_right << " " << p.dilation_h << " " << p.dilation_w << " "
          << p.groups;
    return attrs.str();
  }
  // The cases name_nchw, name_nhwc and name_reversed (x's channels and columns in reverse) of
  // conv(x, w, b) with x (N, C, H, W) in that layout; b may be null.
  void AddConvLayouts(
      const std::string& name, const std::string& op, const std::string& attrs, const Tensor& x,
      const Tensor& w, const Tensor* b,
      std::function<Tensor(const Tensor&, const Tensor&, const Tensor*, const OpContext&)> conv) {
    const int64_t c = x.shape()[1], width = x.shape()[3];
    const std::pair<std::string, Tensor> layouts[] = {
        {"nchw", x},
        {"nhwc", x.ToLayout(Layout::kNhwc, pool_)},
        {"reversed", x.Slice(3, -1, -width - 1, -1).Slice(1, -1, -c - 1, -1)}};
    for (const auto& [layout, input] : layouts) {
      std::vector<Tensor> inputs = {input, w};
      if (b != nullptr) inputs.push_back(*b);
      Add(name + "_" + layout, op, attrs, inputs,
          [conv](const std::vector<Tensor>& in, const OpContext& ctx) {
            return conv(in[0], in[1], in.size() > 2 ? &in[2] : nullptr, ctx);
          });
    }
  }

  void RunAll() {
    std::ostringstream in;
    for (const Case& c : cases_) {
      in << "case " << c.name << " " << c.op << " " << c.attrs << "\n";
      for (const Tensor& t : c.inputs) WriteTensor(in, "tensor", t);
      WriteTensor(in, "grad", c.grad);
      in << "end\n";
    }
    const auto lines = RunTorch(in.str());
    size_t at = 0;
    for (const Case& c : cases_) {
      ASSERT_LT(at, lines.size()) << "no PyTorch result for " << c.name;
      ASSERT_EQ(lines[at][1], c.name);
      std::vector<Tensor> tracked;
      for (const Tensor& t : c.inputs) tracked.push_back(t.WithRequiresGrad());
      const Tensor y = c.f(tracked, ctx_);
      ExpectClose(ValuesOf(y), ParseValues(lines[at + 1]), 1e-5, c.name + " forward");
      const auto grads = Backward(y, &c.grad, tracked, ctx_);
      for (size_t k = 0; k < grads.size(); ++k) {
        ExpectClose(ValuesOf(grads[k]), ParseValues(lines[at + 2 + k]), 1e-4,
                    c.name + " gradient " + std::to_string(k));
      }
      at += 2 + c.inputs.size();
    }
  }

  std::vector<Case> cases_;
};

TEST_F(TorchTest, EveryDifferentiableOpMatchesPyTorch) {
  for (BinaryOp op : kAllBinaryOps) {
    const bool positive = op == BinaryOp::kPow || op == BinaryOp::kDiv;
    const float lo = positive ? 0.5f : -2.0f;
    const std::string name(BinaryOpName(op));
    Add(name + "_broadcast", name, "",
        {Random(Shape{2, 3, 4}, rng_, pool_, lo, 2), Random(Shape{3, 1}, rng_, pool_, lo, 2)},
        [op](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Binary(op, in[0], in[1], c);
        });
    Add(name + "_strided", name, "",
        {Random(Shape{5, 4}, rng_, pool_, lo, 2).Transpose(0, 1),
         Random(Shape{5}, rng_, pool_, lo, 2).Slice(0, -1, -6, -1)},
        [op](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Binary(op, in[0], in[1], c);
        });
  }
  for (UnaryOp op : kAllUnaryOps) {
    const bool positive = op == UnaryOp::kLog || op == UnaryOp::kSqrt;
    Add(std::string(UnaryOpName(op)), std::string(UnaryOpName(op)), "",
        {Random(Shape{4, 3}, rng_, pool_, positive ? 0.5f : -3.0f, 3).Transpose(0, 1)},
        [op](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Unary(op, in[0], c);
        });
  }
  const std::vector<std::pair<Shape, Shape>> mm = {{Shape{3, 4}, Shape{4, 2}},
                                                   {Shape{2, 1, 3, 4}, Shape{3, 4, 2}},
                                                   {Shape{4}, Shape{4, 3}},
                                                   {Shape{3, 4}, Shape{4}},
                                                   {Shape{4}, Shape{4}}};
  for (size_t i = 0; i < mm.size(); ++i) {
    Add("MatMul" + std::to_string(i), "MatMul", "",
        {Random(mm[i].first, rng_, pool_), Random(mm[i].second, rng_, pool_)},
        [](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::MatMul(in[0], in[1], c);
        });
  }
  const Tensor img = Random(Shape{2, 3, 7, 6}, rng_, pool_);
  for (const Tensor& x : {img, img.ToLayout(Layout::kNhwc, pool_)}) {
    Add(x.layout() == Layout::kNhwc ? "MaxPool2d_nhwc" : "MaxPool2d_nchw", "MaxPool2d",
        "3 3 2 2 1 1 1 1 0", {x}, [](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::MaxPool2d(in[0], {3, 3, 2, 2, 1, 1}, c);
        });
  }
  const Tensor r = Random(Shape{2, 3, 4}, rng_, pool_);
  Add("Sum_all", "Sum", "0", {r}, [](const std::vector<Tensor>& in, const OpContext& c) {
    return ops::Sum(in[0], {}, false, c);
  });
  Add("Sum_keep", "Sum", "1 0 2", {r}, [](const std::vector<Tensor>& in, const OpContext& c) {
    const int axes[] = {0, 2};
    return ops::Sum(in[0], axes, true, c);
  });
  Add("Mean_axis", "Mean", "0 1", {r.Transpose(0, 2)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        const int axes[] = {1};
        return ops::Mean(in[0], axes, false, c);
      });
  Add("Softmax", "Softmax", "1 " + Hex(0.5f), {r},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Softmax(in[0], 1, c, 0.5f);
      });
  Add("LogSoftmax", "LogSoftmax", "-1 " + Hex(1.0f), {r.Transpose(1, 2)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::LogSoftmax(in[0], -1, c);
      });
  Add("Reshape", "Reshape", "4 6", {r.Transpose(0, 1)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        const int64_t s[] = {4, 6};
        return ops::Reshape(in[0], s, c);
      });
  Add("Permute", "Permute", "2 0 1", {r}, [](const std::vector<Tensor>& in, const OpContext& c) {
    const int p[] = {2, 0, 1};
    return ops::Permute(in[0], p, c);
  });
  Add("Expand", "Expand", "3 2 3 4", {Random(Shape{2, 1, 4}, rng_, pool_)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Expand(in[0], Shape{3, 2, 3, 4}, c);
      });
  Add("Cast", "Cast", "", {Random(Shape{5}, rng_, pool_)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Mul(ops::Cast(ops::Cast(in[0], DType::kDouble, c), DType::kFloat, c), in[0], c);
      });
  RunAll();
}

// Conv2d on random problems: NCHW, NHWC (channels-last strides) and negative-stride inputs,
// asymmetric pads, dilation, groups, depthwise, stride > kernel, 1x1 and 7x7, with and
// without bias; forward and the gradients of x, w and bias.
TEST_F(TorchTest, Conv2dMatchesPyTorch) {
  struct Row {
    int64_t n, c, h, w, k, kh, kw;
    Conv2dParams p;
  };
  const std::vector<Row> rows = {
      {2, 3, 7, 6, 4, 3, 3, {}},
      {1, 4, 9, 8, 4, 3, 2, {.stride_h = 2, .pad_top = 1, .pad_right = 2, .groups = 2}},
      {2,
       3,
       8,
       9,
       6,
       3,
       3,
       {.pad_top = 2,
        .pad_left = 1,
        .pad_bottom = 1,
        .pad_right = 2,
        .dilation_h = 2,
        .dilation_w = 2,
        .groups = 3}},
      {1,
       5,
       10,
       7,
       5,
       3,
       3,
       {.pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .groups = 5}},  // depthwise
      {2, 3, 9, 9, 2, 2, 2, {.stride_h = 3, .stride_w = 4}},  // stride > kernel
      {2, 6, 5, 4, 3, 1, 1, {}},                              // 1x1
      {1,
       3,
       13,
       12,
       4,
       7,
       7,
       {.stride_h = 2,
        .stride_w = 2,
        .pad_top = 3,
        .pad_left = 3,
        .pad_bottom = 3,
        .pad_right = 3}},  // 7x7 stem
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Conv2dParams& p = r.p;
    const Tensor x = Random(Shape{r.n, r.c, r.h, r.w}, rng_, pool_);
    const Tensor w = Random(Shape{r.k, r.c / p.groups, r.kh, r.kw}, rng_, pool_);
    const Tensor b = Random(Shape{r.k}, rng_, pool_);
    AddConvLayouts("Conv2d" + std::to_string(i), "Conv2d", ConvAttrs(p), x, w,
                   i % 2 == 0 ? &b : nullptr,
                   [p](const Tensor& in, const Tensor& wt, const Tensor* bias, const OpContext& c) {
                     return ops::Conv2d(in, wt, bias, p, c);
                   });
  }
  RunAll();
}

// ConvTranspose2d: stride 2 with output_padding, groups, dilation (output_padding at the
// stride, below the dilation), asymmetric pads; NCHW, NHWC and negative-stride inputs, with
// and without bias; forward and the gradients of x, w and bias.
TEST_F(TorchTest, ConvTranspose2dMatchesPyTorch) {
  struct Row {
    int64_t n, c, h, w, k, kh, kw;
    ConvTranspose2dParams p;
  };
  const std::vector<Row> rows = {
      {2, 3, 5, 4, 4, 3, 3, {.conv = {.stride_h = 2, .stride_w = 2}, .output_padding_h = 1}},
      {1,
       4,
       6,
       5,
       6,
       3,
       2,
       {.conv = {.stride_w = 3, .pad_top = 1, .groups = 2}, .output_padding_w = 2}},
      {2,
       3,
       4,
       5,
       3,
       3,
       3,
       {.conv = {.dilation_h = 2, .dilation_w = 3, .groups = 3},
        .output_padding_h = 1,
        .output_padding_w = 2}},
      {1,
       2,
       5,
       6,
       3,
       4,
       3,
       {.conv = {.stride_h = 2, .pad_top = 2, .pad_left = 1, .pad_bottom = 0, .pad_right = 2}}},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const ConvTranspose2dParams& tp = r.p;
    const Conv2dParams& p = tp.conv;
    const Tensor x = Random(Shape{r.n, r.c, r.h, r.w}, rng_, pool_);
    const Tensor w = Random(Shape{r.c, r.k / p.groups, r.kh, r.kw}, rng_, pool_);
    const Tensor b = Random(Shape{r.k}, rng_, pool_);
    const std::string attrs = ConvAttrs(p) + " " + std::to_string(tp.output_padding_h) + " " +
                              std::to_string(tp.output_padding_w);
    AddConvLayouts("ConvTranspose2d" + std::to_string(i), "ConvTranspose2d", attrs, x, w,
                   i % 2 == 0 ? &b : nullptr,
                   [tp](const Tensor& in, const Tensor& wt, const Tensor* bias,
                        const OpContext& c) { return ops::ConvTranspose2d(in, wt, bias, tp, c); });
  }
  RunAll();
}

// Where picks by each comparison of its own inputs (so PyTorch's comparisons are checked too),
// Clip, LeakyRelu and GELU's erf form, on broadcast and strided inputs.
TEST_F(TorchTest, TensorOpsMatchPyTorch) {
  for (ops::CompareOp op :
       {ops::CompareOp::kEqual, ops::CompareOp::kLess, ops::CompareOp::kLessEqual,
        ops::CompareOp::kGreater, ops::CompareOp::kGreaterEqual}) {
    const std::string name(ops::CompareOpName(op));
    Tensor a = Random(Shape{2, 3, 4}, rng_, pool_);
    const Tensor b = Random(Shape{3, 1}, rng_, pool_);
    a.Set<float>({0, 1, 2}, b.At<float>({1, 0}));  // a tie
    Add("Where_" + name, "Where", name, {a, b.Slice(0, -1, -4, -1)},
        [op](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Where(ops::Compare(op, in[0], in[1], c), in[0], in[1], c);
        });
  }
  const Tensor x = Random(Shape{5, 4}, rng_, pool_, -3, 3);
  Add("Clip", "Clip", Hex(-1.0f) + " " + Hex(1.5f), {x.Transpose(0, 1)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Clip(in[0], -1.0f, 1.5f, c);
      });
  Add("Clip_inverted", "Clip", Hex(1.0f) + " " + Hex(-1.0f), {x},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Clip(in[0], 1.0f, -1.0f, c);
      });
  Add("LeakyRelu", "LeakyRelu", Hex(0.01f), {x.Transpose(0, 1)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::LeakyRelu(in[0], 0.01f, c);
      });
  Add("Gelu_none", "GeluNone", "", {x.Slice(0, -1, -6, -1)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::Gelu(in[0], ops::GeluApproximation::kNone, c);
      });
  RunAll();
}

// (N, C, H, W) inputs in NCHW, NHWC, with a reversed (negative-stride) row axis, or with H
// and W swapped in memory (strided).
Tensor PoolInput(const Shape& shape, int layout, std::mt19937& rng, BufferPool& pool) {
  switch (layout) {
    case 1:
      return Random(shape, rng, pool).ToLayout(Layout::kNhwc, pool);
    case 2:
      return Random(shape, rng, pool).Slice(2, -1, -shape[2] - 1, -1);
    case 3:
      return Random(Shape{shape[0], shape[1], shape[3], shape[2]}, rng, pool).Transpose(2, 3);
    default:
      return Random(shape, rng, pool);
  }
}

TEST_F(TorchTest, PoolingMatchesPyTorchOnRandomShapesAndLayouts) {
  const auto pick = [&](int lo, int hi) {
    return lo + static_cast<int32_t>(rng_() % (hi - lo + 1));
  };
  for (int i = 0; i < 24; ++i) {
    const int layout = i % 4;
    MaxPool2dParams m;
    m.kernel_h = pick(1, 4);
    m.kernel_w = pick(1, 4);
    m.stride_h = pick(1, 3);
    m.stride_w = pick(1, 5);            // stride above kernel too
    m.pad_h = pick(0, m.kernel_h / 2);  // PyTorch's limit: half the kernel
    m.pad_w = pick(0, m.kernel_w / 2);
    m.dilation_h = pick(1, 2);
    m.dilation_w = pick(1, 3);
    m.ceil_mode = i % 3 != 0;
    const int32_t extent_h = (m.kernel_h - 1) * m.dilation_h + 1;
    const int32_t extent_w = (m.kernel_w - 1) * m.dilation_w + 1;
    const Shape shape{pick(1, 2), pick(1, 5), pick(extent_h, extent_h + 7),
                      pick(extent_w, extent_w + 9)};
    const Tensor x = PoolInput(shape, layout, rng_, pool_);
    const std::string attrs = [&] {
      std::ostringstream a;
      a << m.kernel_h << " " << m.kernel_w << " " << m.stride_h << " " << m.stride_w << " "
        << m.pad_h << " " << m.pad_w << " " << m.dilation_h << " " << m.dilation_w << " "
        << (m.ceil_mode ? 1 : 0);
      return a.str();
    }();
    const std::string tag = "_" + std::to_string(i) + "_layout" + std::to_string(layout);
    Add("MaxPool2d" + tag, "MaxPool2d", attrs, {x},
        [m](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::MaxPool2d(in[0], m, c);
        });
    Add("ReluMaxPool2d" + tag, "ReluMaxPool2d", attrs, {x},
        [m](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::ReluMaxPool2d(in[0], m, c);
        });
    const AvgPool2dParams a{m.kernel_h, m.kernel_w, m.stride_h, m.stride_w,
                            m.pad_h,    m.pad_w,    i % 2 == 0, i % 4 < 2};
    std::ostringstream avg_attrs;
    avg_attrs << a.kernel_h << " " << a.kernel_w << " " << a.stride_h << " " << a.stride_w << " "
              << a.pad_h << " " << a.pad_w << " " << a.ceil_mode << " " << a.count_include_pad;
    Add("AvgPool2d" + tag, "AvgPool2d", avg_attrs.str(), {x},
        [a](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::AvgPool2d(in[0], a, c);
        });
    Add("GlobalAvgPool2d" + tag, "GlobalAvgPool2d", "", {x},
        [](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::GlobalAvgPool2d(in[0], c);
        });
  }
  RunAll();
}

TEST_F(TorchTest, TwoLayerMlpTrainsLikePyTorch) {
  constexpr int kSteps = 100, kIn = 8, kHidden = 16, kOut = 4, kBatch = 32;
  const float lr = 0.1f;
  Tensor w1 = Random(Shape{kIn, kHidden}, rng_, pool_, -0.5f, 0.5f);
  Tensor b1 = Random(Shape{kHidden}, rng_, pool_, -0.1f, 0.1f);
  Tensor w2 = Random(Shape{kHidden, kOut}, rng_, pool_, -0.5f, 0.5f);
  Tensor b2 = Random(Shape{kOut}, rng_, pool_, -0.1f, 0.1f);
  const Tensor x = Random(Shape{kBatch, kIn}, rng_, pool_);
  Tensor onehot = Tensor::Empty(Shape{kBatch, kOut}, DType::kFloat, pool_, /*zero=*/true);
  for (int64_t i = 0; i < kBatch; ++i)
    onehot.Set<float>({i, static_cast<int64_t>(rng_() % kOut)}, 1.0f);

  std::ostringstream in;
  in << "mlp " << kSteps << " " << Hex(lr) << " " << kIn << " " << kHidden << " " << kOut << " "
     << kBatch << "\n";
  for (const Tensor* t : std::initializer_list<const Tensor*>{&w1, &b1, &w2, &b2, &x, &onehot}) {
    WriteTensor(in, "tensor", *t);
  }
  in << "end\n";
  const auto lines = RunTorch(in.str());
  ASSERT_EQ(lines.size(), 1u);
  const std::vector<float> torch_losses = ParseValues(lines[0]);
  ASSERT_EQ(torch_losses.size(), static_cast<size_t>(kSteps));

  // Parameters live in the pool; every step's activations and gradients in an arena.
  Arena arena(pool_);
  const OpContext step_ctx{arena, KernelSet::Default()};
  std::vector<Tensor> params = {w1.WithRequiresGrad(), b1.WithRequiresGrad(), w2.WithRequiresGrad(),
                                b2.WithRequiresGrad()};
  Tensor lr_t = Tensor::Empty(Shape{}, DType::kFloat, pool_);
  lr_t.Fill(lr);
  const int sum_axis[] = {1};
  for (int step = 0; step < kSteps; ++step) {
    arena.Reset();
    const Tensor h =
        ops::Relu(ops::Add(ops::MatMul(x, params[0], step_ctx), params[1], step_ctx), step_ctx);
    const Tensor logp = ops::LogSoftmax(
        ops::Add(ops::MatMul(h, params[2], step_ctx), params[3], step_ctx), 1, step_ctx);
    const Tensor loss =
        ops::Neg(ops::Mean(ops::Sum(ops::Mul(logp, onehot, step_ctx), sum_axis, false, step_ctx),
                           {}, false, step_ctx),
                 step_ctx);
    const float ours = loss.At<float>({});
    EXPECT_NEAR(ours, torch_losses[static_cast<size_t>(step)],
                1e-4 * std::fabs(torch_losses[static_cast<size_t>(step)]))
        << "step " << step;
    const std::vector<Tensor> grads = Backward(loss, nullptr, params, step_ctx);
    NoGrad no_grad;  // in-place SGD: p -= lr * g
    for (size_t k = 0; k < params.size(); ++k) {
      params[k].CopyFrom(ops::Sub(params[k], ops::Mul(grads[k], lr_t, step_ctx), step_ctx));
    }
  }
  EXPECT_LT(torch_losses.back(), torch_losses.front()) << "the network learned something";
}

// Embedding (with and without a skip id, repeated ids), Gather (negative indices and axes),
// Concat and Split on strided inputs; the indices travel in the attributes.
TEST_F(TorchTest, IndexingOpsMatchPyTorch) {
  const auto index = [&](std::vector<int64_t> v, const Shape& shape) {
    Tensor t = Tensor::Empty(shape, DType::kInt64, pool_);
    std::copy(v.begin(), v.end(), t.MutableData<int64_t>().begin());
    std::string text = std::to_string(shape.rank());
    for (int32_t e : shape.extents()) text += " " + std::to_string(e);
    for (int64_t i : v) text += " " + std::to_string(i);
    return std::pair{t, text};
  };
  const auto ids = index({3, 1, 4, 1, 0, 3, 3, 2}, Shape{2, 4});
  const Tensor table = Random(Shape{3, 5}, rng_, pool_).Transpose(0, 1);  // (5, 3), strided
  for (int skip : {-1, 3}) {
    Add("Embedding_skip" + std::to_string(skip), "Embedding",
        std::to_string(skip) + " " + ids.second, {table},
        [idx = ids.first, skip](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Embedding(in[0], idx, skip < 0 ? std::nullopt : std::optional<int64_t>(skip),
                                c);
        });
  }
  const auto picks = index({-1, 0, 2, -3, 1, 1}, Shape{3, 2});
  const Tensor data = Random(Shape{2, 4, 3}, rng_, pool_).Slice(1, -2, -5, -1);  // (2, 3, 3)
  for (int axis : {0, 1, -1}) {
    const auto& p = axis == 0 ? index({1, -2, -1}, Shape{3}) : picks;
    Add("Gather_axis" + std::to_string(axis), "Gather", std::to_string(axis) + " " + p.second,
        {data}, [idx = p.first, axis](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::Gather(in[0], idx, axis, c);
        });
  }
  Add("Concat", "Concat", "1",
      {Random(Shape{2, 2, 3}, rng_, pool_), data,
       Random(Shape{3, 2, 1}, rng_, pool_).Permute({1, 2, 0})},
      [](const std::vector<Tensor>& in, const OpContext& c) { return ops::Concat(in, 1, c); });
  for (int piece : {0, 2}) {
    Add("Split" + std::to_string(piece), "Split", "-1 " + std::to_string(piece) + " 1 0 2", {data},
        [piece](const std::vector<Tensor>& in, const OpContext& c) {
          const int64_t sizes[] = {1, 0, 2};
          return ops::Split(in[0], -1, sizes, 0, piece, c);
        });
  }
  RunAll();
}

// ReduceMax/ReduceMin against torch.max/min(dim) over the flattened reduced axes, Pad in each
// mode against F.pad (edge: replicate, wrap: circular), Tile against repeat, CumSum with
// exclusive and reverse against torch.cumsum; strided and reversed inputs.
TEST_F(TorchTest, ReduceExtremaPadTileCumSumMatchPyTorch) {
  const Tensor r = Random(Shape{3, 4, 5}, rng_, pool_);
  const std::vector<std::vector<int>> axes = {{}, {1}, {0, 2}, {-1}};
  for (size_t i = 0; i < axes.size(); ++i) {
    for (bool keep : {false, true}) {
      std::string attrs = keep ? "1" : "0";
      for (int a : axes[i]) attrs += " " + std::to_string(a);
      const std::string tag = std::to_string(i) + (keep ? "_keep" : "");
      const std::vector<int> ax = axes[i];
      Add("ReduceMax_" + tag, "ReduceMax", attrs, {r.Transpose(0, 2)},
          [ax, keep](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::ReduceMax(in[0], ax, keep, c);
          });
      Add("ReduceMin_" + tag, "ReduceMin", attrs, {r.Slice(1, -1, -5, -1)},
          [ax, keep](const std::vector<Tensor>& in, const OpContext& c) {
            return ops::ReduceMin(in[0], ax, keep, c);
          });
    }
  }
  const std::pair<const char*, ops::PadMode> modes[] = {{"constant", ops::PadMode::kConstant},
                                                        {"reflect", ops::PadMode::kReflect},
                                                        {"edge", ops::PadMode::kEdge},
                                                        {"wrap", ops::PadMode::kWrap}};
  for (const auto& [name, mode] : modes) {
    const ops::PadMode m = mode;
    Add(std::string("Pad_") + name, "Pad", std::string(name) + " " + Hex(0.25f) + " 0 1 3 0 2 1",
        {r.Transpose(1, 2)}, [m](const std::vector<Tensor>& in, const OpContext& c) {
          const int64_t pads[] = {0, 1, 3, 0, 2, 1};
          return ops::Pad(in[0], pads, m, 0.25f, c);
        });
  }
  Add("Pad_crop", "Pad", "constant " + Hex(-1.0f) + " -1 2 0 1 -2 3", {r.Slice(2, -1, -6, -1)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        const int64_t pads[] = {-1, 2, 0, 1, -2, 3};
        return ops::Pad(in[0], pads, ops::PadMode::kConstant, -1.0f, c);
      });
  Add("Tile", "Tile", "2 1 3", {r.Transpose(0, 1)},
      [](const std::vector<Tensor>& in, const OpContext& c) {
        const int64_t reps[] = {2, 1, 3};
        return ops::Tile(in[0], reps, c);
      });
  for (int flags = 0; flags < 4; ++flags) {
    const bool exclusive = flags & 1, reverse = flags & 2;
    Add("CumSum_" + std::to_string(flags), "CumSum",
        "1 " + std::to_string(flags & 1) + " " + std::to_string(flags >> 1),
        {r.Slice(1, -1, -5, -1)},
        [exclusive, reverse](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::CumSum(in[0], 1, exclusive, reverse, c);
        });
  }
  RunAll();
}

// LayerNorm, RMSNorm and BatchNorm2d (both modes) with and without their affine inputs, on
// strided inputs; BatchNorm2d's running statistics are torch.linspace(-1, 1, C) and
// torch.linspace(0.5, 2, C), as torch_reference.py makes them.
TEST_F(TorchTest, NormalizationsMatchPyTorch) {
  const Tensor x = Random(Shape{4, 5, 6}, rng_, pool_, -3, 3).Transpose(1, 2);  // [4, 6, 5]
  const Tensor w1 = Random(Shape{5}, rng_, pool_), b1 = Random(Shape{5}, rng_, pool_);
  const Tensor w2 = Random(Shape{5, 6}, rng_, pool_).Transpose(0, 1);  // [6, 5], strided
  const Tensor b2 = Random(Shape{6, 5}, rng_, pool_);
  const float eps = 1e-3f;
  const auto ln = [eps](int axis) {
    return [axis, eps](const std::vector<Tensor>& in, const OpContext& c) {
      return ops::LayerNorm(in[0], in.size() > 1 ? &in[1] : nullptr,
                            in.size() > 2 ? &in[2] : nullptr, axis, eps, c);
    };
  };
  Add("LayerNorm_last", "LayerNorm", "1 " + Hex(eps), {x, w1, b1}, ln(-1));
  Add("LayerNorm_two_axes", "LayerNorm", "2 " + Hex(eps), {x, w2, b2}, ln(1));
  Add("LayerNorm_plain", "LayerNorm", "3 " + Hex(eps), {x}, ln(0));
  Add("RMSNorm_scale", "RMSNorm", "1 " + Hex(eps), {x, w1},
      [eps](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::RMSNorm(in[0], &in[1], -1, eps, c);
      });
  Add("RMSNorm_plain", "RMSNorm", "2 " + Hex(eps), {x},
      [eps](const std::vector<Tensor>& in, const OpContext& c) {
        return ops::RMSNorm(in[0], nullptr, -2, eps, c);
      });
  const Tensor img = Random(Shape{3, 4, 5, 2}, rng_, pool_, -2, 2);
  const Tensor wc = Random(Shape{4}, rng_, pool_), bc = Random(Shape{4}, rng_, pool_);
  for (const bool training : {true, false}) {
    for (const Tensor& input : {img, img.ToLayout(Layout::kNhwc, pool_)}) {
      const std::string name = std::string("BatchNorm2d_") + (training ? "train_" : "eval_") +
                               (input.layout() == Layout::kNhwc ? "nhwc" : "nchw");
      Add(name, "BatchNorm2d", (training ? "1 " : "0 ") + Hex(0.1f) + " " + Hex(eps),
          {input, wc, bc},
          [this, training, eps](const std::vector<Tensor>& in, const OpContext& c) {
            Tensor mean = Tensor::Empty(Shape{4}, DType::kFloat, pool_);
            Tensor var = Tensor::Empty(Shape{4}, DType::kFloat, pool_);
            for (int i = 0; i < 4; ++i) {
              mean.MutableData<float>()[static_cast<size_t>(i)] = -1 + 2 * i / 3.0f;
              var.MutableData<float>()[static_cast<size_t>(i)] = 0.5f + 1.5f * i / 3.0f;
            }
            return ops::BatchNorm2d(in[0], mean, var, &in[1], &in[2],
                                    {.training = training, .momentum = 0.1f, .eps = eps}, c);
          });
    }
  }
  RunAll();
}

// The losses against torch.nn.functional: the targets and weights travel in the attributes
// (REDUCTION IGNORE SMOOTHING NW WEIGHTS... TARGETS...); only the logits get a gradient.
TEST_F(TorchTest, LossesMatchPyTorch) {
  const char* names[] = {"none", "mean", "sum"};
  auto labels = [&](const Shape& shape, int64_t classes, int64_t ignore) {
    Tensor t = Tensor::Empty(shape, DType::kInt64, pool_);
    for (int64_t& v : t.MutableData<int64_t>()) {
      v = static_cast<int64_t>(rng_() % static_cast<uint64_t>(classes + 1));
      if (v == classes) v = ignore;  // about one in classes + 1 is ignored
    }
    return t;
  };
  int n = 0;
  for (ops::Reduction red : {ops::Reduction::kNone, ops::Reduction::kMean, ops::Reduction::kSum}) {
    for (const Shape& shape : {Shape{6, 5}, Shape{2, 4, 3, 2}, Shape{4}}) {
      for (bool weighted : {false, true}) {
        for (float eps : {0.0f, 0.15f}) {
          const int64_t classes = shape[shape.rank() == 1 ? 0 : 1];
          const int64_t ignore = n % 2 ? -100 : 1;
          std::vector<int64_t> target_dims;
          for (int d = 0; d < shape.rank(); ++d) {
            if (d != 1) target_dims.push_back(shape[d]);
          }
          if (shape.rank() == 1) target_dims.clear();
          const Tensor target =
              labels(Shape(std::span<const int64_t>(target_dims)), classes, ignore);
          const Tensor weight = Random(Shape{classes}, rng_, pool_, 0.25f, 2);
          std::ostringstream attrs;
          attrs << names[static_cast<int>(red)] << " " << ignore << " " << Hex(eps) << " "
                << (weighted ? classes : 0);
          if (weighted) {
            for (float w : weight.Data<float>()) attrs << " " << Hex(w);
          }
          for (int64_t t : target.Data<int64_t>()) attrs << " " << t;
          const ops::ClassLossParams p{ignore, red, eps};
          // Logits as a reversed view: PyTorch sees the values.
          const Tensor x = Random(shape, rng_, pool_).Slice(0, -1, -100, -1);
          const std::string tag = "_" + std::to_string(n++);
          Add("CrossEntropy" + tag, "CrossEntropy", attrs.str(), {x},
              [=](const std::vector<Tensor>& in, const OpContext& c) {
                return ops::CrossEntropy(in[0], target, weighted ? &weight : nullptr, p, c);
              });
          if (eps != 0) continue;
          Add("NLLLoss" + tag, "NLLLoss", attrs.str(), {x},
              [=](const std::vector<Tensor>& in, const OpContext& c) {
                return ops::NllLoss(in[0], target, weighted ? &weight : nullptr, p, c);
              });
        }
      }
    }
    Add(std::string("MSELoss_") + names[static_cast<int>(red)], "MSELoss",
        names[static_cast<int>(red)],
        {Random(Shape{3, 4}, rng_, pool_), Random(Shape{4, 3}, rng_, pool_).Transpose(0, 1)},
        [red](const std::vector<Tensor>& in, const OpContext& c) {
          return ops::MseLoss(in[0], in[1], red, c);
        });
  }
  RunAll();
}

}  // namespace
}  // namespace onemodel
