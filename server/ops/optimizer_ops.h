// The Run rows of the optimizer operations (SGD, AdamW, ClipGradNorm): they read the
// attributes, split the variadic input into its lists and call core/ops/optimizers.h.
//
// A variadic input's tensors come as lists of equal length, one after the other: the N
// parameters, then their N gradients, then each state list (docs/protocol.md).
#pragma once

#include "server/ops/op_registry.h"

namespace onemodel::server {

// step, then params, grads[, momentum_buffers when momentum != 0]; returns the new step.
Tensor RunSgd(const OpCall& call);
// step, then params, grads, exp_avgs, exp_avg_sqs[, max_exp_avg_sqs when amsgrad]; returns
// the new step.
Tensor RunAdamW(const OpCall& call);
// grads; returns their total norm.
Tensor RunClipGradNorm(const OpCall& call);

}  // namespace onemodel::server
