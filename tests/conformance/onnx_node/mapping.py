"""The one table from ONNX nodes to onemodeld operations (docs/protocol.md section 5).

MAPPING[op_type] is an Entry: the tolerance family the results are checked with (see
compare.py) and a translation that turns one ONNX node, with its test inputs, into a list of
onemodeld operations whose last output is the node's output. A translation reads every
attribute and input through Node, which remembers what was read: an attribute or input left
unread, a second output, an input type the operation cannot take, or a value the translation
cannot carry over raises NotExpressible with the reason, so nothing passes by being ignored.

ONNX inputs that onemodeld takes as attributes (Reshape's shape, Slice's starts, the axes of
opset 13) are read from the test's input values, as a converter reads a constant initializer.
"""

import math

import numpy as np

FLOAT = 1           # onnx.TensorProto.FLOAT
BOOL = 9            # onnx.TensorProto.BOOL
INT32 = 6           # onnx.TensorProto.INT32
INT64 = 7           # onnx.TensorProto.INT64
NO_CLASS = -2 ** 63  # an ignore_index no label equals (ONNX's losses without one)
STRING = 8          # never expressible: onemodeld has no string tensors (protocol.md 4.1)


class NotExpressible(Exception):
    """The node (its op, an attribute value, an input type or shape) has no onemodeld form."""


class TensorInput:
    """ONNX input `index`, sent inline with the Run as the test's TensorProto."""

    def __init__(self, index):
        self.index = index


class Node:
    """One ONNX node with its test inputs (TensorProtos and numpy values, None where omitted)."""

    def __init__(self, node, opset, protos, arrays, n_outputs):
        import onnx.helper
        self.op_type = node.op_type
        self.opset = opset
        self.protos = protos
        self.arrays = arrays
        self.n_outputs = n_outputs
        self.attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        self._read_attrs = set()
        self._read_inputs = set()
        self._outputs_read = False
        self._unmapped_outputs = None

    def attr(self, name, default=None):
        """The attribute's value (bytes decoded), or `default` when absent."""
        self._read_attrs.add(name)
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v

    def has_input(self, i):
        return i < len(self.arrays) and self.arrays[i] is not None

    def tensor(self, i, any_type=False):
        """Input i as a tensor operand; onemodeld's operations compute on FLOAT only."""
        if not self.has_input(i):
            raise NotExpressible('input %d is required by the translation but omitted' % i)
        self._read_inputs.add(i)
        code = self.protos[i].data_type
        if code == STRING or (not any_type and code != FLOAT):
            raise NotExpressible('input %d is %s; onemodeld computes on FLOAT only'
                                 % (i, type_name(code)))
        return TensorInput(i)

    def shape(self, i):
        return tuple(int(d) for d in self.protos[i].dims)

    def ints_input(self, i, default=None):
        """Input i read as constant ints (it becomes an attribute), or `default` if omitted."""
        if not self.has_input(i):
            return default
        self._read_inputs.add(i)
        return [int(v) for v in np.asarray(self.arrays[i]).reshape(-1)]

    def outputs(self):
        """The node's output count, for a translation that gives every output (by_output)."""
        self._outputs_read = True
        return self.n_outputs

    def only_first_output(self, what):
        """The node's further outputs (`what`, optional in ONNX) are left out: the operations
        compute the first output only, which is the one compared."""
        self._unmapped_outputs = what

    def check_all_read(self):
        for name in sorted(set(self.attrs) - self._read_attrs):
            raise NotExpressible('attribute %s = %r has no onemodeld counterpart'
                                 % (name, self.attrs[name]))
        for i, a in enumerate(self.arrays):
            if a is not None and i not in self._read_inputs:
                raise NotExpressible('input %d has no onemodeld counterpart' % i)
        if self.n_outputs != 1 and not self._outputs_read and self._unmapped_outputs is None:
            raise NotExpressible('%d outputs; onemodeld operations have one' % self.n_outputs)


def type_name(code):
    import onnx
    return onnx.TensorProto.DataType.Name(code)


def op(name, *inputs, **attrs):
    """One onemodeld operation; an int input is the output of an earlier one of the list."""
    return {'op': name, 'inputs': list(inputs), 'attrs': attrs}


def by_output(ops_per_output):
    """Operations for a node of several outputs: one list per output, in order, concatenated;
    each list's last operation is marked with the output it gives ('node_output')."""
    ops = []
    for k, group in enumerate(ops_per_output):
        ops.extend(group)
        ops[-1] = dict(ops[-1], node_output=k)
    return ops


def _require(condition, reason):
    if not condition:
        raise NotExpressible(reason)


# ---- translations ------------------------------------------------------------------------

def same(name, any_type=False):
    """ONNX op -> onemodeld op `name` with the same positional tensor inputs, no attributes."""
    def translate(n):
        return [op(name, *[n.tensor(i, any_type) for i in range(len(n.arrays))])]
    return translate


def chained(name, divide_by_count=False):
    """A variadic ONNX op as a left fold of a binary one, as ONNX's reference computes it:
    Sum is ((a + b) + c), Max is max(max(a, b), c); Mean divides the sum by the count."""
    def translate(n):
        _require(len(n.arrays) >= 1, 'no inputs')
        ops = [op('Copy', n.tensor(0))] if len(n.arrays) == 1 else []
        for i in range(1, len(n.arrays)):
            ops.append(op(name, n.tensor(0) if i == 1 else len(ops) - 1, n.tensor(i)))
        if divide_by_count:
            ops.append(op('Div', len(ops) - 1, float(len(n.arrays))))
        return ops
    return translate


def reciprocal(n):
    return [op('Div', 1.0, n.tensor(0))]


def _pool2d(n, name, dilations=True):
    """The window attributes onemodeld's 2-D pooling takes (kernel_shape, strides, pads both
    sides alike, dilations, ceil_mode), read from an ONNX pooling node."""
    _require(len(n.shape(0)) == 4, 'input of rank %d; onemodeld has %s (rank 4) only'
             % (len(n.shape(0)), name))
    kernel = list(n.attr('kernel_shape'))
    strides = list(n.attr('strides', [1, 1]))
    dilation = list(n.attr('dilations', [1, 1]))
    _require(dilations or all(d == 1 for d in dilation), 'dilations other than 1')
    extent = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    pads = _pool_pads(n.attr('auto_pad', 'NOTSET'), n.attr('pads', [0, 0, 0, 0]),
                      n.shape(0)[2:], extent, strides)
    _require(pads[:2] == pads[2:], 'asymmetric pads %s; %s pads both sides alike' % (pads, name))
    _require(all(p < k for p, k in zip(pads, kernel)), 'pads %s not below the kernel %s'
             % (pads, kernel))
    attrs = {'kernel_shape': kernel, 'strides': strides, 'pads': pads[:2],
             'ceil_mode': n.attr('ceil_mode', 0)}
    if dilations:
        attrs['dilations'] = dilation
    return attrs


def max_pool(n):
    x = n.tensor(0)
    _require(n.attr('storage_order', 0) == 0, 'storage_order = 1')
    return [op('MaxPool2d', x, **_pool2d(n, 'MaxPool2d'))]


def average_pool(n):
    x = n.tensor(0)
    attrs = _pool2d(n, 'AvgPool2d', dilations=False)
    attrs['count_include_pad'] = n.attr('count_include_pad', 0)
    return [op('AvgPool2d', x, **attrs)]


def global_average_pool(n):
    _require(len(n.shape(0)) == 4, 'input of rank %d; onemodeld has GlobalAvgPool2d (rank 4) only'
             % len(n.shape(0)))
    return [op('GlobalAvgPool2d', n.tensor(0))]


def conv(n):
    """Conv over rank-4 inputs -> Conv2d; auto_pad becomes explicit pads (over the dilated
    kernel), kernel_shape must be W's."""
    x, w = n.tensor(0), n.tensor(1)
    _require(len(n.shape(0)) == 4, 'input of rank %d; onemodeld has Conv2d (rank 4) only'
             % len(n.shape(0)))
    kernel = list(n.shape(1)[2:])
    _require(list(n.attr('kernel_shape', kernel)) == kernel,
             'kernel_shape %s differs from the weights %s' % (n.attr('kernel_shape'), kernel))
    strides = list(n.attr('strides', [1, 1]))
    dilations = list(n.attr('dilations', [1, 1]))
    dilated = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    pads = _pool_pads(n.attr('auto_pad', 'NOTSET'), n.attr('pads', [0, 0, 0, 0]),
                      n.shape(0)[2:], dilated, strides)
    inputs = [x, w] + ([n.tensor(2)] if n.has_input(2) else [])
    return [op('Conv2d', *inputs, strides=strides, pads=pads, dilations=dilations,
               group=int(n.attr('group', 1)))]


def conv_transpose(n):
    """ConvTranspose over rank-4 inputs -> ConvTranspose2d; output_shape and auto_pad become
    explicit pads by ONNX's rule (a negative total padding becomes output_padding)."""
    x, w = n.tensor(0), n.tensor(1)
    _require(len(n.shape(0)) == 4, 'input of rank %d; onemodeld has ConvTranspose2d (rank 4) '
             'only' % len(n.shape(0)))
    kernel = list(n.shape(1)[2:])
    _require(list(n.attr('kernel_shape', kernel)) == kernel,
             'kernel_shape %s differs from the weights %s' % (n.attr('kernel_shape'), kernel))
    strides = list(n.attr('strides', [1, 1]))
    dilations = list(n.attr('dilations', [1, 1]))
    output_padding = list(n.attr('output_padding', [0, 0]))
    pads = list(n.attr('pads', [0, 0, 0, 0]))
    auto_pad = n.attr('auto_pad', 'NOTSET')
    spatial = n.shape(0)[2:]
    wanted = n.attr('output_shape', None)
    if wanted is None and auto_pad in ('SAME_UPPER', 'SAME_LOWER'):
        wanted = [d * s for d, s in zip(spatial, strides)]
    if wanted is not None:
        wanted = list(wanted)[-2:]
        pads = [0, 0, 0, 0]
        for i in range(2):
            total = (strides[i] * (spatial[i] - 1) + output_padding[i]
                     + (kernel[i] - 1) * dilations[i] + 1 - wanted[i])
            if total < 0:
                output_padding[i] -= total
                continue
            small, big = total // 2, total - total // 2
            pads[i], pads[i + 2] = (small, big) if auto_pad == 'SAME_UPPER' else (big, small)
    inputs = [x, w] + ([n.tensor(2)] if n.has_input(2) else [])
    return [op('ConvTranspose2d', *inputs, strides=strides, pads=pads, dilations=dilations,
               group=int(n.attr('group', 1)), output_padding=output_padding)]


def _pool_pads(auto_pad, pads, spatial, kernel, strides):
    """ONNX's pads [top, left, bottom, right] after auto_pad."""
    if auto_pad in ('NOTSET', 'VALID'):
        return [0, 0, 0, 0] if auto_pad == 'VALID' else list(pads)
    total = [max((math.ceil(d / s) - 1) * s + k - d, 0) for d, k, s in zip(spatial, kernel, strides)]
    small = [t // 2 for t in total]
    big = [t - t // 2 for t in total]
    return small + big if auto_pad == 'SAME_UPPER' else big + small


def reduce(name):
    """ReduceSum / ReduceMean: axes from the attribute (older opsets) or input 1 (opset 13
    ReduceSum, opset 18); ONNX keeps dimensions by default, onemodeld does not."""
    def translate(n):
        x = n.tensor(0)
        axes = n.attr('axes', None)
        if axes is None:
            axes = n.ints_input(1, [])
        keepdims = n.attr('keepdims', 1)
        if not axes and n.attr('noop_with_empty_axes', 0):
            return [op('Copy', x)]
        attrs = {'keepdims': keepdims}
        if axes:
            attrs['axes'] = list(axes)
        return [op(name, x, **attrs)]
    return translate


def softmax(name):
    """Opset 13 and later: along `axis`. Before 13 the input is seen as 2-D [prod(dims[:axis]),
    prod(dims[axis:])] (axis default 1): Reshape, along the last axis, Reshape back."""
    def translate(n):
        x = n.tensor(0)
        if n.opset >= 13:
            return [op(name, x, axis=n.attr('axis', -1))]
        shape = n.shape(0)
        axis = n.attr('axis', 1) % max(len(shape), 1)
        rows = int(np.prod(shape[:axis], dtype=np.int64))
        return [op('Reshape', x, shape=[rows, -1]), op(name, 0, axis=-1),
                op('Reshape', 1, shape=list(shape))]
    return translate


def cast(n):
    to = n.attr('to')
    _require(to != STRING, 'cast to STRING; onemodeld has no string tensors')
    return [op('Cast', n.tensor(0, any_type=True), to=to)]


def cast_like(n):
    """CastLike takes the target type from input 1, whose values are not used."""
    n.tensor(1, any_type=True)
    return [op('Cast', n.tensor(0, any_type=True), to=n.protos[1].data_type)]


def reshape(n):
    """ONNX's 0 copies the input's extent unless allowzero = 1."""
    x = n.tensor(0)
    shape = n.ints_input(1)
    allowzero = n.attr('allowzero', 0)
    dims = n.shape(0)
    shape = [dims[i] if s == 0 and not allowzero else s for i, s in enumerate(shape)]
    return [op('Reshape', x, shape=shape)]


def flatten(n):
    x = n.tensor(0)
    dims = n.shape(0)
    axis = n.attr('axis', 1)
    axis = axis + len(dims) if axis < 0 else axis
    return [op('Reshape', x, shape=[int(np.prod(dims[:axis], dtype=np.int64)), -1])]


def transpose(n):
    x = n.tensor(0)
    perm = n.attr('perm', list(reversed(range(len(n.shape(0))))))
    return [op('Permute', x, perm=list(perm))]


def expand(n):
    """ONNX broadcasts both ways (a target extent 1 keeps the input's): onemodeld's Expand
    takes the broadcast shape."""
    x = n.tensor(0)
    target = np.broadcast_shapes(n.shape(0), tuple(n.ints_input(1)))
    return [op('Expand', x, shape=list(target))]


def squeeze(n):
    x = n.tensor(0)
    axes = n.attr('axes', None)
    if axes is None:
        axes = n.ints_input(1)
    return [op('Squeeze', x, axes=list(axes))] if axes else [op('Squeeze', x)]


def unsqueeze(n):
    """One Unsqueeze per axis, in increasing order of the output position."""
    x = n.tensor(0)
    axes = n.attr('axes', None)
    if axes is None:
        axes = n.ints_input(1)
    rank = len(n.shape(0)) + len(axes)
    ops = []
    for a in sorted(d % rank for d in axes):
        ops.append(op('Unsqueeze', x if not ops else len(ops) - 1, dim=a))
    return ops


def slice_(n):
    """One Slice per listed axis; ONNX clamps like numpy, which is what Slice does."""
    x = n.tensor(0)
    starts, ends = n.ints_input(1), n.ints_input(2)
    axes = n.ints_input(3, list(range(len(starts))))
    steps = n.ints_input(4, [1] * len(starts))
    ops = []
    for a, b, e, s in zip(axes, starts, ends, steps):
        ops.append(op('Slice', x if not ops else len(ops) - 1, dim=a, start=b, stop=e, step=s))
    return ops or [op('Copy', x)]


def float_input(n, i):
    """Input i, a FLOAT scalar, read as a constant (it becomes an attribute); None if omitted."""
    if not n.has_input(i):
        return None
    n.tensor(i)  # FLOAT only
    values = np.asarray(n.arrays[i]).reshape(-1)
    _require(values.size == 1, 'input %d has %d values; a bound is one value' % (i, values.size))
    return float(values[0])


def clip(n):
    """Before opset 11 the bounds are attributes, from 11 optional scalar inputs; an absent
    bound is unbounded, as Clip's defaults."""
    x = n.tensor(0)
    if n.opset < 11:
        lo, hi = n.attr('min', None), n.attr('max', None)
    else:
        lo, hi = float_input(n, 1), float_input(n, 2)
    attrs = {}
    if lo is not None:
        attrs['min'] = float(lo)
    if hi is not None:
        attrs['max'] = float(hi)
    return [op('Clip', x, **attrs)]


def leaky_relu(n):
    return [op('LeakyRelu', n.tensor(0), alpha=float(n.attr('alpha', 0.01)))]


def where(n):
    """The condition must be BOOL; the values FLOAT."""
    cond = n.tensor(0, any_type=True)
    _require(n.protos[0].data_type == BOOL, 'condition is %s; Where takes BOOL'
             % type_name(n.protos[0].data_type))
    return [op('Where', cond, n.tensor(1), n.tensor(2))]


def gelu(n):
    """ONNX's Gelu (opset 20) defaults to the erf form, onemodeld's to tanh: always sent."""
    return [op('Gelu', n.tensor(0), approximate=n.attr('approximate', 'none'))]


def index_input(n, i):
    """Input i, INT32 or INT64 indices, as a tensor operand."""
    t = n.tensor(i, any_type=True)
    _require(n.protos[i].data_type in (6, 7), 'indices are %s; Gather takes INT32 or INT64'
             % type_name(n.protos[i].data_type))
    return t


def gather(n):
    return [op('Gather', n.tensor(0), index_input(n, 1), axis=n.attr('axis', 0))]


def concat(n):
    return [op('Concat', *[n.tensor(i) for i in range(len(n.arrays))], axis=n.attr('axis'))]


def split(n):
    """One Split operation per ONNX output (onemodeld gives one output per operation): the
    sizes from input 1 (opset 13) or the `split` attribute; without them, num_outputs (opset
    18) or the output count, pieces of ceil(n / count) as ONNX."""
    x = n.tensor(0)
    sizes = n.attr('split', None)
    if sizes is None:
        sizes = n.ints_input(1)
    count = n.outputs()
    attrs = {'axis': n.attr('axis', 0)}
    if sizes:
        _require(len(sizes) == count, '%d sizes for %d outputs' % (len(sizes), count))
        attrs['split'] = list(sizes)
    else:
        _require(n.attr('num_outputs', count) == count, 'num_outputs differs from the outputs')
        attrs['num_outputs'] = count
    return by_output([[op('Split', x, index=k, **attrs)] for k in range(count)])


def arg_extremum(name):
    """ArgMax / ArgMin: one axis (default 0), keepdims (ONNX keeps by default), and
    select_last_index; the INT64 output as ONNX's."""
    def translate(n):
        x = n.tensor(0)
        return [op(name, x, axis=int(n.attr('axis', 0)), keepdims=int(n.attr('keepdims', 1)),
                   select_last_index=int(n.attr('select_last_index', 0)))]
    return translate


def pad(n):
    """Pad: pads and the constant are attributes before opset 11, inputs 1 and 2 after; the
    optional axes input (opset 18) spreads the pads over the axes it names."""
    x = n.tensor(0)
    rank = len(n.shape(0))
    if n.opset < 11:
        pads, value = list(n.attr('pads')), float(n.attr('value', 0.0))
    else:
        pads = n.ints_input(1)
        value = float_input(n, 2)
        value = 0.0 if value is None else float(value)
        axes = n.ints_input(3)
        if axes is not None:
            full = [0] * (2 * rank)
            for k, a in enumerate(axes):
                full[a % rank] = pads[k]
                full[a % rank + rank] = pads[k + len(axes)]
            pads = full
    return [op('Pad', x, pads=pads, mode=n.attr('mode', 'constant'), value=value)]


def tile(n):
    return [op('Tile', n.tensor(0), repeats=n.ints_input(1))]


def cumsum(n):
    """CumSum: the axis is input 1 (a 0-D or 1-element constant)."""
    x = n.tensor(0)
    axis = n.ints_input(1)
    _require(len(axis) == 1, 'axis input with %d values' % len(axis))
    return [op('CumSum', x, axis=axis[0], exclusive=int(n.attr('exclusive', 0)),
               reverse=int(n.attr('reverse', 0)))]


def layer_normalization(n):
    """LayerNormalization -> LayerNorm (axis, epsilon); float statistics only (stash_type 1).
    ONNX's node tests also ask for the Mean and InvStdDev outputs, which LayerNorm does not
    return, so those stay not expressible through check_all_read."""
    _require(n.attr('stash_type', 1) == 1, 'stash_type %r; LayerNorm keeps FLOAT statistics'
             % n.attr('stash_type'))
    inputs = [n.tensor(0), n.tensor(1)] + ([n.tensor(2)] if n.has_input(2) else [])
    return [op('LayerNorm', *inputs, axis=int(n.attr('axis', -1)),
               epsilon=float(n.attr('epsilon', 1e-5)))]


def batch_normalization(n):
    """BatchNormalization (X, scale, B, mean, var) of a rank-4 X -> BatchNorm2d (X, mean, var,
    scale, B); training_mode = 1 also outputs the running statistics, which BatchNorm2d updates
    in place instead (more than one output: not expressible)."""
    _require(len(n.shape(0)) == 4, 'input of rank %d; onemodeld has BatchNorm2d (rank 4) only'
             % len(n.shape(0)))
    x, scale, bias, mean, var = (n.tensor(i) for i in range(5))
    return [op('BatchNorm2d', x, mean, var, scale, bias,
               training=int(n.attr('training_mode', 0)),
               momentum=1 - float(n.attr('momentum', 0.9)),
               epsilon=float(n.attr('epsilon', 1e-5)))]


def _class_loss(name):
    """NegativeLogLikelihoodLoss -> NLLLoss, SoftmaxCrossEntropyLoss -> CrossEntropy: scores
    (N, C, d1, ...), INT32/INT64 labels, optional weights (C). Without ignore_index no label is
    ignored; SoftmaxCrossEntropyLoss's log_prob output is left out."""
    def translate(n):
        x, labels = n.tensor(0), n.tensor(1, any_type=True)
        _require(n.protos[1].data_type in (INT32, INT64), 'labels are %s; class indices are '
                 'INT64 or INT32' % type_name(n.protos[1].data_type))
        inputs = [x, labels] + ([n.tensor(2)] if n.has_input(2) else [])
        if n.n_outputs > 1:
            n.only_first_output('log_prob')
        return [op(name, *inputs, ignore_index=int(n.attr('ignore_index', NO_CLASS)),
                   reduction=n.attr('reduction', 'mean'))]
    return translate


def dropout(n):
    """Not training (opset 12's training_mode input false or absent, and every older opset,
    whose Dropout ONNX runs as inference) Dropout is X, as is training with ratio 0. A training
    mask for ratio > 0 is the test's own generator's, not expressible; the mask output is left
    out."""
    x = n.tensor(0)
    if n.opset < 12:
        ratio, training = float(n.attr('ratio', 0.5)), 0
    else:
        ratio = float_input(n, 1)
        ratio = 0.5 if ratio is None else ratio
        training = n.ints_input(2, [0])[0]
    _require(not training or ratio == 0, 'training Dropout with ratio %g: its mask is drawn by '
             "the test's generator, onemodeld's mask by its own (docs/protocol.md)" % ratio)
    if n.n_outputs > 1:
        n.only_first_output('mask')
    return [op('Dropout', x, ratio=ratio, seed=int(n.attr('seed', 0)), training=int(training))]


class Entry:
    """family: the tolerance family (compare.FAMILIES); translate(Node) -> operations."""

    def __init__(self, family, translate):
        self.family = family
        self.translate = translate


MAPPING = {
    'Add': Entry('exact', same('Add')),
    'Sub': Entry('exact', same('Sub')),
    'Mul': Entry('exact', same('Mul')),
    'Div': Entry('exact', same('Div')),
    'Max': Entry('exact', chained('Max')),
    'Min': Entry('exact', chained('Min')),
    'Sum': Entry('exact', chained('Add')),
    'Mean': Entry('exact', chained('Add', divide_by_count=True)),
    'Reciprocal': Entry('exact', reciprocal),
    'Pow': Entry('Pow', same('Pow')),
    'Neg': Entry('exact', same('Neg')),
    'Abs': Entry('exact', same('Abs')),
    'Sqrt': Entry('exact', same('Sqrt')),
    'Relu': Entry('exact', same('Relu')),
    'Exp': Entry('Exp', same('Exp')),
    'Log': Entry('Log', same('Log')),
    'Sigmoid': Entry('Sigmoid', same('Sigmoid')),
    'Tanh': Entry('Tanh', same('Tanh')),
    'MatMul': Entry('matmul', same('MatMul')),
    'MaxPool': Entry('exact', max_pool),
    'Conv': Entry('reduction', conv),
    'AveragePool': Entry('reduction', average_pool),
    'GlobalAveragePool': Entry('reduction', global_average_pool),
    'ReduceSum': Entry('reduction', reduce('Sum')),
    'ReduceMean': Entry('reduction', reduce('Mean')),
    'Softmax': Entry('reduction', softmax('Softmax')),
    'LogSoftmax': Entry('reduction', softmax('LogSoftmax')),
    'Cast': Entry('exact', cast),
    'CastLike': Entry('exact', cast_like),
    'Identity': Entry('exact', same('Copy', any_type=True)),
    'Reshape': Entry('exact', reshape),
    'Flatten': Entry('exact', flatten),
    'Transpose': Entry('exact', transpose),
    'Expand': Entry('exact', expand),
    'Squeeze': Entry('exact', squeeze),
    'Unsqueeze': Entry('exact', unsqueeze),
    'Slice': Entry('exact', slice_),
    'Erf': Entry('Erf', same('Erf')),
    'Equal': Entry('exact', same('Equal')),
    'Less': Entry('exact', same('Less')),
    'LessOrEqual': Entry('exact', same('LessEqual')),
    'Greater': Entry('exact', same('Greater')),
    'GreaterOrEqual': Entry('exact', same('GreaterEqual')),
    'Where': Entry('exact', where),
    'Clip': Entry('exact', clip),
    'LeakyRelu': Entry('exact', leaky_relu),
    'Gelu': Entry('Gelu', gelu),
    'Gather': Entry('exact', gather),
    'Concat': Entry('exact', concat),
    'Split': Entry('exact', split),
    'ReduceMax': Entry('exact', reduce('ReduceMax')),
    'ReduceMin': Entry('exact', reduce('ReduceMin')),
    'ArgMax': Entry('exact', arg_extremum('ArgMax')),
    'ArgMin': Entry('exact', arg_extremum('ArgMin')),
    'Pad': Entry('exact', pad),
    'Tile': Entry('exact', tile),
    'CumSum': Entry('reduction', cumsum),
    'LayerNormalization': Entry('reduction', layer_normalization),
    'BatchNormalization': Entry('reduction', batch_normalization),
    'NegativeLogLikelihoodLoss': Entry('reduction', _class_loss('NLLLoss')),
    'SoftmaxCrossEntropyLoss': Entry('reduction', _class_loss('CrossEntropy')),
    'Dropout': Entry('exact', dropout),
    'ConvTranspose': Entry('reduction', conv_transpose),
}


def translate(node):
    """The onemodeld operations for `node` (a Node) and its tolerance family, or NotExpressible."""
    entry = MAPPING.get(node.op_type)
    if entry is None:
        raise NotExpressible('no onemodeld operation for %s' % node.op_type)
    ops = entry.translate(node)
    node.check_all_read()
    return ops, entry.family
