#include "core/autograd/engine.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/common/exceptions.h"
#include "core/convert/cast.h"
#include "core/tensor/grad_mode.h"

namespace onemodel {
namespace {

// Gradients flowing into nodes; the engine disposes those it made once they are consumed.
struct GradSlot {
  Tensor grad;
  bool engine_owned = false;
};

// Adds `extra` into the slot (a new buffer: neither operand may be written in place).
void Accumulate(GradSlot& slot, const Tensor& extra, bool extra_owned, const OpContext& ctx) {
  if (slot.grad.is_null()) {
    slot = {extra, extra_owned};
    return;
  }
  if (slot.grad.dtype() != DType::kFloat) {
    throw TensorTypeException("backward: gradients of " + std::string(OnnxName(slot.grad.dtype())) +
                              " tensors used more than once cannot be summed; only FLOAT "
                              "gradients accumulate");
  }
  Tensor sum = Tensor::Empty(slot.grad.shape(), DType::kFloat, ctx.allocator);
  ctx.kernels.Binary(BinaryOp::kAdd, slot.grad, extra, sum);
  if (slot.engine_owned) slot.grad.Dispose();
  if (extra_owned) Tensor(extra).Dispose();
  slot = {sum, true};
}

}  // namespace

std::vector<Tensor> Backward(const Tensor& root, const Tensor* grad_output,
                             std::span<const Tensor> inputs, const OpContext& ctx,
                             BackwardOptions options) {
  if (!root.requires_grad()) {
    throw TensorException("backward from " + root.Describe() +
                          ", which does not require gradients: no recorded operation made it "
                          "from an input created WithRequiresGrad (or recording was off)");
  }
  for (const Tensor& in : inputs) {
    if (!in.requires_grad()) {
      throw TensorException("gradient requested for " + in.Describe() +
                            ", which does not require gradients");
    }
  }
  NoGrad no_grad;  // backward computations are not recorded themselves

  // Seed.
  Tensor seed;
  bool seed_owned = false;
  if (grad_output) {
    if (!(grad_output->shape() == root.shape()) || grad_output->dtype() != root.dtype()) {
      throw TensorException("backward: output gradient " + grad_output->Describe() +
                            " does not match the root's shape " + root.shape().ToString() +
                            " and type " + std::string(OnnxName(root.dtype())));
    }
    seed = grad_output->Detach();
  } else {
    if (root.ElementCount() != 1) {
      throw TensorException("backward from " + root.Describe() + ", which has " +
                            std::to_string(root.ElementCount()) +
                            " elements: give an output gradient of its shape (only a "
                            "one-element root defaults to a gradient of 1)");
    }
    seed = Tensor::Empty(root.shape(), root.dtype(), ctx.allocator);
    const float one = 1.0f;  // in the root's own type (a Cast may have made it DOUBLE)
    CastElements(DType::kFloat, &one, root.dtype(), seed.MutableRawData().data(), 1);
    seed_owned = true;
  }

  // The records that run: those some requested node is reachable from (through at least one
  // edge), as in PyTorch; the others neither run nor are released, so a backward with respect
  // to the root itself, or to tensors the root does not depend on, runs nothing. Found by one
  // depth-first walk of the subgraph reachable from the root, with an explicit stack (a graph
  // may be millions of records deep): a record runs when one of its inputs is requested or runs.
  struct NodeInfo {
    int dependents = 0;  // consumers that run and have not given their gradient yet
    bool seen = false;
    bool runs = false;
  };
  std::unordered_set<const AutogradNode*> wanted;
  for (const Tensor& in : inputs) wanted.insert(in.autograd_node().get());
  AutogradNode* root_node = root.autograd_node().get();
  std::unordered_map<const AutogradNode*, NodeInfo> info;
  struct Frame {
    const BackwardRecord* record;
    size_t next;  // the input to look at next
  };
  std::vector<Frame> frames;
  if (!root_node->IsLeaf()) {
    info[root_node].seen = true;
    frames.push_back({static_cast<const BackwardRecord*>(root_node), 0});
  }
  while (!frames.empty()) {
    const Frame f = frames.back();
    if (f.next == f.record->inputs().size()) {
      frames.pop_back();
      continue;
    }
    const AutogradNode* child = f.record->inputs()[f.next].node.get();
    if (child) {
      NodeInfo& c = info[child];
      if (!c.seen && !child->IsLeaf()) {
        c.seen = true;
        frames.push_back({static_cast<const BackwardRecord*>(child), 0});
        continue;  // back to this input once the child's walk is done
      }
      if (c.runs || wanted.count(child)) info[f.record].runs = true;
    }
    ++frames[frames.size() - 1].next;
  }
  for (auto& [node, n] : info) {
    if (!n.runs) continue;
    for (const RecordInput& in : static_cast<const BackwardRecord*>(node)->inputs()) {
      if (!in.node) continue;
      NodeInfo& c = info.find(in.node.get())->second;
      if (c.runs) ++c.dependents;
    }
  }

  std::unordered_map<const AutogradNode*, GradSlot> grads;
  grads[root_node] = {seed, seed_owned};
  std::vector<const BackwardRecord*> ready;
  if (info[root_node].runs) ready.push_back(static_cast<const BackwardRecord*>(root_node));
  std::vector<const BackwardRecord*> visited;  // to release afterwards
  std::vector<Tensor> in_grads;
  while (!ready.empty()) {
    const BackwardRecord* r = ready.back();
    ready.pop_back();
    if (!options.retain_graph) visited.push_back(r);
    const auto slot = grads.try_emplace(r).first;
    GradSlot out = slot->second;
    in_grads.assign(r->inputs().size(), Tensor());
    r->Backward(out.grad, ctx, in_grads);
    if (out.engine_owned && !wanted.count(r)) {
      out.grad.Dispose();
      grads.erase(slot);
    }
    for (size_t i = 0; i < r->inputs().size(); ++i) {
      const AutogradNode* node = r->inputs()[i].node.get();
      if (!node) continue;
      NodeInfo& n = info.find(node)->second;
      if (!in_grads[i].is_null()) {
        if (n.runs || wanted.count(node)) {
          Accumulate(grads[node], in_grads[i], true, ctx);
        } else {
          in_grads[i].Dispose();  // leads to no requested tensor
        }
      }
      if (n.runs && --n.dependents == 0) {
        ready.push_back(static_cast<const BackwardRecord*>(node));
      }
    }
  }

  std::vector<Tensor> result;
  for (const Tensor& in : inputs) {
    auto it = grads.find(in.autograd_node().get());
    if (it != grads.end() && !it->second.grad.is_null()) {
      result.push_back(it->second.grad);
      it->second.engine_owned = false;  // the caller's now
    } else {
      Tensor zeros = Tensor::Empty(in.shape(), in.dtype(), ctx.allocator, /*zero=*/true);
      result.push_back(zeros);
    }
  }
  for (auto& [node, slot] : grads) {
    if (slot.engine_owned && !wanted.count(node)) slot.grad.Dispose();
  }
  for (const BackwardRecord* r : visited) const_cast<BackwardRecord*>(r)->Release();
  return result;
}

}  // namespace onemodel
