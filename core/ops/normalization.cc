#include "core/ops/normalization.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/elementwise.h"
#include "core/ops/internal/op_utils.h"
#include "core/ops/reduce.h"
#include "core/shape/dim_vector.h"

namespace onemodel::ops {
namespace {

using internal::Temporary;

// A contiguous tensor's first element.
const float* At(const Tensor& t) { return t.Data<float>().data(); }

// What a normalization record keeps in Ints, in this order, then the axes its scale and bias
// gradients sum over.
enum Field {
  kHasScale,
  kHasBias,
  kCenter,
  kFixedStats,
  kGroups,
  kBlocks,
  kBlock,
  kGroupStride,
  kBlockStride,
  kPerGroup,
  kAxes
};

NormGroups LayoutOf(const std::vector<int64_t>& v) {
  return {v[kGroups], v[kBlocks], v[kBlock], v[kGroupStride], v[kBlockStride], v[kPerGroup] != 0};
}

// t summed over `axes`; t itself when there are none (LayerNorm over every axis).
Tensor SumOver(const Tensor& t, const std::vector<int>& axes, const OpContext& ctx) {
  return axes.empty() ? t : Sum(t, axes, false, ctx);
}

// dx by the kernels; d/dscale = sum(g * xhat) and d/dbias = sum(g) over the record's axes.
void NormBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                  std::span<Tensor> grads) {
  const std::vector<int64_t>& v = r.ints();
  const Tensor& xhat = r.Owned(0);
  const bool has_scale = v[kHasScale] != 0;
  if (internal::Wants(r, 0)) {
    Temporary gc(g.Contiguous(ctx.allocator), g);
    const Tensor* scale = has_scale ? &r.Saved(0) : nullptr;
    Temporary sc(scale ? scale->Contiguous(ctx.allocator) : g, scale ? *scale : g);
    grads[0] = internal::NewFloat(r.InputShape(0), ctx);
    ctx.kernels.NormalizeBackward({.layout = LayoutOf(v),
                                   .center = v[kCenter] != 0,
                                   .fixed_stats = v[kFixedStats] != 0,
                                   .xhat = At(xhat),
                                   .rstd = At(r.Owned(1)),
                                   .scale = scale ? At(*sc) : nullptr,
                                   .g = At(*gc),
                                   .dx = grads[0].MutableData<float>().data()});
  }
  const std::vector<int> axes(v.begin() + kAxes, v.end());
  if (has_scale && internal::Wants(r, 1)) {
    Tensor product = Binary(BinaryOp::kMul, g, xhat, ctx);
    grads[1] = SumOver(product, axes, ctx);
    if (grads[1].buffer() != product.buffer()) product.Dispose();
  }
  const int bias_input = has_scale ? 2 : 1;
  if (v[kHasBias] && internal::Wants(r, bias_input)) {
    grads[bias_input] = SumOver(g, axes, ctx);
    if (grads[bias_input].buffer() == g.buffer()) {  // a gradient is never grad_output itself
      Tensor copy = internal::NewFloat(g.shape(), ctx);
      copy.CopyFrom(g);
      grads[bias_input] = copy;
    }
  }
}

// The forward shared by the three ops, after their checks: y by the kernels, and the record
// when one of x, scale and bias wants gradients.
struct Normalization {
  OpKind kind = OpKind::kLayerNorm;
  NormGroups layout{};
  bool center = true;
  float eps = 0;
  const float* mean = nullptr;  // given statistics, else the batch's
  const float* var = nullptr;
  float* running_mean = nullptr;  // updated from the batch's statistics
  float* running_var = nullptr;
  float momentum = 0;
  DimVector<int> axes{};  // what the scale and bias gradients sum over
};

Tensor Normalize(const Normalization& n, const Tensor& x, const Tensor* scale, const Tensor* bias,
                 const OpContext& ctx) {
  Tensor out = internal::NewFloat(x.shape(), ctx);
  const bool record = ShouldRecord({&x, scale ? scale : &x, bias ? bias : &x});
  Tensor xhat, rstd;
  if (record) {
    xhat = internal::NewFloat(x.shape(), ctx);
    rstd = internal::NewFloat(Shape{n.layout.groups}, ctx);
  }
  {
    Temporary xc(x.Contiguous(ctx.allocator), x);
    Temporary sc(scale ? scale->Contiguous(ctx.allocator) : x, scale ? *scale : x);
    Temporary bc(bias ? bias->Contiguous(ctx.allocator) : x, bias ? *bias : x);
    ctx.kernels.Normalize({.layout = n.layout,
                           .center = n.center,
                           .eps = n.eps,
                           .x = At(*xc),
                           .scale = scale ? At(*sc) : nullptr,
                           .bias = bias ? At(*bc) : nullptr,
                           .mean = n.mean,
                           .var = n.var,
                           .y = out.MutableData<float>().data(),
                           .xhat = record ? xhat.MutableData<float>().data() : nullptr,
                           .rstd = record ? rstd.MutableData<float>().data() : nullptr,
                           .running_mean = n.running_mean,
                           .running_var = n.running_var,
                           .momentum = n.momentum});
  }
  if (!record) return out;
  auto r = internal::NewRecord(n.kind, &NormBackward, {&x});
  if (scale) r->AddInput(*scale);
  if (bias) r->AddInput(*bias);
  r->Own(xhat);
  r->Own(rstd);
  if (scale) r->Save(0, *scale);
  const NormGroups& l = n.layout;
  std::vector<int64_t> ints{scale != nullptr, bias != nullptr,   n.center, n.mean != nullptr,
                            l.groups,         l.blocks,          l.block,  l.group_stride,
                            l.block_stride,   l.affine_per_group};
  ints.insert(ints.end(), n.axes.span().begin(), n.axes.span().end());
  r->SetInts(std::move(ints));
  return out.WithAutogradNode(std::move(r));
}

void CheckEps(std::string_view op, float eps) {
  if (!(eps >= 0)) {
    throw TensorException(std::string(op) + ": epsilon is " + std::to_string(eps) +
                          "; it must be >= 0 (1e-5 is the usual value)");
  }
}

// Throws unless `t` (when given) is a FLOAT tensor of `shape`; `what` says what that shape is.
void CheckParam(std::string_view op, std::string_view name, const Tensor* t, const Shape& shape,
                std::string_view what) {
  if (!t) return;
  internal::CheckFloat(op, name, *t);
  if (!(t->shape() == shape)) {
    throw TensorShapeException(std::string(op) + ": " + std::string(name) + " is " +
                               t->shape().ToString() + " but must be " + shape.ToString() + " (" +
                               std::string(what) + ")");
  }
}

// LayerNorm and RMSNorm: rows of the axes [axis, rank).
Tensor LastAxesNorm(OpKind kind, const Tensor& x, const Tensor* scale, const Tensor* bias, int axis,
                    float eps, const OpContext& ctx) {
  const std::string_view name = OpKindName(kind);
  internal::CheckFloat(name, "x", x);
  if (x.rank() == 0) {
    throw TensorShapeException(std::string(name) +
                               ": x is a scalar; it normalizes over its last axes, so give it at "
                               "least one axis (Reshape to [1])");
  }
  const int a = internal::NormalizeAxis(name, axis, x.rank());
  CheckEps(name, eps);
  const Shape normalized(x.shape().extents().subspan(static_cast<size_t>(a)));
  const std::string_view what = "x.shape[axis:], the normalized axes";
  CheckParam(name, "scale", scale, normalized, what);
  CheckParam(name, "bias", bias, normalized, what);
  const int64_t block = normalized.ElementCount();
  Normalization n{.kind = kind, .center = kind == OpKind::kLayerNorm, .eps = eps};
  n.layout = {.groups = block ? x.shape().ElementCount() / block : 0,
              .block = block,
              .group_stride = block};
  for (int d = 0; d < a; ++d) n.axes.push_back(d);
  return Normalize(n, x, scale, bias, ctx);
}

// Throws unless the running statistic is a FLOAT (C) tensor, contiguous when it is written.
void CheckRunning(std::string_view name, const Tensor& t, int64_t c, bool written) {
  CheckParam("BatchNorm2d", name, &t, Shape{c}, "one per channel");
  if (written && !t.IsContiguous()) {
    throw TensorLayoutException("BatchNorm2d: " + std::string(name) + " is a strided view (" +
                                t.Describe() +
                                ") and training updates it in place; keep it as a contiguous "
                                "tensor of its own");
  }
}

// Throws when training's in-place writes to running_mean or running_var could change what the
// call reads: each must share no memory with the other or with x, scale and bias.
void CheckRunningUnshared(const Tensor& running_mean, const Tensor& running_var, const Tensor& x,
                          const Tensor* scale, const Tensor* bias) {
  if (internal::SharesMemory(running_mean, running_var)) {
    throw TensorException(
        "BatchNorm2d: running_mean and running_var share memory and training updates both in "
        "place; give each a buffer of its own");
  }
  const std::pair<const char*, const Tensor*> read[] = {
      {"x", &x}, {"scale", scale}, {"bias", bias}};
  for (const auto& [written_name, written] :
       {std::pair{"running_mean", &running_mean}, std::pair{"running_var", &running_var}}) {
    for (const auto& [name, t] : read) {
      if (t && internal::SharesMemory(*written, *t)) {
        throw TensorException("BatchNorm2d: " + std::string(written_name) + " shares memory with " +
                              name +
                              " and training updates it in place while reading them; give the "
                              "running statistics buffers of their own");
      }
    }
  }
}

}  // namespace

Tensor LayerNorm(const Tensor& x, const Tensor* scale, const Tensor* bias, int axis, float eps,
                 const OpContext& ctx) {
  return LastAxesNorm(OpKind::kLayerNorm, x, scale, bias, axis, eps, ctx);
}

Tensor RMSNorm(const Tensor& x, const Tensor* scale, int axis, float eps, const OpContext& ctx) {
  return LastAxesNorm(OpKind::kRMSNorm, x, scale, nullptr, axis, eps, ctx);
}

Tensor BatchNorm2d(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                   const Tensor* scale, const Tensor* bias, const BatchNormParams& p,
                   const OpContext& ctx) {
  internal::CheckFloat("BatchNorm2d", "x", x);
  if (x.rank() != 4) {
    throw TensorShapeException("BatchNorm2d: x must be (N, C, H, W), got " + x.Describe());
  }
  CheckEps("BatchNorm2d", p.eps);
  const int64_t n = x.shape()[0], c = x.shape()[1], hw = x.shape()[2] * x.shape()[3];
  CheckRunning("running_mean", running_mean, c, p.training);
  CheckRunning("running_var", running_var, c, p.training);
  CheckParam("BatchNorm2d", "scale", scale, Shape{c}, "one per channel");
  CheckParam("BatchNorm2d", "bias", bias, Shape{c}, "one per channel");
  if (p.training) CheckRunningUnshared(running_mean, running_var, x, scale, bias);
  if (p.training && !std::isfinite(p.momentum)) {  // NaN or inf would fill the running statistics
    throw TensorException("BatchNorm2d: momentum is " + std::to_string(p.momentum) +
                          "; training needs a finite momentum (0.1 is the usual value)");
  }
  if (p.training && n * hw <= 1) {
    throw TensorShapeException("BatchNorm2d: training needs more than 1 value per channel, x is " +
                               x.shape().ToString() + "; use training = 0 or a larger batch");
  }
  Normalization norm{.kind = OpKind::kBatchNorm2d, .eps = p.eps};
  for (int axis : {0, 2, 3}) norm.axes.push_back(axis);
  norm.layout = {.groups = c,
                 .blocks = n,
                 .block = hw,
                 .group_stride = hw,
                 .block_stride = c * hw,
                 .affine_per_group = true};
  if (!p.training) {
    Temporary mean(running_mean.Contiguous(ctx.allocator), running_mean);
    Temporary var(running_var.Contiguous(ctx.allocator), running_var);
    norm.mean = At(*mean);
    norm.var = At(*var);
    return Normalize(norm, x, scale, bias, ctx);
  }
  // Written last, after every check: the versions bump once each.
  Tensor rm = running_mean, rv = running_var;
  norm.running_mean = rm.MutableData<float>().data();
  norm.running_var = rv.MutableData<float>().data();
  norm.momentum = p.momentum;
  return Normalize(norm, x, scale, bias, ctx);
}

}  // namespace onemodel::ops
