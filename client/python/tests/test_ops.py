"""Every operation of contract.md through the wire, against numpy / PyTorch, with the exact
(reference) and the fast kernels."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import onemodel
from onemodel import DataType, pb

TOL = {'exact': dict(rtol=1e-5, atol=1e-6), 'fast': dict(rtol=1e-4, atol=1e-5)}


def f32(rng, *shape, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def close(s, got, want):
    np.testing.assert_allclose(got, want, **TOL[s.kind])


def run1(s, op, *arrays, **attrs):
    """op over arrays uploaded as pool tensors; the output downloaded."""
    handles = [s.put(a) for a in arrays]
    out = s.op(op, *handles, **attrs)
    return out, out.numpy()


BINARY = {
    'Add': np.add, 'Sub': np.subtract, 'Mul': np.multiply, 'Div': np.divide,
    'Max': np.maximum, 'Min': np.minimum, 'Pow': np.power,
}


@pytest.mark.parametrize('op', sorted(BINARY))
@pytest.mark.parametrize('shapes', [((3, 4), (3, 4)), ((2, 1, 4), (3, 1)), ((4,), (2, 3, 4)), ((), (2, 2))],
                         ids=['same', 'broadcast', 'leading', 'scalar'])
def test_binary(ksess, rng, op, shapes):
    a = f32(rng, *shapes[0])
    b = f32(rng, *shapes[1])
    if op == 'Div':
        b = np.where(np.abs(b) < 0.2, 0.7, b).astype(np.float32)
    if op == 'Pow':
        a = (np.abs(a) + 0.5).astype(np.float32)
    out, got = run1(ksess, op, a, b)
    want = BINARY[op](a, b)
    assert got.shape == want.shape and out.shape == want.shape
    assert got.dtype == np.float32
    close(ksess, got, want)


UNARY = {
    'Neg': (np.negative, None), 'Abs': (np.abs, None), 'Exp': (np.exp, None),
    'Log': (np.log, 'positive'), 'Sqrt': (np.sqrt, 'positive'), 'Relu': (lambda x: np.maximum(x, 0), None),
    'Sigmoid': (lambda x: torch.sigmoid(torch.from_numpy(x)).numpy(), None),
    'Tanh': (np.tanh, None),
    'Gelu': (lambda x: F.gelu(torch.from_numpy(x), approximate='tanh').numpy(), None),
    'Erf': (lambda x: torch.erf(torch.from_numpy(x)).numpy(), None),
}


@pytest.mark.parametrize('op', sorted(UNARY))
def test_unary(ksess, rng, op):
    fn, domain = UNARY[op]
    x = f32(rng, 4, 5, 6) * 3
    if domain == 'positive':
        x = (np.abs(x) + 0.01).astype(np.float32)
    _, got = run1(ksess, op, x)
    close(ksess, got, fn(x).astype(np.float32))


@pytest.mark.parametrize('sa,sb', [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
                                   ((4,), (4, 5)), ((3, 4), (4,)), ((1, 64), (64, 33))])
def test_matmul(ksess, rng, sa, sb):
    a, b = f32(rng, *sa), f32(rng, *sb)
    _, got = run1(ksess, 'MatMul', a, b)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == want.shape
    close(ksess, got, want)


@pytest.mark.parametrize('attrs,torch_kw', [
    (dict(kernel_shape=[2, 2]), dict(kernel_size=(2, 2), stride=1)),
    (dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0]), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))),
    (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1]), dict(kernel_size=3, stride=2, padding=1)),
])
def test_maxpool2d(ksess, rng, attrs, torch_kw):
    x = f32(rng, 2, 3, 7, 6)
    _, got = run1(ksess, 'MaxPool2d', x, **attrs)
    want = F.max_pool2d(torch.from_numpy(x), **torch_kw).numpy()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('attrs,torch_kw', [
    (dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 1], dilations=[2, 1], ceil_mode=1),
     dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(2, 1), ceil_mode=True)),
    (dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
     dict(kernel_size=2, stride=2, ceil_mode=True)),
])
def test_relu_maxpool2d_and_dilated_ceil_mode_maxpool2d(ksess, rng, attrs, torch_kw):
    x = f32(rng, 2, 3, 7, 6)
    for op, t in [('MaxPool2d', torch.from_numpy(x)), ('ReluMaxPool2d', torch.relu(torch.from_numpy(x)))]:
        _, got = run1(ksess, op, x, **attrs)
        want = F.max_pool2d(t, **torch_kw).numpy()
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_pooling_windows_longer_than_the_input_in_ceil_mode(ksess, rng):
    """A window longer than the (padded) input by less than a stride gives one output in
    ceil_mode, over the in-bounds elements (ONNX's and PyTorch's shapes; it was refused)."""
    x = f32(rng, 2, 3, 2, 3)
    t = torch.from_numpy(x)
    _, got = run1(ksess, 'MaxPool2d', x, kernel_shape=[3, 4], strides=[4, 5], ceil_mode=1)
    np.testing.assert_array_equal(got, F.max_pool2d(t, (3, 4), (4, 5), ceil_mode=True).numpy())
    _, got = run1(ksess, 'AvgPool2d', x, kernel_shape=[3, 4], strides=[4, 5], ceil_mode=1,
                  count_include_pad=1)
    want = F.avg_pool2d(t, (3, 4), (4, 5), ceil_mode=True, count_include_pad=True).numpy()
    assert got.shape == want.shape == (2, 3, 1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('attrs,torch_kw', [
    (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1]), dict(kernel_size=3, stride=2, padding=1,
                                                                  count_include_pad=False)),
    (dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 1], ceil_mode=1, count_include_pad=1),
     dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True, count_include_pad=True)),
])
def test_avgpool2d(ksess, rng, attrs, torch_kw):
    x = f32(rng, 2, 3, 7, 6)
    _, got = run1(ksess, 'AvgPool2d', x, **attrs)
    want = F.avg_pool2d(torch.from_numpy(x), **torch_kw).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    _, mean = run1(ksess, 'GlobalAvgPool2d', x)
    np.testing.assert_allclose(mean, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('op', ['Sum', 'Mean'])
@pytest.mark.parametrize('attrs', [{}, dict(axes=[0, 2]), dict(axes=[-1], keepdims=1), dict(axes=[1], keepdims=0),
                                   dict(keepdims=1)])
def test_reductions(ksess, rng, op, attrs):
    x = f32(rng, 3, 4, 5)
    _, got = run1(ksess, op, x, **attrs)
    axes = tuple(attrs['axes']) if 'axes' in attrs else None
    fn = np.sum if op == 'Sum' else np.mean
    want = fn(x.astype(np.float64), axis=axes, keepdims=bool(attrs.get('keepdims', 0)))
    assert got.shape == np.shape(want)
    close(ksess, got, want)


@pytest.mark.parametrize('op', ['Softmax', 'LogSoftmax'])
@pytest.mark.parametrize('attrs', [{}, dict(axis=0), dict(axis=1, scale=0.5), dict(axis=-1, scale=2.0)])
def test_softmax(ksess, rng, op, attrs):
    x = f32(rng, 3, 4, 5) * 2
    _, got = run1(ksess, op, x, **attrs)
    t = torch.from_numpy(x) * attrs.get('scale', 1.0)
    fn = torch.softmax if op == 'Softmax' else torch.log_softmax
    close(ksess, got, fn(t, dim=attrs.get('axis', -1)).numpy())


def _cast_ref(x, code):
    if code == DataType.BOOL:
        return x != 0
    if code == DataType.BFLOAT16:
        return onemodel.float32_to_bfloat16_bits(x)
    npd = onemodel.tensors.NUMPY_DTYPES[code]
    if npd.kind in 'iu':
        info = np.iinfo(npd)
        return np.clip(np.trunc(x.astype(np.float64)), info.min, info.max).astype(npd)
    with np.errstate(over='ignore'):  # 3e9 -> FLOAT16 is inf, as intended
        return x.astype(npd)


@pytest.mark.parametrize('code', sorted(onemodel.tensors.SUPPORTED), ids=lambda c: DataType(c).name)
def test_cast_from_float(sess, code):
    sess.kind = 'exact'
    x = np.array([-300.5, -3.7, -1.2, -0.0, 0.0, 0.5, 2.9, 100.2, 1000.75, 3e9], np.float32)
    out, got = run1(sess, 'Cast', x, to=int(code))
    assert out.dtype == code
    want = _cast_ref(x, code)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_cast_between_integers_and_back(sess):
    i = np.array([300, -1, 127, 256], np.int32)
    _, got = run1(sess, 'Cast', i, to=int(DataType.UINT8))
    assert got.tolist() == [44, 255, 127, 0]  # wraps modulo 2^8
    _, got = run1(sess, 'Cast', np.array([True, False]), to=int(DataType.FLOAT))
    assert got.tolist() == [1.0, 0.0]
    _, got = run1(sess, 'Cast', np.array([1, 2**40], np.int64), to=int(DataType.DOUBLE))
    assert got.tolist() == [1.0, 2.0**40]
    h = np.array([0.1, 65504, -2], np.float16)
    _, got = run1(sess, 'Cast', h, to=int(DataType.FLOAT))
    assert got.tolist() == h.astype(np.float32).tolist()


def test_copy_keeps_an_independent_pool_tensor(sess, rng):
    x = f32(rng, 3, 4)
    xh = sess.put(x, requires_grad=True)
    t = sess.op('Transpose', xh, dim0=0, dim1=1)
    c = sess.op('Copy', t, placement='pool')
    info = c.describe().info
    assert info.placement == pb.PLACEMENT_POOL and info.buffer_id != xh.describe().info.buffer_id
    assert info.grad_fn == 'Copy' and list(info.strides) == [3, 1]
    sess.release(xh)
    sess.reset_arena()
    assert np.array_equal(c.numpy(), x.T)


def test_contiguous_and_detach(sess, rng):
    x = f32(rng, 3, 4)
    xh = sess.put(x, requires_grad=True)
    t = sess.op('Transpose', xh, dim0=0, dim1=1)
    c = sess.op('Contiguous', t)
    assert list(c.describe().info.strides) == [3, 1]
    assert np.array_equal(c.numpy(), x.T)
    d = sess.op('Detach', xh)
    assert not d.requires_grad and d.describe().info.grad_fn in ('', 'leaf')
    assert np.array_equal(d.numpy(), x)


@pytest.mark.parametrize('layout,block', [('NHWC', 0), ('BLOCKED', 16), ('BLOCKED', 8),
                                          ('BLOCKEDWEIGHTS', 16), ('BLOCKEDWEIGHTS', 4)])
def test_to_layout(ksess, rng, layout, block):
    x = f32(rng, 2, 16, 3, 5)
    xh = ksess.put(x)
    attrs = {'layout': layout}
    if block:
        attrs['block'] = block
    y = ksess.op('ToLayout', xh, **attrs)
    info = y.describe().info
    assert info.layout == {'NHWC': 'NHWC', 'BLOCKED': 'Blocked',
                           'BLOCKEDWEIGHTS': 'BlockedWeights'}[layout]
    assert info.block_size == (block if layout.startswith('BLOCKED') else 0)
    if layout == 'NHWC':
        assert list(info.strides) == [3 * 5 * 16, 1, 5 * 16, 16]
    assert list(info.dims) == [2, 16, 3, 5]
    assert np.array_equal(y.numpy(), x)  # downloads are logical row-major
    back = ksess.op('ToLayout', y, layout='NCHW')
    assert back.describe().info.layout == 'NCHW'
    assert np.array_equal(back.numpy(), x)
    assert np.array_equal(ksess.download(y, chunk_bytes=100), x)
    lower = ksess.op('ToLayout', xh, layout=layout.lower(), **({'block': block} if block else {}))
    assert np.array_equal(lower.numpy(), x)  # names are case-insensitive
    if layout == 'NHWC':  # MaxPool2d takes NHWC too (the logical tensor is NCHW)
        np.testing.assert_array_equal(ksess.op('MaxPool2d', y, kernel_shape=[2, 2]).numpy(),
                                      F.max_pool2d(torch.from_numpy(x), 2, 1).numpy())
    if layout == 'BLOCKEDWEIGHTS':  # (K, C, KH, KW) weights: Conv2d gives the same bytes
        image = ksess.put(f32(rng, 1, 16, 4, 6))
        plain = ksess.op('Conv2d', image, xh, pads=[1, 1, 1, 1]).numpy()
        packed = ksess.op('Conv2d', image, y, pads=[1, 1, 1, 1]).numpy()
        assert plain.tobytes() == packed.tobytes()


def test_view_ops(sess, rng):
    sess.kind = 'exact'
    x = f32(rng, 2, 3, 4)
    xh = sess.put(x)
    cases = [
        ('Reshape', dict(shape=[-1, 6]), x.reshape(-1, 6)),
        ('Reshape', dict(shape=[4, 3, 2]), x.reshape(4, 3, 2)),
        ('Permute', dict(perm=[2, 0, 1]), x.transpose(2, 0, 1)),
        ('Transpose', dict(dim0=0, dim1=2), x.swapaxes(0, 2)),
        ('Slice', dict(dim=2, start=1, stop=4), x[:, :, 1:4]),
        ('Slice', dict(dim=1, start=0, stop=3, step=2), x[:, 0:3:2]),
        ('Slice', dict(dim=-1, start=-3, stop=2**63 - 1), x[..., -3:]),
        ('Slice', dict(dim=2, start=3, stop=-5, step=-1), x[:, :, 3:-5:-1]),
        ('Transpose', {}, x.swapaxes(0, 1)),
        ('Unsqueeze', dict(dim=1), x[:, None]),
        ('Unsqueeze', dict(dim=-1), x[..., None]),
    ]
    for op, attrs, want in cases:
        out = sess.op(op, xh, **attrs)
        got = out.numpy()
        assert got.shape == want.shape, (op, attrs)
        np.testing.assert_array_equal(got, want, err_msg='%s %s' % (op, attrs))
    col = sess.put(f32(rng, 3, 1))
    e = sess.op('Expand', col, shape=[2, 3, 4])
    np.testing.assert_array_equal(e.numpy(), np.broadcast_to(sess.get(col), (2, 3, 4)))
    assert 0 in e.describe().info.strides  # a broadcast view
    s1 = sess.put(f32(rng, 1, 3, 1, 2))
    np.testing.assert_array_equal(sess.op('Squeeze', s1).numpy(), sess.get(s1).reshape(3, 2))
    np.testing.assert_array_equal(sess.op('Squeeze', s1, axes=[2]).numpy(), sess.get(s1).reshape(1, 3, 2))


def test_ops_on_views_and_inline(sess, rng):
    x = f32(rng, 4, 6)
    xh = sess.put(x)
    outs = sess.run([
        {'op': 'Transpose', 'inputs': [xh], 'attrs': {'dim0': 0, 'dim1': 1}},
        {'op': 'Slice', 'inputs': [onemodel.Output(0)], 'attrs': {'dim': 0, 'start': 1, 'stop': 6, 'step': 2}},
        {'op': 'Mul', 'inputs': [onemodel.Output(1), np.float32(2)]},
        {'op': 'Exp', 'inputs': [np.zeros((2, 2), np.float32)]},
    ])
    np.testing.assert_allclose(outs[2].numpy(), x.T[1:6:2] * 2, rtol=1e-6)
    assert outs[3].numpy().tolist() == [[1, 1], [1, 1]]
