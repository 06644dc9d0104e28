#include "client/load/step.h"

#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

namespace onemodel::load {
namespace {

using client::RunBuilder;
using client::RunOutput;
using client::TensorHandle;

// `count` floats uniform in [-scale, scale).
std::vector<float> Uniform(int64_t count, float scale, std::mt19937& random) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = dist(random);
  return values;
}

class MlpStep final : public Step {
 public:
  MlpStep(client::Session& session, int64_t batch, int64_t width, uint32_t seed)
      : session_(session) {
    std::mt19937 random(seed);
    const float scale = 1.0f / std::sqrt(static_cast<float>(width));
    const client::PutOptions param{.requires_grad = true};
    const TensorHandle x = session.Put(Uniform(batch * width, 1.0f, random), {batch, width});
    params_ = {session.Put(Uniform(width * width, scale, random), {width, width}, param),
               session.Put(Uniform(width, scale, random), {width}, param),
               session.Put(Uniform(width * width, scale, random), {width, width}, param)};
    forward_.ResetArena();
    const RunOutput h = forward_.Op("MatMul", {x, params_[0]});
    const RunOutput a = forward_.Op("Relu", {forward_.Op("Add", {h, params_[1]})});
    const RunOutput z = forward_.Op("MatMul", {a, params_[2]});
    loss_ = forward_.Op("Mean", {forward_.Op("LogSoftmax", {z}, {{"axis", -1}})});
  }

  void Run(RequestLog& log) override {
    const client::RunResult out = log.Time(Rpc::kRun, [&] { return session_.Run(forward_); });
    log.Time(Rpc::kBackward, [&] { return session_.Backward(out[*loss_], params_); });
  }

 private:
  client::Session& session_;
  std::vector<TensorHandle> params_;
  RunBuilder forward_;
  std::optional<RunOutput> loss_;  // RunOutput has no default value
};

class ChainStep final : public Step {
 public:
  ChainStep(client::Session& session, int64_t size, int length, uint32_t seed) : session_(session) {
    std::mt19937 random(seed);
    const TensorHandle x = session.Put(Uniform(size, 1.0f, random), {size});
    chain_.ResetArena().NoGrad();
    client::RunInput y = x;
    for (int i = 0; i < length; ++i) {
      switch (i % 3) {
        case 0:
          y = chain_.Op("Add", {y, x});
          break;
        case 1:
          y = chain_.Op("Mul", {y, x});
          break;
        default:
          y = chain_.Op("Tanh", {y});
          break;
      }
    }
  }

  void Run(RequestLog& log) override {
    log.Time(Rpc::kRun, [&] { return session_.Run(chain_); });
  }

 private:
  client::Session& session_;
  RunBuilder chain_;
};

class TransferStep final : public Step {
 public:
  TransferStep(client::Session& session, int64_t bytes, uint32_t seed) : session_(session) {
    std::mt19937 random(seed);
    const int64_t count = bytes / static_cast<int64_t>(sizeof(float));
    data_ = client::TensorData::From<float>(Uniform(count, 1.0f, random), {count});
    target_ = session.Put(data_);
  }

  void Run(RequestLog& log) override {
    log.Time(Rpc::kPut, [&] { return session_.Put(data_, {.target = target_.id()}); });
    log.Time(Rpc::kGet, [&] { return session_.Get(target_); });
  }

 private:
  client::Session& session_;
  client::TensorData data_;  // uploaded again every step, into target_
  TensorHandle target_;
};

}  // namespace

std::unique_ptr<Step> MakeStep(const LoadOptions& options, client::Session& session,
                               uint32_t seed) {
  switch (options.step) {
    case StepKind::kMlp:
      return std::make_unique<MlpStep>(session, options.batch, options.width, seed);
    case StepKind::kChain:
      return std::make_unique<ChainStep>(session, options.size, options.chain_length, seed);
    case StepKind::kTransfer:
      return std::make_unique<TransferStep>(session, options.transfer_bytes, seed);
  }
  throw std::logic_error("MakeStep: unknown step kind");
}

}  // namespace onemodel::load
