#include "core/ops/views.h"

#include <algorithm>
#include <functional>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"
#include "core/ops/reduce.h"
#include "core/shape/dim_vector.h"

namespace onemodel::ops {
namespace {

// A fresh contiguous copy of g viewed with the input's shape (Reshape, Squeeze, Unsqueeze).
void ReshapeBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  Tensor copy = internal::NewFloat(g.shape(), ctx);
  copy.CopyFrom(g);
  grads[0] = *copy.TryReshape(DimVector<int64_t>(r.InputShape(0)).span());
}

void PermuteBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  DimVector<int> inverse;
  for (size_t i = 0; i < r.ints().size(); ++i) inverse.push_back(0);
  for (size_t i = 0; i < r.ints().size(); ++i) {
    inverse[static_cast<size_t>(r.ints()[i])] = static_cast<int>(i);
  }
  grads[0] = internal::NewFloat(r.InputShape(0), ctx);
  grads[0].CopyFrom(g.Permute(inverse.span()));
}

void SliceBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                   std::span<Tensor> grads) {
  grads[0] = internal::NewFloat(r.InputShape(0), ctx, /*zero=*/true);
  const auto& p = r.ints();
  grads[0].Slice(static_cast<int>(p[0]), p[1], p[2], p[3]).CopyFrom(g);
}

void ExpandBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  grads[0] = SumToShape(g, r.InputShape(0), ctx);
}

// Attaches a record for a view op, or returns the view as is.
Tensor Record(const Tensor& x, Tensor view, OpKind kind, BackwardFn backward,
              std::span<const int64_t> ints = {}) {
  if (!ShouldRecord({&x})) return view;
  auto record = internal::NewRecord(kind, backward, {&x});
  record->SetInts({ints.begin(), ints.end()});
  return view.WithAutogradNode(std::move(record));
}

}  // namespace

Tensor Reshape(const Tensor& x, std::span<const int64_t> shape, const OpContext& ctx) {
  internal::CheckFloat("Reshape", "x", x);
  return Record(x, x.Reshape(shape, ctx.allocator), OpKind::kReshape, &ReshapeBackward);
}

Tensor Permute(const Tensor& x, std::span<const int> perm, const OpContext&) {
  internal::CheckFloat("Permute", "x", x);
  Tensor view = x.Permute(perm);
  DimVector<int64_t> ints;
  for (int p : perm) ints.push_back(p < 0 ? p + x.rank() : p);
  return Record(x, view, OpKind::kPermute, &PermuteBackward, ints.span());
}

Tensor Transpose(const Tensor& x, int d0, int d1, const OpContext& ctx) {
  DimVector<int> perm;
  for (int d = 0; d < x.rank(); ++d) perm.push_back(d);
  std::swap(perm[static_cast<size_t>(internal::NormalizeAxis("Transpose", d0, x.rank()))],
            perm[static_cast<size_t>(internal::NormalizeAxis("Transpose", d1, x.rank()))]);
  return Permute(x, perm.span(), ctx);
}

Tensor Slice(const Tensor& x, int dim, int64_t start, int64_t stop, int64_t step,
             const OpContext&) {
  internal::CheckFloat("Slice", "x", x);
  const int64_t ints[] = {dim, start, stop, step};
  return Record(x, x.Slice(dim, start, stop, step), OpKind::kSlice, &SliceBackward, ints);
}

Tensor Expand(const Tensor& x, const Shape& shape, const OpContext&) {
  internal::CheckFloat("Expand", "x", x);
  return Record(x, x.Expand(shape), OpKind::kExpand, &ExpandBackward);
}

Tensor Squeeze(const Tensor& x, std::span<const int> dims, const OpContext&) {
  internal::CheckFloat("Squeeze", "x", x);
  Tensor view = x;
  if (dims.empty()) {
    view = x.Squeeze();
  } else {
    if (dims.size() > static_cast<size_t>(x.rank())) {
      throw TensorShapeException("Squeeze: more dimensions given than the tensor has");
    }
    DimVector<int> sorted;
    for (int d : dims) sorted.push_back(internal::NormalizeAxis("Squeeze", d, x.rank()));
    std::sort(sorted.begin(), sorted.end(), std::greater<int>());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      throw TensorShapeException("Squeeze: a dimension is given twice");
    }
    for (int d : sorted) view = view.Squeeze(d);
  }
  return Record(x, view, OpKind::kSqueeze, &ReshapeBackward);
}

Tensor Unsqueeze(const Tensor& x, int dim, const OpContext&) {
  internal::CheckFloat("Unsqueeze", "x", x);
  return Record(x, x.Unsqueeze(dim), OpKind::kUnsqueeze, &ReshapeBackward);
}

}  // namespace onemodel::ops
