#include "server/ops/grad_op.h"

#include <optional>
#include <string>

#include "core/autograd/engine.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {

Tensor GradientCache::Take(const Tensor& root, std::span<const Tensor> inputs, size_t index,
                           bool retain_graph) {
  bool same = key_.size() == inputs.size() + 1 && key_[0] == root.autograd_node() && !taken_[index];
  for (size_t i = 0; same && i < inputs.size(); ++i) {
    same = key_[i + 1] == inputs[i].autograd_node();
  }
  if (!same) {
    key_.clear();
    gradients_.clear();
    gradients_ = Backward(root, nullptr, inputs, ctx_, {.retain_graph = retain_graph});
    key_.push_back(root.autograd_node());
    for (const Tensor& x : inputs) key_.push_back(x.autograd_node());
    taken_.assign(inputs.size(), false);
  }
  taken_[index] = true;
  return gradients_[index];
}

Tensor RunGrad(const OpCall& call) {
  const std::span<const Tensor> inputs = call.From(1);
  const int64_t index = call.Int("index");
  if (index < 0 || index >= static_cast<int64_t>(inputs.size())) {
    throw InvalidArgument("attribute 'index' is " + std::to_string(index) + ", but there " +
                          (inputs.size() == 1
                               ? "is 1 input X"
                               : "are " + std::to_string(inputs.size()) + " inputs X") +
                          " after Y: give 0 to " + std::to_string(inputs.size() - 1));
  }
  const int64_t retain = call.Int("retain_graph", 0);
  if (retain != 0 && retain != 1) {
    throw InvalidArgument("attribute 'retain_graph' must be 0 or 1 (got " + std::to_string(retain) +
                          ")");
  }
  if (call.in(0).ElementCount() != 1) {
    throw InvalidArgument("Y has " + std::to_string(call.in(0).ElementCount()) +
                          " elements; Grad differentiates a one-element Y (a loss): reduce it "
                          "first, or use the Backward RPC with a grad_output");
  }
  std::optional<GradientCache> own;
  GradientCache* cache = call.gradients();
  if (cache == nullptr) cache = &own.emplace(call.ctx());
  return cache->Take(call.in(0), inputs, static_cast<size_t>(index), retain == 1);
}

}  // namespace onemodel::server
