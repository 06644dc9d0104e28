// Tables of per-target SIMD row functions. Each foreach_target source fills one table per
// target and exports a lookup by SimdTarget (see ONEMODEL_SIMD_TABLE_LOOKUP).
#pragma once

#include <cstdint>
#include <iterator>

#include "hwy/detect_targets.h"  // HWY_TARGETS for the lookup macro below, whatever the order

#include "core/kernels/kernels.h"
#include "core/kernels/simd_targets.h"

namespace onemodel::internal {

// n elements; pointers address the first element; strides are in elements (any value).
using BinaryRowFn = void (*)(int64_t n, float* out, int64_t so, const float* a, int64_t sa,
                             const float* b, int64_t sb);
using UnaryRowFn = void (*)(int64_t n, float* out, int64_t so, const float* x, int64_t sx);

// Indexed by the op; simd_elementwise.cc fills them from the op lists of kernels.h.
struct ElementwiseSimd {
  BinaryRowFn binary[std::size(kAllBinaryOps)];
  UnaryRowFn unary[std::size(kAllUnaryOps)];
  // The same rows writing unit-stride outputs with streaming stores (ordinary stores up to the
  // first 64-byte boundary and for the tail); the same bits. The caller runs
  // hwy::FlushStream() on each thread before the output is read elsewhere.
  BinaryRowFn binary_streaming[std::size(kAllBinaryOps)];
  UnaryRowFn unary_streaming[std::size(kAllUnaryOps)];
};

// The elementwise rows compiled for `target` (which must be compiled in).
const ElementwiseSimd& ElementwiseSimdFor(SimdTarget target);

// Contiguous rows of spec 10's conversions; 16-bit values are raw bit patterns.
struct ConvertSimd {
  void (*float_to_half)(int64_t n, const float* in, uint16_t* out);
  void (*half_to_float)(int64_t n, const uint16_t* in, float* out);
  void (*float_to_bfloat16)(int64_t n, const float* in, uint16_t* out);
  void (*bfloat16_to_float)(int64_t n, const uint16_t* in, float* out);
  // The same rows writing with streaming stores (ordinary ones before the output's first
  // 64-byte boundary and for the tail; the same bits), fenced before they return. For outputs
  // of DefaultStreamingMinBytes() or more (core/kernels/streaming_stores.h).
  void (*float_to_half_streaming)(int64_t n, const float* in, uint16_t* out);
  void (*half_to_float_streaming)(int64_t n, const uint16_t* in, float* out);
  void (*float_to_bfloat16_streaming)(int64_t n, const float* in, uint16_t* out);
  void (*bfloat16_to_float_streaming)(int64_t n, const uint16_t* in, float* out);
};

// The conversion rows compiled for `target` (which must be compiled in).
const ConvertSimd& ConvertSimdFor(SimdTarget target);

}  // namespace onemodel::internal

// Defines `const TABLE& TABLE##For(SimdTarget)` from the per-target GETTER functions of a
// foreach_target source. Use inside `#if HWY_ONCE`, in namespace onemodel::internal.
#define ONEMODEL_SIMD_TABLE_LOOKUP(TABLE, GETTER)               \
  const TABLE& TABLE##For(SimdTarget target) {                  \
    switch (target) {                                           \
      case SimdTarget::kAvx3:                                   \
        ONEMODEL_IF_AVX3(return *::onemodel::N_AVX3::GETTER();) \
        break;                                                  \
      case SimdTarget::kAvx2:                                   \
        ONEMODEL_IF_AVX2(return *::onemodel::N_AVX2::GETTER();) \
        break;                                                  \
      case SimdTarget::kScalar:                                 \
        break;                                                  \
    }                                                           \
    return *::onemodel::ONEMODEL_FALLBACK_NS::GETTER();         \
  }

// The portable fallback: Highway's EMU128, or SCALAR where this compiler cannot build EMU128.
#if defined(HWY_BASELINE_SCALAR) && HWY_BASELINE_SCALAR == HWY_SCALAR
#define ONEMODEL_FALLBACK_NS N_SCALAR
#else
#define ONEMODEL_FALLBACK_NS N_EMU128
#endif
#if defined(HWY_TARGETS) && (HWY_TARGETS & HWY_AVX3)
#define ONEMODEL_IF_AVX3(x) x
#else
#define ONEMODEL_IF_AVX3(x)
#endif
#if defined(HWY_TARGETS) && (HWY_TARGETS & HWY_AVX2)
#define ONEMODEL_IF_AVX2(x) x
#else
#define ONEMODEL_IF_AVX2(x)
#endif
