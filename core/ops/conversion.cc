#include "core/ops/conversion.h"

#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/convert/cast.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops {
namespace {

// Casts a live tensor of any layout into a new contiguous tensor of `dtype`.
Tensor CastRaw(const Tensor& x, DType dtype, const OpContext& ctx) {
  const internal::Temporary src(x.Contiguous(ctx.allocator), x);
  Tensor out = Tensor::Empty(x.shape(), dtype, ctx.allocator);
  if (x.ElementCount() > 0) {
    CastElements(x.dtype(), src->RawData().data(), dtype, out.MutableRawData().data(),
                 x.ElementCount());
  }
  return out;
}

void CastBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                  std::span<Tensor> grads) {
  grads[0] = CastRaw(g, r.inputs()[0].dtype, ctx);
}

// Contiguous and ToLayout: the gradient of the logical tensor is the output gradient.
void IdentityBackward(const BackwardRecord&, const Tensor& g, const OpContext& ctx,
                      std::span<Tensor> grads) {
  grads[0] = Tensor::Empty(g.shape(), g.dtype(), ctx.allocator);
  grads[0].CopyFrom(g);
}

Tensor Record(const Tensor& x, const Tensor& out, OpKind kind, BackwardFn backward) {
  if (!ShouldRecord({&x})) return out;
  return out.WithAutogradNode(internal::NewRecord(kind, backward, {&x}));
}

}  // namespace

Tensor Cast(const Tensor& x, DType dtype, const OpContext& ctx) {
  if (x.is_null()) throw TensorException("Cast: input x is a null handle");
  if (!IsSupported(dtype)) FromOnnx(static_cast<int32_t>(dtype));  // throws, naming the type
  if (x.block_size()) {
    throw TensorLayoutException("Cast: input x is blocked (" + x.Describe() +
                                "); convert it with ToLayout(NCHW) first");
  }
  Tensor out = CastRaw(x, dtype, ctx);
  if (!IsFloatingPoint(x.dtype()) || !IsFloatingPoint(dtype)) return out;
  return Record(x, out, OpKind::kCast, &CastBackward);
}

Tensor Contiguous(const Tensor& x, const OpContext& ctx) {
  if (x.is_null()) throw TensorException("Contiguous: input x is a null handle");
  return Record(x, x.Contiguous(ctx.allocator).Detach(), OpKind::kContiguous, &IdentityBackward);
}

Tensor Copy(const Tensor& x, const OpContext& ctx) {
  if (x.is_null()) throw TensorException("Copy: input x is a null handle");
  Tensor out = Tensor::Empty(x.shape(), x.dtype(), ctx.allocator);
  out.CopyFrom(x.Detach());
  return Record(x, out, OpKind::kCopy, &IdentityBackward);
}

Tensor ToLayout(const Tensor& x, Layout layout, const OpContext& ctx, int32_t block) {
  if (x.is_null()) throw TensorException("ToLayout: input x is a null handle");
  if (IsBlocked(layout) && ShouldRecord({&x})) {
    throw TensorLayoutException("ToLayout(" + std::string(LayoutName(layout)) + ") of " +
                                x.Describe() +
                                ", which requires gradients: blocked tensors are kernel-internal "
                                "and cannot require gradients; convert under NoGrad or a "
                                "Detach()ed handle");
  }
  return Record(x, x.ToLayout(layout, ctx.allocator, block).Detach(), OpKind::kToLayout,
                &IdentityBackward);
}

}  // namespace onemodel::ops
