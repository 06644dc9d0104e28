// MaxPool2d kernels (spec 9): the reference meaning and the fast SIMD paths.
//
// Window (oy, ox) covers input rows oy*stride_h - pad_h ... + kernel_h - 1 (columns likewise);
// only in-bounds positions count, so padding never wins. Positions are scanned row by row;
// the first maximum wins ties; a NaN wins and the first NaN is reported. Indices are int32
// positions y * W + x within the input plane, written only when asked for.
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

}  // namespace onemodel::internal
