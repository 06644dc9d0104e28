// The per-target MaxPool2d loops (maxpool_simd.cc, compiled once per SIMD target) and the
// plan they run on. MaxPool2dFast (maxpool_fast.cc) fills a PoolPlan, picks one of the four
// loops by the input's strides and splits its units over the thread pool.
//
//   const MaxPoolSimd& simd = MaxPoolSimdFor(SimdTarget::kAvx2);
//   simd.rows(plan, 0, plan.n * plan.c * plan.oh);   // every output row, NCHW input
#pragma once

#include <cstdint>

#include "core/kernels/simd_targets.h"

namespace onemodel::internal {

// One MaxPool2d call as raw pointers and element strides, dimensions in (N, C, H, W) order.
// Pointers address element (0, 0, 0, 0); strides may be negative or zero.
struct PoolPlan {
  const float* in = nullptr;
  float* out = nullptr;
  int32_t* idx = nullptr;  // nullptr: no indices wanted
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t in_stride[4] = {};
  int64_t out_stride[4] = {};
  int64_t idx_stride[4] = {};
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool relu = false;  // MaxPool2dParams::relu
};

// Computes the units [begin, end) of `plan`; never throws, never allocates.
using PoolUnitsFn = void (*)(const PoolPlan& plan, int64_t begin, int64_t end);

struct MaxPoolSimd {
  // Unit: one output row (n, c, oy), vectorized over ox. Needs in_stride[3] == 1.
  PoolUnitsFn rows;
  // Unit: output row (n, oy) of every channel, vectorized over c. Needs in_stride[1] == 1.
  PoolUnitsFn pixels;
  // Unit: one plane (n, c), several planes or output rows per vector. Needs contiguous input,
  // output and indices (NCHW), pads 0 with every window inside the input, and ow * 2 <= lanes.
  PoolUnitsFn planes;
  // Unit: one output row (n, c, oy), scalar; any strides.
  PoolUnitsFn strided;
  int64_t lanes;  // floats per vector of the target
};

// The pooling loops compiled for `target` (which must be compiled in).
const MaxPoolSimd& MaxPoolSimdFor(SimdTarget target);

}  // namespace onemodel::internal
