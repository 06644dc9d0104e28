// The Run rows of the loss operations (CrossEntropy, NLLLoss, MSELoss) and Dropout: they read
// the attributes (reduction as PyTorch spells it: "none", "mean" or "sum") and call
// core/ops/loss.h.
//
//   {"MSELoss", {"X", "target"}, {...}, true, "...", &RunMseLoss},
#pragma once

#include "server/ops/op_registry.h"

namespace onemodel::server {

// X, target[, weight]; attributes ignore_index, reduction, label_smoothing.
Tensor RunCrossEntropy(const OpCall& call);
// X (log-probabilities), target[, weight]; attributes ignore_index, reduction.
Tensor RunNllLoss(const OpCall& call);
// X, target; attribute reduction.
Tensor RunMseLoss(const OpCall& call);
// X; attributes ratio, seed (required), training.
Tensor RunDropout(const OpCall& call);

}  // namespace onemodel::server
