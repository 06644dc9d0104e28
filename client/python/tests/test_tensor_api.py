"""onemodel.Tensor: every operator and method against numpy / PyTorch, and the client-side
inference of shape, dtype, requires_grad and grad_fn against what the server says."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import onemodel
from onemodel import DataType

TOL = {'exact': dict(rtol=1e-5, atol=1e-6), 'fast': dict(rtol=1e-4, atol=1e-5)}
GTOL = {'exact': dict(rtol=2e-5, atol=1e-6), 'fast': dict(rtol=2e-4, atol=1e-5)}


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def pos(rng, *shape):
    return (np.abs(rng.standard_normal(shape)) + 0.5).astype(np.float32)


def check(s, t, want):
    """t's inferred metadata equals the server's, and its values equal `want`."""
    inferred = (t._shape, t._dtype, t.requires_grad, t.grad_fn)  # before anything is sent
    info = t.info  # sends the queue
    assert inferred[0] == tuple(info.dims), (inferred, info)
    assert inferred[1] == DataType(info.data_type)
    assert inferred[2] == info.requires_grad
    assert inferred[3] == (info.grad_fn or None)
    want = np.asarray(want)
    got = t.numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[getattr(s, 'kind', 'exact')])


OPERATORS = {
    '+': (lambda a, b: a + b), '-': (lambda a, b: a - b), '*': (lambda a, b: a * b),
    '/': (lambda a, b: a / b), '**': (lambda a, b: a ** b), '@': (lambda a, b: a @ b),
}


@pytest.mark.parametrize('sym', sorted(OPERATORS))
@pytest.mark.parametrize('kind', ['tensor-tensor', 'tensor-array', 'array-tensor', 'number'])
def test_binary_operators(ksess, rng, sym, kind):
    fn = OPERATORS[sym]
    if sym == '@':
        a, b = f32(rng, 3, 4), f32(rng, 4, 2)
    else:
        a, b = pos(rng, 2, 3), pos(rng, 3)
    if kind == 'number':
        if sym == '@':
            pytest.skip('a number has no matmul')
        b = 1.5  # a Python float: sent inline as FLOAT
    ta, tb = ksess.tensor(a), ksess.tensor(b) if kind == 'tensor-tensor' else b
    if kind == 'array-tensor':
        got = fn(a, ksess.tensor(b))      # numpy's operator defers to Tensor.__r*__
        want = fn(a, b)
    else:
        got, want = fn(ta, tb), fn(a, np.float32(b) if kind == 'number' else b)
    assert isinstance(got, onemodel.Tensor)
    check(ksess, got, want)
    if kind == 'number':
        check(ksess, fn(b, ta), fn(np.float32(b), a))   # reflected: 1.5 - t, 1.5 ** t, ...


def test_unary_minus_abs_pos(ksess, rng):
    a = f32(rng, 2, 5)
    t = ksess.tensor(a)
    check(ksess, -t, -a)
    check(ksess, abs(t), np.abs(a))
    assert +t is t


@pytest.mark.parametrize('name', ['relu', 'sigmoid', 'tanh', 'exp', 'log', 'sqrt', 'abs', 'neg',
                                  'gelu'])
def test_unary_methods(ksess, rng, name):
    a = pos(rng, 3, 4) if name in ('log', 'sqrt') else f32(rng, 3, 4)
    want = (lambda x: F.gelu(x, approximate='tanh')) if name == 'gelu' else getattr(torch, name)
    check(ksess, getattr(ksess.tensor(a), name)(), want(torch.from_numpy(a)).numpy())


@pytest.mark.parametrize('name,np_fn', [('add', np.add), ('sub', np.subtract), ('mul', np.multiply),
                                        ('div', np.divide), ('pow', np.power),
                                        ('maximum', np.maximum), ('minimum', np.minimum),
                                        ('matmul', np.matmul)])
def test_binary_methods(ksess, rng, name, np_fn):
    a, b = pos(rng, 4, 4), pos(rng, 4, 4)
    check(ksess, getattr(ksess.tensor(a), name)(ksess.tensor(b)), np_fn(a, b))


@pytest.mark.parametrize('axes,keepdims', [(None, False), (1, False), ([0, 2], True), (-1, True)])
def test_sum_mean(ksess, rng, axes, keepdims):
    a = f32(rng, 2, 3, 4)
    t = ksess.tensor(a)
    np_axes = tuple(axes) if isinstance(axes, list) else axes
    check(ksess, t.sum(axes, keepdims), a.sum(axis=np_axes, keepdims=keepdims))
    check(ksess, t.mean(axes, keepdims=keepdims), a.mean(axis=np_axes, keepdims=keepdims))


@pytest.mark.parametrize('axes,keepdims', [(None, False), (1, False), ([0, 2], True), (-1, True)])
def test_reduce_max_min_and_their_gradients(ksess, rng, axes, keepdims):
    a = f32(rng, 2, 3, 4)
    np_axes = tuple(axes) if isinstance(axes, list) else axes
    t = ksess.tensor(a, requires_grad=True)
    check(ksess, t.reduce_max(axes, keepdims), a.max(axis=np_axes, keepdims=keepdims))
    check(ksess, t.reduce_min(axes, keepdims), a.min(axis=np_axes, keepdims=keepdims))
    t.reduce_max(axes, keepdims).sum().backward()  # distinct values: one 1 per slice
    want = (a == a.max(axis=np_axes, keepdims=True)).astype(np.float32)
    np.testing.assert_array_equal(t.grad.numpy(), want)


def test_argmax_argmin_ties_nan_and_keepdims(ksess):
    a = np.array([[1, 3, 3, 2], [np.nan, 5, np.nan, -1]], np.float32)
    t = ksess.tensor(a)
    check(ksess, t.argmax(1), [1, 0])
    check(ksess, t.argmax(-1, keepdims=True, select_last_index=True), [[2], [2]])
    check(ksess, t.argmin(0, keepdims=True), [[1, 0, 1, 1]])  # NaN counts as the smallest
    assert t.argmax(1).dtype == DataType.INT64
    b = np.array([[4, 1, 7], [2, 9, 0]], np.float32)
    check(ksess, ksess.tensor(b).argmin(1), torch.from_numpy(b).argmin(1).numpy())


@pytest.mark.parametrize('mode,torch_mode', [('constant', 'constant'), ('reflect', 'reflect'),
                                             ('edge', 'replicate'), ('wrap', 'circular')])
def test_pad_tile_cumsum(ksess, rng, mode, torch_mode):
    a = f32(rng, 2, 3, 4)
    t = ksess.tensor(a)
    # ONNX order [x1_begin, x2_begin, x3_begin, x1_end, ...]; F.pad: last axis first
    want = F.pad(torch.from_numpy(a)[None], (2, 1, 1, 2), mode=torch_mode)[0] \
        if mode != 'constant' else F.pad(torch.from_numpy(a), (2, 1, 1, 2), value=0.5)
    check(ksess, t.pad([0, 1, 2, 0, 2, 1], mode, 0.5), want.numpy())
    check(ksess, t.pad([0, -1, 0, 0, 1, -2]), np.pad(a[:, 1:, :2], ((0, 0), (0, 1), (0, 0))))
    check(ksess, t.tile([1, 2, 3]), np.tile(a, (1, 2, 3)))
    check(ksess, t.cumsum(1), np.cumsum(a, 1))
    check(ksess, t.cumsum(-1, exclusive=True, reverse=True),
          np.flip(np.cumsum(np.flip(a, -1), -1), -1) - a)


def test_extrema_pad_tile_cumsum_are_bit_identical_on_both_kernel_choices(client, rng):
    a = (rng.standard_normal((3, 50, 7)) * 1e4).astype(np.float32)  # sums that round

    def run(kernels):
        with client.session(kernels=kernels) as s:
            t = s.tensor(a)
            return [t.cumsum(1).numpy(), t.cumsum(1, exclusive=True, reverse=True).numpy(),
                    t.reduce_max([0, 2]).numpy(), t.reduce_min(1).numpy(),
                    t.argmax(1).numpy(), t.pad([1, 0, 2, 0, 3, 1], 'reflect').numpy(),
                    t.tile([1, 2, 1]).numpy()]

    for exact, fast in zip(run('exact'), run('fast')):
        assert exact.tobytes() == fast.tobytes()


@pytest.mark.parametrize('axis', [-1, 0, 1])
def test_softmax_log_softmax(ksess, rng, axis):
    a = f32(rng, 3, 5)
    t, ta = ksess.tensor(a), torch.from_numpy(a)
    check(ksess, t.softmax(axis), torch.softmax(ta, axis).numpy())
    check(ksess, t.log_softmax(axis, scale=2), torch.log_softmax(ta * 2, axis).numpy())  # int scale ok


def test_max_pool2d(ksess, rng):
    a = f32(rng, 2, 3, 7, 6)
    want = F.max_pool2d(torch.from_numpy(a), (3, 2), stride=(2, 1), padding=(1, 0)).numpy()
    check(ksess, ksess.tensor(a).max_pool2d((3, 2), stride=(2, 1), padding=(1, 0)), want)
    check(ksess, ksess.tensor(a).max_pool2d(2), F.max_pool2d(torch.from_numpy(a), 2, 1).numpy())


def test_conv2d(ksess, rng):
    a, w, b = f32(rng, 2, 4, 9, 8), f32(rng, 6, 2, 3, 2), f32(rng, 6)
    ta, tw, tb = torch.from_numpy(a), torch.from_numpy(w), torch.from_numpy(b)
    want = F.conv2d(F.pad(ta, (0, 1, 1, 2)), tw, tb, stride=(2, 1), dilation=(1, 2), groups=2)
    check(ksess, ksess.tensor(a).conv2d(ksess.tensor(w), ksess.tensor(b), stride=(2, 1),
                                        padding=(1, 0, 2, 1), dilation=(1, 2), groups=2),
          want.numpy())
    w1 = f32(rng, 3, 4, 1, 1)
    check(ksess, ksess.tensor(a).conv2d(ksess.tensor(w1), padding=1),
          F.conv2d(ta, torch.from_numpy(w1), padding=1).numpy())


def test_conv2d_keep_layout_keeps_an_nhwc_input_nhwc(ksess, rng):
    a, w, b = f32(rng, 2, 8, 9, 7), f32(rng, 16, 8, 3, 3), f32(rng, 16)
    x = ksess.tensor(a).to_layout('NHWC')
    wh, bh = ksess.tensor(w), ksess.tensor(b)
    nchw = x.conv2d(wh, bh, padding=1)
    nhwc = x.conv2d(wh, bh, padding=1, keep_layout=True)
    assert nchw.info.layout == 'NCHW'
    info = nhwc.info
    assert info.layout == 'NHWC' and list(info.dims) == [2, 16, 9, 7]
    assert list(info.strides) == [9 * 7 * 16, 1, 7 * 16, 16]  # dense NHWC
    if ksess.kind == 'exact':  # one reference kernel, any strides: the same bits
        assert nhwc.numpy().tobytes() == nchw.numpy().tobytes()
    else:  # oneDNN's NHWC convolution against im2col + sgemm
        np.testing.assert_allclose(nhwc.numpy(), nchw.numpy(), **TOL['fast'])
    want = F.conv2d(*(torch.from_numpy(v).double() for v in (a, w, b)), padding=1)
    check(ksess, nhwc, want.float().numpy())
    # An NCHW input stays NCHW: keep_layout keeps the input's layout, it does not make NHWC.
    assert ksess.tensor(a).conv2d(wh, bh, keep_layout=True).info.layout == 'NCHW'
    t = ksess.tensor(f32(rng, 2, 16, 4, 5)).to_layout('NHWC')
    tw = f32(rng, 16, 4, 2, 2)
    up = t.conv_transpose2d(ksess.tensor(tw), stride=2, keep_layout=True)
    assert up.info.layout == 'NHWC'
    np.testing.assert_allclose(up.numpy(), t.conv_transpose2d(ksess.tensor(tw), stride=2).numpy(),
                               **TOL[ksess.kind])


def test_conv2d_with_pre_blocked_weights_gives_the_same_bits(ksess, rng):
    a, w, b = f32(rng, 2, 6, 8, 8), f32(rng, 20, 3, 3, 3), f32(rng, 20)
    x, wh, bh = ksess.tensor(a), ksess.tensor(w), ksess.tensor(b)
    with ksess.no_grad():
        blocked = wh.to_layout('BlockedWeights', block=16)
    assert blocked.info.layout == 'BlockedWeights' and blocked.info.block_size == 16
    for keep in (False, True):
        image = x.to_layout('NHWC') if keep else x
        plain = image.conv2d(wh, bh, padding=1, groups=2, keep_layout=keep).numpy()
        packed = image.conv2d(blocked, bh, padding=1, groups=2, keep_layout=keep).numpy()
        assert plain.tobytes() == packed.tobytes(), keep


def test_conv2d_refuses_a_keep_layout_other_than_0_or_1(ksess, rng):
    x, w = ksess.tensor(f32(rng, 1, 2, 4, 4)), ksess.tensor(f32(rng, 3, 2, 1, 1))
    for bad in (2, -1):
        with pytest.raises(onemodel.InvalidArgument, match="keep_layout") as ei:
            x.conv2d(w, keep_layout=bad).numpy()  # type: ignore[arg-type]
        assert 'must be 0 (NCHW output) or 1' in ei.value.details, ei.value


def test_layer_norm_rms_norm(ksess, rng):
    a, w, b = f32(rng, 3, 4, 5), f32(rng, 4, 5), f32(rng, 4, 5)
    ta, tw, tb = torch.from_numpy(a), torch.from_numpy(w), torch.from_numpy(b)
    t = ksess.tensor(a)
    check(ksess, t.layer_norm(ksess.tensor(w), ksess.tensor(b), axis=1, eps=1e-3),
          F.layer_norm(ta, (4, 5), tw, tb, 1e-3).numpy())
    check(ksess, t.layer_norm(), F.layer_norm(ta, (5,)).numpy())
    rms = ta * torch.rsqrt(ta.pow(2).mean(-1, keepdim=True) + 1e-5) * tw[0]
    check(ksess, t.rms_norm(ksess.tensor(w[0])), rms.numpy())


def test_batch_norm2d_training_updates_the_running_statistics(ksess, rng):
    a, w, b = f32(rng, 4, 3, 5, 2), f32(rng, 3), f32(rng, 3)
    mean, var = np.zeros(3, np.float32), np.ones(3, np.float32)
    hm, hv = ksess.tensor(mean), ksess.tensor(var)
    tm, tv = torch.from_numpy(mean.copy()), torch.from_numpy(var.copy())
    want = F.batch_norm(torch.from_numpy(a), tm, tv, torch.from_numpy(w), torch.from_numpy(b),
                        training=True, momentum=0.2)
    got = ksess.tensor(a).batch_norm2d(hm, hv, ksess.tensor(w), ksess.tensor(b), training=True,
                                       momentum=0.2)
    check(ksess, got, want.numpy())
    np.testing.assert_allclose(hm.numpy(), tm.numpy(), **TOL[ksess.kind])
    np.testing.assert_allclose(hv.numpy(), tv.numpy(), **TOL[ksess.kind])
    check(ksess, ksess.tensor(a).batch_norm2d(hm, hv),
          F.batch_norm(torch.from_numpy(a), tm, tv).numpy())


def test_conv2d_backward(ksess, rng):
    a, w, b, r = f32(rng, 2, 3, 7, 6), f32(rng, 4, 3, 3, 3), f32(rng, 4), f32(rng, 2, 4, 4, 6)
    s = ksess
    xh, wh, bh = (s.put(v, requires_grad=True) for v in (a, w, b))
    y = s.op('Conv2d', xh, wh, bh, strides=[2, 1], pads=[1, 1, 2, 1])
    gx, gw, gb = s.backward(s.op('Sum', s.op('Mul', y, r)), [xh, wh, bh])
    ta, tw, tb = (torch.from_numpy(v).requires_grad_() for v in (a, w, b))
    (F.conv2d(F.pad(ta, (1, 1, 1, 2)), tw, tb, stride=(2, 1)) * torch.from_numpy(r)).sum().backward()
    for g, t in ((gx, ta), (gw, tw), (gb, tb)):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), **GTOL[s.kind])


def test_conv_transpose2d(ksess, rng):
    a, w, b = f32(rng, 2, 4, 5, 4), f32(rng, 4, 3, 3, 2), f32(rng, 6)
    ta, tw, tb = torch.from_numpy(a), torch.from_numpy(w), torch.from_numpy(b)
    want = F.conv_transpose2d(ta, tw, tb, stride=(2, 1), padding=(1, 0), output_padding=(1, 0),
                              groups=2, dilation=(1, 2))
    got = ksess.tensor(a).conv_transpose2d(ksess.tensor(w), ksess.tensor(b), stride=(2, 1),
                                           padding=(1, 0), output_padding=(1, 0), groups=2,
                                           dilation=(1, 2))
    assert got.shape == tuple(want.shape)  # the shape rule
    check(ksess, got, want.numpy())


def test_conv_transpose2d_backward(ksess, rng):
    a, w, b, r = f32(rng, 2, 3, 4, 5), f32(rng, 3, 2, 3, 3), f32(rng, 2), f32(rng, 2, 2, 9, 5)
    s = ksess
    xh, wh, bh = (s.put(v, requires_grad=True) for v in (a, w, b))
    y = s.op('ConvTranspose2d', xh, wh, bh, strides=[2, 1], pads=[1, 1, 0, 1],
             output_padding=[1, 0])
    gx, gw, gb = s.backward(s.op('Sum', s.op('Mul', y, r)), [xh, wh, bh])
    ta, tw, tb = (torch.from_numpy(v).requires_grad_() for v in (a, w, b))
    full = F.conv_transpose2d(ta, tw, tb, stride=(2, 1), output_padding=(1, 0))
    (full[:, :, 1:, 1:-1] * torch.from_numpy(r)).sum().backward()
    for g, t in ((gx, ta), (gw, tw), (gb, tb)):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), **GTOL[s.kind])


@pytest.mark.parametrize('dtype', ['float16', 'float64', np.int32, DataType.BFLOAT16, 'float32'])
def test_cast(ksess, dtype):
    a = np.array([[1.5, -2.25, 3.0], [0.1, 100.7, -0.6]], np.float32)
    t = ksess.tensor(a).cast(dtype)
    want = torch.from_numpy(a).to(torch.bfloat16).float().numpy() if dtype == DataType.BFLOAT16 \
        else a.astype(onemodel.tensors.numpy_dtype(dtype))
    check(ksess, t, want)
    assert t.dtype == onemodel.tensors.data_type(dtype)
    back = t.cast('float32')
    check(ksess, back, want.astype(np.float32))


def test_reshape_permute_transpose_T(ksess, rng):
    a = f32(rng, 2, 3, 4)
    t = ksess.tensor(a)
    check(ksess, t.reshape(4, -1), a.reshape(4, -1))
    check(ksess, t.reshape((6, 4)), a.reshape(6, 4))
    check(ksess, t.permute(2, 0, 1), a.transpose(2, 0, 1))
    check(ksess, t.permute([1, 2, 0]), a.transpose(1, 2, 0))
    check(ksess, t.transpose(0, 2), a.swapaxes(0, 2))
    check(ksess, t.T, a.T)
    check(ksess, t[0].T, a[0].T)
    v = ksess.tensor(a[0, 0])
    assert v.T is v  # rank 1: itself, as in torch


def test_expand_squeeze_unsqueeze(ksess, rng):
    a = f32(rng, 3, 1)
    t = ksess.tensor(a)
    check(ksess, t.expand(2, 3, 4), np.broadcast_to(a, (2, 3, 4)))
    check(ksess, t.squeeze(), a.squeeze())
    check(ksess, t.squeeze(1), a.squeeze(1))
    check(ksess, t.unsqueeze(0), a[None])
    check(ksess, t.unsqueeze(-1), a[..., None])


@pytest.mark.parametrize('key', [
    (slice(1, 3), slice(None, None, -1)), 0, -1, (Ellipsis, 0), (None, slice(None), 2),
    (slice(None, None, 2), Ellipsis, slice(1, None)), (slice(-2, None), -3),
    (slice(5, 1, -2),), (Ellipsis, None), (1, 2, 3),
], ids=repr)
def test_getitem(ksess, rng, key):
    a = f32(rng, 4, 5, 6)
    check(ksess, ksess.tensor(a)[key], a[key])


def test_getitem_errors(sess):
    t = sess.tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(IndexError, match='out of bounds'):
        t[2]
    with pytest.raises(IndexError, match='too many indices'):
        t[0, 0, 0]
    with pytest.raises(TypeError, match='only ints, slices'):
        t[[0, 1]]


def test_slice_bounds_beyond_int64_clamp_as_python_does(sess):
    a = np.arange(5, dtype=np.float32)
    t, big = sess.tensor(a), 10 ** 20
    for key in (slice(-big, big), slice(None, None, big), slice(None, None, -big),
                slice(big, -big, -1), slice(2, big, 2), slice(big, None)):
        check(sess, t[key], a[key])
    check(sess, t.slice(0, -big, big), a)
    with pytest.raises(IndexError, match='index %d is out of bounds' % big):
        t[big]                      # an int index is not clamped: out of range, as numpy


def test_iterating_a_0d_tensor_raises_type_error(sess):
    t = sess.tensor(np.float32(3))
    with pytest.raises(TypeError, match=r'iteration over a 0-d tensor.*item\(\)'):
        list(t)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert [r.tolist() for r in sess.tensor(a)] == a.tolist()


def test_slice_method(ksess, rng):
    a = f32(rng, 5, 4)
    t = ksess.tensor(a)
    check(ksess, t.slice(0, 1, 4, 2), a[1:4:2])
    check(ksess, t.slice(1, step=-1), a[:, ::-1])


def test_contiguous_copy_detach_to_layout(ksess, rng):
    a = f32(rng, 1, 3, 2, 2)
    t = ksess.tensor(a, requires_grad=True)
    check(ksess, t.permute(0, 2, 3, 1).contiguous(), a.transpose(0, 2, 3, 1))
    c = t.copy(placement='pool')
    check(ksess, c, a)
    assert c.info.placement == onemodel.pb.PLACEMENT_POOL
    d = t.detach()
    check(ksess, d, a)
    assert not d.requires_grad and d.grad_fn is None
    n = t.to_layout('NHWC')
    check(ksess, n, a)
    assert n.info.layout == 'NHWC'
    with ksess.no_grad():
        b = t.to_layout('Blocked', block=2)
    assert b.info.layout == 'Blocked' and b.info.block_size == 2
    check(ksess, b, a)
    with ksess.no_grad():
        w = t.to_layout('BlockedWeights', block=4)
    assert w.info.layout == 'BlockedWeights' and w.info.block_size == 4
    check(ksess, w, a)


def test_apply_any_operation(sess, rng):
    a = f32(rng, 2, 3)
    check(sess, onemodel.apply('Max', sess.tensor(a), 0.0), np.maximum(a, 0))


def test_metadata_and_repr(sess):
    w = sess.parameter(np.ones((2, 3)))
    assert w.dtype == DataType.FLOAT  # float64 data becomes FLOAT
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    assert w.shape == (2, 3) and w.ndim == 2 and len(w) == 2 and w.numel() == 6 and w.size(1) == 3
    y = (w * 2).sum(1)
    r = repr(y)
    assert 'shape=[2]' in r and 'dtype=FLOAT' in r and 'grad_fn=Sum' in r and 'pending' in r
    assert 'test_tensor_api.py' in r
    assert not y.is_leaf
    y.flush()
    r = repr(y)
    assert y.handle in r and 'arena' in r and 'pending' not in r
    assert str(y) == 'tensor([6., 6.], grad_fn=Sum)'
    assert np.asarray(y).tolist() == [6.0, 6.0] and y.tolist() == [6.0, 6.0]
    assert np.array(y, dtype=np.float64).dtype == np.float64
    assert y[0].item() == 6.0 and bool(y[0])
    assert repr(w).startswith('onemodel.Tensor(p') and 'pool' in repr(w)
    assert y.describe().shape == (2,)
    one = y.sum()
    assert f'{one:.1f}' == '12.0' and float(one) == 12.0 and int(one) == 12 and f'{one}' == str(one)
    with pytest.raises(TypeError, match='Session.tensor'):
        onemodel.Tensor()
    assert y.remote.handle == y.handle
    with pytest.raises(ValueError, match='only one-element'):
        y.item()


def test_tensor_dtypes_kept_when_asked(sess):
    assert sess.tensor([1, 2, 3]).dtype == DataType.INT64
    assert sess.tensor([1.0, 2.0]).dtype == DataType.FLOAT
    assert sess.tensor(np.zeros(2), dtype='float64').dtype == DataType.DOUBLE
    assert sess.tensor(torch.zeros(2, dtype=torch.float16)).dtype == DataType.FLOAT16


@pytest.mark.parametrize('op', ['==', '!='])
def test_equality_operators_do_not_compare_elements(sess, op):
    t = sess.tensor(np.zeros(2, np.float32))
    with pytest.raises(NotImplementedError, match=r't\.eq\(other\)'):
        eval('t %s 0' % op)
    with pytest.raises(onemodel.ComparisonNotSupported):
        eval('t %s t' % op)
    assert t in {t} and hash(t) == hash(t)  # still hashable by identity


@pytest.mark.parametrize('op,fn', [('<', np.less), ('<=', np.less_equal), ('>', np.greater),
                                   ('>=', np.greater_equal)])
def test_ordering_operators_are_comparisons(sess, op, fn):
    a = np.array([[1, np.nan, 3], [4, 5, 6]], np.float32)
    t = sess.tensor(a)
    got = eval('t %s 3' % op)
    assert got.dtype == DataType.BOOL and got.shape == (2, 3) and not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), fn(a, np.float32(3)))
    picked = t.where(got, 0.0)
    np.testing.assert_array_equal(picked.numpy(), np.where(fn(a, np.float32(3)), a, 0))


def test_mixing_sessions_is_refused(client):
    with client.session() as s1, client.session() as s2:
        a, b = s1.tensor(np.ones(2)), s2.tensor(np.ones(2))
        with pytest.raises(ValueError, match='two sessions'):
            a + b


def test_copy_writes_in_place(sess):
    p = sess.parameter(np.zeros(3, np.float32))
    h = p.handle
    p.copy_([1, 2, 3])
    assert p.handle == h and p.requires_grad
    np.testing.assert_array_equal(p.numpy(), [1, 2, 3])
