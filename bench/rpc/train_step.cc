// train_step_rpc_vs_inprocess (rpc_comparisons.h): the MLP of issue 17's UX measurement,
// 20-64-3 on 512 samples, one SGD training step through the server against the same step in
// this process in the core. Both sides:
//   z = relu(x W1 + b1) W2 + b2;  loss = cross_entropy(z, labels);  p -= 0.1 * dloss/dp
// Through the server (generated C++ stub, the fixture's channel), x, labels, parameters and
// the step count live in the session's pool and a step is one RPC: Run(reset_arena) of the
// forward and the loss, a Grad per parameter (one backward pass) and SGD updating the
// parameters in place. Nothing is fetched (the loss stays a handle). In-process: the same
// operations on the core's ops, autograd engine and ops::SgdStep, arena reset first.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/rpc/in_turn.h"
#include "bench/rpc/rpc_comparisons.h"
#include "core/autograd/engine.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/memory/arena.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/elementwise.h"
#include "core/ops/linear.h"
#include "core/ops/loss.h"
#include "core/ops/optimizers.h"
#include "core/tensor/grad_mode.h"

namespace onemodel::bench {
namespace {

constexpr int64_t kSamples = 512, kIn = 20, kHidden = 64, kClasses = 3;
constexpr float kLr = 0.1f;
constexpr double kMicro = 1e6;

// The step's data as plain values: x, labels and the parameters W1, b1, W2, b2.
struct MlpValues {
  std::vector<float> x;
  std::vector<int64_t> labels;
  std::array<std::vector<float>, 4> params;
  std::array<Shape, 4> shapes = {Shape{kIn, kHidden}, Shape{kHidden}, Shape{kHidden, kClasses},
                                 Shape{kClasses}};

  MlpValues() {
    uint32_t seed = 1;
    const auto next = [&](float scale) {
      seed = seed * 1664525u + 1013904223u;
      return scale * (static_cast<float>(seed >> 8) * 0x1p-23f - 1.0f);
    };
    for (int64_t i = 0; i < kSamples * kIn; ++i) x.push_back(next(1.0f));
    for (int64_t i = 0; i < kSamples; ++i) labels.push_back(i % kClasses);
    for (size_t p = 0; p < params.size(); ++p) {
      for (int64_t i = 0; i < shapes[p].ElementCount(); ++i) params[p].push_back(next(0.2f));
    }
  }
};

// The step in this process.
class InProcessMlp {
 public:
  explicit InProcessMlp(const MlpValues& v) {
    x_ = Filled<float>(Shape{kSamples, kIn}, DType::kFloat, v.x);
    labels_ = Filled<int64_t>(Shape{kSamples}, DType::kInt64, v.labels);
    for (size_t p = 0; p < params_.size(); ++p) {
      params_[p] = Filled<float>(v.shapes[p], DType::kFloat, v.params[p]).WithRequiresGrad();
    }
    step_ = Tensor::Empty(Shape{}, DType::kInt64, pool_, /*zero=*/true);
  }

  // Forward, loss, backward and the in-place SGD update; the arena is reset first, as the
  // server's first Run asks.
  void Step() {
    arena_.Reset();
    const Tensor h = ops::Relu(ops::Add(ops::MatMul(x_, params_[0], ctx_), params_[1], ctx_), ctx_);
    const Tensor z = ops::Add(ops::MatMul(h, params_[2], ctx_), params_[3], ctx_);
    const Tensor loss = ops::CrossEntropy(z, labels_, nullptr, {}, ctx_);
    const std::vector<Tensor> grads = Backward(loss, nullptr, params_, ctx_);
    NoGrad no_grad;
    ops::SgdStep(params_, grads, {}, step_, {.lr = kLr}, ctx_);
  }

 private:
  template <typename T>
  Tensor Filled(const Shape& shape, DType dtype, const std::vector<T>& values) {
    Tensor t = Tensor::Empty(shape, dtype, pool_);
    std::copy(values.begin(), values.end(), t.MutableData<T>().begin());
    return t;
  }

  BufferPool pool_;
  Arena arena_{pool_};
  FastKernels fast_{BestTarget()};
  OpContext ctx_{arena_, fast_};
  Tensor x_, labels_, step_;
  std::array<Tensor, 4> params_;
};

// The step through the server, in a session of its own.
class RpcMlp {
 public:
  RpcMlp(RpcFixture& f, const MlpValues& v) : f_(f) {
    grpc::ClientContext ctx;
    v1::CreateSessionRequest request;
    request.set_client_name("rpc_bench train_step");
    v1::CreateSessionReply reply;
    Check(f.stub().CreateSession(&ctx, request, &reply), "CreateSession");
    session_ = reply.session_id();
    x_ = Put(Shape{kSamples, kIn}, onnx::TensorProto::FLOAT, v.x.data(), v.x.size() * 4, false);
    labels_ =
        Put(Shape{kSamples}, onnx::TensorProto::INT64, v.labels.data(), v.labels.size() * 8, false);
    for (size_t p = 0; p < params_.size(); ++p) {
      params_[p] = Put(v.shapes[p], onnx::TensorProto::FLOAT, v.params[p].data(),
                       v.params[p].size() * 4, true);
    }
    const int64_t zero = 0;
    step_ = Put(Shape{}, onnx::TensorProto::INT64, &zero, sizeof zero, false);
    BuildRequests();
  }

  ~RpcMlp() {
    grpc::ClientContext ctx;
    v1::CloseSessionRequest request;
    request.set_session_id(session_);
    v1::CloseSessionReply reply;
    f_.stub().CloseSession(&ctx, request, &reply);  // the server closes it at exit anyway
  }

  // One Run: forward + loss, the gradients, SGD.
  void Step() {
    v1::RunReply reply;
    grpc::ClientContext ctx;
    Check(f_.stub().Run(&ctx, step_request_, &reply), "Run (training step)");
  }

 private:
  // PutTensor of `bytes` at `data` as a tensor of `shape` and `type`; returns its handle.
  std::string Put(const Shape& shape, onnx::TensorProto::DataType type, const void* data,
                  size_t bytes, bool requires_grad) {
    grpc::ClientContext ctx;
    v1::PutTensorRequest request;
    request.set_session_id(session_);
    request.set_requires_grad(requires_grad);
    onnx::TensorProto* t = request.mutable_tensor();
    t->set_data_type(type);
    for (int32_t d : shape.extents()) t->add_dims(d);
    t->set_raw_data(data, bytes);
    v1::TensorInfo info;
    Check(f_.stub().PutTensor(&ctx, request, &info), "PutTensor");
    return info.handle();
  }

  // The step's Run.
  void BuildRequests() {
    step_request_.set_session_id(session_);
    step_request_.set_reset_arena(true);
    // 0 MatMul(x, W1)  1 Add(0, b1)  2 Relu(1)  3 MatMul(2, W2)  4 Add(3, b2)  5 CE(4, labels)
    // 6..9 Grad(5, W1, b1, W2, b2; index 0..3)  10 SGD(step, W1, b1, W2, b2, 6..9)
    const auto add = [&](const char* op, std::vector<std::function<void(v1::Input*)>> inputs) {
      v1::Operation* o = step_request_.add_operations();
      o->set_op(op);
      for (const auto& set : inputs) set(o->add_inputs());
      return o;
    };
    const auto handle = [](const std::string& h) {
      return [h](v1::Input* in) { in->set_handle(h); };
    };
    const auto output = [](int i) { return [i](v1::Input* in) { in->set_output(i); }; };
    add("MatMul", {handle(x_), handle(params_[0])});
    add("Add", {output(0), handle(params_[1])});
    add("Relu", {output(1)});
    add("MatMul", {output(2), handle(params_[2])});
    add("Add", {output(3), handle(params_[3])});
    add("CrossEntropy", {output(4), handle(labels_)});
    std::vector<std::function<void(v1::Input*)>> grad_inputs = {output(5)};
    for (const std::string& p : params_) grad_inputs.push_back(handle(p));
    std::vector<std::function<void(v1::Input*)>> sgd_inputs = {handle(step_)};
    for (const std::string& p : params_) sgd_inputs.push_back(handle(p));
    for (size_t g = 0; g < params_.size(); ++g) {
      (*add("Grad", grad_inputs)->mutable_attributes())["index"].set_i(static_cast<int64_t>(g));
      sgd_inputs.push_back(output(6 + static_cast<int>(g)));
    }
    (*add("SGD", sgd_inputs)->mutable_attributes())["lr"].set_f(kLr);
  }

  RpcFixture& f_;
  std::string session_, x_, labels_, step_;
  std::array<std::string, 4> params_;
  v1::RunRequest step_request_;
};

}  // namespace

Comparison TrainStepVsInProcess(RpcFixture& f, const RpcOptions& o, std::vector<Detail>* details) {
  const MlpValues values;
  InProcessMlp local(values);
  RpcMlp remote(f, values);
  const std::vector<std::function<void()>> fns = {[&] { remote.Step(); }, [&] { local.Step(); },
                                                  [&] { Ping(f); }};
  LatencyInTurn(1, o.latency_calls, fns);  // warm-up: connections, arenas, pools
  const Samples lat = LatencyInTurn(o.latency_reps, o.latency_calls, fns);
  std::vector<double> budget(lat[0].size());
  for (size_t r = 0; r < budget.size(); ++r) budget[r] = 2 * lat[1][r] + 3 * lat[2][r];
  if (details) {
    details->push_back({"in-process step", Median(lat[1]) * kMicro, "us", "", 0});
    details->push_back({"Ping (empty RPC)", Median(lat[2]) * kMicro, "us", "", 0});
    details->push_back({"RPC step", Median(lat[0]) * kMicro, "us", "in-process step",
                        MedianRatio(lat[0], lat[1])});
  }
  return {Median(lat[0]) * kMicro, Median(budget) * kMicro, MedianRatio(budget, lat[0])};
}

}  // namespace onemodel::bench
