// The Run row of Grad: d Y / d X[index] as an operation, so that a training step's forward,
// backward and optimizer step travel in one Run (docs/protocol.md, "Grad").
//
// The Grad operations of one Run that name the same root and the same inputs share one
// backward pass, each index at most once: the first runs the pass and keeps every gradient in
// the Run's GradientCache, the others take theirs from it (as Split's pieces share their
// input). An index asked for again is another pass (as a second backward() is in PyTorch:
// refused once the first freed the graph).
//
//   GradientCache gradients(session.ArenaContext());
//   Tensor g = spec->run(OpCall(*spec, inputs, attributes, ctx, &gradients));
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"
#include "server/ops/op_registry.h"

namespace onemodel::server {

// The gradients of the last backward pass of a Run, with what it was taken of.
class GradientCache {
 public:
  // Backward passes run in `ctx` (the session's arena: the engine's intermediate gradients
  // must not outlive the Run in the pool).
  explicit GradientCache(const OpContext& ctx) : ctx_(ctx) {}

  // The gradient of the one-element `root` with respect to inputs[index]: the kept one when
  // the last pass was of the same root and inputs (the same autograd nodes) and did not give
  // this index yet, else that of a new pass (which frees the graph unless `retain_graph`).
  // Throws as Backward does.
  Tensor Take(const Tensor& root, std::span<const Tensor> inputs, size_t index, bool retain_graph);

 private:
  OpContext ctx_;
  // The autograd nodes of the last pass's root and inputs (held, so an address cannot be
  // reused by another node while its gradients are kept).
  std::vector<std::shared_ptr<AutogradNode>> key_;
  std::vector<bool> taken_;  // which of its gradients were given
  std::vector<Tensor> gradients_;
};

// Y, X...; attributes index (required), retain_graph. The gradient of X[index], from the
// call's GradientCache (a pass of its own without one).
Tensor RunGrad(const OpCall& call);

}  // namespace onemodel::server
