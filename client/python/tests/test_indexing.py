"""Embedding, Gather (index_select), Concat and Split through onemodel.Tensor, against PyTorch
(forward and gradients) with the exact and the fast kernels; the client's shape, dtype and
grad_fn inference is checked against the server's by `check`."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import onemodel
from test_tensor_api import GTOL, check, f32


def grads_match(s, loss, tensors, torch_loss, torch_tensors):
    for g, t in zip(onemodel.grad(loss, tensors), torch.autograd.grad(torch_loss, torch_tensors)):
        np.testing.assert_allclose(g.numpy(), t.numpy(), **GTOL[s.kind])


@pytest.mark.parametrize('padding_idx', [None, 2, -1])
@pytest.mark.parametrize('dtype', [np.int32, np.int64])
def test_embedding_matches_torch(ksess, rng, padding_idx, dtype):
    w, r = f32(rng, 5, 3), f32(rng, 2, 4, 3)
    ids = np.array([[2, 4, 0, 2], [1, 4, 4, 3]], dtype)
    table = ksess.parameter(w)
    y = table.embedding(ksess.tensor(ids, dtype=dtype), padding_idx=padding_idx)
    tw = torch.from_numpy(w).requires_grad_()
    want = F.embedding(torch.from_numpy(ids.astype(np.int64)), tw, padding_idx=padding_idx)
    check(ksess, y, want.detach().numpy())
    assert y.grad_fn == 'Embedding'
    grads_match(ksess, (y * r).sum(), [table], (want * torch.from_numpy(r)).sum(), [tw])


def test_embedding_index_out_of_range_names_it(sess):
    table = sess.tensor(np.zeros((3, 2), np.float32))
    with pytest.raises(onemodel.InvalidArgument, match=r'index -1 at position \[1\].*3 rows'):
        table.embedding([0, -1]).numpy()


@pytest.mark.parametrize('dim', [0, 1, -1])
def test_index_select_matches_torch_and_onnx_negative_indices(ksess, rng, dim):
    a = f32(rng, 3, 4, 2)
    index = np.array([[-1, 0], [1, 1]])
    x = ksess.parameter(a)
    y = x.index_select(dim, index)
    ta = torch.from_numpy(a).requires_grad_()
    n = a.shape[dim]
    flat = torch.index_select(ta, dim, torch.from_numpy(index.reshape(-1) % n))
    d = dim % 3
    want = flat.reshape(a.shape[:d] + index.shape + a.shape[d + 1:])
    check(ksess, y, want.detach().numpy())
    r = f32(rng, *want.shape)
    grads_match(ksess, (y * r).sum(), [x], (want * torch.from_numpy(r)).sum(), [ta])


def test_concat_and_split_match_torch(ksess, rng):
    a, b = f32(rng, 2, 3), f32(rng, 2, 1)
    xa, xb = ksess.parameter(a), ksess.parameter(b)
    y = xa.concat(xb, b, axis=1)  # a Tensor, a Tensor, a numpy array
    ta, tb = torch.from_numpy(a).requires_grad_(), torch.from_numpy(b).requires_grad_()
    want = torch.cat([ta, tb, torch.from_numpy(b)], 1)
    check(ksess, y, want.detach().numpy())
    pieces = y.split([1, 3, 1], dim=1)
    torch_pieces = torch.split(want, [1, 3, 1], dim=1)
    assert len(pieces) == 3
    for p, tp in zip(pieces, torch_pieces):
        check(ksess, p, tp.detach().numpy())
    assert pieces[0].grad_fn == 'Slice'
    assert [p.shape for p in y.split(2, dim=1)] == [(2, 2), (2, 2), (2, 1)]
    loss = (pieces[1] * pieces[1]).sum() + pieces[2].sum()
    torch_loss = (torch_pieces[1] ** 2).sum() + torch_pieces[2].sum()
    grads_match(ksess, loss, [xa, xb], torch_loss, [ta, tb])


def test_shape_rules_predict_without_a_round_trip(sess):
    x = sess.tensor(np.zeros((2, 3, 4), np.float32))
    ids = sess.tensor(np.zeros((5,), np.int64))
    assert x.index_select(1, ids)._shape == (2, 5, 4)
    assert x.reshape(6, 4).embedding(ids)._shape == (5, 4)
    assert x.concat(x, axis=-1)._shape == (2, 3, 8)
    assert x.concat(sess.tensor(np.zeros((2, 2), np.float32)))._shape is None, 'the server judges'
    assert onemodel.apply('Split', x, axis=2, num_outputs=3, index=2)._shape == (2, 3, 0)
    assert onemodel.apply('Split', x, axis=2, num_outputs=3, index=1)._shape == (2, 3, 2)
