"""Issue 17's "CNN on real data" proof: a small CNN trained on scikit-learn's digits through
onemodeld, step by step against the same model in PyTorch.

Conv2d(1->8, 3x3, pad 1) + ReLU + MaxPool 2x2 + Conv2d(8->16, 3x3, pad 1) + ReLU + MaxPool 2x2
+ flatten + Linear(64->10), CrossEntropy, SGD with momentum; the same initial weights (numpy,
seeded) on both sides. The data set lives in the session's pool (uploaded once, as a data
loader stages it on a device); each step picks its minibatch there with Gather from its row of
a resident index table, so a step is exactly one round trip (one Run: the arena reset, the
forward, the loss, its gradients as Grad operations and the optimizer's update) and, once warm,
takes nothing new from the arena or the pool. Reading the loss back for the comparison is a
second RPC outside the timed step.
"""

import time

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

from onemodel import optim

from digits_model import BATCH, N_TRAIN, SGD_ARGS, forward, initial_weights

STEPS = 200
WARMUP = 5              # steps after which the arena and the pool must not move
# The relative loss difference allowed at every step. The 1e-4 holds with the exact
# kernels (measured: at most 4.0e-5 over the 200 steps). With the fast kernels (other
# summation orders) the losses stay within 2e-6 absolute, but the last steps' losses are near
# 0.01, so that is up to 1.0e-4 relative there: they get 1e-3.
LOSS_RTOL = {'exact': 1e-4, 'fast': 1e-3}
MIN_ACCURACY = 0.90


def digits():
    """(x_train, y_train, x_test, y_test): images (N, 1, 8, 8) scaled to [0, 1], INT64 labels."""
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


def minibatches(seed=1):
    """(STEPS, BATCH) INT64 row indices: consecutive slices of seeded permutations of the
    training set, a new permutation each epoch (the remainder of an epoch is dropped)."""
    rng = np.random.default_rng(seed)
    per_epoch = N_TRAIN // BATCH
    rows = []
    while len(rows) < STEPS:
        perm = rng.permutation(N_TRAIN)
        rows += [perm[i * BATCH:(i + 1) * BATCH] for i in range(per_epoch)]
    return np.stack(rows[:STEPS]).astype(np.int64)


def om_forward(x, p):
    return forward(x, p, lambda x, w, b: x.conv2d(w, b, padding=1),
                   lambda h: h.max_pool2d(2, stride=2), lambda h: h.reshape(h.shape[0], -1))


def torch_forward(x, p):
    return forward(x, p, lambda x, w, b: F.conv2d(x, w, b, padding=1),
                   lambda h: F.max_pool2d(h, 2, 2), lambda h: h.reshape(h.shape[0], -1))


def train_torch(weights, data, order):
    """Losses and per-step seconds of the same training in PyTorch (float32, one thread)."""
    torch.set_num_threads(1)
    x, y = torch.from_numpy(data[0]), torch.from_numpy(data[1])
    params = [torch.tensor(w, requires_grad=True) for w in weights]
    opt = torch.optim.SGD(params, **SGD_ARGS)
    losses, seconds = [], []
    for rows in order:
        idx = torch.from_numpy(rows)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(torch_forward(x[idx], params), y[idx])
        loss.backward()
        opt.step()
        seconds.append(time.perf_counter() - t0)
        losses.append(loss.item())
    return np.array(losses), np.array(seconds), params


def server_figures(s):
    """What the server counted so far: the session's arena growth events and chunks, the
    server's pool rents (hits + misses), the session's pool buffers, and per RPC (by short
    name) its requests and the seconds the server spent on them (NAME_s)."""
    st = s.stats()
    figures = dict(arena_growth_events=st.session.arena.growth_events,
                   arena_chunks=st.session.arena.chunks,
                   pool_rents=st.pool.hits + st.pool.misses,
                   session_pool_buffers=st.session.pool_buffers)
    for r in st.rpcs:
        name = r.method.rsplit('/', 1)[-1]
        figures[name], figures[name + '_s'] = r.requests, r.latency_sum_seconds
    return figures


def train_remote(s, weights, data, order):
    """Losses, per-step seconds, parameters and the server's figures after WARMUP and after
    the last step, for the training through onemodeld in session `s`."""
    # Slice, Reshape and Gather take FLOAT data only: the labels and the index table are kept
    # as FLOAT (exact below 2**24) and each step's pieces are Cast to INT64 on the server
    x, y, index = (s.tensor(a.astype(np.float32)) for a in (data[0], data[1], order))
    params = [s.parameter(w) for w in weights]
    opt = optim.SGD(params, **SGD_ARGS)
    losses, seconds, warm = [], [], None
    for step in range(len(order)):
        t0 = time.perf_counter()
        s.reset_arena()                                  # goes with the forward Run
        opt.zero_grad()
        rows = index[step].cast('int64')
        labels = y.index_select(0, rows).cast('int64')
        loss = om_forward(x.index_select(0, rows), params).cross_entropy(labels)
        loss.backward()                                  # queued: Grad operations
        opt.step()                                       # the step's one Run (SGD in place)
        seconds.append(time.perf_counter() - t0)
        losses.append(loss.item())
        if step + 1 == WARMUP:
            warm = server_figures(s)
    return np.array(losses), np.array(seconds), params, warm, server_figures(s)


def accuracy(s, params, x, y):
    """The share of images `x` whose largest logit is their label `y`."""
    with s.no_grad():
        return float((om_forward(s.tensor(x), params).numpy().argmax(1) == y).mean())


def first_divergence(losses, reference, rtol):
    """A message naming the first step whose loss differs from the reference by more than
    rtol relative, or None."""
    rel = np.abs(losses - reference) / np.abs(reference)
    bad = np.flatnonzero(~(rel <= rtol))
    if not bad.size:
        return None
    k = bad[0]
    return ('step %d: onemodeld loss %.9g, PyTorch %.9g, relative difference %.3g > %g (%d of %d '
            'steps differ; largest %.3g at step %d)' % (k, losses[k], reference[k], rel[k],
                                                         rtol, bad.size, len(rel),
                                                         np.nanmax(rel), np.nanargmax(rel)))


@pytest.fixture(scope='module')
def reference():
    data, order, weights = digits(), minibatches(), initial_weights(0)
    losses, seconds, params = train_torch(weights, data, order)
    with torch.no_grad():
        acc = (torch_forward(torch.from_numpy(data[2]), params).argmax(1).numpy() == data[3]).mean()
    return dict(data=data, order=order, weights=weights, losses=losses, seconds=seconds,
                accuracy=acc)


@pytest.mark.parametrize('kernels', ['exact', 'fast'])
def test_digits_cnn_trains_like_torch(client, reference, kernels):
    data, ref = reference['data'], reference['losses']
    with client.session(kernels=kernels, client_name='proof_digits_cnn') as s:
        losses, seconds, params, warm, end = train_remote(s, reference['weights'], data,
                                                          reference['order'])
        acc = accuracy(s, params, data[2], data[3])
    rel = np.abs(losses - ref) / np.abs(ref)
    moved = {k: end.get(k, 0) - warm.get(k, 0) for k in end}
    steps = STEPS - WARMUP
    remote_ms, torch_ms = np.median(seconds) * 1e3, np.median(reference['seconds']) * 1e3
    server_ms = moved['Run_s'] / steps * 1e3
    print('\n[%s] %d steps, batch %d: loss %.4f -> %.4f, max relative loss difference %.3g '
          '(step %d), test accuracy %.4f (PyTorch %.4f)'
          % (kernels, STEPS, BATCH, losses[0], losses[-1], np.nanmax(rel), np.nanargmax(rel), acc,
             reference['accuracy']))
    print('[%s] median step: onemodeld %.2f ms (1 RPC; in the server, mean: %.2f ms), PyTorch '
          'local %.2f ms, torch/remote %.3f' % (kernels, remote_ms, server_ms, torch_ms,
                                                torch_ms / remote_ms))
    print('[%s] after step %d: arena growth events %d, arena chunks %d, pool rents %d; changes by '
          'step %d: %s' % (kernels, WARMUP, warm['arena_growth_events'], warm['arena_chunks'],
                           warm['pool_rents'], STEPS,
                           {k: v for k, v in moved.items() if v and not k.endswith('_s')}))
    message = first_divergence(losses, ref, LOSS_RTOL[kernels])
    assert message is None, '[%s kernels] %s' % (kernels, message)
    assert acc > MIN_ACCURACY, 'test accuracy %.4f after %d steps, expected above %.2f' % (
        acc, STEPS, MIN_ACCURACY)
    assert end['arena_growth_events'] == warm['arena_growth_events'], (
        'the arena grew after warm-up: growth events %d after step %d, %d after step %d'
        % (warm['arena_growth_events'], WARMUP, end['arena_growth_events'], STEPS))
    assert end['pool_rents'] == warm['pool_rents'], (
        'the pool was rented from after warm-up: %d rents after step %d, %d after step %d'
        % (warm['pool_rents'], WARMUP, end['pool_rents'], STEPS))
    made = (moved['Run'], moved.get('Backward', 0), moved.get('PutTensor', 0))
    assert made == (steps, 0, 0), (
        'steps %d to %d made %d Runs, %d Backwards and %d PutTensors: expected one Run per step, '
        'no Backward and no upload' % (WARMUP + 1, STEPS, *made))
