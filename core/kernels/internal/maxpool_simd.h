// The per-target MaxPool2d loops (maxpool_simd.cc, compiled once per SIMD target) and the
// plan they run on. MaxPool2dFast (maxpool_fast.cc) fills a PoolPlan, picks one of the five
// loops by the input's strides and shapes and splits its units over the thread pool;
// MaxPool2dBackwardFast takes pairs_grad where it applies.
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

// MaxPool2d's backward where grad_x's planes are tiled by 2x2 cells, one per output position:
// grad_out and indices contiguous (N, C, OH, OW), grad_x contiguous (N, C, 2 OH, 2 OW).
struct PairsGradPlan {
  const float* g = nullptr;      // at grad_out's offset
  const int32_t* idx = nullptr;  // at the indices' offset
  float* gx = nullptr;
  int64_t oh = 0, ow = 0;
};

// Writes planes [begin, end) of grad_x: each cell of output position (oy, ox) gets 0 + its
// gradient where its index names the cell, +0 elsewhere (what the scatter gives when every
// index lies in its own cell). Returns false when an index lies outside its cell (not -1):
// those planes must then be scattered. Never throws, never allocates.
using PairsGradFn = bool (*)(const PairsGradPlan& plan, int64_t begin, int64_t end);

// Whether the pairs loops take planes of oh x ow outputs with vectors of `lanes` floats: a
// vector holds whole output rows (ow divides lanes, and is smaller), and either a plane holds
// whole vectors' worth of rows or a vector holds whole planes.
inline bool PairLanesFit(int64_t lanes, int64_t oh, int64_t ow) {
  if (ow < 1 || oh < 1 || ow >= lanes || lanes % ow != 0) return false;
  const int64_t rows = lanes / ow;
  return oh % rows == 0 || rows % oh == 0;
}

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
  // Unit: one plane (n, c). The planes loop's conditions, and 2x2 windows at stride 2 without
  // dilation tiling the plane (H = 2 OH, W = 2 OW), PairLanesFit(lanes, OH, OW).
  PoolUnitsFn pairs;
  // MaxPool2d's backward over such planes (PairsGradFn); unit: one plane.
  PairsGradFn pairs_grad;
  int64_t lanes;  // floats per vector of the target
};

// The pooling loops compiled for `target` (which must be compiled in).
const MaxPoolSimd& MaxPoolSimdFor(SimdTarget target);

}  // namespace onemodel::internal
