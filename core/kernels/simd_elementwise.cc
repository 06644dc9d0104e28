// The fast elementwise rows, compiled once per SIMD target by Highway (foreach_target) and
// picked at run time through ElementwiseSimdFor(). Every row processes whole vectors; the
// tail and strided operands go through a lane-sized stack buffer, so an element's result
// never depends on where it sits (tail or not) or on the operand's strides. Each row exists
// twice: with ordinary stores and with streaming stores for large outputs (streaming_stores.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/kernels/simd_elementwise.cc"
// Highway needs this order: foreach_target, highway, then contrib.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/kernels/internal/simd_tables.h"
#include "core/kernels/scalar_ops.h"
#include "core/kernels/streaming_stores.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Always false, but depends on the op: the static_asserts below fire only for an op with no
// branch of its own, and the compiler names that op.
template <auto kOp>
inline constexpr bool kNoVectorForm = false;

// ---- vector forms of the ops; each matches scalar_ops.h ----
template <BinaryOp kOp>
HWY_INLINE V BinaryVec(D, V a, V b) {
  if constexpr (kOp == BinaryOp::kAdd) {
    return hn::Add(a, b);
  } else if constexpr (kOp == BinaryOp::kSub) {
    return hn::Sub(a, b);
  } else if constexpr (kOp == BinaryOp::kMul) {
    return hn::Mul(a, b);
  } else if constexpr (kOp == BinaryOp::kDiv) {
    return hn::Div(a, b);
  } else if constexpr (kOp == BinaryOp::kMax || kOp == BinaryOp::kMin) {
    const auto pick_a = kOp == BinaryOp::kMax ? hn::Gt(a, b) : hn::Lt(a, b);
    V r = hn::IfThenElse(pick_a, a, b);
    r = hn::IfThenElse(hn::IsNaN(b), b, r);
    return hn::IfThenElse(hn::IsNaN(a), a, r);  // the first NaN wins
  } else {
    static_assert(kNoVectorForm<kOp>,
                  "this BinaryOp has no vector form: write one in BinaryVec (matching "
                  "scalar_ops.h) or give it a scalar row in BinaryRow");
  }
}

// Returns x where x is NaN, else r.
HWY_INLINE V KeepNaN(V x, V r) { return hn::IfThenElse(hn::IsNaN(x), x, r); }

// Evaluates c[0] + c[1] t + ... + c[K-1] t^(K-1) (Horner's rule).
template <size_t K>
HWY_INLINE V Polynomial(D d, V t, const float (&c)[K]) {
  V r = hn::Set(d, c[K - 1]);
  for (size_t i = K - 1; i-- > 0;) r = hn::MulAdd(r, t, hn::Set(d, c[i]));
  return r;
}

// erf(x) within 1 ulp of std::erf (accuracy.h; bench/ulp_sweep measures it). |x| < 1:
// x + x R(x^2); 1 <= |x| < 4: 1 - e^(-x^2) Q(|x| - 2.5) with the sign of x; beyond, +-1 (erf
// rounds to +-1 in float from |x| = 3.92). R and Q are least-squares fits of erf(a) / a - 1
// and erfc(a) e^(a^2) on Chebyshev nodes (Q weighted for relative error).
HWY_INLINE V ErfVec(D d, V x) {
  static constexpr float kR[] = {1.283791661e-01f,  -3.761262596e-01f, 1.128359735e-01f,
                                 -2.685432881e-02f, 5.189312156e-03f,  -8.018855006e-04f,
                                 7.882497448e-05f};
  static constexpr float kQ[] = {2.108063549e-01f,  -7.434736192e-02f, 2.493817359e-02f,
                                 -8.001474664e-03f, 2.466092817e-03f,  -7.337129791e-04f,
                                 2.128320484e-04f,  -5.894270726e-05f, 1.442577741e-05f,
                                 -4.009343229e-06f, 1.658841825e-06f,  -3.835798736e-07f};
  const V one = hn::Set(d, 1.0f);
  const V a = hn::Min(hn::Abs(x), hn::Set(d, 4.0f));
  const V small = hn::MulAdd(x, Polynomial(d, hn::Mul(x, x), kR), x);
  const V e = hn::Exp(d, hn::Neg(hn::Mul(a, a)));
  const V large = hn::Sub(one, hn::Mul(e, Polynomial(d, hn::Sub(a, hn::Set(d, 2.5f)), kQ)));
  return hn::IfThenElse(hn::Lt(a, one), small, hn::CopySign(large, x));
}

template <UnaryOp kOp>
HWY_INLINE V UnaryVec(D d, V x) {
  const V inf = hn::Set(d, std::numeric_limits<float>::infinity());
  if constexpr (kOp == UnaryOp::kNeg) {
    return hn::Neg(x);
  } else if constexpr (kOp == UnaryOp::kAbs) {
    return hn::Abs(x);
  } else if constexpr (kOp == UnaryOp::kSqrt) {
    return hn::Sqrt(x);
  } else if constexpr (kOp == UnaryOp::kRelu) {
    return KeepNaN(x, hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)), x));
  } else if constexpr (kOp == UnaryOp::kExp) {
    // Highway's Exp is valid on [-FLT_MAX, 104]; above ln(FLT_MAX) the result is +inf.
    const V r = hn::Exp(d, hn::Min(x, hn::Set(d, 100.0f)));
    return KeepNaN(x, hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.72283935546875f)), inf, r));
  } else if constexpr (kOp == UnaryOp::kLog) {
    // Highway's Log is valid on (0, FLT_MAX]: 0 -> -inf, negative -> NaN, +inf -> +inf.
    V r = hn::Log(d, x);
    r = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Neg(inf), r);
    r = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Set(d, std::numeric_limits<float>::quiet_NaN()),
                       r);
    r = hn::IfThenElse(hn::Eq(x, inf), inf, r);
    return KeepNaN(x, r);
  } else if constexpr (kOp == UnaryOp::kTanh) {
    return KeepNaN(x, hn::Tanh(d, x));
  } else if constexpr (kOp == UnaryOp::kSigmoid) {
    const V one = hn::Set(d, 1.0f);
    return hn::Div(one, hn::Add(one, UnaryVec<UnaryOp::kExp>(d, hn::Neg(x))));
  } else if constexpr (kOp == UnaryOp::kGelu) {
    const V x3 = hn::Mul(hn::Mul(x, x), x);
    const V inner =
        hn::Mul(hn::Set(d, scalar::kGeluScale), hn::MulAdd(hn::Set(d, scalar::kGeluCubic), x3, x));
    const V t = UnaryVec<UnaryOp::kTanh>(d, inner);
    return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(hn::Set(d, 1.0f), t));
  } else if constexpr (kOp == UnaryOp::kErf) {
    return KeepNaN(x, ErfVec(d, x));
  } else {
    static_assert(kNoVectorForm<kOp>,
                  "this UnaryOp has no vector form: write one in UnaryVec (matching "
                  "scalar_ops.h)");
  }
}

// Loads n <= Lanes elements of stride s (0, 1 or any) into a vector (missing lanes are 0).
HWY_INLINE V LoadAny(D d, const float* p, int64_t s, int64_t n) {
  const size_t lanes = hn::Lanes(d);
  if (s == 1 && static_cast<size_t>(n) == lanes) return hn::LoadU(d, p);
  if (s == 0) return hn::Set(d, *p);
  HWY_ALIGN float buf[hn::MaxLanes(d)] = {};
  for (int64_t i = 0; i < n; ++i) buf[i] = p[i * s];
  return hn::Load(d, buf);
}

// Stores the first n lanes of v at stride s.
HWY_INLINE void StoreAny(D d, V v, float* p, int64_t s, int64_t n) {
  if (s == 1 && static_cast<size_t>(n) == hn::Lanes(d)) return hn::StoreU(v, d, p);
  HWY_ALIGN float buf[hn::MaxLanes(d)];
  hn::Store(v, d, buf);
  for (int64_t i = 0; i < n; ++i) p[i * s] = buf[i];
}

// Stores a whole vector at p (unit stride): around the cache when kStream (p must then be
// aligned to 64 bytes or to the vector), else an ordinary store.
template <bool kStream>
HWY_INLINE void StoreVec(D d, V v, float* p) {
  if constexpr (kStream) {
    hn::Stream(v, d, p);
  } else {
    hn::StoreU(v, d, p);
  }
}

// Elements [i, n) of a binary row, any strides, through LoadAny/StoreAny.
template <BinaryOp kOp>
HWY_INLINE void BinaryAny(D d, int64_t i, int64_t n, float* out, int64_t so, const float* a,
                          int64_t sa, const float* b, int64_t sb) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (; i < n; i += lanes) {
    const int64_t m = std::min(lanes, n - i);
    StoreAny(d, BinaryVec<kOp>(d, LoadAny(d, a + i * sa, sa, m), LoadAny(d, b + i * sb, sb, m)),
             out + i * so, so, m);
  }
}

// kStream: a unit-stride output is written with ordinary stores up to its first 64-byte
// boundary, then with streaming stores, the tail again with ordinary ones, and a lone
// unit-stride input stream (the other operand a scalar) is prefetched ahead; two are not
// (slower: docs/kernels.md). The caller fences (hwy::FlushStream) before another thread reads
// the output.
template <BinaryOp kOp, bool kStream>
void BinaryRowT(int64_t n, float* out, int64_t so, const float* a, int64_t sa, const float* b,
                int64_t sb) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if (kStream && so == 1) {
    i = ElementsBeforeLine(out, n);
    BinaryAny<kOp>(d, 0, i, out, so, a, sa, b, sb);
  }
  if (so == 1 && sa == 1 && sb == 1) {  // the common case, kept free of branches
    for (; i + lanes <= n; i += lanes) {
      StoreVec<kStream>(d, BinaryVec<kOp>(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), out + i);
    }
  } else if (so == 1 && sa == 1 && sb == 0) {
    const V vb = hn::Set(d, *b);
    for (; i + lanes <= n; i += lanes) {
      PrefetchAhead<kStream>(a + i);
      StoreVec<kStream>(d, BinaryVec<kOp>(d, hn::LoadU(d, a + i), vb), out + i);
    }
  } else if (so == 1 && sa == 0 && sb == 1) {
    const V va = hn::Set(d, *a);
    for (; i + lanes <= n; i += lanes) {
      PrefetchAhead<kStream>(b + i);
      StoreVec<kStream>(d, BinaryVec<kOp>(d, va, hn::LoadU(d, b + i)), out + i);
    }
  }
  BinaryAny<kOp>(d, i, n, out, so, a, sa, b, sb);
}

// Pow has no vector form with a tight error bound here; it runs the scalar meaning.
void PowRow(int64_t n, float* out, int64_t so, const float* a, int64_t sa, const float* b,
            int64_t sb) {
  for (int64_t i = 0; i < n; ++i) out[i * so] = std::pow(a[i * sa], b[i * sb]);
}

// As BinaryRowT, for one operand.
template <UnaryOp kOp, bool kStream>
void UnaryRowT(int64_t n, float* out, int64_t so, const float* x, int64_t sx) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // Elements [i, end) at any strides.
  const auto any = [&](int64_t i, int64_t end) {
    for (; i < end; i += lanes) {
      const int64_t m = std::min(lanes, end - i);
      StoreAny(d, UnaryVec<kOp>(d, LoadAny(d, x + i * sx, sx, m)), out + i * so, so, m);
    }
  };
  int64_t i = 0;
  if (kStream && so == 1) {
    i = ElementsBeforeLine(out, n);
    any(0, i);
  }
  if (so == 1 && sx == 1) {
    for (; i + lanes <= n; i += lanes) {
      PrefetchAhead<kStream>(x + i);
      StoreVec<kStream>(d, UnaryVec<kOp>(d, hn::LoadU(d, x + i)), out + i);
    }
  }
  any(i, n);
}

// The row of op kOp (Pow's scalar row stores element by element, never streaming).
template <BinaryOp kOp, bool kStream>
constexpr internal::BinaryRowFn BinaryRow() {
  if constexpr (kOp == BinaryOp::kPow) {
    return &PowRow;
  } else {
    return &BinaryRowT<kOp, kStream>;
  }
}

const internal::ElementwiseSimd* GetElementwiseSimd() {
#define ONEMODEL_BINARY_ROW(Name) BinaryRow<BinaryOp::k##Name, false>(),
#define ONEMODEL_UNARY_ROW(Name) &UnaryRowT<UnaryOp::k##Name, false>,
#define ONEMODEL_BINARY_STREAMING_ROW(Name) BinaryRow<BinaryOp::k##Name, true>(),
#define ONEMODEL_UNARY_STREAMING_ROW(Name) &UnaryRowT<UnaryOp::k##Name, true>,
  static const internal::ElementwiseSimd table = {
      {ONEMODEL_FOR_EACH_BINARY_OP(ONEMODEL_BINARY_ROW)},
      {ONEMODEL_FOR_EACH_UNARY_OP(ONEMODEL_UNARY_ROW)},
      {ONEMODEL_FOR_EACH_BINARY_OP(ONEMODEL_BINARY_STREAMING_ROW)},
      {ONEMODEL_FOR_EACH_UNARY_OP(ONEMODEL_UNARY_STREAMING_ROW)},
  };
#undef ONEMODEL_BINARY_ROW
#undef ONEMODEL_UNARY_ROW
#undef ONEMODEL_BINARY_STREAMING_ROW
#undef ONEMODEL_UNARY_STREAMING_ROW
  return &table;
}

}  // namespace onemodel::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onemodel::internal {
ONEMODEL_SIMD_TABLE_LOOKUP(ElementwiseSimd, GetElementwiseSimd)
}  // namespace onemodel::internal
#endif
