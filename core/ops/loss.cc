#include "core/ops/loss.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/cancellation.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/map.h"
#include "core/ops/internal/op_utils.h"

namespace onemodel::ops {
namespace {

// The storage offset of element r (row-major) of t.
int64_t OffsetOf(const Tensor& t, int64_t r) {
  int64_t o = t.offset();
  for (int d = t.rank() - 1; d >= 0; --d) {
    o += (r % t.shape()[d]) * t.strides()[d];
    r /= t.shape()[d];
  }
  return o;
}

// A class-loss input x walked row by row in the target's row-major order: row r is x's
// elements along the class axis (1, or 0 for a rank-1 x) at the index of target element r.
// Reads through any strides and allocates nothing.
class ClassRows {
 public:
  ClassRows(const Tensor& x, const Tensor& target, const Tensor* weight)
      : x_(x.Storage<float>().data()),
        class_axis_(x.rank() == 1 ? 0 : 1),
        classes_(x.shape()[class_axis_]),
        class_stride_(x.strides()[class_axis_]),
        target_(target) {
    for (int d = 0; d < x.rank(); ++d) {
      if (d != class_axis_)
        x_strides_[static_cast<size_t>(d < class_axis_ ? d : d - 1)] = x.strides()[d];
    }
    x_offset_ = x.offset();
    if (weight) {
      weight_ = weight->Storage<float>().data() + weight->offset();
      weight_stride_ = weight->strides()[0];
    }
  }

  int64_t rows() const { return target_.shape().ElementCount(); }
  int64_t classes() const { return classes_; }
  int class_axis() const { return class_axis_; }
  // x's offset of row r's class 0, and row r's target.
  struct Row {
    int64_t x;
    int64_t target;
  };
  Row At(int64_t r) const {
    const int64_t to = OffsetOf(target_, r);
    int64_t xo = x_offset_;
    for (int d = target_.rank() - 1; d >= 0; --d) {
      xo += (r % target_.shape()[d]) * x_strides_[static_cast<size_t>(d)];
      r /= target_.shape()[d];
    }
    const int64_t t = target_.dtype() == DType::kInt64
                          ? target_.Storage<int64_t>()[static_cast<size_t>(to)]
                          : target_.Storage<int32_t>()[static_cast<size_t>(to)];
    return {xo, t};
  }
  // Element c of the row at x offset `base`.
  double X(int64_t base, int64_t c) const { return x_[base + c * class_stride_]; }
  // The weight of class c (1 without weights).
  double Weight(int64_t c) const { return weight_ ? double{weight_[c * weight_stride_]} : 1.0; }

 private:
  const float* x_;
  int class_axis_;
  int64_t classes_, class_stride_, x_offset_ = 0;
  std::array<int64_t, kMaxRank> x_strides_{};
  const Tensor& target_;
  const float* weight_ = nullptr;
  int64_t weight_stride_ = 0;
};

// Checks x (FLOAT, rank >= 1), target (INT64/INT32, x's shape without the class axis),
// weight (FLOAT (C)) and every target (in [0, C) or ignore_index), before anything is written.
void CheckClassInputs(std::string_view op, const Tensor& x, const Tensor& target,
                      const Tensor* weight, int64_t ignore_index) {
  internal::CheckFloat(op, "x", x);
  if (target.is_null()) {
    throw TensorException(std::string(op) + ": input target is a null handle");
  }
  if (target.IsStale()) (void)target.version();  // throws StaleTensorException naming it
  if (target.dtype() != DType::kInt64 && target.dtype() != DType::kInt32) {
    throw TensorTypeException(std::string(op) + ": input target is " + target.Describe() +
                              "; class indices are INT64 (or INT32), so Cast it to INT64 first");
  }
  if (x.rank() == 0) {
    throw TensorShapeException(std::string(op) +
                               ": input x is a scalar; give it the shape (N, C)"
                               " or (N, C, d1, ...) with the classes along axis 1, or (C)");
  }
  const int class_axis = x.rank() == 1 ? 0 : 1;
  std::array<int64_t, kMaxRank> expected{};
  for (int d = 0; d < x.rank(); ++d) {
    if (d != class_axis) expected[static_cast<size_t>(d < class_axis ? d : d - 1)] = x.shape()[d];
  }
  const std::span<const int64_t> want(expected.data(), static_cast<size_t>(x.rank() - 1));
  if (!(target.shape() == Shape(want))) {
    throw TensorShapeException(std::string(op) + ": target has shape " + target.shape().ToString() +
                               " but x " + x.shape().ToString() + " needs " + FormatExtents(want) +
                               " (x's shape without the class axis " + std::to_string(class_axis) +
                               ")");
  }
  const int64_t classes = x.shape()[class_axis];
  if (weight) {
    internal::CheckFloat(op, "weight", *weight);
    if (!(weight->shape() == Shape{classes})) {
      throw TensorShapeException(std::string(op) + ": weight has shape " +
                                 weight->shape().ToString() + " but x has " +
                                 std::to_string(classes) + " classes; give one weight per class");
    }
  }
  const ClassRows rows(x, target, weight);
  ForEachChunk(CurrentCancelToken(), rows.rows(), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t t = rows.At(r).target;
      if (t == ignore_index || (t >= 0 && t < classes)) continue;
      throw TensorException(std::string(op) + ": target " + std::to_string(t) + " (element " +
                            std::to_string(r) + " in row-major order) is out of range for " +
                            std::to_string(classes) + " classes; targets are in [0, " +
                            std::to_string(classes) + ") or ignore_index (" +
                            std::to_string(ignore_index) + ")");
    }
  });
}

// fn(c) for every class c of a row in order, in chunks that look at the thread's CancelToken
// before each (a row may hold 2^31 classes): stops early, the row incomplete, once cancelled.
template <typename Fn>
void ForEachClass(const ClassRows& rows, const Fn& fn) {
  ForEachChunk(CurrentCancelToken(), rows.classes(), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) fn(c);
  });
}

// The summed weights of the non-ignored targets: kMean's divisor.
double WeightSum(const ClassRows& rows, int64_t ignore_index) {
  double sum = 0;
  ForEachChunk(CurrentCancelToken(), rows.rows(), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t t = rows.At(r).target;
      if (t != ignore_index) sum += rows.Weight(t);
    }
  });
  return sum;
}

// The max and the log of the summed exponentials (max subtracted) of a row:
// log_softmax_c = x_c - max - log_sum.
struct LogSumExp {
  double max, log_sum;
};
// Incomplete once the thread's CancelToken is cancelled (ForEachClass).
LogSumExp RowLogSumExp(const ClassRows& rows, int64_t base) {
  double max = -std::numeric_limits<double>::infinity();
  ForEachClass(rows, [&](int64_t c) { max = std::fmax(max, rows.X(base, c)); });
  double sum = 0;
  ForEachClass(rows, [&](int64_t c) { sum += std::exp(rows.X(base, c) - max); });
  return {max, std::log(sum)};
}

// The saved state of a class loss, as its backward reads it.
struct ClassLossRecord {
  bool softmax;
  int64_t ignore_index;
  Reduction reduction;
  double smoothing;
};

// The per-row losses (kNone) or their reduction, in double, written as FLOAT.
Tensor ClassLossForward(const ClassRows& rows, const Shape& target_shape, const ClassLossRecord& p,
                        const OpContext& ctx) {
  Tensor out = internal::NewFloat(p.reduction == Reduction::kNone ? target_shape : Shape{}, ctx);
  float* o = out.MutableData<float>().data();
  double total = 0;
  const CancelToken* cancel = CurrentCancelToken();
  for (int64_t r = 0; r < rows.rows(); ++r) {
    if (Cancelled(cancel)) return out;
    const auto at = rows.At(r);  // not a structured binding: the lambda below captures base
    const int64_t base = at.x, t = at.target;
    double loss = 0;
    if (t != p.ignore_index) {
      // log-probabilities: the row itself (NLLLoss) or its log_softmax (CrossEntropy).
      const LogSumExp lse = p.softmax ? RowLogSumExp(rows, base) : LogSumExp{0, 0};
      const auto logp = [&](int64_t c) { return rows.X(base, c) - lse.max - lse.log_sum; };
      loss = -rows.Weight(t) * logp(t);
      if (p.smoothing != 0) {
        double smooth = 0;
        ForEachClass(rows, [&](int64_t c) { smooth -= rows.Weight(c) * logp(c); });
        loss =
            (1 - p.smoothing) * loss + p.smoothing / static_cast<double>(rows.classes()) * smooth;
      }
    }
    if (p.reduction == Reduction::kNone) {
      o[r] = static_cast<float>(loss);
    } else {
      total += loss;
    }
  }
  if (p.reduction == Reduction::kSum) o[0] = static_cast<float>(total);
  if (p.reduction == Reduction::kMean) {
    o[0] = static_cast<float>(total / WeightSum(rows, p.ignore_index));
  }
  return out;
}

ClassLossRecord ReadClassRecord(const BackwardRecord& r) {
  return {r.op() == OpKind::kCrossEntropy, r.ints()[0], static_cast<Reduction>(r.ints()[1]),
          double{r.floats()[0]}};
}

// d loss_r / d x[r, c] times the row's output gradient s:
// CrossEntropy: s ((1 - eps) w_t (p_c - [c = t]) + eps / C (p_c sum_k w_k - w_c));
// NLLLoss: -s w_t at c = t.
void ClassLossBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                       std::span<Tensor> grads) {
  const ClassLossRecord p = ReadClassRecord(r);
  const Tensor& x = r.Saved(0);
  const Tensor& target = r.Saved(1);
  const ClassRows rows(x, target, r.HasSaved(2) ? &r.Saved(2) : nullptr);
  grads[0] = internal::NewFloat(x.shape(), ctx, /*zero=*/true);
  if (x.shape().IsEmpty()) return;
  // dx is contiguous and x's shape: the same row walk over dx's strides.
  const ClassRows dx_rows(grads[0], target, nullptr);
  float* dx = grads[0].MutableStorage<float>().data();
  const double divisor = p.reduction == Reduction::kMean ? WeightSum(rows, p.ignore_index) : 1;
  double weight_total = 0;
  ForEachClass(rows, [&](int64_t c) { weight_total += rows.Weight(c); });
  const double classes = static_cast<double>(rows.classes());
  const float* gs = g.Storage<float>().data();
  const int64_t dstride = grads[0].strides()[rows.class_axis()];
  const CancelToken* cancel = CurrentCancelToken();
  for (int64_t row = 0; row < rows.rows(); ++row) {
    if (Cancelled(cancel)) return;
    const auto at = rows.At(row);  // not a structured binding: the lambda below captures both
    const int64_t base = at.x, t = at.target;
    if (t == p.ignore_index) continue;
    const double s = double{gs[OffsetOf(g, p.reduction == Reduction::kNone ? row : 0)]} / divisor;
    const int64_t out = dx_rows.At(row).x;
    const double wt = rows.Weight(t);
    if (!p.softmax) {
      dx[out + t * dstride] = static_cast<float>(-s * wt);
      continue;
    }
    const LogSumExp lse = RowLogSumExp(rows, base);
    ForEachClass(rows, [&](int64_t c) {
      const double prob = std::exp(rows.X(base, c) - lse.max - lse.log_sum);
      const double hard = wt * (prob - (c == t ? 1.0 : 0.0));
      const double smooth = prob * weight_total - rows.Weight(c);
      dx[out + c * dstride] =
          static_cast<float>(s * ((1 - p.smoothing) * hard + p.smoothing / classes * smooth));
    });
  }
}

Tensor ClassLoss(OpKind kind, const Tensor& x, const Tensor& target, const Tensor* weight,
                 const ClassLossParams& params, const OpContext& ctx) {
  const std::string_view op = OpKindName(kind);
  CheckClassInputs(op, x, target, weight, params.ignore_index);
  const float eps = params.label_smoothing;
  if (!(eps >= 0.0f && eps <= 1.0f)) {
    throw TensorException(std::string(op) + ": label_smoothing is " + std::to_string(eps) +
                          "; it must be in [0, 1]");
  }
  const ClassLossRecord p{kind == OpKind::kCrossEntropy, params.ignore_index, params.reduction,
                          double{eps}};
  Tensor out = ClassLossForward(ClassRows(x, target, weight), target.shape(), p, ctx);
  if (!ShouldRecord({&x})) return out;
  auto record = internal::NewRecord(kind, &ClassLossBackward, {&x});
  record->Save(0, x);
  record->Save(1, target);
  if (weight) record->Save(2, *weight);
  record->SetInts({params.ignore_index, static_cast<int64_t>(params.reduction)});
  record->SetFloats({eps});
  return out.WithAutogradNode(std::move(record));
}

// MSELoss: d/dx = norm (x - t) g with norm = 2 (2 / N for kMean), d/dt = -d/dx.
void MseLossBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  const Tensor& x = r.Saved(0);
  const auto reduction = static_cast<Reduction>(r.ints()[0]);
  const float norm = static_cast<float>(
      reduction == Reduction::kMean ? 2.0 / static_cast<double>(x.shape().ElementCount()) : 2.0);
  Tensor gx = internal::Map(
      x.shape(), ctx, [norm](float a, float b, float gi) { return norm * (a - b) * gi; }, x,
      r.Saved(1), g);
  if (internal::Wants(r, 1)) {
    grads[1] = internal::Map(
        x.shape(), ctx, [](float v) { return -v; }, gx);
  }
  if (internal::Wants(r, 0)) {
    grads[0] = gx;
  } else {
    gx.Dispose();
  }
}

// SplitMix64's output function (Steele, Lea, Flood 2014).
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void DropoutBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                     std::span<Tensor> grads) {
  const float scale = r.floats()[0];
  grads[0] = internal::NewFloat(g.shape(), ctx);
  internal::MapInto<float, float, bool>(
      grads[0], [scale](float gi, bool keep) { return gi * (keep ? scale : 0.0f); }, g, r.Owned(0));
}

}  // namespace

Tensor CrossEntropy(const Tensor& logits, const Tensor& target, const Tensor* weight,
                    const ClassLossParams& params, const OpContext& ctx) {
  return ClassLoss(OpKind::kCrossEntropy, logits, target, weight, params, ctx);
}

Tensor NllLoss(const Tensor& log_probs, const Tensor& target, const Tensor* weight,
               const ClassLossParams& params, const OpContext& ctx) {
  if (params.label_smoothing != 0.0f) {
    throw TensorException("NLLLoss: label_smoothing is " + std::to_string(params.label_smoothing) +
                          "; it applies to CrossEntropy only, so leave it 0");
  }
  return ClassLoss(OpKind::kNLLLoss, log_probs, target, weight, params, ctx);
}

Tensor MseLoss(const Tensor& x, const Tensor& target, Reduction reduction, const OpContext& ctx) {
  internal::CheckFloat("MSELoss", "x", x);
  internal::CheckFloat("MSELoss", "target", target);
  if (!(x.shape() == target.shape())) {
    throw TensorShapeException("MSELoss: target has shape " + target.shape().ToString() +
                               " but x has " + x.shape().ToString() +
                               "; they must match (Expand the target first to broadcast it)");
  }
  const auto square = [](float a, float b) { return (a - b) * (a - b); };
  Tensor out;
  if (reduction == Reduction::kNone) {
    out = internal::Map(x.shape(), ctx, square, x, target);
  } else {
    // The float squares summed in double in row-major order (stopping early, the sum
    // incomplete, once the thread's CancelToken is cancelled).
    double total = 0;
    const auto walk = onemodel::internal::WalkOf<2>(x.shape(), {&x.strides(), &target.strides()});
    const float* xs = x.Storage<float>().data() + x.offset();
    const float* ts = target.Storage<float>().data() + target.offset();
    const int64_t sx = walk.RowStride(0), st = walk.RowStride(1);
    ForEachChunk(CurrentCancelToken(), x.shape().ElementCount(), [&](int64_t begin, int64_t end) {
      walk.ForEachRow(begin, end, [&](int64_t n, const auto& off) {
        for (int64_t i = 0; i < n; ++i) total += square(xs[off[0] + i * sx], ts[off[1] + i * st]);
      });
    });
    if (reduction == Reduction::kMean) total /= static_cast<double>(x.shape().ElementCount());
    out = internal::NewFloat(Shape{}, ctx);
    out.MutableData<float>()[0] = static_cast<float>(total);
  }
  if (!ShouldRecord({&x, &target})) return out;
  auto record = internal::NewRecord(OpKind::kMSELoss, &MseLossBackward, {&x, &target});
  record->Save(0, x);
  record->Save(1, target);
  record->SetInts({static_cast<int64_t>(reduction)});
  return out.WithAutogradNode(std::move(record));
}

bool DropoutKeeps(uint64_t seed, int64_t index, float ratio) {
  const uint64_t draw = Mix(seed + static_cast<uint64_t>(index + 1) * 0x9E3779B97F4A7C15ULL);
  return static_cast<double>(draw >> 11) * 0x1.0p-53 >= double{ratio};
}

Tensor Dropout(const Tensor& x, const DropoutParams& params, const OpContext& ctx) {
  internal::CheckFloat("Dropout", "x", x);
  if (!(params.ratio >= 0.0f && params.ratio <= 1.0f)) {
    throw TensorException("Dropout: ratio is " + std::to_string(params.ratio) +
                          "; it must be in [0, 1] (the probability of zeroing an element)");
  }
  if (!params.training) return x;
  const float scale = static_cast<float>(1.0 / (1.0 - double{params.ratio}));
  // out is contiguous, so its storage offset is the element's row-major index.
  Tensor out = internal::NewFloat(x.shape(), ctx);
  float* o = out.MutableStorage<float>().data();
  const float* xs = x.Storage<float>().data() + x.offset();
  const auto walk = onemodel::internal::WalkOf<2>(x.shape(), {&out.strides(), &x.strides()});
  const int64_t so = walk.RowStride(0), sx = walk.RowStride(1);
  walk.ForEachRow(0, x.shape().ElementCount(), [&](int64_t n, const auto& off) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = off[0] + i * so;
      o[at] = xs[off[1] + i * sx] * (DropoutKeeps(params.seed, at, params.ratio) ? scale : 0.0f);
    }
  });
  if (!ShouldRecord({&x})) return out;
  Tensor mask = Tensor::Empty(x.shape(), DType::kBool, ctx.allocator);
  const std::span<bool> keep = mask.MutableData<bool>();
  for (size_t i = 0; i < keep.size(); ++i) {
    keep[i] = DropoutKeeps(params.seed, static_cast<int64_t>(i), params.ratio);
  }
  auto record = internal::NewRecord(OpKind::kDropout, &DropoutBackward, {&x});
  record->Own(mask);
  record->SetFloats({scale});
  return out.WithAutogradNode(std::move(record));
}

}  // namespace onemodel::ops
