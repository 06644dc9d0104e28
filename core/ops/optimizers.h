// Optimizer steps and gradient clipping that update parameter, state and gradient tensors in
// place, with the definitions of torch.optim.SGD, torch.optim.AdamW and
// torch.nn.utils.clip_grad_norm_. None of them records (spec 8): they are the update between
// two training steps, not part of a graph.
//
// Every tensor they write bumps its buffer's version once (spec 7), so a backward pass that
// saved its old value fails with TensorVersionException. All checks run before the first write:
// a refused call changes nothing. Parameters, states and the step must be live, plain,
// contiguous tensors that share no memory with each other or with a gradient; gradients may be
// strided (a strided one is read through a temporary copy). Steady state allocates nothing
// but the one-element result.
//
//   Tensor step = Tensor::Empty(Shape{}, DType::kInt64, pool, /*zero=*/true);
//   ops::AdamWStep(params, grads, {exp_avgs, exp_avg_sqs}, step, {.lr = 1e-3f}, ctx);
#pragma once

#include <span>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// torch.optim.SGD's hyperparameters (maximize excluded).
struct SgdOptions {
  float lr = 1e-3f;
  float momentum = 0;
  float dampening = 0;
  bool nesterov = false;
  float weight_decay = 0;
};

// torch.optim.AdamW's hyperparameters (maximize excluded).
struct AdamWOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 1e-2f;
  bool amsgrad = false;
};

// One SGD update of every params[i] by grads[i]. `momentum_buffers` has one tensor per
// parameter when momentum != 0 (their contents are ignored on the first step, which sets
// them to the gradient as torch does) and is empty otherwise. `step` is a one-element INT64
// tensor counting the updates so far (0 before the first); it is incremented. Returns the new
// step count as a new INT64 scalar. Throws TensorException (naming the list and index) for
// mismatched lists, shapes, types, layouts and aliasing, and for hyperparameters torch refuses.
Tensor SgdStep(std::span<const Tensor> params, std::span<const Tensor> grads,
               std::span<const Tensor> momentum_buffers, const Tensor& step,
               const SgdOptions& options, const OpContext& ctx);

// Throws SgdStep's TensorException for hyperparameters torch refuses; nothing else is checked.
// A caller that reads the tensor lists by the momentum calls it first, so a NaN or negative
// momentum is reported as such and not as a list count that expected no buffers.
void CheckSgdOptions(const SgdOptions& options);

// One AdamW update. `exp_avgs`, `exp_avg_sqs` (and `max_exp_avg_sqs` when amsgrad, else
// empty) have one tensor per parameter, zero before the first step. `step` as for SgdStep; the
// bias corrections use the incremented count. Returns the new step count. Throws as SgdStep.
Tensor AdamWStep(std::span<const Tensor> params, std::span<const Tensor> grads,
                 std::span<const Tensor> exp_avgs, std::span<const Tensor> exp_avg_sqs,
                 std::span<const Tensor> max_exp_avg_sqs, const Tensor& step,
                 const AdamWOptions& options, const OpContext& ctx);

// Scales every gradient by min(1, max_norm / (total_norm + 1e-6)), where total_norm is the
// norm_type-norm of all gradients together (norm_type may be infinity), and returns
// total_norm as a new FLOAT scalar. Gradients are written (and their versions bumped) only
// when that factor is below 1. Throws TensorException when `error_if_nonfinite` and the total
// norm is NaN or infinite (nothing is written), and for a norm_type that is not positive.
Tensor ClipGradNorm(std::span<const Tensor> grads, float max_norm, float norm_type,
                    bool error_if_nonfinite, const OpContext& ctx);

}  // namespace onemodel::ops
