// MaxPool2d kernels (spec 9): the reference meaning and the fast SIMD paths.
//
// Window (oy, ox) covers input rows oy*stride_h - pad_h + ky*dilation_h, ky < kernel_h
// (columns likewise); only in-bounds positions count, so padding never wins. Positions are
// scanned row by row; the first maximum wins ties; a NaN wins and the first NaN is reported.
// With params.relu the scan starts from +0 at index -1 (ReluMaxPool2d). Indices are int32
// positions y * W + x within the input plane, written only when asked for. The forward kernels
// stop between output elements (reference; also every 2^20 window positions when a window
// holds that many) or groups of output rows (fast: a call whose output rows hold more than
// kMaxUncheckedWork window positions each takes the reference) once the thread's CancelToken is
// cancelled; the reference backward between output rows.
#pragma once

#include "core/kernels/kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/kernels/thread_pool.h"

namespace onemodel::internal {

// Scalar loops over any strides: the definition the fast paths must match bit for bit.
void MaxPool2dReference(const Tensor& x, const MaxPool2dParams& p, Tensor& out, Tensor* indices);

// The fast path for `target`: NCHW and NHWC specializations, a strided fallback, work split
// over `pool`.
void MaxPool2dFast(SimdTarget target, ThreadPool& pool, const Tensor& x, const MaxPool2dParams& p,
                   Tensor& out, Tensor* indices);

// MaxPool2d's backward (TensorKernels::MaxPool2dBackward): zero grad_x, then scatter-add,
// plane after plane. grad_x must be contiguous.
void MaxPool2dBackwardReference(const Tensor& grad_out, const Tensor& indices, Tensor& grad_x);

// The same result bit for bit, planes split over `pool`: each plane of grad_x is zeroed by the
// thread that scatters into it, just before, so its memory is touched once while hot (and
// the first touch of fresh pages is spread over the threads). Planes tiled by 2x2 cells whose
// indices each lie in their own cell are written cell by cell instead, in `target`'s vectors.
void MaxPool2dBackwardFast(SimdTarget target, ThreadPool& pool, const Tensor& grad_out,
                           const Tensor& indices, Tensor& grad_x);

}  // namespace onemodel::internal
