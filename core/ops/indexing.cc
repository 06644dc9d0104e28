#include "core/ops/indexing.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"
#include "core/ops/views.h"
#include "core/shape/dim_vector.h"
#include "core/shape/shape.h"
#include "core/tensor/grad_mode.h"

namespace onemodel::ops {
namespace {

using internal::Temporary;

// "[1, 2]": the row-major position of flat element `flat` of `shape`.
std::string PositionOf(const Shape& shape, int64_t flat) {
  std::vector<int64_t> at(static_cast<size_t>(shape.rank()));
  for (int d = shape.rank() - 1; d >= 0; --d) {
    at[static_cast<size_t>(d)] = flat % shape[d];
    flat /= shape[d];
  }
  return FormatExtents(at);
}

// Throws TensorTypeException unless `indices` is a live INT32 or INT64 tensor.
void CheckIndices(const char* op, const Tensor& indices) {
  if (indices.is_null())
    throw TensorException(std::string(op) + ": input indices is a null handle");
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    throw TensorTypeException(std::string(op) + ": input indices is " + indices.Describe() +
                              "; it must be INT32 or INT64: Cast it to INT64 first");
  }
}

// An index tensor read in row-major order (a dense copy only when it is strided), each index
// in [0, n) once Check has passed: negative ones count from the end when `from_end`. Never
// allocates from the heap.
class Indices {
 public:
  Indices(const Tensor& indices, int64_t n, bool from_end, const OpContext& ctx)
      : dense_(indices.Contiguous(ctx.allocator), indices), n_(n), from_end_(from_end) {
    if (indices.dtype() == DType::kInt32) {
      i32_ = dense_->Data<int32_t>().data();
    } else {
      i64_ = dense_->Data<int64_t>().data();
    }
  }
  int64_t size() const { return dense_->ElementCount(); }
  // The indices as given, contiguous.
  const Tensor& dense() const { return *dense_; }
  // Index i as given.
  int64_t Raw(int64_t i) const { return i32_ ? int64_t{i32_[i]} : i64_[i]; }
  // Index i in [0, n).
  int64_t operator[](int64_t i) const {
    const int64_t v = Raw(i);
    return v < 0 ? v + n_ : v;
  }
  // Throws TensorException naming the first index out of range (its position and value) and
  // n, the rows of the table (axis < 0) or the extent of data's `axis`.
  void Check(const char* op, int axis) const {
    const int64_t lowest = from_end_ ? -n_ : 0;
    for (int64_t i = 0; i < size(); ++i) {
      const int64_t v = Raw(i);
      if (v >= lowest && v < n_) continue;
      const std::string n = std::to_string(n_);
      throw TensorException(
          std::string(op) + ": index " + std::to_string(v) + " at position " +
          PositionOf(dense_->shape(), i) + " of indices " + dense_->shape().ToString() +
          " is out of range for " +
          (axis < 0 ? "a table of " + n + " rows"
                    : "axis " + std::to_string(axis) + " of data (extent " + n + ")") +
          " (valid: " + std::to_string(lowest) + " to " + std::to_string(n_ - 1) + ")");
    }
  }

 private:
  const internal::Temporary dense_;
  int64_t n_;
  bool from_end_;
  const int32_t* i32_ = nullptr;
  const int64_t* i64_ = nullptr;
};

// How `data` (shape s, axis a) splits around its axis: s[:a] elements, s[a], s[a+1:] elements.
struct AxisSplit {
  int64_t outer = 1, extent = 0, inner = 1;
};
AxisSplit SplitAt(const Shape& s, int axis) {
  AxisSplit p;
  for (int d = 0; d < axis; ++d) p.outer *= s[d];
  p.extent = s[axis];
  for (int d = axis + 1; d < s.rank(); ++d) p.inner *= s[d];
  return p;
}

// data.shape[:axis] + indices.shape + data.shape[axis+1:]; throws TensorShapeException naming
// `op` when that has more than kMaxRank dimensions.
Shape GatheredShape(const char* op, const Shape& data, int axis, const Shape& indices) {
  if (data.rank() - 1 + indices.rank() > kMaxRank) {
    throw TensorShapeException(std::string(op) + ": the result of indices " + indices.ToString() +
                               " into " + data.ToString() + " would have " +
                               std::to_string(data.rank() - 1 + indices.rank()) +
                               " dimensions; at most " + std::to_string(kMaxRank) +
                               " are supported: reshape the indices to fewer dimensions");
  }
  DimVector<int64_t> s;
  for (int d = 0; d < axis; ++d) s.push_back(data[d]);
  for (int d = 0; d < indices.rank(); ++d) s.push_back(indices[d]);
  for (int d = axis + 1; d < data.rank(); ++d) s.push_back(data[d]);
  return Shape(s.span());
}

// out[o, j, :] = data[o, idx[j], :] for the (outer, extent, inner) split `p` of data, by the
// kernels' GatherRows.
void CopySlices(const Tensor& data, const AxisSplit& p, const Indices& idx, Tensor& out,
                const OpContext& ctx) {
  if (out.ElementCount() == 0) return;
  const Temporary dense(data.Contiguous(ctx.allocator), data);
  Tensor rows = *out.TryReshape({p.outer, idx.size(), p.inner});
  ctx.kernels.GatherRows(*dense->TryReshape({p.outer, p.extent, p.inner}),
                         *idx.dense().TryReshape({idx.size()}), rows);
}

// grad[o, idx[j], :] += g[o, j, :] in row-major order of (o, j), skipping index `skip`: the
// same sum, in the same order, whatever the kernel set. A new tensor of `shape`.
Tensor ScatterAdd(const Shape& shape, const AxisSplit& p, const Indices& idx, int64_t skip,
                  const Tensor& g, const OpContext& ctx) {
  Tensor grad = internal::NewFloat(shape, ctx, /*zero=*/true);
  if (g.ElementCount() == 0) return grad;
  const Temporary dense(g.Contiguous(ctx.allocator), g);
  const float* src = dense->Data<float>().data();
  float* dst = grad.MutableData<float>().data();
  for (int64_t o = 0; o < p.outer; ++o) {
    float* to = dst + o * p.extent * p.inner;
    for (int64_t j = 0; j < idx.size(); ++j) {
      const int64_t i = idx[j];
      if (i != skip) {
        float* row = to + i * p.inner;
        for (int64_t k = 0; k < p.inner; ++k) row[k] += src[k];
      }
      src += p.inner;
    }
  }
  return grad;
}

// Ints: {skip id or -1}.
void EmbeddingBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                       std::span<Tensor> grads) {
  const Shape& table = r.InputShape(0);
  const Indices idx(r.Saved(0), table[0], false, ctx);
  grads[0] = ScatterAdd(table, SplitAt(table, 0), idx, r.ints()[0], g, ctx);
}

// Ints: {axis}.
void GatherBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  const Shape& data = r.InputShape(0);
  const int axis = static_cast<int>(r.ints()[0]);
  const AxisSplit p = SplitAt(data, axis);
  const Indices idx(r.Saved(0), p.extent, true, ctx);
  grads[0] = ScatterAdd(data, p, idx, -1, g, ctx);
}

// Ints: {axis}; each input's gradient is its part of g along the axis.
void ConcatBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  const int axis = static_cast<int>(r.ints()[0]);
  int64_t at = 0;
  for (size_t i = 0; i < r.inputs().size(); ++i) {
    const Shape& s = r.InputShape(static_cast<int>(i));
    if (internal::Wants(r, static_cast<int>(i))) {
      grads[i] = internal::NewFloat(s, ctx);
      grads[i].CopyFrom(g.Slice(axis, at, at + s[axis], 1));
    }
    at += s[axis];
  }
}

}  // namespace

Tensor Embedding(const Tensor& table, const Tensor& indices, std::optional<int64_t> skip_id,
                 const OpContext& ctx) {
  internal::CheckFloat("Embedding", "table", table);
  CheckIndices("Embedding", indices);
  if (table.rank() != 2) {
    throw TensorShapeException("Embedding: input table must be (V, D), got " + table.Describe());
  }
  const int64_t rows = table.shape()[0];
  if (skip_id && (*skip_id < 0 || *skip_id >= rows)) {
    throw TensorException("Embedding: skip id " + std::to_string(*skip_id) +
                          " is not a row of the table (0 to " + std::to_string(rows - 1) +
                          "); for PyTorch's negative padding_idx pass V + padding_idx");
  }
  const Indices idx(indices, rows, false, ctx);
  idx.Check("Embedding", -1);
  Tensor out =
      internal::NewFloat(GatheredShape("Embedding", table.shape(), 0, indices.shape()), ctx);
  CopySlices(table, SplitAt(table.shape(), 0), idx, out, ctx);
  if (!ShouldRecord({&table})) return out;
  auto record = internal::NewRecord(OpKind::kEmbedding, &EmbeddingBackward, {&table, &indices});
  record->Save(0, indices);
  record->SetInts({skip_id.value_or(-1)});
  return out.WithAutogradNode(std::move(record));
}

Tensor Gather(const Tensor& data, const Tensor& indices, int axis, const OpContext& ctx) {
  internal::CheckFloat("Gather", "data", data);
  CheckIndices("Gather", indices);
  axis = internal::NormalizeAxis("Gather", axis, data.rank());
  const AxisSplit p = SplitAt(data.shape(), axis);
  const Indices idx(indices, p.extent, true, ctx);
  idx.Check("Gather", axis);
  Tensor out =
      internal::NewFloat(GatheredShape("Gather", data.shape(), axis, indices.shape()), ctx);
  CopySlices(data, p, idx, out, ctx);
  if (!ShouldRecord({&data})) return out;
  auto record = internal::NewRecord(OpKind::kGather, &GatherBackward, {&data, &indices});
  record->Save(0, indices);
  record->SetInts({axis});
  return out.WithAutogradNode(std::move(record));
}

Tensor Concat(std::span<const Tensor> inputs, int axis, const OpContext& ctx) {
  if (inputs.empty()) throw TensorException("Concat: give at least one input");
  for (size_t i = 0; i < inputs.size(); ++i) {
    internal::CheckFloat("Concat", "inputs[" + std::to_string(i) + "]", inputs[i]);
  }
  const Shape& first = inputs[0].shape();
  axis = internal::NormalizeAxis("Concat", axis, first.rank());
  int64_t total = 0;
  bool record = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& s = inputs[i].shape();
    bool same = s.rank() == first.rank();
    for (int d = 0; same && d < s.rank(); ++d) same = d == axis || s[d] == first[d];
    if (!same) {
      throw TensorShapeException("Concat: inputs[" + std::to_string(i) + "] " + s.ToString() +
                                 " does not match inputs[0] " + first.ToString() +
                                 " outside axis " + std::to_string(axis) +
                                 ": all inputs need the same rank and extents but along the axis");
    }
    total += s[axis];
    record = record || inputs[i].requires_grad();
  }
  DimVector<int64_t> extents;
  for (int d = 0; d < first.rank(); ++d) extents.push_back(d == axis ? total : first[d]);
  Tensor out = internal::NewFloat(Shape(extents.span()), ctx);
  int64_t at = 0;
  for (const Tensor& x : inputs) {
    const int64_t n = x.shape()[axis];
    if (n > 0) out.Slice(axis, at, at + n, 1).CopyFrom(x);
    at += n;
  }
  if (!record || !GradMode::IsEnabled()) return out;
  auto r = std::make_shared<BackwardRecord>(OpKind::kConcat, &ConcatBackward);
  for (const Tensor& x : inputs) r->AddInput(x);
  r->SetInts({axis});
  return out.WithAutogradNode(std::move(r));
}

Tensor Split(const Tensor& x, int axis, std::span<const int64_t> split, int64_t num_outputs,
             int64_t index, const OpContext& ctx) {
  internal::CheckFloat("Split", "x", x);
  axis = internal::NormalizeAxis("Split", axis, x.rank());
  const int64_t n = x.shape()[axis];
  const int64_t pieces = split.empty() ? num_outputs : static_cast<int64_t>(split.size());
  if (split.empty() && num_outputs < 1) {
    throw TensorException(
        "Split: give the piece sizes (split) or a number of pieces "
        "(num_outputs >= 1), got num_outputs " +
        std::to_string(num_outputs));
  }
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0 || s > n) {
      throw TensorException("Split: piece sizes must be from 0 to the axis' extent " +
                            std::to_string(n) + ", got " + std::to_string(s));
    }
    sum += s;  // at most 2^31 per piece: no overflow
  }
  if (!split.empty() && sum != n) {
    throw TensorShapeException("Split: the piece sizes add up to " + std::to_string(sum) +
                               " but axis " + std::to_string(axis) + " of " + x.Describe() +
                               " has extent " + std::to_string(n));
  }
  if (index < 0 || index >= pieces) {
    throw TensorException("Split: index " + std::to_string(index) + " is not a piece (0 to " +
                          std::to_string(pieces - 1) + ")");
  }
  int64_t start = 0, size = 0;
  if (split.empty()) {  // ONNX: ceil(n / num_outputs) each, the last one shorter
    const int64_t each = n / num_outputs + (n % num_outputs != 0);  // ceil, no overflow
    start = std::min(n, index * each);  // each is 1 or at most n: no overflow
    size = std::min(each, n - start);
  } else {
    for (int64_t i = 0; i < index; ++i) start += split[static_cast<size_t>(i)];
    size = split[static_cast<size_t>(index)];
  }
  return Slice(x, axis, start, start + size, 1, ctx);
}

}  // namespace onemodel::ops
