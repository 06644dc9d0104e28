// Training losses as PyTorch defines them (CrossEntropy and NLLLoss over class indices, MSELoss)
// and Dropout with an explicit seed. All run in the core without a kernel table, in one fixed
// order with double accumulation, so every kernel variant and thread count gives the same bits.
//
//   Tensor loss = ops::CrossEntropy(logits, labels, nullptr, {.label_smoothing = 0.1f}, ctx);
//   Tensor y = ops::Dropout(x, {.ratio = 0.1f, .seed = step}, ctx);
#pragma once

#include <cstdint>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// How a loss combines its per-element values: kNone keeps them (the target's shape), kSum and
// kMean give a scalar (kMean of the class losses divides by the summed weights of the
// non-ignored targets, so all ignored gives NaN, as PyTorch).
enum class Reduction { kNone, kMean, kSum };

struct ClassLossParams {
  int64_t ignore_index = -100;  // targets equal to it contribute nothing (and no weight)
  Reduction reduction = Reduction::kMean;
  float label_smoothing = 0.0f;  // in [0, 1]; CrossEntropy only
};

// torch.nn.functional.cross_entropy with class-index targets: log_softmax of `logits` (N, C) or
// (N, C, d1, ...) (or (C) with a scalar target) over axis 1, then the negative log-likelihood of
// `target` (INT64 or INT32, shape (N, d1, ...)) weighted by `weight` (FLOAT (C), or null for 1),
// mixed with the uniform target by label_smoothing. Throws TensorException naming the first
// target outside [0, C) that is not ignore_index, before anything is written. Records for
// backward into logits only (saves logits, target and weight; ignore_index and the reduction
// in Ints, label_smoothing in Floats); target and weight get no gradient.
Tensor CrossEntropy(const Tensor& logits, const Tensor& target, const Tensor* weight,
                    const ClassLossParams& params, const OpContext& ctx);

// torch.nn.functional.nll_loss: -weight[t] * log_probs[.., t, ..] per target t, with the shapes,
// checks, reductions and record of CrossEntropy (label_smoothing must be 0).
Tensor NllLoss(const Tensor& log_probs, const Tensor& target, const Tensor* weight,
               const ClassLossParams& params, const OpContext& ctx);

// torch.nn.functional.mse_loss: (x - target)^2 reduced; both FLOAT of the same shape (PyTorch
// warns about broadcasting here, so it is refused). Records into both (saves x and target).
Tensor MseLoss(const Tensor& x, const Tensor& target, Reduction reduction, const OpContext& ctx);

struct DropoutParams {
  float ratio = 0.5f;    // p, the probability of zeroing an element, in [0, 1]
  uint64_t seed = 0;     // the mask is a function of seed and element index only
  bool training = true;  // false: x itself, no mask
};

// Training: x * mask / (1 - ratio) (as PyTorch computes it: NaN stays NaN, ratio 1 gives x * 0),
// where element i (row-major) is kept when the i-th draw of a SplitMix64 stream started at
// `seed` (SplitMix64(seed + (i + 1) * 0x9E3779B97F4A7C15)), as its top 53 bits over 2^53, is
// >= ratio. Records for backward (owns the BOOL mask, keeps the scale in Floats); the gradient
// is g * mask / (1 - ratio). Not training: returns x unchanged. FLOAT input.
Tensor Dropout(const Tensor& x, const DropoutParams& params, const OpContext& ctx);

// The mask Dropout uses for element `index` (true: kept); see Dropout.
bool DropoutKeeps(uint64_t seed, int64_t index, float ratio);

}  // namespace onemodel::ops
