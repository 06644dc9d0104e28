"""The losses (cross_entropy, nll_loss, mse_loss) and dropout through onemodel.Tensor, against
torch.nn.functional, with the exact and the fast kernels; Dropout's mask against the documented
counter-based generator written here in numpy."""

import grpc
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import onemodel
from conftest import assert_error

TOL = {'exact': dict(rtol=1e-5, atol=1e-6), 'fast': dict(rtol=1e-5, atol=1e-6)}


def labels(rng, shape, classes, ignore=-100):
    t = rng.integers(0, classes + 1, shape)
    return np.where(t == classes, ignore, t).astype(np.int64)  # some ignored


@pytest.mark.parametrize('reduction', ['none', 'mean', 'sum'])
@pytest.mark.parametrize('shape', [(6, 5), (2, 4, 3, 2)], ids=['2d', '4d'])
def test_cross_entropy_and_nll_loss_match_torch_with_gradients(ksess, rng, reduction, shape):
    x = rng.standard_normal(shape).astype(np.float32) * 3
    t = labels(rng, (shape[0],) + shape[2:], shape[1])
    w = rng.uniform(0.5, 2, shape[1]).astype(np.float32)
    for smoothing in (0.0, 0.2):
        xt = ksess.tensor(x, requires_grad=True)
        loss = xt.cross_entropy(t, weight=w, reduction=reduction, label_smoothing=smoothing)
        tx = torch.from_numpy(x).requires_grad_()
        want = F.cross_entropy(tx, torch.from_numpy(t), torch.from_numpy(w), reduction=reduction,
                               label_smoothing=smoothing)
        assert loss.shape == tuple(want.shape)  # predicted before anything is sent
        np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), **TOL[ksess.kind])
        g = np.ones(want.shape, np.float32)
        (gx,) = onemodel.grad(loss, [xt], grad_output=g)
        want.backward(torch.from_numpy(g))
        np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), **TOL[ksess.kind])
    lp = torch.log_softmax(torch.from_numpy(x), 1).numpy()
    got = ksess.tensor(lp).nll_loss(ksess.tensor(t.astype(np.int32)), reduction=reduction)
    want = F.nll_loss(torch.from_numpy(lp), torch.from_numpy(t), reduction=reduction)
    np.testing.assert_allclose(got.numpy(), want.numpy(), **TOL[ksess.kind])


def test_mean_over_only_ignored_targets_is_nan_as_torch(sess):
    x = np.ones((2, 3), np.float32)
    got = sess.tensor(x).cross_entropy([-100, -100]).numpy()
    assert np.isnan(got) and np.isnan(F.cross_entropy(torch.ones(2, 3), torch.tensor([-100, -100])))


def test_mse_loss_matches_torch_with_gradients(ksess, rng):
    a, b = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    for reduction in ('none', 'mean', 'sum'):
        ta, tb = ksess.tensor(a, requires_grad=True), ksess.tensor(b, requires_grad=True)
        loss = ta.mse_loss(tb, reduction=reduction)
        xa, xb = (torch.from_numpy(v).requires_grad_() for v in (a, b))
        want = F.mse_loss(xa, xb, reduction=reduction)
        assert loss.shape == tuple(want.shape)
        np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), **TOL[ksess.kind])
        g = np.ones(want.shape, np.float32)
        ga, gb = onemodel.grad(loss, [ta, tb], grad_output=g)
        want.backward(torch.from_numpy(g))
        np.testing.assert_allclose(ga.numpy(), xa.grad.numpy(), **TOL[ksess.kind])
        np.testing.assert_allclose(gb.numpy(), xb.grad.numpy(), **TOL[ksess.kind])


def dropout_keeps(seed, count, p):
    """Element i is kept when the i-th SplitMix64 draw from `seed`, as 53 bits / 2^53, is >= p."""
    with np.errstate(over='ignore'):  # uint64 arithmetic wraps modulo 2^64, as intended
        i = np.arange(count, dtype=np.uint64) + np.uint64(1)
        z = np.uint64(seed & 0xFFFFFFFFFFFFFFFF) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53 >= p


def test_dropout_mask_is_the_documented_generator_on_every_kernel_set(ksess, rng):
    x = rng.standard_normal((16, 33)).astype(np.float32)
    for seed in (0, 12345, -7):
        got = ksess.tensor(x).dropout(0.3, seed=seed).numpy()
        p = float(np.float32(0.3))  # the FLOAT attribute's value
        keep = dropout_keeps(seed, x.size, p).reshape(x.shape)
        np.testing.assert_array_equal(got, np.where(keep, x * np.float32(1.0 / (1.0 - p)), 0))
    t = ksess.tensor(x, requires_grad=True)
    y = t.dropout(0.5, seed=4)
    (g,) = onemodel.grad(y, [t], grad_output=np.ones(x.shape, np.float32))
    np.testing.assert_array_equal(g.numpy(), np.where(dropout_keeps(4, x.size, 0.5), 2.0, 0.0)
                                  .reshape(x.shape))
    assert t.dropout(0.9, seed=1, training=False) is t
    with pytest.raises(TypeError):
        t.dropout(0.5)  # the seed is required
    assert y.shape == x.shape


def test_loss_errors_say_what_to_fix(sess):
    x = sess.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(onemodel.InvalidArgument) as e:
        x.cross_entropy([0, 3]).numpy()
    assert_error(e, grpc.StatusCode.INVALID_ARGUMENT, 'target 3', '3 classes')
    with pytest.raises(TypeError, match='class-index targets are integers'):
        x.cross_entropy([0.5, 1.0])
    with pytest.raises(onemodel.InvalidArgument) as e:
        x.mse_loss(np.ones(3, np.float32)).numpy()
    assert_error(e, grpc.StatusCode.INVALID_ARGUMENT, 'must match')
