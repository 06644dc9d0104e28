"""Client-side shape and type inference for the operations of docs/protocol.md section 5.

The tensor API (onemodel.lazy_tensor) uses it so that `x.shape` and `x.dtype` of an operation
not yet sent need no round trip. It only predicts: the server stays the judge. When a shape
cannot be predicted (an unknown operation, inputs that do not fit), infer_shape returns None
and the shape is fetched when it is asked for; the server then reports the error.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence, Tuple

from . import tensors as _t

Shape = Tuple[int, ...]
Attrs = Dict[str, Any]
FLOAT = _t.DataType.FLOAT
# operations whose output keeps the input's data type (the rest compute FLOAT, or Cast)
SAME_TYPE = frozenset({'Contiguous', 'Copy', 'Detach', 'ToLayout'})
# the comparisons: BOOL results, never recorded
COMPARISONS = ('Equal', 'Less', 'LessEqual', 'Greater', 'GreaterEqual')
# operations that never record for backward (the optimizers update their inputs in place)
# the index searches: INT64 results, never recorded
ARG_EXTREMA = ('ArgMax', 'ArgMin')
NOT_DIFFERENTIABLE = frozenset({'Detach', 'SGD', 'AdamW', 'ClipGradNorm', 'Grad'}
                               | set(COMPARISONS)
                               | set(ARG_EXTREMA))
# the optimizers return the new step count, an INT64 scalar (ClipGradNorm: the FLOAT norm)
_STEP_COUNTERS = frozenset({'SGD', 'AdamW'})
# the losses over class indices
_CLASS_LOSSES = ('CrossEntropy', 'NLLLoss')
# the grad_fn name the server gives (docs/protocol.md section 3)
GRAD_FN_NAME = {'Transpose': 'Permute', 'Split': 'Slice'}


def _axis(a: int, rank: int) -> int:
    """A dimension index in [0, rank), or ValueError."""
    if not -rank <= a < max(rank, 1):
        raise ValueError('axis %d out of range for rank %d' % (a, rank))
    return a % rank if rank else 0


def _broadcast(*shapes: Shape) -> Shape:
    """numpy broadcasting of `shapes` (np.broadcast_shapes, a few times faster on the tuples of
    one operation); ValueError when they do not broadcast."""
    rank = max(len(x) for x in shapes)
    out = []
    for i in range(rank):
        extents = {x[i - rank + len(x)] for x in shapes if i - rank + len(x) >= 0}
        extents.discard(1)
        if len(extents) > 1:
            raise ValueError('shapes %s do not broadcast' % (shapes,))
        out.append(extents.pop() if extents else 1)
    return tuple(out)


def _matmul(a: Shape, b: Shape) -> Shape:
    if not a or not b:
        raise ValueError('MatMul of a scalar')
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError('inner dimensions differ')
    out = _broadcast(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def _reduce(x: Shape, axes: Sequence[int], keepdims: int) -> Shape:
    reduced = {_axis(a, len(x)) for a in axes} if axes else set(range(len(x)))
    if keepdims:
        return tuple(1 if i in reduced else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in reduced)


def _reshape(x: Shape, shape: Sequence[int]) -> Shape:
    count = math.prod(x)  # (math.prod: exact, and several times faster than np.prod on tuples)
    shape = [int(d) for d in shape]
    if shape.count(-1) == 1:
        known = math.prod([d for d in shape if d != -1])
        if known == 0 or count % known:
            raise ValueError('cannot infer -1')
        shape[shape.index(-1)] = count // known
    if any(d < 0 for d in shape) or math.prod(shape) != count:
        raise ValueError('element count differs')
    return tuple(shape)


def _pool_extent(size: int, kernel: int, stride: int, pad: int, dilation: int,
                 ceil_mode: bool) -> int:
    """core/kernels/kernels.h PoolOutputExtent: ONNX's and PyTorch's rule."""
    span = size + 2 * pad - (dilation * (kernel - 1) + 1)
    if span < (1 - stride if ceil_mode else 0):
        return 0
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool(x: Shape, attrs: Attrs) -> Shape:
    kh, kw = attrs['kernel_shape']
    sh, sw = attrs.get('strides', (1, 1))
    ph, pw = attrs.get('pads', (0, 0))
    dh, dw = attrs.get('dilations', (1, 1))
    ceil_mode = bool(attrs.get('ceil_mode', 0))
    n, c, h, w = x
    oh = _pool_extent(h, kh, sh, ph, dh, ceil_mode)
    ow = _pool_extent(w, kw, sw, pw, dw, ceil_mode)
    if oh < 1 or ow < 1:
        raise ValueError('window too large')
    return (n, c, oh, ow)


def _conv_geometry(attrs: Attrs) -> Tuple[int, ...]:
    """Conv2d's and ConvTranspose2d's strides, pads (top, left, bottom, right), dilations."""
    sh, sw = attrs.get('strides', (1, 1))
    pads = list(attrs.get('pads', (0, 0, 0, 0)))
    pt, pl, pb, pr = pads * 2 if len(pads) == 2 else pads
    dh, dw = attrs.get('dilations', (1, 1))
    return sh, sw, pt, pl, pb, pr, dh, dw


def _conv(x: Shape, w: Shape, attrs: Attrs) -> Shape:
    sh, sw, pt, pl, pb, pr, dh, dw = _conv_geometry(attrs)
    n, c, h, wi = x
    k, cg, kh, kw = w
    if cg * attrs.get('group', 1) != c:
        raise ValueError('weights do not match the input channels')
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wi + pl + pr - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise ValueError('kernel too large')
    return (n, k, oh, ow)


def _conv_transpose(x: Shape, w: Shape, attrs: Attrs) -> Shape:
    sh, sw, pt, pl, pb, pr, dh, dw = _conv_geometry(attrs)
    oph, opw = attrs.get('output_padding', (0, 0))
    n, c, h, wi = x
    cw, kg, kh, kw = w
    if cw != c:
        raise ValueError('weights do not match the input channels')
    oh = (h - 1) * sh - pt - pb + dh * (kh - 1) + oph + 1
    ow = (wi - 1) * sw - pl - pr + dw * (kw - 1) + opw + 1
    if oh < 1 or ow < 1:
        raise ValueError('pads remove the output')
    return (n, kg * attrs.get('group', 1), oh, ow)


def _slice(x: Shape, attrs: Attrs) -> Shape:
    d = _axis(attrs.get('dim', 0), len(x))
    count = len(range(*slice(attrs['start'], attrs['stop'], attrs.get('step', 1)).indices(x[d])))
    return x[:d] + (count,) + x[d + 1:]


def _squeeze(x: Shape, attrs: Attrs) -> Shape:
    axes = {_axis(a, len(x)) for a in attrs.get('axes', ())}
    if not axes:
        return tuple(d for d in x if d != 1)
    if any(x[a] != 1 for a in axes):
        raise ValueError('squeezed dimension is not 1')
    return tuple(d for i, d in enumerate(x) if i not in axes)


def _unsqueeze(x: Shape, attrs: Attrs) -> Shape:
    d = attrs.get('dim', 0)
    if not -(len(x) + 1) <= d <= len(x):
        raise ValueError('dim out of range')
    d = d % (len(x) + 1)
    return x[:d] + (1,) + x[d:]


def _permute(x: Shape, perm: Sequence[int]) -> Shape:
    if sorted(_axis(p, len(x)) for p in perm) != list(range(len(x))):
        raise ValueError('not a permutation')
    return tuple(x[_axis(p, len(x))] for p in perm)


def _transpose(x: Shape, attrs: Attrs) -> Shape:
    d0, d1 = _axis(attrs.get('dim0', 0), len(x)), _axis(attrs.get('dim1', 1), len(x))
    out = list(x)
    out[d0], out[d1] = out[d1], out[d0]
    return tuple(out)


def _expand(x: Shape, shape: Sequence[int]) -> Shape:
    shape = tuple(int(d) for d in shape)
    if len(shape) < len(x) or _broadcast(x, shape) != shape:
        raise ValueError('does not expand')
    return shape


def _gather(data: Shape, indices: Shape, axis: int) -> Shape:
    _axis(axis, len(data))
    axis %= len(data)
    return data[:axis] + indices + data[axis + 1:]


def _concat(xs: Sequence[Shape], axis: int) -> Shape:
    _axis(axis, len(xs[0]))
    axis %= len(xs[0])
    rest = [x[:axis] + x[axis + 1:] for x in xs]
    if any(len(x) != len(xs[0]) or r != rest[0] for x, r in zip(xs, rest)):
        raise ValueError('extents differ outside the axis')
    return xs[0][:axis] + (sum(x[axis] for x in xs),) + xs[0][axis + 1:]


def _split(x: Shape, attrs: Attrs) -> Shape:
    axis = attrs.get('axis', 0)
    _axis(axis, len(x))
    axis %= len(x)
    n, index = x[axis], attrs['index']
    sizes = list(attrs.get('split', ()))
    if not sizes:  # ONNX: ceil(n / num_outputs) each, the last shorter
        k = attrs.get('num_outputs', 1)
        each = -(-n // k)
        sizes = [max(0, min(each, n - i * each)) for i in range(k)]
    if sum(sizes) != n or min(sizes) < 0 or not 0 <= index < len(sizes):
        raise ValueError('bad split')
    return x[:axis] + (sizes[index],) + x[axis + 1:]


def _pad(x: Shape, pads: Sequence[int]) -> Shape:
    rank = len(x)
    if len(pads) != 2 * rank:
        raise ValueError('pads needs 2 * rank values')
    out = tuple(d + int(pads[i]) + int(pads[i + rank]) for i, d in enumerate(x))
    if any(d < 0 for d in out):
        raise ValueError('crops more than an axis holds')
    return out


def _tile(x: Shape, repeats: Sequence[int]) -> Shape:
    if len(repeats) != len(x) or any(int(r) < 0 for r in repeats):
        raise ValueError('repeats needs one value >= 0 per axis')
    return tuple(d * int(r) for d, r in zip(x, repeats))


_BINARY = ('Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Pow') + COMPARISONS
_SAME_SHAPE = ('Neg', 'Abs', 'Exp', 'Log', 'Sqrt', 'Relu', 'Sigmoid', 'Tanh', 'Gelu', 'Softmax',
               'LogSoftmax', 'Cast', 'Contiguous', 'Copy', 'Detach', 'ToLayout', 'Erf', 'Clip',
               'LeakyRelu')

_RULES = {
    'MatMul': lambda s, a: _matmul(s[0], s[1]),
    'MaxPool2d': lambda s, a: _pool(s[0], a),
    'Conv2d': lambda s, a: _conv(s[0], s[1], a),
    'ReluMaxPool2d': lambda s, a: _pool(s[0], a),
    'AvgPool2d': lambda s, a: _pool(s[0], a),
    'GlobalAvgPool2d': lambda s, a: s[0][:2] + (1, 1),
    'Sum': lambda s, a: _reduce(s[0], a.get('axes', ()), a.get('keepdims', 0)),
    'Mean': lambda s, a: _reduce(s[0], a.get('axes', ()), a.get('keepdims', 0)),
    'Reshape': lambda s, a: _reshape(s[0], a['shape']),
    'Permute': lambda s, a: _permute(s[0], a.get('perm', ())),
    'Transpose': lambda s, a: _transpose(s[0], a),
    'Slice': lambda s, a: _slice(s[0], a),
    'Expand': lambda s, a: _expand(s[0], a['shape']),
    'Squeeze': lambda s, a: _squeeze(s[0], a),
    'Unsqueeze': lambda s, a: _unsqueeze(s[0], a),
    'Where': lambda s, a: _broadcast(s[0], s[1], s[2]),
    'Embedding': lambda s, a: s[1] + (s[0][1],) if len(s[0]) == 2 else None,
    'Gather': lambda s, a: _gather(s[0], s[1], a.get('axis', 0)),
    'Concat': lambda s, a: _concat(s, a.get('axis', 0)),
    'Split': lambda s, a: _split(s[0], a),
    'ReduceMax': lambda s, a: _reduce(s[0], a.get('axes', ()), a.get('keepdims', 0)),
    'ReduceMin': lambda s, a: _reduce(s[0], a.get('axes', ()), a.get('keepdims', 0)),
    'ArgMax': lambda s, a: _reduce(s[0], [a.get('axis', 0)], a.get('keepdims', 0)),
    'ArgMin': lambda s, a: _reduce(s[0], [a.get('axis', 0)], a.get('keepdims', 0)),
    'Pad': lambda s, a: _pad(s[0], a['pads']),
    'Tile': lambda s, a: _tile(s[0], a['repeats']),
    'CumSum': lambda s, a: (_axis(a.get('axis', 0), len(s[0])), s[0])[1],
    'ConvTranspose2d': lambda s, a: _conv_transpose(s[0], s[1], a),
    'Grad': lambda s, a: s[1 + a['index']],  # X[index]'s shape
}
_RULES.update({op: (lambda s, a: _broadcast(s[0], s[1])) for op in _BINARY})
_RULES.update({op: (lambda s, a: s[0]) for op in _SAME_SHAPE})
_RULES.update({op: (lambda s, a: ()) for op in ('SGD', 'AdamW', 'ClipGradNorm')})
_RULES.update({op: (lambda s, a: s[0]) for op in ('LayerNorm', 'RMSNorm', 'BatchNorm2d')})
_RULES.update({op: (lambda s, a: s[1] if a.get('reduction') == 'none' else ())
               for op in _CLASS_LOSSES})
_RULES.update({
    'MSELoss': lambda s, a: s[0] if a.get('reduction') == 'none' else (),
    'Dropout': lambda s, a: s[0],
})
KNOWN = frozenset(_RULES)
# the output DataType of the known operations whose type does not depend on their inputs
_FIXED_TYPES = {op: FLOAT for op in KNOWN - SAME_TYPE - {'Cast', 'Grad'}}
_FIXED_TYPES.update({op: _t.DataType.INT64 for op in _STEP_COUNTERS | set(ARG_EXTREMA)})
_FIXED_TYPES.update({op: _t.DataType.BOOL for op in COMPARISONS})


def infer_shape(op: str, shapes: Sequence[Optional[Shape]], attrs: Attrs) -> Optional[Shape]:
    """The output shape of `op` over inputs of `shapes` (tuples; None = unknown), or None when
    it cannot be predicted (the server will tell, or refuse)."""
    rule = _RULES.get(op)
    if rule is None or None in shapes:
        return None
    try:
        return tuple(map(int, rule(shapes, attrs)))
    except (ValueError, KeyError, TypeError, IndexError, ZeroDivisionError):
        return None


def infer_dtype(op: str, dtypes: Sequence[Any], attrs: Attrs) -> Optional[_t.DataType]:
    """The output DataType of `op` over inputs of `dtypes` (None when unknown)."""
    if op == 'Cast':
        try:
            return _t.data_type(attrs['to'])
        except (KeyError, ValueError):
            return None
    if op in SAME_TYPE:
        return dtypes[0] if dtypes else None
    if op == 'Grad':  # X[index]'s type
        try:
            return dtypes[1 + int(attrs['index'])]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return _FIXED_TYPES.get(op)


def records(op: str, input_requires_grad: Sequence[bool], dtypes: Sequence[Any], attrs: Attrs,
            grad_enabled: bool) -> bool:
    """Whether the server records `op` for backward (so its output requires gradients)."""
    if not grad_enabled or op in NOT_DIFFERENTIABLE or not any(input_requires_grad):
        return False
    if op == 'Where':  # the condition is BOOL and never requires gradients
        return any(input_requires_grad[1:])
    # the indices and the class losses' targets are integers; class weights get no gradient
    if op in ('Embedding', 'Gather') or op in _CLASS_LOSSES:
        return input_requires_grad[0]
    if op == 'Cast':
        out = infer_dtype(op, dtypes, attrs)
        return dtypes[0] in _t.FLOATING and out in _t.FLOATING
    return True
