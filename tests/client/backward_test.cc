// Backward through the wire: gradients of small expressions against hand-derived values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "tests/client/server_test.h"

namespace onemodel::testing {
namespace {

using client::Ints;
using client::NamedAttr;
using client::RunBuilder;
using client::RunOutput;
using client::TensorData;
using client::TensorHandle;
using Clock = std::chrono::steady_clock;

void ExpectClose(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-5f * std::max(1.0f, std::fabs(expected[i])))
        << "element " << i;
  }
}

class BackwardTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (!HasFatalFailure()) session_.emplace(NewSession(v1::KERNEL_CHOICE_EXACT));
  }

  // A pool tensor that requires grad.
  TensorHandle Leaf(const std::vector<float>& values, std::vector<int64_t> dims) {
    return session_->Put<float>(values, std::move(dims), {.requires_grad = true});
  }
  std::vector<float> Values(const TensorHandle& handle) { return session_->Get<float>(handle); }

  std::optional<client::Session> session_;
};

TEST_F(BackwardTest, ElementwiseExpression) {
  // L = sum(x * w + sigmoid(x)): dL/dx = w + s (1 - s), dL/dw = x.
  const std::vector<float> x = RandomFloats(6, 1), w = RandomFloats(6, 2);
  const TensorHandle hx = Leaf(x, {2, 3}), hw = Leaf(w, {2, 3});
  RunBuilder run;
  const RunOutput xw = run.Op("Mul", {hx, hw});
  const RunOutput sum = run.Op("Add", {xw, run.Op("Sigmoid", {hx})});
  const RunOutput loss = run.Op("Sum", {sum});
  const client::RunResult result = session_->Run(run);
  EXPECT_EQ(result[xw].info().grad_fn(), "Mul");
  const std::vector<TensorHandle> grads = session_->Backward(result[loss], {hx, hw});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].dims(), (std::vector<int64_t>{2, 3}));
  std::vector<float> dx(6);
  for (int i = 0; i < 6; ++i) {
    const float s = 1.0f / (1.0f + std::exp(-x[i]));
    dx[i] = w[i] + s * (1 - s);
  }
  ExpectClose(Values(grads[0]), dx);
  ExpectClose(Values(grads[1]), x);
}

TEST_F(BackwardTest, MatMul) {
  // L = sum(A B): dA[i][k] = sum_j B[k][j], dB[k][j] = sum_i A[i][k].
  const std::vector<float> a = RandomFloats(6, 3), b = RandomFloats(12, 4);
  const TensorHandle ha = Leaf(a, {2, 3}), hb = Leaf(b, {3, 4});
  RunBuilder run;
  const RunOutput loss = run.Op("Sum", {run.Op("MatMul", {ha, hb})});
  const std::vector<TensorHandle> grads = session_->Backward(session_->Run(run)[loss], {ha, hb});
  std::vector<float> da(6), db(12);
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 3; ++k) {
      for (int j = 0; j < 4; ++j) {
        da[i * 3 + k] += b[k * 4 + j];
        db[k * 4 + j] += a[i * 3 + k];
      }
    }
  }
  ExpectClose(Values(grads[0]), da);
  ExpectClose(Values(grads[1]), db);
}

TEST_F(BackwardTest, BroadcastGradientsAreSummedBack) {
  const TensorHandle x = Leaf(RandomFloats(6, 5), {2, 3}), bias = Leaf({1, 2, 3}, {3});
  RunBuilder run;
  const RunOutput loss = run.Op("Sum", {run.Op("Add", {x, bias})});
  const std::vector<TensorHandle> grads = session_->Backward(session_->Run(run)[loss], {x, bias});
  EXPECT_EQ(Values(grads[0]), std::vector<float>(6, 1.0f));
  EXPECT_EQ(grads[1].dims(), std::vector<int64_t>{3});
  EXPECT_EQ(Values(grads[1]), std::vector<float>(3, 2.0f));
}

TEST_F(BackwardTest, GradOutputWeightsANonScalarRoot) {
  // y = x * x with upstream g: dx = 2 x g.
  const std::vector<float> x = {1, -2, 3}, g = {0.5f, 2, -1};
  const TensorHandle hx = Leaf(x, {3});
  RunBuilder run;
  run.Op("Mul", {hx, hx});
  const TensorHandle y = session_->Run(run).back();
  const std::vector<TensorHandle> inline_grad = session_->Backward(
      y, {hx}, {.grad_output = TensorData::From<float>(g, {3}), .retain_graph = true});
  EXPECT_EQ(Values(inline_grad[0]), (std::vector<float>{1, -8, -6}));
  const TensorHandle hg = session_->Put<float>(g, {3});
  const std::vector<TensorHandle> handle_grad = session_->Backward(y, {hx}, {.grad_output = hg});
  EXPECT_EQ(Values(handle_grad[0]), (std::vector<float>{1, -8, -6}));
}

TEST_F(BackwardTest, MaxPoolSendsTheGradientToEachMaximum) {
  const std::vector<float> x = {1, 9, 3, 4, 8, 2, 7, 5, 6, 0, 10, 11, 12, 13, 14, 15};
  const TensorHandle hx = Leaf(x, {1, 1, 4, 4});
  RunBuilder run;
  const RunOutput pooled =
      run.Op("MaxPool2d", {hx}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  const RunOutput loss = run.Op("Sum", {pooled});
  const client::RunResult result = session_->Run(run);
  EXPECT_EQ(Values(result[pooled]), (std::vector<float>{9, 7, 13, 15}));
  const std::vector<TensorHandle> grads = session_->Backward(result[loss], {hx});
  std::vector<float> expected(16, 0.0f);
  for (const int argmax : {1, 6, 13, 15}) expected[argmax] = 1;
  EXPECT_EQ(Values(grads[0]), expected);
}

TEST_F(BackwardTest, SoftmaxAndMeanOfRelu) {
  // L = sum(softmax(x) * t): dx_i = s_i (t_i - sum_j s_j t_j).
  const std::vector<float> x = RandomFloats(4, 6), t = {1, 0, 0.5f, -1};
  const TensorHandle hx = Leaf(x, {4});
  RunBuilder softmax_run;
  const RunOutput soft = softmax_run.Op("Softmax", {hx});
  const RunOutput loss =
      softmax_run.Op("Sum", {softmax_run.Op("Mul", {soft, TensorData::From<float>(t, {4})})});
  const client::RunResult result = session_->Run(softmax_run);
  const std::vector<float> s = Values(result[soft]);
  float st = 0;
  for (int i = 0; i < 4; ++i) st += s[i] * t[i];
  std::vector<float> dx(4);
  for (int i = 0; i < 4; ++i) dx[i] = s[i] * (t[i] - st);
  ExpectClose(Values(session_->Backward(result[loss], {hx})[0]), dx);

  // L = mean(relu(x)): dx = [x > 0] / n.
  const std::vector<float> y = {-1, 2, -3, 4, 5, -6};
  const TensorHandle hy = Leaf(y, {2, 3});
  RunBuilder relu_run;
  const RunOutput mean = relu_run.Op("Mean", {relu_run.Op("Relu", {hy})});
  const std::vector<TensorHandle> grads = session_->Backward(session_->Run(relu_run)[mean], {hy});
  ExpectClose(Values(grads[0]), {0, 1 / 6.0f, 0, 1 / 6.0f, 1 / 6.0f, 0});
}

TEST_F(BackwardTest, PoolPlacedGradientsSurviveAnArenaReset) {
  const TensorHandle x = Leaf({1, 2}, {2});
  RunBuilder run;
  const RunOutput loss = run.Op("Sum", {run.Op("Mul", {x, x})});
  const std::vector<TensorHandle> grads =
      session_->Backward(session_->Run(run)[loss], {x}, {.placement = v1::PLACEMENT_POOL});
  EXPECT_EQ(grads[0].info().placement(), v1::PLACEMENT_POOL);
  session_->ResetArena();
  EXPECT_EQ(Values(grads[0]), (std::vector<float>{2, 4}));
}

// A Backward that names one input 100,000 times gets its gradient each time (one buffer,
// 100,000 handles) well within a deadline. Before, telling which gradients share a buffer
// compared each with every earlier one: 128,000 inputs took 22 s of server CPU in a release
// build, the session held all along, past the client's deadline (hostile tester, 2026-12-06).
TEST_F(BackwardTest, AnInputNamedManyTimesGetsItsGradientEachTime) {
  const TensorHandle x = Leaf({1, 2}, {2});
  RunBuilder run;
  const RunOutput loss = run.Op("Sum", {run.Op("Mul", {x, x})});
  const TensorHandle y = session_->Run(run)[loss];
  const std::vector<TensorHandle> inputs(100000, x);
  const auto start = Clock::now();
  const std::vector<TensorHandle> grads = session_->Backward(y, inputs);
  const auto took = Clock::now() - start;
  ASSERT_EQ(grads.size(), inputs.size());
  EXPECT_EQ(Values(grads.front()), (std::vector<float>{2, 4}));
  EXPECT_EQ(Values(grads.back()), (std::vector<float>{2, 4}));
  EXPECT_LT(took, std::chrono::seconds(20))
      << std::chrono::duration<double>(took).count() << " s for 100,000 gradients";
}

TEST_F(BackwardTest, RetainGraphAllowsAnotherBackward) {
  const TensorHandle x = Leaf({3}, {1});
  RunBuilder run;
  run.Op("Mul", {x, x});
  const TensorHandle y = session_->Run(run).back();
  EXPECT_EQ(Values(session_->Backward(y, {x}, {.retain_graph = true})[0]), std::vector<float>{6});
  EXPECT_EQ(Values(session_->Backward(y, {x})[0]), std::vector<float>{6});
  EXPECT_TRUE(
      FailsWith([&] { session_->Backward(y, {x}); }, grpc::StatusCode::FAILED_PRECONDITION));
}

TEST_F(BackwardTest, AVersionChangeBeforeBackwardIsAFailedPrecondition) {
  const TensorHandle x = Leaf({1, 2}, {2});
  RunBuilder run;
  const RunOutput loss = run.Op("Sum", {run.Op("Mul", {x, x})});  // Mul saves x
  const TensorHandle root = session_->Run(run)[loss];
  session_->Put<float>(std::vector<float>{3, 4}, {2}, {.target = x.id()});  // an optimizer step
  EXPECT_TRUE(FailsWith([&] { session_->Backward(root, {x}); },
                        grpc::StatusCode::FAILED_PRECONDITION, {"version"}));
}

TEST_F(BackwardTest, NoGradRunsRecordNothing) {
  const TensorHandle x = Leaf({1, 2}, {2});
  RunBuilder run;
  run.Op("Sum", {x});
  const TensorHandle total = session_->Run(run.NoGrad()).back();
  EXPECT_FALSE(total.info().requires_grad());
  EXPECT_EQ(total.info().grad_fn(), "");
  EXPECT_TRUE(
      FailsWith([&] { session_->Backward(total, {x}); }, grpc::StatusCode::INVALID_ARGUMENT));
}

TEST_F(BackwardTest, GradOperationsOfOneRunShareOneBackwardPass) {
  // L = sum(x * w): dL/dx = w, dL/dw = x. Two Grad operations without retain_graph: a second
  // backward pass would find the graph freed, so both gradients come from the first pass.
  const std::vector<float> x = RandomFloats(6, 5), w = RandomFloats(6, 6);
  const TensorHandle hx = Leaf(x, {2, 3}), hw = Leaf(w, {2, 3});
  RunBuilder run;
  const RunOutput loss = run.Op("Sum", {run.Op("Mul", {hx, hw})});
  const RunOutput dw = run.Op("Grad", {loss, hx, hw}, {{"index", 1}});
  const RunOutput dx = run.Op("Grad", {loss, hx, hw}, {{"index", 0}}, v1::PLACEMENT_POOL);
  const client::RunResult result = session_->Run(run);
  EXPECT_EQ(result[dx].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(result[dx].info().requires_grad());
  EXPECT_EQ(result[dx].info().placement(), v1::PLACEMENT_POOL);
  ExpectClose(Values(result[dx]), w);
  ExpectClose(Values(result[dw]), x);
  // The pass freed the graph: another Run's Grad (and the Backward RPC) say so.
  RunBuilder again;
  again.Op("Grad", {result[loss], hx}, {{"index", 0}});
  EXPECT_TRUE(FailsWith([&] { session_->Run(again); }, grpc::StatusCode::FAILED_PRECONDITION,
                        {"operation 0 (Grad)"}));
}

TEST_F(BackwardTest, GradOfOtherInputsIsAnotherPass) {
  // With retain_graph, a Grad naming other inputs runs a pass of its own in the same Run.
  const TensorHandle x = Leaf({1, 2}, {2}), w = Leaf({3, 4}, {2});
  RunBuilder run;
  const RunOutput loss = run.Op("Sum", {run.Op("Mul", {x, w})});
  const RunOutput dx = run.Op("Grad", {loss, x}, {{"index", 0}, {"retain_graph", 1}});
  const RunOutput dw = run.Op("Grad", {loss, w}, {{"index", 0}});
  const client::RunResult result = session_->Run(run);
  EXPECT_EQ(Values(result[dx]), (std::vector<float>{3, 4}));
  EXPECT_EQ(Values(result[dw]), (std::vector<float>{1, 2}));
  // Without retain_graph on the first, the second pass finds the graph freed.
  RunBuilder freed;
  const RunOutput loss2 = freed.Op("Sum", {freed.Op("Mul", {x, w})});
  freed.Op("Grad", {loss2, x}, {{"index", 0}});
  freed.Op("Grad", {loss2, w}, {{"index", 0}});
  EXPECT_TRUE(FailsWith([&] { session_->Run(freed); }, grpc::StatusCode::FAILED_PRECONDITION,
                        {"operation 3 (Grad)"}));
}

TEST_F(BackwardTest, AGradientAskedForAgainIsAnotherPass) {
  // As a second backward() in PyTorch: refused once the first pass freed the graph, the same
  // gradient again with retain_graph.
  const TensorHandle x = Leaf({1, 2}, {2});
  for (const int retain : {0, 1}) {
    RunBuilder run;
    const RunOutput loss = run.Op("Sum", {run.Op("Mul", {x, x})});
    const RunOutput first = run.Op("Grad", {loss, x}, {{"index", 0}, {"retain_graph", retain}});
    const RunOutput second = run.Op("Grad", {loss, x}, {{"index", 0}});
    if (retain == 0) {
      EXPECT_TRUE(FailsWith([&] { session_->Run(run); }, grpc::StatusCode::FAILED_PRECONDITION,
                            {"operation 3 (Grad)", "retain_graph"}));
      continue;
    }
    const client::RunResult result = session_->Run(run);
    EXPECT_EQ(Values(result[first]), (std::vector<float>{2, 4}));
    EXPECT_EQ(Values(result[second]), (std::vector<float>{2, 4}));
  }
}

TEST_F(BackwardTest, ATrainingStepIsOneRun) {
  // Forward, loss, gradients and the SGD update in one Run give the parameters the same values
  // as the Run, Backward and Run of the same step.
  const std::vector<float> x = RandomFloats(8, 7), w0 = RandomFloats(4, 8);
  auto step = [&](bool one_run) {
    const TensorHandle input = session_->Put<float>(x, {2, 4});
    const TensorHandle w = Leaf(w0, {4, 1});
    const TensorHandle counter = session_->Put<int64_t>(std::vector<int64_t>{0}, {});
    RunBuilder forward;
    const RunOutput loss =
        forward.Op("Sum", {forward.Op("Tanh", {forward.Op("MatMul", {input, w})})});
    const std::vector<NamedAttr> sgd = {{"lr", 0.5f}};
    if (one_run) {
      const RunOutput g = forward.Op("Grad", {loss, w}, {{"index", 0}});
      forward.Op("SGD", {counter, w, g}, sgd);
      session_->Run(forward);
    } else {
      const TensorHandle root = session_->Run(forward)[loss];
      const TensorHandle g = session_->Backward(root, {w})[0];
      RunBuilder update;
      update.Op("SGD", {counter, w, g}, sgd);
      session_->Run(update);
    }
    return Values(w);
  };
  const std::vector<float> three_calls = step(false);
  EXPECT_NE(three_calls, w0);
  EXPECT_EQ(step(true), three_calls);
}

}  // namespace
}  // namespace onemodel::testing
