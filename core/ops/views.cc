#include "core/ops/views.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/op_utils.h"
#include "core/ops/reduce.h"

namespace onemodel::ops {
namespace {

std::vector<int64_t> ExtentsOf(const Shape& s) { return {s.extents().begin(), s.extents().end()}; }

// A fresh contiguous copy of g viewed with the input's shape (Reshape, Squeeze, Unsqueeze).
void ReshapeBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  Tensor copy = internal::NewFloat(g.shape(), ctx);
  copy.CopyFrom(g);
  grads[0] = *copy.TryReshape(ExtentsOf(r.InputShape(0)));
}

void PermuteBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  std::vector<int> inverse(r.ints().size());
  for (size_t i = 0; i < inverse.size(); ++i) {
    inverse[static_cast<size_t>(r.ints()[i])] = static_cast<int>(i);
  }
  grads[0] = internal::NewFloat(r.InputShape(0), ctx);
  grads[0].CopyFrom(g.Permute(inverse));
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
              std::vector<int64_t> ints = {}) {
  if (!ShouldRecord({&x})) return view;
  auto record = internal::NewRecord(kind, backward, {&x});
  record->SetInts(std::move(ints));
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
  std::vector<int64_t> ints;
  for (int p : perm) ints.push_back(p < 0 ? p + x.rank() : p);
  return Record(x, view, OpKind::kPermute, &PermuteBackward, std::move(ints));
}

Tensor Transpose(const Tensor& x, int d0, int d1, const OpContext& ctx) {
  std::vector<int> perm(static_cast<size_t>(x.rank()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(internal::NormalizeAxis("Transpose", d0, x.rank()))],
            perm[static_cast<size_t>(internal::NormalizeAxis("Transpose", d1, x.rank()))]);
  return Permute(x, perm, ctx);
}

Tensor Slice(const Tensor& x, int dim, int64_t start, int64_t stop, int64_t step,
             const OpContext&) {
  internal::CheckFloat("Slice", "x", x);
  return Record(x, x.Slice(dim, start, stop, step), OpKind::kSlice, &SliceBackward,
                {dim, start, stop, step});
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
    std::vector<int> sorted;
    for (int d : dims) sorted.push_back(internal::NormalizeAxis("Squeeze", d, x.rank()));
    std::sort(sorted.rbegin(), sorted.rend());
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
