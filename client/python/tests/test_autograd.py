"""Backward through the wire against PyTorch autograd (float32 on both sides)."""

import grpc
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import onemodel
from conftest import assert_error

TOL = {'exact': dict(rtol=2e-5, atol=1e-6), 'fast': dict(rtol=2e-4, atol=1e-5)}


def tt(a):
    return torch.tensor(a, requires_grad=True)


def test_mlp_log_softmax_gradients(ksess):
    rng = np.random.default_rng(5)
    n, d_in, hidden, classes = 8, 5, 16, 3
    x = rng.standard_normal((n, d_in)).astype(np.float32)
    w1 = (rng.standard_normal((d_in, hidden)) * 0.5).astype(np.float32)
    b1 = (rng.standard_normal(hidden) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((hidden, classes)) * 0.5).astype(np.float32)
    b2 = (rng.standard_normal(classes) * 0.1).astype(np.float32)
    onehot = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, n)]

    s = ksess
    params = [s.put(p, requires_grad=True) for p in (w1, b1, w2, b2)]
    xh = s.put(x)
    b = s.batch()
    h = b.add('Relu', b.add('Add', b.add('MatMul', xh, params[0]), params[1]))
    logits = b.add('Add', b.add('MatMul', h, params[2]), params[3])
    logp = b.add('LogSoftmax', logits, axis=1)
    picked = b.add('Sum', b.add('Mul', logp, onehot), axes=[1])   # onehot inline
    loss = b.add('Mean', b.add('Neg', picked))
    outs = b.run()
    grads = s.backward(outs[loss], params)

    tp = [tt(p) for p in (w1, b1, w2, b2)]
    th = torch.relu(torch.from_numpy(x) @ tp[0] + tp[1])
    tl = -(torch.log_softmax(th @ tp[2] + tp[3], dim=1) * torch.from_numpy(onehot)).sum(1)
    tloss = tl.mean()
    tloss.backward()
    np.testing.assert_allclose(outs[loss].numpy(), tloss.detach().numpy(), **TOL[s.kind])
    for g, p in zip(grads, tp):
        assert g.shape == tuple(p.shape)
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), **TOL[s.kind])


def test_mlp_softmax_mean_gradients(ksess):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    r = rng.standard_normal((6, 5)).astype(np.float32)
    s = ksess
    wh, bh = s.put(w, requires_grad=True), s.put(bias, requires_grad=True)
    xh = s.put(x, requires_grad=True)
    outs = s.run([
        {'op': 'MatMul', 'inputs': [xh, wh]},
        {'op': 'Add', 'inputs': [onemodel.Output(0), bh]},
        {'op': 'Softmax', 'inputs': [onemodel.Output(1)], 'attrs': {'axis': -1, 'scale': 0.5}},
        {'op': 'Mul', 'inputs': [onemodel.Output(2), r]},
        {'op': 'Mean', 'inputs': [onemodel.Output(3)]},
    ])
    gx, gw, gb = s.backward(outs[4], [xh, wh, bh])
    tx, tw, tb = tt(x), tt(w), tt(bias)
    (torch.softmax((tx @ tw + tb) * 0.5, dim=-1) * torch.from_numpy(r)).mean().backward()
    for g, t in ((gx, tx), (gw, tw), (gb, tb)):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), **TOL[s.kind])


def test_maxpool2d_backward(ksess):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)  # continuous: no ties
    r = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    s = ksess
    xh = s.put(x, requires_grad=True)
    y = s.op('MaxPool2d', xh, kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0])
    loss = s.op('Sum', s.op('Mul', y, r))
    (g,) = s.backward(loss, [xh])
    t = tt(x)
    (F.max_pool2d(t, (3, 2), stride=(2, 1), padding=(1, 0)) * torch.from_numpy(r)).sum().backward()
    np.testing.assert_allclose(g.numpy(), t.grad.numpy(), **TOL[s.kind])


UNARY = {
    'Gelu': lambda t: F.gelu(t, approximate='tanh'),
    'Sigmoid': torch.sigmoid, 'Tanh': torch.tanh, 'Relu': torch.relu, 'Exp': torch.exp,
    'Neg': torch.neg, 'Abs': torch.abs,
    'Log': lambda t: torch.log(t.abs() + 0.1), 'Sqrt': lambda t: torch.sqrt(t.abs() + 0.1),
}


@pytest.mark.parametrize('op', sorted(UNARY))
def test_unary_backward(ksess, op):
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((4, 7)) * 2).astype(np.float32)
    r = rng.standard_normal((4, 7)).astype(np.float32)
    s = ksess
    xh = s.put(x, requires_grad=True)
    if op in ('Log', 'Sqrt'):  # the same positive input on both sides
        inner = s.op('Add', s.op('Abs', xh), np.float32(0.1))
        y = s.op(op, inner)
    else:
        y = s.op(op, xh)
    (g,) = s.backward(y, [xh], grad_output=r)
    t = tt(x)
    UNARY[op](t).backward(torch.from_numpy(r))
    np.testing.assert_allclose(g.numpy(), t.grad.numpy(), **TOL[s.kind])


@pytest.mark.parametrize('op', ['Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Pow'])
def test_broadcasting_binary_backward(ksess, op):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 1, 4)).astype(np.float32)
    b = rng.standard_normal((2, 4)).astype(np.float32)
    if op == 'Div':
        b = np.where(np.abs(b) < 0.3, 0.8, b).astype(np.float32)
    if op == 'Pow':
        a = (np.abs(a) + 0.5).astype(np.float32)
    r = rng.standard_normal((3, 2, 4)).astype(np.float32)
    s = ksess
    ah, bh = s.put(a, requires_grad=True), s.put(b, requires_grad=True)
    y = s.op(op, ah, bh)
    assert y.shape == (3, 2, 4)
    ga, gb = s.backward(s.op('Sum', s.op('Mul', y, r)), [ah, bh])
    assert ga.shape == (3, 1, 4) and gb.shape == (2, 4)
    ta, tb = tt(a), tt(b)
    fn = {'Add': torch.add, 'Sub': torch.sub, 'Mul': torch.mul, 'Div': torch.div,
          'Max': torch.maximum, 'Min': torch.minimum, 'Pow': torch.pow}[op]
    (fn(ta, tb) * torch.from_numpy(r)).sum().backward()
    np.testing.assert_allclose(ga.numpy(), ta.grad.numpy(), **TOL[s.kind])
    np.testing.assert_allclose(gb.numpy(), tb.grad.numpy(), **TOL[s.kind])


def test_views_reductions_matmul_backward(sess):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32)
    xh, wh = sess.put(x, requires_grad=True), sess.put(w, requires_grad=True)
    b = sess.batch()
    p = b.add('Permute', xh, perm=[1, 0, 2])              # [3, 2, 4]
    sl = b.add('Slice', p, dim=0, start=0, stop=3, step=2)  # [2, 2, 4]
    m = b.add('MatMul', sl, wh)                             # [2, 2, 5] batched
    rs = b.add('Reshape', m, shape=[4, 5])
    e = b.add('Expand', b.add('Unsqueeze', rs, dim=0), shape=[3, 4, 5])
    sm = b.add('Mean', e, axes=[0, 2], keepdims=1)
    loss = b.add('Sum', b.add('Mul', sm, sm))
    b.run()
    gx, gw = sess.backward(b[loss], [xh, wh])
    tx, tw = tt(x), tt(w)
    tm = (tx.permute(1, 0, 2)[0:3:2] @ tw).reshape(4, 5).unsqueeze(0).expand(3, 4, 5).mean(dim=(0, 2), keepdim=True)
    (tm * tm).sum().backward()
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy(), rtol=2e-5, atol=1e-6)


def test_cast_backward_between_floats(sess):
    x = np.array([0.5, -1.25, 3.0], np.float32)
    xh = sess.put(x, requires_grad=True)
    h = sess.op('Cast', xh, to=int(onemodel.DataType.FLOAT16))
    assert h.requires_grad
    back = sess.op('Cast', sess.op('Mul', sess.op('Cast', h, to=1), np.float32(3)), to=1)
    (g,) = sess.backward(sess.op('Sum', back), [xh])
    assert g.numpy().tolist() == [3.0, 3.0, 3.0]


def test_retain_graph_and_second_backward(sess):
    w = sess.put(np.array([1.0, 2.0], np.float32), requires_grad=True)
    loss = sess.op('Sum', sess.op('Mul', w, w))
    (g1,) = sess.backward(loss, [w], retain_graph=True)
    (g2,) = sess.backward(loss, [w])
    assert g1.numpy().tolist() == g2.numpy().tolist() == [2.0, 4.0]
    with pytest.raises(onemodel.FailedPrecondition) as ei:
        sess.backward(loss, [w])
    assert_error(ei, grpc.StatusCode.FAILED_PRECONDITION)


def test_backward_root_without_grad(sess):
    a = sess.put(np.ones(3, np.float32))
    root = sess.op('Sum', a)
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.backward(root, [a])
    assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT)


def test_backward_non_scalar_root_needs_grad_output(sess):
    w = sess.put(np.ones(3, np.float32), requires_grad=True)
    y = sess.op('Mul', w, w)
    with pytest.raises(onemodel.InvalidArgument):
        sess.backward(y, [w])


def test_gradient_of_unused_input_is_zeros(sess):
    a = sess.put(np.ones(2, np.float32), requires_grad=True)
    b = sess.put(np.ones((2, 3), np.float32), requires_grad=True)
    loss = sess.op('Sum', sess.op('Exp', a))
    ga, gb = sess.backward(loss, [a, b])
    np.testing.assert_allclose(ga.numpy(), np.exp(np.ones(2)), rtol=1e-6)
    assert gb.numpy().tolist() == [[0.0] * 3] * 2


def test_backward_input_without_grad(sess):
    a = sess.put(np.ones(2, np.float32), requires_grad=True)
    c = sess.put(np.ones(2, np.float32))
    loss = sess.op('Sum', sess.op('Mul', a, c))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.backward(loss, [c])
    assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT, 'does not require gradients')


def test_backward_grad_output_shape_mismatch(sess):
    a = sess.put(np.ones(3, np.float32), requires_grad=True)
    y = sess.op('Exp', a)
    with pytest.raises(onemodel.InvalidArgument):
        sess.backward(y, [a], grad_output=np.ones(2, np.float32))


def test_max_min_tie_splits_gradient(sess):
    a = sess.put(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    b = sess.put(np.array([1.0, 1.0, 4.0], np.float32), requires_grad=True)
    ga, gb = sess.backward(sess.op('Sum', sess.op('Max', a, b)), [a, b])
    assert ga.numpy().tolist() == [0.5, 1.0, 0.0] and gb.numpy().tolist() == [0.5, 0.0, 1.0]
    ga, gb = sess.backward(sess.op('Sum', sess.op('Min', a, b)), [a, b])
    assert ga.numpy().tolist() == [0.5, 0.0, 1.0] and gb.numpy().tolist() == [0.5, 1.0, 0.0]


def test_in_place_target_write_and_version_check(sess):
    """An optimizer step writes into the parameter (PutTensor/UploadTensor target): same handle,
    version + 1; a backward whose graph saved the old contents fails FAILED_PRECONDITION."""
    w0 = np.array([1.0, 2.0], np.float32)
    w = sess.put(w0, requires_grad=True)
    v0 = w.describe().info.version
    x = sess.put(np.array([3.0, 4.0], np.float32), requires_grad=True)
    loss = sess.op('Sum', sess.op('Mul', w, x))        # Mul saves w and x
    info = sess.put(np.array([5.0, 6.0], np.float32), target=w)
    assert info.handle == w.handle and info.info.version == v0 + 1
    assert info.requires_grad and sess.get(w).tolist() == [5.0, 6.0]
    with pytest.raises(onemodel.FailedPrecondition) as ei:
        sess.backward(loss, [w, x])
    assert_error(ei, grpc.StatusCode.FAILED_PRECONDITION, 'Mul', 'modified in place', 'version')
    # a tensor no recorded operation saved may be written: Add saves nothing
    b = sess.put(np.zeros(2, np.float32), requires_grad=True)
    loss2 = sess.op('Sum', sess.op('Add', w, b))
    up = sess.upload(np.array([7.0, 8.0], np.float32), target=b)
    assert up.handle == b.handle
    gw, gb = sess.backward(loss2, [w, b])
    assert gw.numpy().tolist() == [1.0, 1.0] and gb.numpy().tolist() == [1.0, 1.0]
    # views of the written buffer see the new values
    view = sess.op('Reshape', w, shape=[2, 1])
    sess.put(np.array([9.0, 10.0], np.float32), target=w)
    assert sess.get(view).tolist() == [[9.0], [10.0]]


def test_target_write_errors(sess):
    w = sess.put(np.ones(2, np.float32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.put(np.ones(3, np.float32), target=w)
    assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT, w.handle, 'same type and shape')
    with pytest.raises(onemodel.InvalidArgument):
        sess.put(np.ones(2, np.float64), dtype='double', target=w)
    with pytest.raises(onemodel.InvalidArgument):
        sess.upload(np.ones(3, np.float32), target=w)
    e = sess.op('Expand', sess.put(np.ones((1, 2), np.float32)), shape=[3, 2])
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.put(np.ones((3, 2), np.float32), target=e)
    assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT, 'broadcast')
    with pytest.raises(onemodel.NotFound):
        sess.put(np.ones(2, np.float32), target='p99.0000000000000000')
    a = sess.op('Exp', w)
    sess.reset_arena()
    with pytest.raises(onemodel.FailedPrecondition):
        sess.put(np.ones(2, np.float32), target=a)


def test_training_loop_sgd_against_torch(sess):
    """The typical step of docs/protocol.md: forward with reset_arena, backward, update with
    no_grad, write the parameter back with target; compared with torch after 5 steps."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    w0 = (rng.standard_normal((3, 1)) * 0.1).astype(np.float32)
    lr = np.float32(0.1)
    w = sess.put(w0, requires_grad=True)
    xh, yh = sess.put(x), sess.put(y)
    for _ in range(5):
        b = sess.batch(reset_arena=True)
        d = b.add('Sub', b.add('MatMul', xh, w), yh)
        loss = b.add('Mean', b.add('Mul', d, d))
        b.run()
        (g,) = sess.backward(b[loss], [w])
        upd = sess.run([{'op': 'Mul', 'inputs': [g, lr]},
                        {'op': 'Sub', 'inputs': [w, onemodel.Output(0)]}], no_grad=True)
        sess.put(upd[1].numpy(), target=w)
    tw = torch.tensor(w0, requires_grad=True)
    opt = torch.optim.SGD([tw], lr=0.1)
    for _ in range(5):
        opt.zero_grad()
        ((torch.from_numpy(x) @ tw - torch.from_numpy(y)) ** 2).mean().backward()
        opt.step()
    np.testing.assert_allclose(sess.get(w), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
