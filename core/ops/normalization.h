// Normalizations: LayerNorm and RMSNorm over the last axes, BatchNorm2d over (N, H, W) per
// channel. Each records (spec 8) the normalized elements and the inverse standard deviation
// as owned slots plus the scale input.
//
//   Tensor y = ops::LayerNorm(x, &gamma, &beta, /*axis=*/-1, 1e-5f, ctx);
//   Tensor z = ops::BatchNorm2d(images, running_mean, running_var, &gamma, &beta,
//                               {.training = true}, ctx);
#pragma once

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// y = (x - mean) / sqrt(var + eps) * scale + bias, mean and (biased) var over the axes
// [axis, rank) of x (any strides), as ONNX LayerNormalization and torch's layer_norm with
// normalized_shape = x.shape[axis:]. scale and bias (either may be null; null means 1 and 0)
// have the shape x.shape[axis:]. Throws for a rank-0 x, an axis out of range, other scale or
// bias shapes, and eps < 0. Gradients for x, scale and bias.
Tensor LayerNorm(const Tensor& x, const Tensor* scale, const Tensor* bias, int axis, float eps,
                 const OpContext& ctx);

// y = x / sqrt(mean(x^2) + eps) * scale over the axes [axis, rank) (torch's rms_norm with an
// explicit eps). Checks and gradients as LayerNorm.
Tensor RMSNorm(const Tensor& x, const Tensor* scale, int axis, float eps, const OpContext& ctx);

struct BatchNormParams {
  bool training = false;  // batch statistics (and update the running ones), else running ones
  float momentum = 0.1f;  // running = (1 - momentum) * running + momentum * batch
  float eps = 1e-5f;
};

// y = (x - mean_c) / sqrt(var_c + eps) * scale_c + bias_c for x (N, C, H, W, any strides),
// as torch.nn.functional.batch_norm. Training: mean and biased var of channel c over N, H and
// W, and running_mean and running_var (C, contiguous, FLOAT) updated in place (versions
// bumped) with the unbiased variance; throws when a channel has a single value. Inference:
// the running statistics, unchanged. scale and bias (C) may be null. Gradients for x, scale
// and bias (none for the running statistics).
Tensor BatchNorm2d(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                   const Tensor* scale, const Tensor* bias, const BatchNormParams& params,
                   const OpContext& ctx);

}  // namespace onemodel::ops
