#include "core/ops/activation.h"

#include <cmath>
#include <initializer_list>

#include "core/autograd/backward_record.h"
#include "core/kernels/scalar_ops.h"
#include "core/ops/elementwise.h"
#include "core/ops/internal/map.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops {
namespace {

using internal::Map;

void ClipBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                  std::span<Tensor> grads) {
  const float lo = r.floats()[0], hi = r.floats()[1];
  grads[0] = Map(
      g.shape(), ctx, [lo, hi](float x, float v) { return v >= lo && v <= hi ? x : 0.0f; }, g,
      r.Saved(0));
}

void LeakyReluBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                       std::span<Tensor> grads) {
  const float alpha = r.floats()[0];
  grads[0] = Map(
      g.shape(), ctx, [alpha](float x, float v) { return v > 0.0f ? x : x * alpha; }, g,
      r.Saved(0));
}

// The erf form's derivative, as PyTorch's GeluBackward: Phi(x) + x phi(x).
void GeluErfBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  grads[0] = Map(
      g.shape(), ctx,
      [](float x, float v) {
        constexpr float kAlpha = static_cast<float>(0.5 * M_2_SQRTPI * M_SQRT1_2);  // 1/sqrt(2pi)
        const float cdf = 0.5f * (1.0f + std::erf(v * scalar::kSqrtHalf));
        const float pdf = std::exp(-0.5f * v * v) * kAlpha;
        return x * (cdf + v * pdf);
      },
      g, r.Saved(0));
}

// Records `kind` over x (saved) with `floats`, when x requires gradients.
Tensor RecordOnX(Tensor out, const Tensor& x, OpKind kind, BackwardFn backward,
                 std::initializer_list<float> floats) {
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(kind, backward, {&x});
  record->Save(0, x);
  record->SetFloats(floats);
  return out.WithAutogradNode(std::move(record));
}

}  // namespace

Tensor Clip(const Tensor& x, float min, float max, const OpContext& ctx) {
  internal::CheckFloat("Clip", "x", x);
  Tensor out = Map(
      x.shape(), ctx, [min, max](float v) { return scalar::Min(scalar::Max(v, min), max); }, x);
  return RecordOnX(std::move(out), x, OpKind::kClip, &ClipBackward, {min, max});
}

Tensor LeakyRelu(const Tensor& x, float alpha, const OpContext& ctx) {
  internal::CheckFloat("LeakyRelu", "x", x);
  Tensor out = Map(
      x.shape(), ctx, [alpha](float v) { return v > 0.0f ? v : v * alpha; }, x);
  return RecordOnX(std::move(out), x, OpKind::kLeakyRelu, &LeakyReluBackward, {alpha});
}

Tensor Gelu(const Tensor& x, GeluApproximation approximate, const OpContext& ctx) {
  if (approximate == GeluApproximation::kTanh) return Gelu(x, ctx);
  internal::CheckFloat("Gelu", "x", x);
  Tensor out = Map(
      x.shape(), ctx, [](float v) { return v * 0.5f * (1.0f + std::erf(v * scalar::kSqrtHalf)); },
      x);
  return RecordOnX(std::move(out), x, OpKind::kGelu, &GeluErfBackward, {});
}

}  // namespace onemodel::ops
