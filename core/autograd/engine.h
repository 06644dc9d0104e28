// The backward engine (spec 8): gradients of a root with respect to chosen tensors, like
// torch.autograd.grad.
//
// Records are visited in topological order from the root, with explicit work lists rather
// than recursion, so a graph millions of records deep needs no stack; a tensor used more than once
// gets the sum of its gradients; gradients are allocated from the caller's allocator. Without
// retain_graph every record on the way is released afterwards (its saved and owned tensors
// freed), and a second backward through it fails with a clear message.
//
//   Tensor loss = ops::Mean(..., ctx);
//   std::vector<Tensor> g = Backward(loss, nullptr, {w1, b1}, ctx);
#pragma once

#include <span>
#include <vector>

#include "core/autograd/backward_record.h"

namespace onemodel {

struct BackwardOptions {
  bool retain_graph = false;
};

// The gradient of `root` with respect to each of `inputs` (leaves or intermediate results
// that require gradients), in the inputs' shapes. `grad_output` seeds the root's gradient and
// must match its shape; null means ones, allowed only for a root with one element. An input
// the root does not depend on gets zeros. Throws TensorException for a root that does not
// require gradients, a mismatched grad_output, or an input that tracks no gradient.
std::vector<Tensor> Backward(const Tensor& root, const Tensor* grad_output,
                             std::span<const Tensor> inputs, const OpContext& ctx,
                             BackwardOptions options = {});

}  // namespace onemodel
