#include "server/ops/loss_ops.h"

#include <string>

#include "core/ops/loss.h"
#include "server/observability/logging.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

// The attribute `reduction`: "none", "mean" (the default) or "sum".
ops::Reduction ParseReduction(const OpCall& call) {
  if (!call.Has("reduction")) return ops::Reduction::kMean;
  const std::string_view name = call.String("reduction");
  if (name == "none") return ops::Reduction::kNone;
  if (name == "mean") return ops::Reduction::kMean;
  if (name == "sum") return ops::Reduction::kSum;
  throw InvalidArgument("attribute 'reduction' must be \"none\", \"mean\" or \"sum\" (got \"" +
                        Printable(name, 32) + "\")");
}

ops::ClassLossParams ClassParams(const OpCall& call, float label_smoothing) {
  return {call.Int("ignore_index", -100), ParseReduction(call), label_smoothing};
}

const Tensor* Weight(const OpCall& call) { return call.size() > 2 ? &call.in(2) : nullptr; }

}  // namespace

Tensor RunCrossEntropy(const OpCall& call) {
  return ops::CrossEntropy(call.in(0), call.in(1), Weight(call),
                           ClassParams(call, call.Float("label_smoothing", 0.0f)), call.ctx());
}

Tensor RunNllLoss(const OpCall& call) {
  return ops::NllLoss(call.in(0), call.in(1), Weight(call), ClassParams(call, 0.0f), call.ctx());
}

Tensor RunMseLoss(const OpCall& call) {
  return ops::MseLoss(call.in(0), call.in(1), ParseReduction(call), call.ctx());
}

Tensor RunDropout(const OpCall& call) {
  const int64_t training = call.Int("training", 1);
  if (training != 0 && training != 1) {
    throw InvalidArgument("attribute 'training' must be 0 or 1 (got " + std::to_string(training) +
                          ")");
  }
  return ops::Dropout(
      call.in(0),
      {call.Float("ratio", 0.5f), static_cast<uint64_t>(call.Int("seed")), training == 1},
      call.ctx());
}

}  // namespace onemodel::server
