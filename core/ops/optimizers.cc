#include "core/ops/optimizers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/common/exceptions.h"
#include "core/kernels/adamw.h"
#include "core/ops/internal/op_utils.h"

// This file is compiled with -fno-math-errno and the dynamic vector cost model
// (core/ops/CMakeLists.txt), so each update loop below is one vectorized pass.

namespace onemodel::ops {
namespace {

// One tensor of a call, for the checks: which list and index it came from, and whether the
// call writes it.
struct Operand {
  const Tensor* tensor;
  std::string_view list;
  size_t index;
  bool written;
  std::string Name() const { return std::string(list) + "[" + std::to_string(index) + "]"; }
};

// Throws unless every operand is a live plain FLOAT tensor of its parameter's shape, every
// written one is contiguous, and no written one shares memory with another operand.
void CheckOperands(std::string_view op, const std::vector<Operand>& operands,
                   std::span<const Tensor> params) {
  for (const Operand& o : operands) {
    internal::CheckFloat(op, o.Name(), *o.tensor);
    const Tensor& param = params[o.index];
    if (!(o.tensor->shape() == param.shape())) {
      throw TensorShapeException(std::string(op) + ": " + o.Name() + " is " +
                                 o.tensor->shape().ToString() + " but params[" +
                                 std::to_string(o.index) + "] is " + param.shape().ToString() +
                                 "; each list holds one tensor of its parameter's shape");
    }
    if (o.written && !o.tensor->IsContiguous()) {
      throw TensorLayoutException(std::string(op) + ": " + o.Name() + " is a strided view (" +
                                  o.tensor->Describe() +
                                  ") and is written in place; keep parameters and states as "
                                  "contiguous tensors of their own");
    }
  }
  struct Extent {
    const Buffer* buffer;
    int64_t lo, hi;
    const Operand* operand;
  };
  std::vector<Extent> extents;
  for (const Operand& o : operands) {
    const auto [lo, hi] = internal::ByteRange(*o.tensor);
    if (lo < hi) extents.push_back({o.tensor->buffer(), lo, hi, &o});
  }
  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
    return a.buffer != b.buffer ? std::less<>()(a.buffer, b.buffer) : a.lo < b.lo;
  });
  // Sweep each buffer's ranges in order, keeping the furthest-reaching one seen so far (any,
  // and written): a range starting before it ends overlaps it.
  const Extent* reach_any = nullptr;
  const Extent* reach_written = nullptr;
  for (const Extent& e : extents) {
    if (reach_any && reach_any->buffer != e.buffer) reach_any = reach_written = nullptr;
    const Extent* clash = nullptr;
    if (reach_written && e.lo < reach_written->hi) clash = reach_written;
    if (!clash && e.operand->written && reach_any && e.lo < reach_any->hi) clash = reach_any;
    if (clash) {
      throw TensorException(std::string(op) + ": " + clash->operand->Name() + " and " +
                            e.operand->Name() +
                            " share memory, and the update writes one of them in place; give "
                            "each parameter, gradient and state a buffer of its own");
    }
    if (!reach_any || e.hi > reach_any->hi) reach_any = &e;
    if (e.operand->written && (!reach_written || e.hi > reach_written->hi)) reach_written = &e;
  }
}

// Adds `list` to `operands` after checking it holds one tensor per parameter.
void AddList(std::string_view op, std::string_view list, std::span<const Tensor> tensors,
             size_t count, bool written, std::vector<Operand>& operands) {
  if (tensors.size() != count) {
    throw TensorException(std::string(op) + ": " + std::string(list) + " has " +
                          std::to_string(tensors.size()) + " tensors but there are " +
                          std::to_string(count) + " params; give one per parameter");
  }
  for (size_t i = 0; i < count; ++i) operands.push_back({&tensors[i], list, i, written});
}

// The step counter's value; throws unless it is a live one-element INT64 tensor.
int64_t StepValue(std::string_view op, const Tensor& step) {
  if (step.is_null() || step.dtype() != DType::kInt64 || step.ElementCount() != 1 ||
      step.block_size()) {
    throw TensorTypeException(std::string(op) +
                              ": step must be a one-element INT64 tensor (the "
                              "count of updates so far, 0 at first), got " +
                              (step.is_null() ? std::string("a null handle") : step.Describe()));
  }
  const int64_t value = step.Data<int64_t>()[0];
  if (value < 0 || value == std::numeric_limits<int64_t>::max()) {
    throw TensorException(std::string(op) + ": step holds " + std::to_string(value) +
                          "; it counts the updates so far and starts at 0");
  }
  return value;
}

// Increments the step counter and returns its new value as a new INT64 scalar.
Tensor AdvanceStep(Tensor step, int64_t before, const OpContext& ctx) {
  Tensor out = Tensor::Empty(Shape{}, DType::kInt64, ctx.allocator);
  step.MutableData<int64_t>()[0] = before + 1;
  out.MutableData<int64_t>()[0] = before + 1;
  return out;
}

// Throws unless `ok`, naming the hyperparameter as torch does.
void Require(bool ok, std::string_view op, const std::string& what) {
  if (!ok) throw TensorException(std::string(op) + ": " + what);
}
std::string Bad(std::string_view name, float value, std::string_view rule) {
  return "invalid " + std::string(name) + " " + std::to_string(value) + " (" + std::string(rule) +
         ")";
}

// A gradient's elements in row-major order: the gradient itself when contiguous, else a
// temporary copy.
internal::Temporary Dense(const Tensor& g, const OpContext& ctx) {
  return internal::Temporary(g.Contiguous(ctx.allocator), g);
}

// The SGD update of one parameter; `first` sets the momentum buffer to the gradient.
template <bool kMomentum, bool kNesterov>
void SgdLoop(float* __restrict p, const float* __restrict g, float* __restrict buf, size_t n,
             const SgdOptions& o, bool first) {
  const float wd = o.weight_decay, m = o.momentum, neg_lr = -o.lr;
  const float keep = static_cast<float>(1.0 - static_cast<double>(o.dampening));
  for (size_t i = 0; i < n; ++i) {
    float d = g[i] + wd * p[i];
    if constexpr (kMomentum) {
      const float old = buf[i];
      const float b = first ? d : old * m + keep * d;
      buf[i] = b;
      d = kNesterov ? d + m * b : b;
    }
    p[i] = p[i] + neg_lr * d;
  }
}

}  // namespace

void CheckSgdOptions(const SgdOptions& o) {
  constexpr std::string_view op = "SGD";
  Require(o.lr >= 0, op, Bad("lr", o.lr, "must be >= 0"));
  Require(o.momentum >= 0, op, Bad("momentum", o.momentum, "must be >= 0"));
  Require(std::isfinite(o.dampening), op, Bad("dampening", o.dampening, "must be finite"));
  Require(o.weight_decay >= 0, op, Bad("weight_decay", o.weight_decay, "must be >= 0"));
  Require(!o.nesterov || (o.momentum > 0 && o.dampening == 0), op,
          "nesterov momentum requires momentum > 0 and dampening 0");
}

Tensor SgdStep(std::span<const Tensor> params, std::span<const Tensor> grads,
               std::span<const Tensor> momentum_buffers, const Tensor& step, const SgdOptions& o,
               const OpContext& ctx) {
  constexpr std::string_view op = "SGD";
  CheckSgdOptions(o);
  const bool momentum = o.momentum != 0;
  std::vector<Operand> operands;
  AddList(op, "params", params, params.size(), true, operands);
  AddList(op, "grads", grads, params.size(), false, operands);
  AddList(op, "momentum_buffers", momentum_buffers, momentum ? params.size() : 0, true, operands);
  CheckOperands(op, operands, params);
  const int64_t before = StepValue(op, step);

  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i];
    const internal::Temporary g = Dense(grads[i], ctx);
    float* buf = nullptr;
    if (momentum) {
      Tensor b = momentum_buffers[i];
      buf = b.MutableData<float>().data();
    }
    const std::span<float> pd = p.MutableData<float>();
    const float* gd = g->Data<float>().data();
    const bool first = before == 0;
    if (!momentum) SgdLoop<false, false>(pd.data(), gd, buf, pd.size(), o, first);
    if (momentum && !o.nesterov) SgdLoop<true, false>(pd.data(), gd, buf, pd.size(), o, first);
    if (momentum && o.nesterov) SgdLoop<true, true>(pd.data(), gd, buf, pd.size(), o, first);
  }
  return AdvanceStep(step, before, ctx);
}

Tensor AdamWStep(std::span<const Tensor> params, std::span<const Tensor> grads,
                 std::span<const Tensor> exp_avgs, std::span<const Tensor> exp_avg_sqs,
                 std::span<const Tensor> max_exp_avg_sqs, const Tensor& step, const AdamWOptions& o,
                 const OpContext& ctx) {
  constexpr std::string_view op = "AdamW";
  Require(o.lr >= 0, op, Bad("lr", o.lr, "must be >= 0"));
  Require(o.eps >= 0, op, Bad("eps", o.eps, "must be >= 0"));
  Require(o.beta1 >= 0 && o.beta1 < 1, op, Bad("beta1", o.beta1, "must be in [0, 1)"));
  Require(o.beta2 >= 0 && o.beta2 < 1, op, Bad("beta2", o.beta2, "must be in [0, 1)"));
  Require(o.weight_decay >= 0, op, Bad("weight_decay", o.weight_decay, "must be >= 0"));
  std::vector<Operand> operands;
  AddList(op, "params", params, params.size(), true, operands);
  AddList(op, "grads", grads, params.size(), false, operands);
  AddList(op, "exp_avgs", exp_avgs, params.size(), true, operands);
  AddList(op, "exp_avg_sqs", exp_avg_sqs, params.size(), true, operands);
  AddList(op, "max_exp_avg_sqs", max_exp_avg_sqs, o.amsgrad ? params.size() : 0, true, operands);
  CheckOperands(op, operands, params);
  const int64_t before = StepValue(op, step);

  const double t = static_cast<double>(before + 1);
  const double lr = o.lr, b1 = o.beta1, b2 = o.beta2;
  const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
  const AdamWScalars s{static_cast<float>(1 - lr * o.weight_decay),
                       o.beta1,
                       static_cast<float>(1 - b1),
                       o.beta2,
                       static_cast<float>(1 - b2),
                       static_cast<float>(-(lr / bc1)),
                       static_cast<float>(std::sqrt(bc2)),
                       o.eps};
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], m = exp_avgs[i], v = exp_avg_sqs[i];
    const internal::Temporary g = Dense(grads[i], ctx);
    const std::span<float> pd = p.MutableData<float>();
    float* md = m.MutableData<float>().data();
    float* vd = v.MutableData<float>().data();
    const float* gd = g->Data<float>().data();
    float* vmax = nullptr;
    if (o.amsgrad) {
      Tensor t = max_exp_avg_sqs[i];
      vmax = t.MutableData<float>().data();
    }
    AdamWUpdate(ThreadPool::Shared(), s, static_cast<int64_t>(pd.size()), pd.data(), gd, md, vd,
                vmax);
  }
  return AdvanceStep(step, before, ctx);
}

Tensor ClipGradNorm(std::span<const Tensor> grads, float max_norm, float norm_type,
                    bool error_if_nonfinite, const OpContext& ctx) {
  constexpr std::string_view op = "ClipGradNorm";
  Require(norm_type > 0, op, Bad("norm_type", norm_type, "must be > 0, or inf for the max norm"));
  std::vector<Operand> operands;
  AddList(op, "grads", grads, grads.size(), true, operands);
  CheckOperands(op, operands, grads);

  const bool max = std::isinf(norm_type);
  double sum = 0;  // sum of |g|^p, or the largest |g| (NaN propagates)
  for (const Tensor& t : grads) {
    for (const float x : t.Data<float>()) {
      const double a = std::fabs(static_cast<double>(x));
      if (max) {
        if (a > sum || std::isnan(a)) sum = a;  // once NaN, no later value replaces it
      } else {
        sum += norm_type == 2 ? a * a : std::pow(a, static_cast<double>(norm_type));
      }
    }
  }
  const float total = static_cast<float>(
      max ? sum : (norm_type == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / norm_type)));
  if (error_if_nonfinite && !std::isfinite(total)) {
    throw TensorException("ClipGradNorm: the total norm of the gradients is " +
                          std::to_string(total) +
                          ", so they cannot be clipped; set error_if_nonfinite=0 to scale them "
                          "by it anyway");
  }
  const float coef = max_norm / (total + 1e-6f);
  if (!(coef >= 1.0f)) {
    for (const Tensor& t : grads) {
      Tensor g = t;
      for (float& x : g.MutableData<float>()) x *= coef;
    }
  }
  Tensor out = internal::NewFloat(Shape{}, ctx);
  out.MutableData<float>()[0] = total;
  return out;
}

}  // namespace onemodel::ops
