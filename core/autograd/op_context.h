// OpContext: what an operation needs besides its inputs: where outputs go (pool, session
// ledger or arena) and which kernels compute them (exact or fast, spec 9).
//
//   OpContext ctx{arena, KernelSet::Default()};
//   Tensor y = ops::Relu(ops::Add(a, b, ctx), ctx);
#pragma once

#include "core/kernels/kernels.h"
#include "core/memory/allocator.h"

namespace onemodel {

struct OpContext {
  Allocator& allocator;
  const TensorKernels& kernels;
};

}  // namespace onemodel
