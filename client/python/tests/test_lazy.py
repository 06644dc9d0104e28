"""Lazy batching of onemodel.Tensor: round trips counted by a client interceptor, errors that
name the line that created the operation, no_grad, the deferred arena reset."""

import collections

import grpc
import numpy as np
import pytest
import torch

import onemodel
from conftest import assert_error, intercepted_session, start_server, stop_and_check


class RpcCounter(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                 grpc.StreamUnaryClientInterceptor):
    """Counts the RPCs a client makes, by method name, and keeps the Run requests (parsed: the
    tensor API sends its RunRequest serialized)."""

    def __init__(self):
        self.calls = collections.Counter()
        self.runs = []

    def _count(self, details, request):
        method = details.method.rpartition('/')[2]
        self.calls[method] += 1
        if method == 'Run':
            self.runs.append(onemodel.pb.RunRequest.FromString(request)
                             if isinstance(request, bytes) else request)

    def intercept_unary_unary(self, continuation, details, request):
        self._count(details, request)
        return continuation(details, request)

    def intercept_unary_stream(self, continuation, details, request):
        self._count(details, request)
        return continuation(details, request)

    def intercept_stream_unary(self, continuation, details, request_iterator):
        self._count(details, None)
        return continuation(details, request_iterator)

    def take(self):
        """The counts since the last take()."""
        out = dict(self.calls)
        self.calls.clear()
        self.runs = []
        return out


@pytest.fixture
def counted(server):
    """(session, RpcCounter): a session whose client counts its RPCs."""
    counter = RpcCounter()
    with intercepted_session(server, counter) as s:
        counter.take()
        yield s, counter


def test_readme_mlp_step_is_one_run(counted):
    s, rpcs = counted
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    w1 = s.parameter(rng.standard_normal((4, 16)) * 0.5)
    w2 = s.parameter(rng.standard_normal((16, 3)) * 0.5)
    opt = onemodel.optim.SGD([w1, w2], lr=0.1)
    assert rpcs.take() == {'PutTensor': 3}           # and the optimizer's step counter
    before = w1.numpy()
    rpcs.take()
    for step in range(3):
        s.reset_arena()                               # deferred into the step's Run
        loss = ((x @ w1).relu() @ w2).log_softmax(-1).mean()   # queued: nothing sent
        opt.zero_grad()
        loss.backward()                               # queued too: two Grad operations
        assert rpcs.take() == {}
        assert w1.grad.shape == (4, 16) and not w1.grad.requires_grad
        opt.step()
        # the step's one Run: the arena reset, the forward, the gradients and the server's
        # SGD operation, which updates both parameters in place
        runs = rpcs.runs
        assert rpcs.take() == {'Run': 1}
        (run,) = runs
        assert run.reset_arena and not run.no_grad
        assert [op.op for op in run.operations] == [
            'MatMul', 'Relu', 'MatMul', 'LogSoftmax', 'Mean', 'Grad', 'Grad', 'SGD']
    assert not np.array_equal(w1.numpy(), before)


def test_a_queued_gradient_has_its_inputs_type_and_shape(counted):
    s, rpcs = counted
    w = s.parameter(np.ones((2, 3), np.float16), dtype='FLOAT16')
    v = s.parameter(np.ones(4, np.float32))
    rpcs.take()
    ((w.cast('float32').sum() + v.sum()) * 2).backward()
    assert rpcs.take() == {}  # queued, with what the server will say
    assert (w.grad.dtype, w.grad.shape) == (onemodel.DataType.FLOAT16, (2, 3))
    assert (v.grad.dtype, v.grad.shape) == (onemodel.DataType.FLOAT, (4,))
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 3), 2, np.float16))
    assert rpcs.take() == {'Run': 1, 'GetTensor': 1}
    assert w.grad.dtype == onemodel.DataType.FLOAT16 and w.grad.shape == (2, 3)


def test_attribute_messages_are_shared_by_value_with_the_sign_of_zero(counted):
    # queued operations share one attribute message per value; -0.0 equals 0.0 in Python but
    # must reach the server as -0.0
    s, rpcs = counted
    a = s.tensor(np.array([-1.0, 2.0], np.float32))
    rpcs.take()
    ys = [a.leaky_relu(v) for v in (0.0, -0.0, 0.0, -0.0)]
    ys += [onemodel.apply('Sum', a, axes=axes) for axes in ([0], (0,), [np.int64(0)])]
    s.flush()
    (run,) = rpcs.runs
    slopes = [op.attributes['alpha'].f for op in run.operations[:4]]
    assert [np.copysign(1, v) for v in slopes] == [1, -1, 1, -1]
    assert [list(op.attributes['axes'].ints.values) for op in run.operations[4:]] == [[0]] * 3
    np.testing.assert_array_equal(ys[1].numpy(), [0.0, 2.0])
    # -1 * 0.0 is -0.0, -1 * -0.0 is +0.0
    assert np.signbit(ys[0].numpy()[0]) and not np.signbit(ys[1].numpy()[0])
    with pytest.raises(onemodel.InvalidArgument, match="attribute 'alpha' must be"):
        onemodel.apply('LeakyRelu', a, alpha=[1.0, 'x'])


def test_flush_sends_one_run_and_shapes_need_none(counted, rng):
    s, rpcs = counted
    a = s.tensor(rng.standard_normal((3, 4)))
    rpcs.take()
    y = ((a * 2 + 1).T @ a).softmax(0)[1:, ::2].sum(0, keepdims=True)
    assert y.shape == (1, 2) and y.dtype == onemodel.DataType.FLOAT
    assert rpcs.take() == {}
    s.flush()
    assert rpcs.take() == {'Run': 1}
    s.flush()  # nothing queued: nothing sent
    assert rpcs.take() == {}
    np.testing.assert_allclose(
        y.numpy(), torch.softmax((torch.tensor(a.numpy()) * 2 + 1).T @ torch.tensor(a.numpy()), 0)
        [1:, ::2].sum(0, keepdim=True).numpy(), rtol=1e-5)


def test_unknown_shape_is_fetched(counted, rng):
    s, rpcs = counted
    a = s.tensor(rng.standard_normal((3, 4)))
    y = onemodel.apply('Max', a, 0.0).reshape(-1)
    assert y._shape == (12,)
    z = onemodel.apply('NotAnOperation', a)
    assert z._shape is None
    rpcs.take()
    with pytest.raises(onemodel.InvalidArgument) as ei:
        z.shape  # must ask the server, which refuses it
    assert rpcs.take() == {'Run': 1}
    assert "unknown operation 'NotAnOperation'" in ei.value.details
    assert y.numpy().shape == (12,)  # the other operation stayed queued and runs now


def test_dropped_tensors_are_not_sent(counted, rng):
    s, rpcs = counted
    a = s.tensor(rng.standard_normal(4))
    kept = a.exp()
    a.relu().sigmoid()  # dropped at once: never needed
    total = kept.sum()
    rpcs.take()
    total.flush()
    (run,) = rpcs.runs
    assert [op.op for op in run.operations] == ['Exp', 'Sum']


def test_queue_is_sent_at_max_run_operations(counted):
    s, rpcs = counted
    t = s.tensor(np.ones(2, np.float32))
    onemodel.pending.graph(s).max_run_operations = 5
    rpcs.take()
    ys = [t + i for i in range(12)]
    assert rpcs.take() == {'Run': 2}
    assert ys[0].tolist() == [1, 1]    # sent already: only a download
    assert ys[11].tolist() == [12, 12]  # the last two were still queued
    assert rpcs.take() == {'Run': 1, 'GetTensor': 2}


def test_a_step_refused_whole_requeues_its_operations_ahead_of_later_ones(counted):
    """A Run in flight (Optimizer.step(wait=False)) that the server refuses as a whole, no
    operation's fault (more operations than its limit), leaves its operations queued ahead of
    those made since; the next flush sends each recording mode in a Run of its own, in order."""
    s, rpcs = counted
    w = s.parameter(np.ones(2, np.float32))
    opt = onemodel.optim.SGD([w], lr=0.5)
    graph = onemodel.pending.graph(s)
    graph.max_run_operations = 5000   # above the server's 4096: the step goes as one Run
    acc = w
    for _ in range(4094):
        acc = acc + 1.0
    acc.sum().backward()              # Sum and Grad: 4096 operations, then the SGD
    rpcs.take()
    opt.step(wait=False)
    assert rpcs.take() == {'Run': 1} and graph.in_flight is not None
    with s.no_grad():
        doubled = w * 2               # made while the step is in flight, recording nothing
    with pytest.raises(onemodel.ResourceExhausted, match='4096'):
        s.flush()
    graph.max_run_operations = 4096
    s.flush()
    runs = rpcs.runs
    assert [(len(r.operations), r.no_grad) for r in runs] == [(4096, False), (1, False),
                                                              (1, True)]
    assert [r.operations[0].op for r in runs[1:]] == ['SGD', 'Mul']
    np.testing.assert_array_equal(w.numpy(), [0.5, 0.5])   # 1 - 0.5 * d sum / d w
    np.testing.assert_array_equal(doubled.numpy(), [1.0, 1.0])   # made after the step
    assert not doubled.requires_grad


def test_error_names_the_line_that_created_the_operation(counted):
    s, rpcs = counted
    a = s.tensor(np.ones((2, 3), np.float32))
    fine = a.exp()
    bad = a + np.ones(5, np.float32); bad_line = _line()  # noqa: E702
    later = bad.relu()
    rpcs.take()
    with pytest.raises(onemodel.InvalidArgument) as ei:
        later.numpy()
    e = ei.value
    assert 'operation 1 (Add): shapes [2, 3] and [5] do not broadcast' in e.details
    assert e.site.lineno == bad_line and e.site.filename == __file__
    assert 'test_lazy.py:%d in test_error_names_the_line_that_created_the_operation' % bad_line \
        in str(e)
    assert 'bad = a + np.ones(5, np.float32)' in str(e)
    assert rpcs.take() == {'Run': 1}
    # the failed operation and what was made from it keep the error; the rest stays queued
    for t in (bad, later):
        with pytest.raises(onemodel.InvalidArgument) as again:
            t.numpy()
        assert again.value is e
    with pytest.raises(onemodel.InvalidArgument):
        bad * 2                                        # refused at once, nothing sent
    assert rpcs.take() == {}
    np.testing.assert_allclose(fine.numpy(), np.e * np.ones((2, 3)), rtol=1e-6)
    assert rpcs.take() == {'Run': 1, 'GetTensor': 1}


def _line():
    import sys
    return sys._getframe(1).f_lineno


def test_error_of_attribute_value_names_the_line(sess):
    a = sess.tensor(np.ones((2, 3), np.float32))
    y = a.softmax(axis=5); line = _line()  # noqa: E702
    with pytest.raises(onemodel.InvalidArgument) as ei:
        y.numpy()
    assert ei.value.site.lineno == line
    assert 'axis 5 is out of range' in ei.value.details


def test_no_grad(counted, rng):
    s, rpcs = counted
    w = s.parameter(rng.standard_normal((3, 3)))
    rpcs.take()
    y = w * 2
    with s.no_grad():
        z = w * 3
        assert not z.requires_grad and z.grad_fn is None
        with s.no_grad():
            pass
        assert not (z + 1).requires_grad      # still inside the outer block
    u = w + 1
    assert y.requires_grad and y.grad_fn == 'Mul' and u.requires_grad
    u.flush()
    # the recording mode changed twice: three Runs, the middle one with no_grad
    assert [r.no_grad for r in rpcs.runs] == [False, True, False]
    assert not z.info.requires_grad and y.info.grad_fn == 'Mul'


def test_reset_arena_is_deferred(counted):
    s, rpcs = counted
    p = s.parameter(np.ones(3, np.float32))
    old = (p * 2).flush()
    kept = (p * 3).copy(placement='pool')
    doomed = p * 4
    rpcs.take()
    assert s.reset_arena() is None
    assert rpcs.take() == {'Run': 1}  # the queued pool copy had to run before the reset
    np.testing.assert_array_equal(kept.numpy(), [3, 3, 3])
    for stale in (old, doomed):
        with pytest.raises(onemodel.FailedPrecondition, match='is stale'):
            stale.numpy()
        with pytest.raises(onemodel.FailedPrecondition, match='is stale'):
            stale + 1
    fresh = p * 5
    rpcs.take()
    np.testing.assert_array_equal(fresh.numpy(), [5, 5, 5])
    assert rpcs.runs[0].reset_arena
    assert s.stats().session.arena.resets == 1
    s.reset_arena()
    rpcs.take()
    s.flush()  # nothing queued: a ResetArena of its own
    assert rpcs.take() == {'ResetArena': 1}
    assert s.stats().session.arena.resets == 2


def test_stale_error_names_no_rpc(sess):
    t = (sess.parameter(np.ones(2, np.float32)) * 2).flush()
    handle = t.handle
    sess.reset_arena()
    with pytest.raises(onemodel.FailedPrecondition) as ei:
        t.numpy()
    e = ei.value
    assert e.method == '' and e.rpc_error is None  # found by the client: no call was made
    assert str(e).startswith("FAILED_PRECONDITION: tensor '%s' is stale: " % handle), str(e)


def test_run_refused_as_a_whole_keeps_the_queue():
    server = start_server('--max-run-operations', '2')
    try:
        with server.client().session() as s:
            t = s.tensor(np.ones(2, np.float32))
            (t * 1).flush()
            s.reset_arena()
            ys = [t + 1, t + 2, t + 3]
            with pytest.raises(onemodel.ResourceExhausted, match='more than the server.s limit of 2'):
                s.flush()
            assert s.stats().session.arena.resets == 0  # refused before the reset, too
            onemodel.pending.graph(s).max_run_operations = 2
            assert ys[0].tolist() + ys[2].tolist() == [2, 2, 4, 4]
            assert s.stats().session.arena.resets == 1  # the retry carried it
    finally:
        stop_and_check(server)


def test_session_close_and_low_level_mixing(sess):
    t = sess.tensor(np.arange(3, dtype=np.float32))
    y = t * 2
    assert sess.get(y.handle).tolist() == [0, 2, 4]          # handles work with the low level
    r = sess.op('Add', y.remote, t.handle)
    assert r.numpy().tolist() == [0, 3, 6]
    assert onemodel.Tensor.from_remote(r).numpy().tolist() == [0, 3, 6]
    assert y.release() == 1
    with pytest.raises(onemodel.NotFound) as ei:
        (y + 1).numpy()
    assert_error(ei, grpc.StatusCode.NOT_FOUND, 'was released')


def test_describe_and_values_send_the_queue(counted):
    s, rpcs = counted
    a = s.tensor(np.ones((2, 3), np.float32))
    rpcs.take()
    y = a.T  # a view
    info = y.describe()
    assert rpcs.take() == {'Run': 1, 'DescribeTensor': 1}
    assert info.shape == (3, 2) and info.info.strides == [1, 3]
    z = (y * 2).sum()
    assert z.item() == 12.0
    assert rpcs.take() == {'Run': 1, 'GetTensor': 1}


def test_bad_attribute_value_is_refused_where_it_is_written(counted):
    s, rpcs = counted
    a = s.tensor(np.ones(3, np.float32))
    kept = a * 2
    rpcs.take()
    with pytest.raises((TypeError, onemodel.InvalidArgument)):
        onemodel.apply('Softmax', a, axis={'not': 'an attribute'})
    assert rpcs.take() == {}
    assert kept.tolist() == [2, 2, 2]  # the queue is intact
