"""How close a onemodeld result must be to ONNX's expected output, per tolerance family.

ONNX computed the expected outputs with numpy (float32 unless the test says otherwise), so the
question is how far two float32 computations of the same formula may differ:

- exact: IEEE operations numpy rounds once (+, -, *, /, sqrt, max, min, abs, neg, relu, max
  pooling, data movement, casts, comparisons, Where, Clip, LeakyRelu): both kernel choices
  must give the same bits (docs/kernels.md: the fast kernels are bit-identical to the
  reference for these). Only NaN-ness is compared
  for NaNs, since numpy does not promise payloads.
- Exp, Log, Tanh, Sigmoid, Pow, Erf: a ULP budget. Exact kernels call the C library (within 1 ULP)
  and numpy's float32 loops are within about 2 ULP of the true value; ONNX's Sigmoid is
  1 / (1 + exp(-x)) in float32, three more roundings: 4 ULP covers every pair. Fast kernels
  add docs/kernels.md's bound against the reference (Exp 1, Log 1, Tanh 4, Sigmoid 4, Pow 0,
  Erf 1).
- matmul: docs/kernels.md's MatMul bound doubled, |r - e| <= 2 (K 2^-22 S + (K + 1/2) 2^-149)
  with S = |A| |B|: numpy's float32 product is itself a float computation within the
  one-sided bound of the exact value, and so is either kernel's result.
- reduction (ReduceSum, ReduceMean, Softmax, LogSoftmax; the same code for both kernel
  choices, double accumulation): numpy sums in float32, at most K u S away for K terms; the
  tests reduce at most a few dozen values of order 1, so rtol 1e-5 and atol 1e-6, the budget
  of ONNX's own backend tests, cover it with room. Conv too: its tests sum at most 9 products
  of order 1 per output, and the fast kernel stays within the Conv2d bound of docs/kernels.md
  (9 · 2^-22 · S), far inside that budget.
- Gelu (0.5·x·(1 + t), t = erf(x/√2) or the tanh term): the ULP budget of the transcendental
  ones (plus docs/kernels.md's 16 ULP for the fast kernels), or an absolute 2^-22·max(1, |x|).
  Where t is near -1 (x below about -2) 1 + t cancels: each side's t is within ULP_EXACT ULP of
  1 (4·2^-24 absolute), which 0.5·|x| scales to 2^-23·|x| per side, 2^-22·|x| for the pair.
  There the result carries few correct bits in any float32 computation (ONNX Runtime's too).
"""

import numpy as np

ULP_EXACT = 4
FAST_ULP = {'Exp': 1, 'Log': 1, 'Tanh': 4, 'Sigmoid': 4, 'Pow': 0, 'Erf': 1}   # docs/kernels.md
GELU_FAST_ULP = 16                                                             # docs/kernels.md


def _ordered(a):
    """float32 bit patterns as integers in the order of the values (-0 next to +0)."""
    i = a.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulp_distance(a, b):
    return np.abs(_ordered(a) - _ordered(b))


def _nan_check(actual, expected):
    """None when NaNs sit in the same places, else the reason."""
    if not np.array_equal(np.isnan(actual), np.isnan(expected)):
        return 'NaN at different positions'
    return None


def check(family, kernels, actual, expected, inputs):
    """None when `actual` is close enough to `expected` for `family` under `kernels`
    ('exact' or 'fast'), else a one-line reason with the worst element."""
    if actual.dtype != expected.dtype:
        return 'type %s, expected %s' % (actual.dtype, expected.dtype)
    if actual.shape != expected.shape:
        return 'shape %s, expected %s' % (list(actual.shape), list(expected.shape))
    if actual.size == 0:
        return None
    if not np.issubdtype(expected.dtype, np.floating):
        bad = actual != expected
        return _worst('values differ', bad, actual, expected) if bad.any() else None
    reason = _nan_check(actual, expected)
    if reason:
        return reason
    ok = np.isnan(expected)
    if family == 'exact':
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[expected.dtype.itemsize]
        bad = ~ok & (actual.view(width) != expected.view(width))
        return _worst('bits differ', bad, actual, expected) if bad.any() else None
    if family in FAST_ULP:
        budget = ULP_EXACT + (FAST_ULP[family] if kernels == 'fast' else 0)
        dist = np.where(ok, 0, ulp_distance(actual, expected))
        bad = dist > budget
        return _worst('%d ULP > %d' % (dist.max(), budget), bad, actual, expected) if bad.any() else None
    if family == 'Gelu':
        budget = ULP_EXACT + (GELU_FAST_ULP if kernels == 'fast' else 0)
        dist = np.where(ok, 0, ulp_distance(actual, expected))
        x = np.abs(inputs[0].astype(np.float64))
        cancelled = np.abs(actual.astype(np.float64) - expected) <= 2.0 ** -22 * np.maximum(1, x)
        bad = (dist > budget) & ~cancelled
        return _worst('%d ULP > %d and beyond 2^-22 max(1, |x|)' % (dist[bad].max(), budget),
                      bad, actual, expected) if bad.any() else None
    if family == 'matmul':
        a, b = (np.abs(x.astype(np.float64)) for x in inputs)
        k = a.shape[-1]
        s = np.matmul(a, b)
        bound = 2 * (k * 2.0 ** -22 * s + (k + 0.5) * 2.0 ** -149)
        bad = ~ok & (np.abs(actual.astype(np.float64) - expected) > bound)
        return _worst('outside the MatMul bound', bad, actual, expected) if bad.any() else None
    if family == 'reduction':
        bad = ~ok & ~np.isclose(actual, expected, rtol=1e-5, atol=1e-6)
        return _worst('outside rtol 1e-5 atol 1e-6', bad, actual, expected) if bad.any() else None
    raise ValueError('unknown tolerance family %r' % family)


def _worst(what, bad, actual, expected):
    idx = np.argwhere(bad)[0]
    t = tuple(int(i) for i in idx)
    return '%s at %d elements, first %s: got %r, expected %r' % (
        what, int(bad.sum()), list(t), actual[t].item(), expected[t].item())
