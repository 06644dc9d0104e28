#include "core/autograd/backward_record.h"

#include <iterator>
#include <string>

#include "core/common/exceptions.h"
#include "core/tensor/grad_mode.h"

namespace onemodel {

std::string_view OpKindName(OpKind op) {
#define ONEMODEL_OP_KIND_NAME(Name) #Name,
  static constexpr std::string_view kNames[] = {ONEMODEL_FOR_EACH_OP_KIND(ONEMODEL_OP_KIND_NAME)};
#undef ONEMODEL_OP_KIND_NAME
  return kNames[static_cast<int>(op)];
}

SavedTensor::SavedTensor(const Tensor& t) : tensor_(t.Detach()), version_(t.version()) {}

const Tensor& SavedTensor::Unpack(OpKind op, int slot) const {
  uint64_t now;
  try {
    now = tensor_.version();
  } catch (const StaleTensorException& e) {
    throw StaleTensorException(
        "backward of " + std::string(OpKindName(op)) + ": saved tensor " + std::to_string(slot) +
        " (" + tensor_.Describe() +
        ") was released, or the arena holding it reset, after it was "
        "saved; keep what a graph saved (do not release it or reset its arena) until its "
        "backward has run [" +
        e.what() + "]");
  }
  if (now != version_) {
    throw TensorVersionException(
        "backward of " + std::string(OpKindName(op)) + ": saved tensor " + std::to_string(slot) +
        " (" + tensor_.Describe() + ") was modified in place after it was saved (version " +
        std::to_string(version_) + " at save time, " + std::to_string(now) +
        " now); gradients would be wrong, so run the in-place update after backward or on a "
        "copy");
  }
  return tensor_;
}

const Tensor& BackwardRecord::Saved(int slot) const {
  if (!HasSaved(slot)) {
    throw TensorException("backward of " + std::string(OpKindName(op_)) + ": saved slot " +
                          std::to_string(slot) + " is empty");
  }
  return saved_[static_cast<size_t>(slot)].Unpack(op_, slot);
}

bool BackwardRecord::HasSaved(int slot) const {
  return slot >= 0 && static_cast<size_t>(slot) < saved_.size() &&
         !saved_[static_cast<size_t>(slot)].empty();
}

BackwardRecord::~BackwardRecord() {
  Release();
  if (budget_) budget_->Refund(charged_);
  // Each input record this one holds the last reference to gives up its own inputs before it
  // is destroyed, so its destructor finds nothing to follow. A reference held elsewhere (a
  // handle, another record, another thread) is just dropped; whoever drops it last frees
  // that record the same way.
  std::vector<RecordInput> pending = std::move(inputs_);
  while (!pending.empty()) {
    std::shared_ptr<AutogradNode> node = std::move(pending.back().node);
    pending.pop_back();
    if (!node || node.use_count() != 1 || node->IsLeaf()) continue;
    std::vector<RecordInput>& next = static_cast<BackwardRecord&>(*node).inputs_;
    if (pending.empty()) {
      pending.swap(next);  // a chain: no allocation
    } else {
      std::move(next.begin(), next.end(), std::back_inserter(pending));
      next.clear();
    }
  }  // `node` is destroyed at the end of each iteration, with no inputs left
}

void BackwardRecord::AddInput(const Tensor& input) {
  inputs_.push_back({input.autograd_node(), input.shape(), input.dtype()});
}

void BackwardRecord::Save(int slot, const Tensor& t) {
  if (saved_.size() <= static_cast<size_t>(slot)) saved_.resize(static_cast<size_t>(slot) + 1);
  saved_[static_cast<size_t>(slot)] = SavedTensor(t);
}

void BackwardRecord::Backward(const Tensor& grad_output, const OpContext& ctx,
                              std::span<Tensor> grads) const {
  if (released_) {
    throw GraphReleasedException("backward through " + std::string(OpKindName(op_)) +
                                 " a second time: its saved tensors were freed after the first "
                                 "backward; pass retain_graph to keep them");
  }
  backward_(*this, grad_output, ctx, grads);
}

void BackwardRecord::Release() {
  if (released_) return;
  released_ = true;
  for (Tensor& t : owned_) {
    if (!t.IsStale()) t.Dispose();
  }
  owned_.clear();
  saved_.clear();
}

namespace {

template <typename T>
int64_t VectorHeap(const std::vector<T>& v) {
  return v.capacity() == 0 ? 0 : HeapBlockBytes(static_cast<int64_t>(v.capacity() * sizeof(T)));
}

}  // namespace

int64_t BackwardRecord::Footprint() const {
  // make_shared puts the control block (two counts and a vtable) in the same block.
  constexpr int64_t kControlBlock = 16;
  return HeapBlockBytes(static_cast<int64_t>(sizeof(BackwardRecord)) + kControlBlock) +
         VectorHeap(inputs_) + VectorHeap(saved_) + VectorHeap(owned_) + VectorHeap(ints_) +
         VectorHeap(floats_);
}

bool BackwardRecord::ChargeTo(MemoryBudget& budget) {
  if (budget_) return false;
  const int64_t bytes = Footprint();
  try {
    budget.Charge(bytes);
  } catch (const MemoryLimitException& e) {
    throw MemoryLimitException("the backward record of " + std::string(OpKindName(op_)) +
                               " needs " + FormatBytes(bytes) +
                               " (records are kept while a "
                               "result that needs gradients is held; release such results, or "
                               "run with no_grad when no gradient is needed): " +
                               e.what());
  }
  budget_ = &budget;
  charged_ = bytes;
  return true;
}

void ChargeGraph(const Tensor& t, MemoryBudget& budget) {
  std::vector<AutogradNode*> pending{t.autograd_node().get()};
  while (!pending.empty()) {
    AutogradNode* node = pending.back();
    pending.pop_back();
    if (!node || node->IsLeaf()) continue;
    auto& record = static_cast<BackwardRecord&>(*node);
    if (!record.ChargeTo(budget)) continue;
    for (const RecordInput& in : record.inputs()) pending.push_back(in.node.get());
  }
}

const BackwardRecord* GradFn(const Tensor& t) {
  const AutogradNode* node = t.autograd_node().get();
  return node && !node->IsLeaf() ? static_cast<const BackwardRecord*>(node) : nullptr;
}

bool ShouldRecord(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::IsEnabled()) return false;
  for (const Tensor* t : inputs) {
    if (t->requires_grad()) return true;
  }
  return false;
}

}  // namespace onemodel
