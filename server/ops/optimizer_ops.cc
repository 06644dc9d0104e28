#include "server/ops/optimizer_ops.h"

#include <string>
#include <vector>

#include "core/ops/optimizers.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

// The tensors from input `first` on, as the lists `names` of equal length; throws RpcError
// (INVALID_ARGUMENT) naming the lists when the count does not divide.
std::vector<std::span<const Tensor>> Lists(const OpCall& call, int first,
                                           const std::vector<std::string_view>& names) {
  const std::span<const Tensor> all = call.From(first);
  const size_t k = names.size();
  if (all.empty() || all.size() % k != 0) {
    std::string order;
    for (size_t i = 0; i < k; ++i) order += (i ? ", then N " : "N ") + std::string(names[i]);
    throw InvalidArgument("after its first " + std::to_string(first) + " input" +
                          (first == 1 ? "" : "s") + " it takes " + order + " (" +
                          std::to_string(k) + " lists of equal length N >= 1), got " +
                          std::to_string(all.size()) + (all.size() == 1 ? " tensor" : " tensors"));
  }
  const size_t n = all.size() / k;
  std::vector<std::span<const Tensor>> lists;
  for (size_t i = 0; i < k; ++i) lists.push_back(all.subspan(i * n, n));
  return lists;
}

bool Flag(const OpCall& call, std::string_view name) {
  const int64_t v = call.Int(name, 0);
  if (v != 0 && v != 1) {
    throw InvalidArgument("attribute '" + std::string(name) + "' must be 0 or 1 (got " +
                          std::to_string(v) + ")");
  }
  return v == 1;
}

}  // namespace

Tensor RunSgd(const OpCall& c) {
  const ops::SgdOptions o{.lr = c.Float("lr"),
                          .momentum = c.Float("momentum", 0),
                          .dampening = c.Float("dampening", 0),
                          .nesterov = Flag(c, "nesterov"),
                          .weight_decay = c.Float("weight_decay", 0)};
  ops::CheckSgdOptions(o);  // before the lists, which depend on the momentum
  const bool buffers = o.momentum != 0;
  std::vector<std::string_view> names{"params", "grads"};
  if (buffers) names.push_back("momentum_buffers");
  const auto lists = Lists(c, 1, names);
  return ops::SgdStep(lists[0], lists[1], buffers ? lists[2] : std::span<const Tensor>(), c.in(0),
                      o, c.ctx());
}

Tensor RunAdamW(const OpCall& c) {
  const ops::AdamWOptions o{.lr = c.Float("lr", 1e-3f),
                            .beta1 = c.Float("beta1", 0.9f),
                            .beta2 = c.Float("beta2", 0.999f),
                            .eps = c.Float("eps", 1e-8f),
                            .weight_decay = c.Float("weight_decay", 1e-2f),
                            .amsgrad = Flag(c, "amsgrad")};
  std::vector<std::string_view> names{"params", "grads", "exp_avgs", "exp_avg_sqs"};
  if (o.amsgrad) names.push_back("max_exp_avg_sqs");
  const auto lists = Lists(c, 1, names);
  return ops::AdamWStep(lists[0], lists[1], lists[2], lists[3],
                        o.amsgrad ? lists[4] : std::span<const Tensor>(), c.in(0), o, c.ctx());
}

Tensor RunClipGradNorm(const OpCall& c) {
  return ops::ClipGradNorm(c.From(0), c.Float("max_norm"), c.Float("norm_type", 2),
                           Flag(c, "error_if_nonfinite"), c.ctx());
}

}  // namespace onemodel::server
