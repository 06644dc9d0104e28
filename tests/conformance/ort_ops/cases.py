"""The case table of the ONNX Runtime comparison (test_ort_ops.py): one row per case.

A row is one ONNX node: its op type, attributes, and inputs (shape and value kind, seeded).
Adding an op's comparison is adding rows here (and its MAPPING entry in ../onnx_node/mapping.py,
which translates the node; compare.py there holds the tolerance of its family).

Input kinds (F, B, scalar):
- 'normal': standard normal floats, times `scale`.
- 'specials': normal floats with NaN, +-inf, -0 and +0 scattered in (about one in six);
  'infinities' the same with +-inf only.
- 'ties': values from a small set with repeats (-1, -0, 0, 0.5, 1, NaN, +-inf), so that
  comparisons see equal elements, -0 against +0, and NaN on either side; 'ties_no_nan' the
  same set without NaN.
- 'bool': random BOOL.
- 'positive': |normal| + 0.5 (variances).
- scalar(v): a FLOAT of shape () holding v (Clip's bounds).
- I(shape, low, high): INT64 uniform in [low, high) (indices, class targets); ints(values): a
  1-D INT64 constant (Pad's pads, Tile's repeats, CumSum's axis).
None is an omitted optional input (the node's input name is empty).

`differs`: ONNX Runtime and onemodeld legitimately disagree on this case; the text says where
and why. The test then expects the comparison to fail (and says to remove the note when it
passes), so a documented difference is never a loosened tolerance.
"""

import zlib


class F:
    """A FLOAT input of `shape`, values of `kind`, multiplied by `scale`."""

    def __init__(self, *shape, kind='normal', scale=1.0):
        self.shape, self.kind, self.scale = tuple(shape), kind, scale


class B:
    """A BOOL input of `shape`."""

    def __init__(self, *shape):
        self.shape, self.kind = tuple(shape), 'bool'


class scalar:
    """A FLOAT input of shape () holding `value`."""

    def __init__(self, value):
        self.shape, self.kind, self.value = (), 'scalar', value


class I:
    """An INT64 input of `shape`, uniform in [low, high)."""

    def __init__(self, *shape, low=0, high=1):
        self.shape, self.kind, self.low, self.high = tuple(shape), 'ints', low, high


class ints:
    """A 1-D INT64 input holding `values`."""

    def __init__(self, values):
        self.values, self.kind = list(values), 'const_ints'
        self.shape = (len(self.values),)


class Row:
    """One case: ONNX node `op` with `inputs` and `attrs` at `opset`, its output of ONNX type
    `out_type` (a TensorProto.DataType name); `label` names it."""

    def __init__(self, op, label, inputs, opset=17, out_type='FLOAT', differs=None, **attrs):
        self.op, self.inputs, self.opset, self.attrs = op, inputs, opset, attrs
        self.out_type = out_type
        self.differs = differs
        self.name = '%s_%s' % (op, label)
        self.seed = zlib.crc32(self.name.encode())


# The documented differences (docs/development.md, "The ONNX Runtime comparison", lists them).
NAN_IN_WINDOW = (
    'MaxPool: a NaN in the window wins in onemodeld (spec 8 pooling rule, as PyTorch); ONNX '
    'Runtime skips NaNs and returns the largest other element')
MAX_POOL_ZERO_TIE = (
    'MaxPool: when -0 and +0 tie for the maximum, onemodeld returns the first of the window '
    '(spec 8: the first element wins ties), here -0; ONNX Runtime returns +0')
WHERE_SCALAR_MINUS_ZERO = (
    'Where with a scalar b: where the condition picks a -0 of a, ONNX Runtime 1.30 returns +0 '
    '(with b of a\'s shape it keeps -0, see Where_same_shape_specials); onemodeld returns the '
    'picked element as it is, as ONNX defines Where')
RELU_MINUS_ZERO = (
    'Relu(-0): onemodeld gives +0 (docs/protocol.md, docs/kernels.md); ONNX Runtime keeps -0, '
    'as numpy.maximum(-0, 0) and torch.relu do')
LEAKY_RELU_MINUS_ZERO = (
    'LeakyRelu(-0) with a negative alpha: onemodeld computes alpha*x for x <= 0 (as PyTorch), '
    'so -0 gives +0; ONNX Runtime passes x >= 0 through, so -0 stays -0')
REDUCE_NAN = (
    'ReduceMax/ReduceMin with a NaN among the reduced elements: onemodeld gives NaN (spec 8: NaN '
    'wins, as torch.amax and numpy.max); ONNX Runtime 1.30 skips NaNs and gives the extremum '
    'of the rest')
SUM_OF_148 = (
    'Conv over 3 channels x 7x7 = 147 products: ONNX Runtime (MLAS) sums in float32 and is '
    '4.6e-6 (4.5e-5 relative) off the value computed in double at [0, 1, 3, 7], within '
    'float32 summation\'s K*u*S = 9e-4 but outside the reduction family\'s rtol 1e-5, which '
    'compare.py sizes for sums of a few dozen terms; the exact kernel is the correctly '
    'rounded value there')


def _compare_rows(op):
    return [
        Row(op, 'same_shape_ties', [F(7, 9, kind='ties'), F(7, 9, kind='ties')], out_type='BOOL'),
        Row(op, 'broadcast', [F(2, 1, 5, kind='ties'), F(3, 1, kind='ties')], out_type='BOOL'),
        Row(op, 'scalar_odd', [F(67, kind='specials'), F(kind='ties')], out_type='BOOL'),
    ]


ROWS = [
    # Conv: bias, odd sizes, strides, asymmetric pads, dilations, groups, depthwise, 1x1, 7x7.
    Row('Conv', 'bias_pad1', [F(1, 3, 7, 9), F(4, 3, 3, 3), F(4)], pads=[1, 1, 1, 1]),
    Row('Conv', 'strides_asym_pads', [F(2, 3, 10, 11), F(5, 3, 3, 2), None],
        strides=[2, 3], pads=[0, 1, 2, 1]),
    Row('Conv', 'dilations', [F(1, 2, 9, 8), F(3, 2, 3, 3), F(3)], dilations=[2, 1],
        pads=[2, 1, 2, 1]),
    Row('Conv', 'groups2', [F(1, 4, 6, 7), F(6, 2, 3, 3), F(6)], group=2, pads=[1, 0, 0, 1]),
    Row('Conv', 'depthwise_stride2', [F(2, 8, 9, 9), F(8, 1, 3, 3), F(8)], group=8,
        strides=[2, 2], pads=[1, 1, 1, 1]),
    Row('Conv', '1x1', [F(1, 16, 5, 5), F(7, 16, 1, 1), None]),
    Row('Conv', '7x7_stride2', [F(1, 3, 17, 19), F(4, 3, 7, 7), F(4)], strides=[2, 2],
        pads=[3, 3, 3, 3], differs=SUM_OF_148),
    Row('Conv', '7x7_one_channel', [F(1, 1, 12, 13), F(2, 1, 7, 7), F(2)], strides=[2, 1],
        pads=[3, 2, 3, 2]),
    Row('Conv', 'stride_over_kernel', [F(1, 2, 11, 11), F(3, 2, 2, 2), None], strides=[3, 3]),
    Row('Conv', 'same_upper', [F(1, 3, 8, 7), F(2, 3, 4, 4), None], strides=[2, 2],
        auto_pad='SAME_UPPER'),
    Row('Conv', 'specials_in_x', [F(1, 2, 6, 6, kind='specials'), F(2, 2, 3, 3), F(2)],
        pads=[1, 1, 1, 1]),

    # AveragePool: pads with and without counting them, ceil_mode, rectangular windows.
    Row('AveragePool', 'k3', [F(1, 3, 7, 8)], kernel_shape=[3, 3]),
    Row('AveragePool', 'pads_exclude', [F(2, 3, 9, 10)], kernel_shape=[3, 3], strides=[2, 2],
        pads=[1, 1, 1, 1]),
    Row('AveragePool', 'pads_include', [F(2, 3, 9, 10)], kernel_shape=[3, 3], strides=[2, 2],
        pads=[1, 1, 1, 1], count_include_pad=1),
    Row('AveragePool', 'ceil', [F(1, 2, 8, 9)], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    Row('AveragePool', 'ceil_pads_include', [F(1, 2, 8, 9)], kernel_shape=[3, 3],
        strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1),
    Row('AveragePool', 'rect', [F(2, 3, 9, 10)], kernel_shape=[2, 4], strides=[1, 3]),
    Row('AveragePool', 'specials', [F(1, 2, 6, 7, kind='specials')], kernel_shape=[2, 2]),

    Row('GlobalAveragePool', 'odd', [F(1, 3, 7, 9)]),
    Row('GlobalAveragePool', '1x1', [F(2, 16, 1, 1)]),
    Row('GlobalAveragePool', 'column', [F(1, 5, 13, 1)]),
    Row('GlobalAveragePool', 'specials', [F(2, 3, 4, 5, kind='specials')]),

    # MaxPool: pads, dilations, ceil_mode, both; NaN, infinities and -0 against +0.
    Row('MaxPool', 'k3s2_pads', [F(1, 3, 9, 10)], kernel_shape=[3, 3], strides=[2, 2],
        pads=[1, 1, 1, 1]),
    Row('MaxPool', 'dilations', [F(1, 2, 11, 12)], kernel_shape=[3, 3], dilations=[2, 2]),
    Row('MaxPool', 'ceil', [F(1, 2, 8, 9)], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    Row('MaxPool', 'dilations_ceil_pads', [F(2, 3, 10, 13)], kernel_shape=[2, 3],
        strides=[2, 3], dilations=[1, 2], pads=[1, 1, 1, 1], ceil_mode=1),
    Row('MaxPool', 'specials', [F(1, 2, 8, 8, kind='specials')], kernel_shape=[2, 2],
        strides=[2, 2], differs=NAN_IN_WINDOW),
    Row('MaxPool', 'ties', [F(1, 2, 8, 8, kind='ties')], kernel_shape=[3, 3],
        differs=NAN_IN_WINDOW),
    Row('MaxPool', 'ties_no_nan', [F(1, 2, 8, 8, kind='ties_no_nan')], kernel_shape=[3, 3],
        pads=[1, 1, 1, 1], differs=MAX_POOL_ZERO_TIE),
    Row('MaxPool', 'infinities', [F(2, 3, 9, 8, kind='infinities')], kernel_shape=[3, 2],
        strides=[2, 1], pads=[1, 1, 1, 1]),
    Row('MaxPool', 'k1_specials', [F(1, 2, 8, 8, kind='specials')], kernel_shape=[1, 1],
        strides=[2, 2]),

    Row('Erf', 'range', [F(1023, scale=3.0)]),
    Row('Erf', 'specials', [F(5, 13, kind='specials', scale=2.0)]),

    Row('Gelu', 'none', [F(1023, scale=4.0)], opset=20, approximate='none'),
    Row('Gelu', 'default_is_none', [F(3, 33, scale=2.0)], opset=20),
    Row('Gelu', 'tanh', [F(1023, scale=4.0)], opset=20, approximate='tanh'),
    Row('Gelu', 'specials', [F(5, 13, kind='specials', scale=3.0)], opset=20, approximate='tanh'),

    Row('Clip', 'both', [F(9, 11, scale=2.0), scalar(-1.0), scalar(0.5)]),
    Row('Clip', 'min_only', [F(67, scale=2.0), scalar(-0.25), None]),
    Row('Clip', 'max_only', [F(67, scale=2.0), None, scalar(0.75)]),
    Row('Clip', 'unbounded', [F(4, 5), None, None]),
    Row('Clip', 'min_above_max', [F(4, 5), scalar(1.0), scalar(-1.0)]),
    Row('Clip', 'specials', [F(5, 13, kind='specials'), scalar(-0.5), scalar(0.5)]),

    Row('LeakyRelu', 'default', [F(1023)]),
    Row('LeakyRelu', 'alpha', [F(3, 5, 7)], alpha=0.2),
    Row('LeakyRelu', 'specials', [F(5, 13, kind='specials')], alpha=0.2),
    Row('LeakyRelu', 'negative_alpha_specials', [F(5, 13, kind='specials')], alpha=-0.5,
        differs=LEAKY_RELU_MINUS_ZERO),

    Row('Where', 'same_shape', [B(4, 5), F(4, 5), F(4, 5)]),
    Row('Where', 'broadcast', [B(3, 1), F(1, 4), F(2, 3, 4)]),
    Row('Where', 'same_shape_specials', [B(5, 13), F(5, 13, kind='specials'),
                                          F(5, 13, kind='specials')]),
    Row('Where', 'scalar_specials', [B(67), F(67, kind='specials'), F()],
        differs=WHERE_SCALAR_MINUS_ZERO),
    Row('Where', 'scalar_normal', [B(67), F(67), F()]),

    *_compare_rows('Equal'),
    *_compare_rows('Less'),
    *_compare_rows('LessOrEqual'),
    *_compare_rows('Greater'),
    *_compare_rows('GreaterOrEqual'),

    # Older ops, to show the harness is general.
    Row('MatMul', '2d', [F(5, 7), F(7, 3)]),
    Row('MatMul', 'batch_broadcast', [F(2, 1, 4, 6), F(3, 6, 5)]),
    Row('MatMul', 'odd', [F(33, 65), F(65, 17)]),
    Row('Softmax', 'last', [F(3, 7, scale=3.0)]),
    Row('Softmax', 'axis1', [F(2, 5, 3)], axis=1),
    Row('Softmax', 'specials', [F(4, 9, kind='specials')]),
    Row('Relu', 'odd', [F(1023)]),
    Row('Relu', 'specials', [F(5, 13, kind='specials')], differs=RELU_MINUS_ZERO),
    Row('Add', 'broadcast', [F(3, 1, 5), F(4, 1)]),
    Row('Add', 'scalar_specials', [F(6, 7, kind='specials'), F(kind='specials')]),

    # ConvTranspose: stride 2 with output_padding and bias, groups with asymmetric pads and
    # dilations.
    Row('ConvTranspose', 'stride2_output_padding', [F(1, 3, 5, 4), F(3, 4, 3, 3), F(4)],
        strides=[2, 2], output_padding=[1, 1]),
    Row('ConvTranspose', 'groups_asym_pads_dilations', [F(2, 4, 4, 5), F(4, 3, 2, 3), None],
        group=2, pads=[1, 0, 0, 2], dilations=[2, 1], strides=[1, 2]),

    # Issue 17's operations with an ONNX counterpart.
    Row('ReduceMax', 'axes_keep', [F(3, 4, 5)], axes=[1], keepdims=1),
    Row('ReduceMax', 'all_ties', [F(4, 9, kind='ties_no_nan')], keepdims=0),
    Row('ReduceMax', 'specials', [F(5, 13, kind='specials')], axes=[1], differs=REDUCE_NAN),
    Row('ReduceMin', 'specials', [F(5, 13, kind='specials')], axes=[0], differs=REDUCE_NAN),
    Row('ArgMax', 'specials', [F(5, 13, kind='specials')], out_type='INT64', axis=1),
    Row('ReduceMin', 'two_axes', [F(3, 4, 5)], axes=[0, 2], keepdims=0),
    Row('ReduceMin', 'last_ties', [F(5, 7, kind='ties_no_nan')], axes=[-1]),
    Row('ArgMax', 'axis1_ties', [F(3, 7, 5, kind='ties_no_nan')], out_type='INT64', axis=1),
    Row('ArgMax', 'last_index', [F(6, 8, kind='ties_no_nan')], out_type='INT64', axis=-1,
        keepdims=0, select_last_index=1),
    Row('ArgMin', 'axis0', [F(9, 4)], out_type='INT64', axis=0),
    Row('ArgMin', 'last_index', [F(6, 8, kind='ties_no_nan')], out_type='INT64', axis=1,
        select_last_index=1),
    Row('Pad', 'constant', [F(2, 3, 4), ints([0, 1, 2, 0, 2, 1]), scalar(1.5)]),
    Row('Pad', 'reflect', [F(2, 5, 6), ints([0, 2, 1, 0, 1, 3])], mode='reflect'),
    Row('Pad', 'edge', [F(3, 4), ints([1, 2, 3, 0])], mode='edge'),
    Row('Tile', '2d', [F(2, 3), ints([2, 3])]),
    Row('Tile', '3d_ones', [F(2, 1, 3), ints([1, 4, 1])]),
    Row('CumSum', 'axis1', [F(4, 7), ints([1])]),
    Row('CumSum', 'exclusive_reverse', [F(3, 5, 4), ints([-2])], exclusive=1, reverse=1),
    Row('Gather', 'axis0_negative', [F(5, 4), I(3, 2, low=-5, high=5)], axis=0),
    Row('Gather', 'axis1', [F(3, 6, 2), I(4, low=0, high=6)], axis=1),
    Row('Concat', 'axis0', [F(2, 3), F(4, 3), F(1, 3)], axis=0),
    Row('Concat', 'axis_last', [F(2, 3, 1), F(2, 3, 5)], axis=-1),
    Row('LayerNormalization', 'last', [F(4, 6, scale=3.0), F(6), F(6)], axis=-1),
    Row('LayerNormalization', 'two_axes_no_bias', [F(3, 4, 5), F(4, 5)], axis=1, epsilon=1e-3),
    Row('BatchNormalization', 'inference', [F(2, 3, 4, 5), F(3), F(3), F(3), F(3, kind='positive')],
        epsilon=1e-3),
    Row('NegativeLogLikelihoodLoss', 'mean', [F(4, 5), I(4, low=0, high=5)], reduction='mean'),
    Row('NegativeLogLikelihoodLoss', 'none_ignore', [F(6, 3), I(6, low=0, high=3)],
        reduction='none', ignore_index=1),
    Row('SoftmaxCrossEntropyLoss', 'mean', [F(4, 5, scale=3.0), I(4, low=0, high=5)],
        reduction='mean'),
    Row('SoftmaxCrossEntropyLoss', 'sum_weights', [F(5, 4), I(5, low=0, high=4), F(4, kind='positive')],
        reduction='sum'),
    Row('Dropout', 'inference', [F(3, 4)]),
]
