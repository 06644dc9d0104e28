// The measurements compare_runner can time, by name (bench/compare/README.md lists them all).
//
// A case is set up once, on its first request: `run` is one call of what is timed, `work` is
// what one call does (bytes for GB/s, flops for GFLOPS, 1 for per-call units). Cases keep
// their own inputs and outputs, preallocated, so a call does only the measured work.
//
//   CaseRegistry cases;
//   AddKernelCases(cases);
//   Case add = cases.at("add_16m")();
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/memory/allocator.h"
#include "core/shape/shape.h"
#include "core/tensor/tensor.h"

namespace onemodel::bench {

struct Case {
  double work = 1;            // bytes, flops or operations per call of run
  std::function<void()> run;  // one call of the measured work
};

// A FLOAT tensor of `shape` in `allocator` with deterministic values in [-1, 1) from `seed`.
Tensor Filled(const Shape& shape, uint32_t seed, Allocator& allocator);

// Case name -> its setup (called once, on the first request).
using CaseRegistry = std::map<std::string, std::function<Case()>>;

// Elementwise, MatMul, MaxPool, conversions, STREAM copy/triad and the FMA peak.
void AddKernelCases(CaseRegistry& cases);
// BufferPool and Arena against glibc malloc/free and mimalloc.
void AddMemoryCases(CaseRegistry& cases);
// One SGD step of a 784-256-10 MLP (forward, backward, update) on batch 64.
void AddMlpCase(CaseRegistry& cases);
// One AdamW step over 1M parameters (four [512, 512] tensors).
void AddOptimCases(CaseRegistry& cases);
// An Embedding lookup: 65536 ids into a [32768, 256] table.
void AddIndexingCases(CaseRegistry& cases);
// Conv2d forward on ResNet-50 / MobileNet layer shapes, the 3x3 layer's gradients, and one SGD
// step of tests/common/lenet.h's CNN.
void AddConvCases(CaseRegistry& cases);

}  // namespace onemodel::bench
