"""onemodel.Tensor autograd (backward, grad), the optimizers and nn.Linear against PyTorch."""

import numpy as np
import pytest
import torch

import onemodel
from onemodel import nn, optim, pending

GTOL = {'exact': dict(rtol=2e-5, atol=1e-6), 'fast': dict(rtol=2e-4, atol=1e-5)}


def data(seed=11):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    w1 = (rng.standard_normal((5, 16)) * 0.5).astype(np.float32)
    b1 = (rng.standard_normal(16) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((16, 3)) * 0.5).astype(np.float32)
    onehot = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]
    return x, [w1, b1, w2], onehot


def om_loss(x, p, onehot):
    return -((((x @ p[0] + p[1]).relu() @ p[2]).log_softmax(1) * onehot).sum(1)).mean()


def torch_loss(x, p, onehot):
    x, onehot = torch.from_numpy(x), torch.from_numpy(onehot)
    return -(torch.log_softmax(torch.relu(x @ p[0] + p[1]) @ p[2], 1) * onehot).sum(1).mean()


def torch_params(values):
    return [torch.tensor(v, requires_grad=True) for v in values]


def test_backward_fills_grad_of_every_leaf(ksess):
    x, values, onehot = data()
    params = [ksess.parameter(v) for v in values]
    loss = om_loss(x, params, onehot)
    assert loss.requires_grad and loss.grad_fn == 'Neg'
    loss.backward()
    tp = torch_params(values)
    tl = torch_loss(x, tp, onehot)
    tl.backward()
    np.testing.assert_allclose(loss.item(), tl.item(), **GTOL[ksess.kind])
    for p, t in zip(params, tp):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), **GTOL[ksess.kind])


def test_backward_inputs_gradient_and_accumulation(sess):
    x, values, onehot = data(12)
    params = [sess.parameter(v) for v in values]
    tp = torch_params(values)
    out = (x @ params[0] + params[1]).tanh()                 # [8, 16], not a scalar
    tout = torch.tanh(torch.from_numpy(x) @ tp[0] + tp[1])
    r = np.random.default_rng(1).standard_normal((8, 16))   # float64: sent as FLOAT
    out.backward(gradient=r, inputs=[params[0]], retain_graph=True)
    assert params[1].grad is None and params[2].grad is None
    out.backward(gradient=sess.tensor(r), inputs=[params[0]])   # accumulates, as torch does
    tout.backward(torch.from_numpy(r.astype(np.float32)) * 2, inputs=[tp[0]])
    np.testing.assert_allclose(params[0].grad.numpy(), tp[0].grad.numpy(), **GTOL['exact'])
    with pytest.raises(onemodel.FailedPrecondition, match='a second time'):
        out.backward(gradient=r, inputs=[params[0]])   # the graph was freed


def test_grad_function(sess):
    x, values, onehot = data(13)
    params = [sess.parameter(v) for v in values]
    loss = om_loss(x, params, onehot)
    grads = onemodel.grad(loss, (p for p in params))  # any iterable
    assert all(p.grad is None for p in params)
    tp = torch_params(values)
    tgrads = torch.autograd.grad(torch_loss(x, tp, onehot), tp)
    for g, t in zip(grads, tgrads):
        assert isinstance(g, onemodel.Tensor) and not g.requires_grad
        np.testing.assert_allclose(g.numpy(), t.numpy(), **GTOL['exact'])


def test_backward_needs_a_leaf(sess):
    y = sess.tensor(np.ones(3)) * 2
    with pytest.raises(ValueError, match='no leaf that requires gradients'):
        y.sum().backward()


def run_training(client, opt_om, opt_torch, steps=4):
    """The losses and final parameters of `steps` steps on both sides."""
    x, values, onehot = data(21)
    tp = torch_params(values)
    topt = opt_torch(tp)
    with client.session(kernels='exact') as s:
        params = [s.parameter(v) for v in values]
        opt = opt_om(params)
        losses = []
        for _ in range(steps):
            s.reset_arena()
            opt.zero_grad()
            loss = om_loss(x, params, onehot)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            topt.zero_grad()
            tl = torch_loss(x, tp, onehot)
            tl.backward()
            topt.step()
            np.testing.assert_allclose(losses[-1], tl.item(), rtol=1e-4, atol=1e-6)
        for p, t in zip(params, tp):
            np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
            assert p.requires_grad and p.info.placement == onemodel.pb.PLACEMENT_POOL
    return losses


SGD_CASES = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, dampening=0.3),
             dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
             dict(lr=0.1, weight_decay=0.1, maximize=False)]


@pytest.mark.parametrize('kw', SGD_CASES, ids=lambda kw: ','.join('%s=%s' % i for i in kw.items()))
def test_sgd_matches_torch(client, kw):
    losses = run_training(client, lambda p: optim.SGD(p, **kw),
                          lambda p: torch.optim.SGD(p, **kw))
    assert losses[-1] < losses[0]


@pytest.mark.parametrize('kw', [dict(lr=0.01), dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.1),
                                dict(lr=0.01, amsgrad=True, eps=1e-6)],
                         ids=lambda kw: ','.join('%s=%s' % i for i in kw.items()))
def test_adamw_matches_torch(client, kw):
    losses = run_training(client, lambda p: optim.AdamW(p, **kw),
                          lambda p: torch.optim.AdamW(p, **kw))
    assert losses[-1] < losses[0]


def test_optimizer_needs_tensors(sess):
    with pytest.raises(TypeError, match='Session.parameter'):
        optim.SGD([np.ones(2)], lr=0.1)
    with pytest.raises(ValueError, match='empty parameter list'):
        optim.AdamW([])
    with pytest.raises(ValueError, match='Nesterov'):
        optim.SGD([sess.parameter(np.ones(2))], lr=0.1, nesterov=True)


def test_step_updates_in_place_so_an_old_graph_cannot_backward(sess):
    w = sess.parameter(np.array([1.0, 2.0], np.float32))
    loss = (w * np.array([3.0, 4.0], np.float32)).sum()   # Mul saves w
    loss.backward(retain_graph=True)
    handle = w.handle
    optim.SGD([w], lr=0.5).step()
    assert w.handle == handle
    np.testing.assert_array_equal(w.numpy(), [1 - 1.5, 2 - 2.0])
    loss.backward()  # queued: the server refuses it with the next Run, at this line
    with pytest.raises(onemodel.FailedPrecondition, match='version') as refused:
        w.grad.numpy()
    assert 'test_train.py' in str(refused.value) and 'loss.backward()' in str(refused.value)


def test_maximize_steps_along_the_gradient(sess):
    w = sess.parameter(np.array([1.0, 2.0], np.float32))
    (w * np.array([3.0, 4.0], np.float32)).sum().backward()
    optim.SGD([w], lr=0.5, maximize=True).step()
    np.testing.assert_array_equal(w.numpy(), [1 + 1.5, 2 + 2.0])


@pytest.mark.parametrize('norm_type', [2.0, 1.0, float('inf')])
def test_clip_grad_norm_matches_torch(sess, norm_type):
    x, values, onehot = data(13)
    params = [sess.parameter(v) for v in values]
    om_loss(x, params, onehot).backward()
    tp = torch_params(values)
    torch_loss(x, tp, onehot).backward()
    total = optim.clip_grad_norm_(params, 0.1, norm_type)
    assert total.shape == () and total.dtype == onemodel.DataType.FLOAT
    ttotal = torch.nn.utils.clip_grad_norm_(tp, 0.1, norm_type)
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-5)
    for p, t in zip(params, tp):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match='backward'):
        optim.clip_grad_norm_([sess.parameter(np.ones(2))], 1.0)


class MLP(nn.Module):
    def __init__(self, s, rng):
        self.layers = [nn.Linear(s, 5, 16, rng=rng), nn.Linear(s, 16, 3, rng=rng)]

    def forward(self, x):
        return self.layers[1](self.layers[0](x).relu())


def test_linear_and_module_match_torch(sess):
    x, _, onehot = data(31)
    model = MLP(sess, np.random.default_rng(0))
    params = list(model.parameters())
    assert [p.shape for p in params] == [(16, 5), (16,), (3, 16), (3,)]
    tmodel = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    with torch.no_grad():
        for t, p in zip(tmodel.parameters(), params):
            t.copy_(torch.from_numpy(p.numpy()))
    opt, topt = optim.SGD(params, lr=0.1, momentum=0.5), torch.optim.SGD(tmodel.parameters(), lr=0.1,
                                                                        momentum=0.5)
    for _ in range(3):
        sess.reset_arena()
        opt.zero_grad()
        loss = -(model(x).log_softmax(1) * onehot).sum(1).mean()
        loss.backward()
        opt.step()
        topt.zero_grad()
        tl = -(torch.log_softmax(tmodel(torch.from_numpy(x)), 1) * torch.from_numpy(onehot)).sum(1).mean()
        tl.backward()
        topt.step()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-4)
    for t, p in zip(tmodel.parameters(), params):
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
    bound = 1 / np.sqrt(5)
    assert np.all(np.abs(nn.Linear(sess, 5, 2).weight.numpy()) <= bound)
    assert nn.Linear(sess, 5, 2, bias=False).bias is None


def test_step_is_in_flight_until_the_sessions_next_call(sess):
    w = sess.parameter(np.array([1.0, 2.0], np.float32))
    opt = optim.SGD([w], lr=0.5)
    graph = pending.graph(sess)
    (w * np.array([3.0, 4.0], np.float32)).sum().backward()
    opt.step()                                # waits for its reply
    assert graph.in_flight is None
    opt.zero_grad()
    (w * np.array([1.0, 1.0], np.float32)).sum().backward()
    opt.step(wait=False)                      # sent, not awaited
    assert graph.in_flight is not None
    np.testing.assert_array_equal(w.numpy(), [1 - 1.5 - 0.5, 2 - 2.0 - 0.5])  # GetTensor waits
    assert graph.in_flight is None


def refused_step(session):
    """A training step the server refuses at its IndexSelect (row 7 of a 4-row table), sent
    by Optimizer.step(wait=False); returns the table and the loss."""
    table = session.parameter(np.ones((4, 2), np.float32))
    rows = session.tensor(np.array([1, 7], np.int64))
    loss = table.index_select(0, rows).sum()   # the refused operation's line
    loss.backward()
    optim.SGD([table], lr=0.5).step(wait=False)
    return table, loss


def test_refused_step_raises_at_the_next_call_with_the_line_that_made_it(sess):
    one = sess.tensor(np.array([1.0], np.float32))
    table, loss = refused_step(sess)
    later = loss * 2                         # made from the refused Run's tensors meanwhile
    other = one + 1                          # made from none of them
    with pytest.raises(onemodel.InvalidArgument, match='7') as refused:
        sess.flush()
    assert 'test_train.py' in str(refused.value) and 'index_select' in str(refused.value)
    with pytest.raises(onemodel.InvalidArgument, match='index_select'):
        later.numpy()
    np.testing.assert_array_equal(other.numpy(), [2.0])   # still queued, then sent
    np.testing.assert_array_equal(table.numpy(), np.ones((4, 2)))  # the step never ran


def test_client_stats_wait_for_a_step_in_flight(client):
    def runs():
        return sum(m.requests for m in client.stats().rpcs if m.method.rpartition('/')[2] == 'Run')
    with client.session() as s:
        w = s.parameter(np.array([1.0, 2.0], np.float32))
        (w * np.array([3.0, 4.0], np.float32)).sum().backward()
        before = runs()
        optim.SGD([w], lr=0.5).step(wait=False)
        assert pending.graph(s).in_flight is not None
        assert runs() == before + 1
        assert pending.graph(s).in_flight is None


def test_close_closes_the_session_when_the_step_in_flight_was_refused(client):
    s = client.session()
    refused_step(s)
    with pytest.raises(onemodel.InvalidArgument, match='index_select'):
        s.close()
    assert s.closed
    with pytest.raises(onemodel.NotFound):
        s.keep_alive()
