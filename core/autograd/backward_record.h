// The backward record of spec 8: what an operation keeps so the engine can compute gradients.
//
// A tensor that requires gradients carries an AutogradNode: a LeafNode for WithRequiresGrad()
// handles, or the BackwardRecord of the operation that made it (its GradFn). A record holds
// the op (OpKind), per input the input's node (null when that input needs no gradient), shape
// and type; positional Saved slots (tensors sharing storage with the originals, with the
// version at save time; empty when the op does not need one); tensors the record created
// itself (index tensors, intermediates), freed by Release(); and Ints/Floats attributes.
// A server charges each record's heap (Footprint()) to the session's budget (ChargeGraph).
//
// Records hold their inputs' records, so a graph is a chain of shared_ptrs as long as the
// client made it (millions of records); dropping it and the engine's walks over it are loops
// with explicit work lists, never recursion.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/autograd/op_context.h"
#include "core/memory/memory_budget.h"
#include "core/tensor/autograd_node.h"
#include "core/tensor/tensor.h"

namespace onemodel {

// The operations that record, one row each: X(Name) gives OpKind::kName and its name "Name"
// (OpKindName, the grad_fn clients see). An elementwise op's row has its BinaryOp/UnaryOp
// name (core/kernels/kernels.h): core/ops maps one to the other by name, never by position.
#define ONEMODEL_FOR_EACH_OP_KIND(X)                                                      \
  X(Add) X(Sub) X(Mul) X(Div) X(Max) X(Min) X(Pow) X(Neg) X(Abs) X(Exp) X(Log) X(Sqrt)    \
  X(Relu) X(Sigmoid) X(Tanh) X(Gelu) X(MatMul) X(MaxPool2d) X(Sum) X(Mean) X(Softmax)     \
  X(LogSoftmax) X(Cast) X(Contiguous) X(Copy) X(ToLayout) X(Reshape) X(Permute) X(Slice)  \
  X(Expand) X(Squeeze) X(Unsqueeze) X(Conv2d)                                             \
  X(Erf) X(Where) X(Clip) X(LeakyRelu)                                                    \
  X(ReluMaxPool2d) X(AvgPool2d) X(GlobalAvgPool2d)                                        \
  X(Embedding) X(Gather) X(Concat)                                                        \
  X(ReduceMax) X(ReduceMin) X(Pad) X(Tile) X(CumSum)                                      \
  X(LayerNorm) X(RMSNorm) X(BatchNorm2d)                                                  \
  X(CrossEntropy) X(NLLLoss) X(MSELoss) X(Dropout)                                        \
  X(ConvTranspose2d)

#define ONEMODEL_OP_KIND_ENUMERATOR(Name) k##Name,
enum class OpKind { ONEMODEL_FOR_EACH_OP_KIND(ONEMODEL_OP_KIND_ENUMERATOR) };
#undef ONEMODEL_OP_KIND_ENUMERATOR
// Every kind, in enum order.
#define ONEMODEL_OP_KIND_VALUE(Name) OpKind::k##Name,
inline constexpr OpKind kAllOpKinds[] = {ONEMODEL_FOR_EACH_OP_KIND(ONEMODEL_OP_KIND_VALUE)};
#undef ONEMODEL_OP_KIND_VALUE

// "Add", "MaxPool2d", ...
std::string_view OpKindName(OpKind op);

// A saved input or output: shares storage with the original and remembers its version.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t);

  bool empty() const { return tensor_.is_null(); }
  // The saved tensor. Throws TensorVersionException naming the op, the slot and both
  // versions when the tensor was modified in place after it was saved, and
  // StaleTensorException naming the op and the slot when its buffer was released or reset.
  const Tensor& Unpack(OpKind op, int slot) const;

 private:
  Tensor tensor_;
  uint64_t version_ = 0;
};

class BackwardRecord;
// Fills grads[i] (for every input i whose node is not null) from the output gradient, in the
// input's own shape and type (broadcast dimensions already summed away). Every gradient is a
// new tensor from ctx.allocator (never grad_output itself): the engine frees what it consumed.
using BackwardFn = void (*)(const BackwardRecord& record, const Tensor& grad_output,
                            const OpContext& ctx, std::span<Tensor> grads);

struct RecordInput {
  std::shared_ptr<AutogradNode> node;  // null: this input needs no gradient
  Shape shape;
  DType dtype;
};

class BackwardRecord final : public AutogradNode {
 public:
  BackwardRecord(OpKind op, BackwardFn backward) : op_(op), backward_(backward) {}
  // Releases, then frees the graph behind the record that nothing else holds in a loop, not
  // one stack frame per record: a chain's depth is bounded by memory only.
  ~BackwardRecord() override;
  BackwardRecord(const BackwardRecord&) = delete;
  BackwardRecord& operator=(const BackwardRecord&) = delete;
  bool IsLeaf() const override { return false; }

  OpKind op() const { return op_; }
  const std::vector<RecordInput>& inputs() const { return inputs_; }
  const Shape& InputShape(int i) const { return inputs_[static_cast<size_t>(i)].shape; }
  // The tensor in Saved slot `slot` (see SavedTensor::Unpack).
  const Tensor& Saved(int slot) const;
  bool HasSaved(int slot) const;
  const Tensor& Owned(int i) const { return owned_[static_cast<size_t>(i)]; }
  const std::vector<int64_t>& ints() const { return ints_; }
  const std::vector<float>& floats() const { return floats_; }
  bool released() const { return released_; }

  // Building (by the operation that records).
  void AddInput(const Tensor& input);
  void Save(int slot, const Tensor& t);
  void Own(const Tensor& t) { owned_.push_back(t); }
  void SetInts(std::vector<int64_t> v) { ints_ = std::move(v); }
  void SetFloats(std::vector<float> v) { floats_ = std::move(v); }

  // Runs the op's backward (throws if released).
  void Backward(const Tensor& grad_output, const OpContext& ctx, std::span<Tensor> grads) const;
  // Frees the owned tensors and drops the saved ones; a later backward through it throws.
  void Release();

  // The heap the record takes: the object and its shared_ptr control block, and its inputs,
  // saved slots, owned tensors' metadata and attributes, each as glibc allocates them (the
  // owned tensors' buffers are their allocator's to charge).
  int64_t Footprint() const;
  // Charges Footprint() to `budget` until the record is destroyed, once; false when already
  // charged. Throws MemoryBudget::Charge's MemoryLimitException, charging nothing.
  bool ChargeTo(MemoryBudget& budget);

 private:
  OpKind op_;
  BackwardFn backward_;
  std::vector<RecordInput> inputs_;
  std::vector<SavedTensor> saved_;
  std::vector<Tensor> owned_;
  std::vector<int64_t> ints_;
  std::vector<float> floats_;
  bool released_ = false;
  MemoryBudget* budget_ = nullptr;  // what Footprint() was charged to, if anything
  int64_t charged_ = 0;
};

// Charges every record behind `t` that is not charged yet to `budget` (records already
// charged, and what is behind them, are skipped). Throws MemoryLimitException when the budget
// is short; the records charged before that stay charged until destroyed.
void ChargeGraph(const Tensor& t, MemoryBudget& budget);

// The record behind a tensor made by a recorded operation, or null.
const BackwardRecord* GradFn(const Tensor& t);

// True when an operation on these inputs records now: GradMode is on and an input requires
// gradients.
bool ShouldRecord(std::initializer_list<const Tensor*> inputs);

}  // namespace onemodel
