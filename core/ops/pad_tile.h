// Pad and Tile: outputs whose every element is an element of x (or Pad's constant), chosen
// independently along each axis. Both are differentiable: an input element's gradient is the
// sum of the output gradients at every place it was copied to.
//
//   Tensor y = ops::Pad(x, {0, 1, 0, 2}, PadMode::kReflect, 0.0f, ctx);  // (H, W + 3)
//   Tensor t = ops::Tile(x, {2, 3}, ctx);                               // (2H, 3W)
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// ONNX Pad's modes: the constant, x mirrored without repeating the edge (PyTorch's reflect),
// the edge element repeated, x repeated periodically.
enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// "constant", "reflect", "edge" or "wrap" as PadMode; throws TensorException naming the modes.
PadMode ParsePadMode(std::string_view name);

// x padded by pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (ONNX's order, 2 * rank
// values). A negative pad crops that many elements first; the modes then read the cropped
// tensor. Reflect needs each pad below the (cropped) extent, edge and wrap a non-empty axis.
// Throws TensorShapeException otherwise. Records for backward.
Tensor Pad(const Tensor& x, std::span<const int64_t> pads, PadMode mode, float value,
           const OpContext& ctx);

// x repeated repeats[d] >= 0 times along each axis d (one value per axis). Records for backward.
Tensor Tile(const Tensor& x, std::span<const int64_t> repeats, const OpContext& ctx);

}  // namespace onemodel::ops
