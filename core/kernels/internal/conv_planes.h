// Conv2d and its gradients over planes of at most 64 elements (four AVX-512 vectors; H·W and
// OH·OW), without unfolding: the fast kernels' path for the small deep layers of small CNNs
// (the digits CNN's 8->16 layer on 4x4 images; docs/kernels.md).
//
// A tap (i, j) of the kernel moves an input plane's elements to the output positions that
// read them: one masked lane permutation of the plane's vector (lanes that read padding get
// +0), the same for any strides, pads and dilations. An output plane is then the sum of
// weight x permuted input plane over the input channels and taps, each product one fused
// multiply-add into a vector of the output plane; the input gradient takes the inverse
// permutations, the weight gradient multiplies output gradient planes by moved input planes.
// Operands are dense: x and y contiguous NCHW, w (K, C / groups, KH, KW).
//
//   if (ConvPlanesApply(d, target)) ConvPlanesForward(pool, d, p, x, w, bias, 1, y);
#pragma once

#include <cstdint>

#include "core/kernels/internal/conv.h"
#include "core/kernels/kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/kernels/thread_pool.h"

namespace onemodel::internal {

// Whether the path applies: `target` is AVX-512 (and the CPU has it), input and output planes
// hold 1 to kConvPlanesMaxPlane elements (up to 4 vectors), the kernel has at most
// kConvPlanesMaxTaps taps, and a group's channels (input or output) times the taps are at most
// kConvPlanesMaxInputs (a block of 16 output planes keeps its weights on the stack, 32 KiB,
// as much as LayerNorm's row cache).
constexpr int64_t kConvPlanesMaxTaps = 49;
constexpr int64_t kConvPlanesMaxPlane = 64;
constexpr int64_t kConvPlanesMaxInputs = 512;
bool ConvPlanesApply(const ConvDims& d, SimdTarget target);
// Whether ConvPlanesBackwardWeight applies: as ConvPlanesApply, with planes of at most 16
// elements (the unfolded weight gradient was faster on larger ones: the digits CNN's 8x8 layer
// took 0.078 ms this way against 0.054).
bool ConvPlanesWeightApply(const ConvDims& d, SimdTarget target);

// y[n, k] = bias[k] + the sum over the input channels c of k's group (in order) and the taps
// (row by row) of w[k, c, tap] x x[n, c] at the tap, added from +0 (bias: +0 when null, else
// element k at bias[k * bias_stride]). Images are split over `pool`; the bits do not depend on
// the number of threads.
void ConvPlanesForward(ThreadPool& pool, const ConvDims& d, const Conv2dParams& p, const float* x,
                       const float* w, const float* bias, int64_t bias_stride, float* y);

// grad_x[n, c] = the sum over the output channels k of c's group (in order) and the taps of
// w[k, c, tap] x grad_y[n, k] carried back through the tap, added from +0 (every element of
// grad_x is written).
void ConvPlanesBackwardInput(ThreadPool& pool, const ConvDims& d, const Conv2dParams& p,
                             const float* grad_y, const float* w, float* grad_x);

// grad_w[k, c, tap] = the sum over the images (in order) of grad_y[n, k] x x[n, c] moved by
// the tap, lane by lane from +0, then its 16 lanes added (every element of grad_w is written).
void ConvPlanesBackwardWeight(ThreadPool& pool, const ConvDims& d, const Conv2dParams& p,
                              const float* grad_y, const float* x, float* grad_w);

}  // namespace onemodel::internal
