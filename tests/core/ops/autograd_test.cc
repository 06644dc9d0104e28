// GradMode, BackwardRecord, SavedTensor and the engine (spec 8).
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "core/autograd/backward_record.h"
#include "core/autograd/engine.h"
#include "core/common/exceptions.h"
#include "core/kernels/kernel_set.h"
#include "core/kernels/scalar_ops.h"
#include "core/memory/buffer_pool.h"
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
#include "tests/common/alloc_counter.h"
#include "tests/core/ops/exact_op_test.h"
#include "tests/core/ops/expect_error.h"

namespace onemodel {
namespace {

using AutogradTest = ExactOpTest;

TEST_F(AutogradTest, GradModeIsPerThreadAndNoGradRestores) {
  EXPECT_TRUE(GradMode::IsEnabled());
  {
    NoGrad no_grad;
    EXPECT_FALSE(GradMode::IsEnabled());
    bool other = false;
    std::thread([&] { other = GradMode::IsEnabled(); }).join();
    EXPECT_TRUE(other) << "another thread keeps its own mode";
    {
      NoGrad nested;
      EXPECT_FALSE(GradMode::IsEnabled());
    }
    EXPECT_FALSE(GradMode::IsEnabled());
  }
  EXPECT_TRUE(GradMode::IsEnabled());
}

TEST_F(AutogradTest, WithRequiresGradMakesALeafOnlyForFloatingTypes) {
  const Tensor x = Filled(Shape{2}, 1).WithRequiresGrad();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.autograd_node()->IsLeaf());
  EXPECT_EQ(GradFn(x), nullptr);
  const Tensor i = Tensor::Empty(Shape{2}, DType::kInt32, pool_);
  EXPECT_THROW(i.WithRequiresGrad(), TensorTypeException);
  for (DType t : {DType::kDouble, DType::kFloat16, DType::kBFloat16}) {
    EXPECT_TRUE(Tensor::Empty(Shape{2}, t, pool_).WithRequiresGrad().requires_grad());
  }
  const Tensor img = Filled(Shape{1, 3, 2, 2}, 1).ToLayout(Layout::kBlocked, pool_, 4);
  EXPECT_THROW(img.WithRequiresGrad(), TensorLayoutException);
  EXPECT_FALSE(x.Detach().requires_grad());
  EXPECT_FALSE(x.Transpose(0, 0).requires_grad()) << "member views track no gradient";
}

TEST_F(AutogradTest, OpsRecordOnlyWhenEnabledAndAnInputRequiresGrad) {
  const Tensor a = Filled(Shape{2}, 1), b = Filled(Shape{2}, 2);
  EXPECT_FALSE(ops::Mul(a, b, ctx_).requires_grad());
  const Tensor ag = a.WithRequiresGrad();
  const Tensor y = ops::Mul(ag, b, ctx_);
  ASSERT_NE(GradFn(y), nullptr);
  EXPECT_EQ(GradFn(y)->op(), OpKind::kMul);
  ASSERT_EQ(GradFn(y)->inputs().size(), 2u);
  EXPECT_NE(GradFn(y)->inputs()[0].node, nullptr);
  EXPECT_EQ(GradFn(y)->inputs()[1].node, nullptr) << "b needs no gradient";
  EXPECT_EQ(GradFn(y)->InputShape(1), Shape{2});
  NoGrad no_grad;
  EXPECT_FALSE(ops::Mul(ag, b, ctx_).requires_grad());
}

TEST_F(AutogradTest, RecordsFollowSpec8Conventions) {
  const Tensor x = Filled(Shape{2, 3}, 0.5f).WithRequiresGrad();
  const Tensor s = ops::Softmax(x, 1, ctx_, 2.0f);
  EXPECT_EQ(GradFn(s)->op(), OpKind::kSoftmax);
  EXPECT_EQ(GradFn(s)->Saved(0).buffer(), s.buffer()) << "softmax saves its output";
  EXPECT_EQ(GradFn(s)->floats(), std::vector<float>{2.0f}) << "and keeps the scale in Floats";
  const Tensor g = ops::Gelu(x, ctx_);
  EXPECT_EQ(GradFn(g)->Saved(0).buffer(), x.buffer()) << "GELU saves its input";
  EXPECT_NEAR(GradFn(g)->Owned(0).At<float>({0, 0}), std::tanh(scalar::GeluInner(0.5f)), 1e-7)
      << "and owns the tanh of its inner term";
  const Tensor img = Filled(Shape{1, 1, 4, 4}, 1).WithRequiresGrad();
  const Tensor p = ops::MaxPool2d(img, {2, 2, 2, 2, 0, 0}, ctx_);
  EXPECT_EQ(GradFn(p)->Owned(0).dtype(), DType::kInt32) << "pooling owns int32 indices";
  EXPECT_EQ(GradFn(p)->ints(), (std::vector<int64_t>{2, 2, 2, 2, 0, 0, 1, 1, 0}))
      << "kernel, stride, pad, dilation, ceil_mode";
  const Tensor w = Filled(Shape{2, 1, 3, 2}, 1).WithRequiresGrad();
  const Tensor c = ops::Conv2d(
      img, w, nullptr, {.stride_h = 2, .pad_top = 1, .pad_right = 2, .dilation_w = 2}, ctx_);
  EXPECT_EQ(GradFn(c)->op(), OpKind::kConv2d);
  EXPECT_EQ(GradFn(c)->Saved(0).buffer(), img.buffer()) << "convolution saves its input";
  EXPECT_EQ(GradFn(c)->Saved(1).buffer(), w.buffer()) << "and its weights";
  EXPECT_EQ(GradFn(c)->ints(), (std::vector<int64_t>{3, 2, 2, 1, 1, 0, 0, 2, 1, 2, 1}))
      << "and keeps kernel, strides, pads (top, left, bottom, right), dilations, groups in Ints";
  const Tensor r = ops::ReluMaxPool2d(ops::Neg(img, ctx_), {2, 2, 2, 2, 0, 0}, ctx_);
  EXPECT_EQ(GradFn(r)->op(), OpKind::kReluMaxPool2d);
  EXPECT_EQ(GradFn(r)->Owned(0).At<int32_t>({0, 0, 0, 0}), -1)
      << "fused ReLU+pooling: -1 where no element is positive";
  const Tensor a = ops::AvgPool2d(img, {2, 2, 2, 2, 1, 1, true, true}, ctx_);
  EXPECT_FALSE(GradFn(a)->HasSaved(0)) << "average pooling saves no tensor";
  EXPECT_EQ(GradFn(a)->ints(), (std::vector<int64_t>{2, 2, 2, 2, 1, 1, 1, 1}))
      << "kernel, stride, pad, ceil_mode, count_include_pad";
}

TEST_F(AutogradTest, ReleasingASavedInputBeforeBackwardNamesTheOperationAndSlot) {
  Tensor a = Filled(Shape{3}, 2).WithRequiresGrad();
  Tensor b = Filled(Shape{3}, 3);
  const Tensor y = ops::Sum(ops::Mul(a, b, ctx_), {}, false, ctx_);
  b.Dispose();  // b was saved by Mul; its buffer goes back to the pool
  ExpectError<StaleTensorException>(
      [&] { Backward(y, nullptr, std::vector<Tensor>{a}, ctx_); },
      {"backward of Mul: saved tensor 1 (FLOAT [3]", "was released, or the arena holding it reset",
       "until its backward has run"});
}

TEST_F(AutogradTest, ModifyingASavedInputBeforeBackwardThrowsTensorVersionException) {
  Tensor a = Filled(Shape{3}, 2).WithRequiresGrad();
  Tensor b = Filled(Shape{3}, 3);
  const Tensor y = ops::Sum(ops::Mul(a, b, ctx_), {}, false, ctx_);
  b.Fill(4.0f);  // b was saved by Mul
  try {
    Backward(y, nullptr, std::vector<Tensor>{a}, ctx_);
    FAIL() << "expected TensorVersionException";
  } catch (const TensorVersionException& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("Mul"), std::string::npos) << m;
    EXPECT_NE(m.find("saved tensor 1"), std::string::npos) << m;
    EXPECT_NE(m.find("version 1 at save time"), std::string::npos) << m;  // Fill made it 1
    EXPECT_NE(m.find("2 now"), std::string::npos) << m;
  }
}

TEST_F(AutogradTest, ModifyingSomethingNotSavedIsFine) {
  Tensor a = Filled(Shape{3}, 2).WithRequiresGrad();
  Tensor b = Filled(Shape{3}, 3);
  const Tensor y = ops::Sum(ops::Add(a, b, ctx_), {}, false, ctx_);  // Add saves nothing
  b.Fill(4.0f);
  const auto g = Backward(y, nullptr, std::vector<Tensor>{a}, ctx_);
  EXPECT_EQ(g[0].At<float>({1}), 1.0f);
}

TEST_F(AutogradTest, SecondBackwardNeedsRetainGraph) {
  const Tensor a = Filled(Shape{2}, 2).WithRequiresGrad();
  const Tensor y = ops::Sum(ops::Exp(a, ctx_), {}, false, ctx_);
  const auto g1 = Backward(y, nullptr, std::vector<Tensor>{a}, ctx_, {.retain_graph = true});
  const auto g2 = Backward(y, nullptr, std::vector<Tensor>{a}, ctx_);
  EXPECT_EQ(g1[0].At<float>({0}), g2[0].At<float>({0}));
  try {
    Backward(y, nullptr, std::vector<Tensor>{a}, ctx_);
    FAIL() << "expected a second backward to fail";
  } catch (const GraphReleasedException& e) {
    EXPECT_NE(std::string(e.what()).find("retain_graph"), std::string::npos) << e.what();
  }
  // The same from another root that reaches the freed record.
  const Tensor e = ops::Exp(a, ctx_);
  Backward(ops::Sum(e, {}, false, ctx_), nullptr, std::vector<Tensor>{a}, ctx_);
  EXPECT_THROW(Backward(ops::Mean(e, {}, false, ctx_), nullptr, std::vector<Tensor>{a}, ctx_),
               GraphReleasedException);
}

// Only the records some requested tensor is reachable from run, and only those are released
// (PyTorch's rule): a backward with respect to the root itself or to a tensor the root does not
// depend on runs nothing, and a branch that leads to no requested tensor stays usable.
TEST_F(AutogradTest, OnlyRecordsLeadingToARequestedTensorRunAndAreReleased) {
  const Tensor a = Filled(Shape{2}, 2).WithRequiresGrad();
  const Tensor c = Filled(Shape{2}, 3).WithRequiresGrad();
  const Tensor unrelated = Filled(Shape{2}, 1).WithRequiresGrad();
  const Tensor u = ops::Sum(ops::Exp(c, ctx_), {}, false, ctx_);
  const Tensor y = ops::Add(ops::Sum(ops::Exp(a, ctx_), {}, false, ctx_), u, ctx_);

  const auto self = Backward(y, nullptr, std::vector<Tensor>{y}, ctx_);
  EXPECT_EQ(self[0].At<float>({}), 1.0f) << "d y / d y is the seed";
  const auto none = Backward(y, nullptr, std::vector<Tensor>{unrelated}, ctx_);
  EXPECT_EQ(none[0].At<float>({1}), 0.0f);
  const auto ga = Backward(y, nullptr, std::vector<Tensor>{a}, ctx_);
  EXPECT_FLOAT_EQ(ga[0].At<float>({0}), std::exp(a.At<float>({0})))
      << "the graph was still whole after the two backwards that ran nothing";

  const auto gc = Backward(u, nullptr, std::vector<Tensor>{c}, ctx_);
  EXPECT_FLOAT_EQ(gc[0].At<float>({1}), std::exp(c.At<float>({1})))
      << "u's branch leads to no requested tensor of the backward to a: it did not run";
  EXPECT_THROW(Backward(y, nullptr, std::vector<Tensor>{c}, ctx_), GraphReleasedException)
      << "y's Add ran (and was released) in the backward to a";
}

TEST_F(AutogradTest, TheDefaultSeedAndZerosTakeTheTypesOfRootAndInputs) {
  const Tensor a = Filled(Shape{2}, 3).WithRequiresGrad();
  const Tensor unused = ops::Cast(Filled(Shape{2}, 1), DType::kDouble, ctx_).WithRequiresGrad();
  const Tensor root = ops::Cast(ops::Sum(a, {}, false, ctx_), DType::kDouble, ctx_);
  const auto g = Backward(root, nullptr, std::vector<Tensor>{a, unused}, ctx_);
  EXPECT_EQ(g[0].At<float>({1}), 1.0f) << "a DOUBLE root's default gradient is 1";
  EXPECT_EQ(g[1].dtype(), DType::kDouble);
  EXPECT_EQ(g[1].At<double>({0}), 0.0);
  const Tensor float_seed = Filled(Shape{}, 1);
  const Tensor again = ops::Cast(ops::Sum(a, {}, false, ctx_), DType::kDouble, ctx_);
  EXPECT_THROW(Backward(again, &float_seed, std::vector<Tensor>{a}, ctx_), TensorException)
      << "an output gradient has the root's type";
}

TEST_F(AutogradTest, ReleaseFreesOwnedTensors) {
  const Tensor img = Filled(Shape{1, 1, 4, 4}, 1).WithRequiresGrad();
  const Tensor p = ops::Sum(ops::MaxPool2d(img, {2, 2, 2, 2, 0, 0}, ctx_), {}, false, ctx_);
  const BackwardRecord* pool_record =
      GradFn(p)->inputs()[0].node
          ? static_cast<const BackwardRecord*>(GradFn(p)->inputs()[0].node.get())
          : nullptr;
  ASSERT_NE(pool_record, nullptr);
  const Tensor indices = pool_record->Owned(0);
  Backward(p, nullptr, std::vector<Tensor>{img}, ctx_);
  EXPECT_TRUE(indices.IsStale()) << "the indices were returned after backward";
}

TEST_F(AutogradTest, RootRulesAndUnusedInputs) {
  const Tensor a = Filled(Shape{2}, 2).WithRequiresGrad();
  const Tensor unused = Filled(Shape{3}, 1).WithRequiresGrad();
  const Tensor y = ops::Exp(a, ctx_);
  EXPECT_THROW(Backward(y, nullptr, std::vector<Tensor>{a}, ctx_), TensorException)
      << "a root with 2 elements needs an output gradient";
  const Tensor wrong = Filled(Shape{3}, 1);
  EXPECT_THROW(Backward(y, &wrong, std::vector<Tensor>{a}, ctx_), TensorException);
  EXPECT_THROW(Backward(Filled(Shape{}, 1), nullptr, std::vector<Tensor>{a}, ctx_),
               TensorException);
  const Tensor ones = Filled(Shape{2}, 1);
  const auto g = Backward(y, &ones, std::vector<Tensor>{a, unused}, ctx_);
  EXPECT_FLOAT_EQ(g[0].At<float>({0}), std::exp(2.0f));
  EXPECT_EQ(g[1].shape(), Shape{3});
  EXPECT_EQ(g[1].At<float>({2}), 0.0f) << "an input the root does not use gets zeros";
}

TEST_F(AutogradTest, GradientWithRespectToAnIntermediate) {
  const Tensor a = Filled(Shape{2}, 3).WithRequiresGrad();
  const Tensor h = ops::Mul(a, a, ctx_);
  const Tensor y = ops::Sum(ops::Exp(h, ctx_), {}, false, ctx_);
  const auto g = Backward(y, nullptr, std::vector<Tensor>{h, a}, ctx_);
  EXPECT_FLOAT_EQ(g[0].At<float>({0}), std::exp(9.0f));
  EXPECT_NEAR(g[1].At<float>({0}), std::exp(9.0f) * 6.0f, 1e-2);
}

TEST_F(AutogradTest, CopyFromIntoATensorThatRequiresGradThrowsWhileRecording) {
  Tensor w = Filled(Shape{2}, 1).WithRequiresGrad();
  const Tensor src = Filled(Shape{2}, 5);
  EXPECT_THROW(w.CopyFrom(src), TensorException);
  {
    NoGrad no_grad;
    w.CopyFrom(src);  // an optimizer step
  }
  EXPECT_EQ(w.At<float>({0}), 5.0f);
}

TEST_F(AutogradTest, ElementwiseRecordsAreOfTheKindNamedAfterTheirOp) {
  const Tensor x = Filled(Shape{2}, 0.5f).WithRequiresGrad();
  for (BinaryOp op : kAllBinaryOps) {
    const Tensor y = ops::Binary(op, x, x, ctx_);
    const BackwardRecord* record = GradFn(y);
    ASSERT_NE(record, nullptr) << BinaryOpName(op);
    EXPECT_EQ(OpKindName(record->op()), BinaryOpName(op));
  }
  for (UnaryOp op : kAllUnaryOps) {
    const Tensor y = ops::Unary(op, x, ctx_);
    const BackwardRecord* record = GradFn(y);
    ASSERT_NE(record, nullptr) << UnaryOpName(op);
    EXPECT_EQ(OpKindName(record->op()), UnaryOpName(op));
  }
}

// Runs every operation on `x` [1, 2, 8, 8] and `w` [8, 8]; returns how many outputs it made.
int RunEveryOp(const Tensor& x, const Tensor& w, const OpContext& ctx) {
  int outputs = 0;
  auto out = [&](const Tensor&) { ++outputs; };
  for (BinaryOp op : kAllBinaryOps) out(ops::Binary(op, x, w, ctx));
  for (UnaryOp op : kAllUnaryOps) out(ops::Unary(op, x, ctx));
  out(ops::MatMul(x, w, ctx));
  out(ops::MaxPool2d(x, {2, 2, 2, 2, 0, 0}, ctx));  // no argmax without recording
  const int64_t kernel[] = {2, 2, 4, 4};
  out(ops::Conv2d(x, ops::Reshape(w, kernel, ctx), nullptr, {}, ctx));  // no scratch (exact)
  out(ops::ReluMaxPool2d(x, {3, 3, 2, 2, 1, 1}, ctx));
  out(ops::AvgPool2d(x, {3, 3, 2, 2, 1, 1, true, true}, ctx));
  out(ops::GlobalAvgPool2d(x, ctx));
  const int axes[] = {1, -1};
  out(ops::Sum(x, axes, true, ctx));
  out(ops::Mean(x, {}, false, ctx));
  out(ops::Softmax(x, -1, ctx, 0.5f));
  out(ops::LogSoftmax(x, 1, ctx));
  out(ops::Cast(x, DType::kFloat16, ctx));
  out(ops::ToLayout(x, Layout::kNhwc, ctx));
  out(ops::Contiguous(ops::Transpose(x, 2, 3, ctx), ctx));  // one copy
  const int64_t flat[] = {2, -1};
  ops::Reshape(x, flat, ctx);  // views: no output buffer
  const int perm[] = {3, 2, 1, 0};
  ops::Permute(x, perm, ctx);
  ops::Slice(x, 3, -1, -9, -2, ctx);
  ops::Expand(w, Shape{3, 8, 8}, ctx);
  const int squeeze[] = {0};
  ops::Unsqueeze(ops::Squeeze(x, squeeze, ctx), 0, ctx);
  for (ops::CompareOp op : {ops::CompareOp::kEqual, ops::CompareOp::kLess, ops::CompareOp::kLessEqual,
                            ops::CompareOp::kGreater, ops::CompareOp::kGreaterEqual}) {
    out(ops::Compare(op, x, w, ctx));
  }
  const Tensor mask = ops::Less(x, w, ctx);
  out(mask);
  out(ops::Where(mask, x, w, ctx));
  out(ops::Clip(x, -0.5f, 0.5f, ctx));
  out(ops::LeakyRelu(x, 0.2f, ctx));
  out(ops::Gelu(x, ops::GeluApproximation::kNone, ctx));
  const Tensor ids = ops::Cast(w, DType::kInt64, ctx);  // all 0: x and w hold values below 1
  out(ids);
  out(ops::Embedding(w, ids, 0, ctx));
  out(ops::Gather(x, ids, 3, ctx));
  const Tensor both[] = {x, x};
  out(ops::Concat(both, 1, ctx));
  ops::Split(x, 2, {}, 2, 1, ctx);  // a view
  out(ops::ReduceMax(x, axes, true, ctx));  // no winner positions without recording
  out(ops::ReduceMin(x, {}, false, ctx));
  out(ops::ArgMax(x, -1, false, false, ctx));
  out(ops::ArgMin(x, 2, true, true, ctx));
  const int64_t pads[] = {0, 0, 1, -1, 0, 1, 2, 3};
  out(ops::Pad(x, pads, ops::PadMode::kReflect, 0, ctx));
  const int64_t repeats[] = {2, 1, 1, 3};
  out(ops::Tile(x, repeats, ctx));
  out(ops::CumSum(x, -1, true, true, ctx));
  out(ops::LayerNorm(x, &w, &w, -2, 1e-5f, ctx));
  out(ops::RMSNorm(x, nullptr, -1, 1e-5f, ctx));
  const Tensor stats = w.Detach().Slice(0, 0, 1).Squeeze(0).Slice(0, 0, 2);
  out(ops::BatchNorm2d(x, stats, stats, nullptr, nullptr, {}, ctx));
  const Tensor never = ops::Less(w, w, ctx);
  out(never);
  const Tensor labels = ops::Cast(never, DType::kInt64, ctx);  // (8, 8) zeros
  out(labels);
  const Tensor target = labels.Unsqueeze(0);  // (1, 8, 8) for x (N=1, C=2, 8, 8)
  out(ops::CrossEntropy(x, target, nullptr, {.label_smoothing = 0.1f}, ctx));
  const Tensor class_weights = w.Squeeze().Slice(0, 0, 1).Squeeze(0).Slice(0, 0, 2);  // (2)
  out(ops::NllLoss(x, target, &class_weights, {.reduction = ops::Reduction::kNone}, ctx));
  out(ops::MseLoss(x, x, ops::Reduction::kSum, ctx));
  out(ops::MseLoss(x, x, ops::Reduction::kNone, ctx));
  out(ops::Dropout(x, {.ratio = 0.5f, .seed = 1}, ctx));
  ops::Dropout(x, {.training = false}, ctx);  // x itself
  out(ops::ConvTranspose2d(x, ops::Reshape(w, kernel, ctx), nullptr, {}, ctx));
  return outputs;
}

TEST_F(AutogradTest, NoGradPathsAllocateNothingBeyondOutputs) {
  const Tensor x = Filled(Shape{1, 2, 8, 8}, 0.5f).WithRequiresGrad();
  const Tensor w = Filled(Shape{8, 8}, 0.25f).WithRequiresGrad();
  auto expect_only_outputs = [&](const Tensor& xi, const Tensor& wi, const char* what) {
    RunEveryOp(xi, wi, ctx_);  // warm the pool's classes and the kernels' statics
    const PoolStats before = pool_.Stats();
    const int64_t heap = testing::HeapAllocations();
    const int outputs = RunEveryOp(xi, wi, ctx_);
    EXPECT_EQ(testing::HeapAllocations(), heap) << what << ": no heap allocation";
    const PoolStats after = pool_.Stats();
    EXPECT_EQ((after.hits + after.misses) - (before.hits + before.misses), outputs)
        << what << ": one buffer per output, nothing else (no argmax, no saved copies)";
  };
  {
    NoGrad no_grad;
    expect_only_outputs(x, w, "NoGrad");
  }
  expect_only_outputs(x.Detach(), w.Detach(), "inputs that need no gradient");
  // And recording does allocate (records, saved slots, argmax), so the counter is meaningful.
  const int64_t heap = testing::HeapAllocations();
  RunEveryOp(x, w, ctx_);
  EXPECT_GT(testing::HeapAllocations(), heap);
}

}  // namespace
}  // namespace onemodel
