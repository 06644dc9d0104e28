// Reductions: Sum and Mean over axes, and SumToShape (the broadcast-undo used by backward).
//
//   Tensor s = ops::Sum(x, {0, 2}, /*keepdims=*/false, ctx);
//   Tensor m = ops::Mean(x, {}, false, ctx);   // no axes: over every element
#pragma once

#include <span>

#include "core/autograd/op_context.h"
#include "core/tensor/tensor.h"

namespace onemodel::ops {

// Sum over `axes` (negative counts from the end; empty means every axis), accumulated in
// double; keepdims keeps reduced axes with extent 1. Records for backward.
Tensor Sum(const Tensor& x, std::span<const int> axes, bool keepdims, const OpContext& ctx);
// As Sum, divided by the number of elements reduced (NaN for an empty reduction).
Tensor Mean(const Tensor& x, std::span<const int> axes, bool keepdims, const OpContext& ctx);

// `g` summed down to `shape` by numpy's broadcasting rule run backwards (leading axes and
// axes where `shape` has extent 1). Always a new tensor; never records.
Tensor SumToShape(const Tensor& g, const Shape& shape, const OpContext& ctx);

}  // namespace onemodel::ops
