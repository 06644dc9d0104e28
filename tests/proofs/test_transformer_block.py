"""Issue 17's transformer-block proof: a small decoder block (token embedding with a skip id,
learned positions, LayerNorm, two-head causal self-attention, GELU MLP, residuals, a projection
to the vocabulary and CrossEntropy over the next tokens) built from onemodeld operations through
the Python client, against the same block in PyTorch (torch.nn.functional) from the same
initial weights: the loss, the gradient of every parameter, and 50 steps of server-side AdamW
against torch.optim.AdamW.

Errors are norm-wise relative, per tensor: |ours - torch| / |torch| (Frobenius norms)."""

import time

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from onemodel import optim

VOCAB, SEQ, D_MODEL, HEADS, BATCH, D_MLP = 17, 8, 16, 2, 4, 64
D_HEAD = D_MODEL // HEADS
PAD = 0                       # the skip id: padding tokens, ignored as targets
RTOL = 1e-4
STEPS = 50
# NO_KEY_BIAS: the keys get no bias. A key bias adds q . b_k to every score of a query's row,
# which the softmax cancels: its gradient is zero up to rounding (~3e-9 here, against ~1e-2 for
# the query bias), and AdamW divides such noise by its own root mean square, so the key bias
# would take lr-sized steps of random sign on either side (2.5e-2 apart after 50 steps).
ADAMW = dict(lr=1e-2, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.05)


def initial_weights(seed=17):
    """The block's parameters by name, float32, drawn from one seeded generator."""
    rng = np.random.default_rng(seed)

    def normal(*shape, std=0.2):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    return {
        'tok_emb': normal(VOCAB, D_MODEL, std=1.0), 'pos_emb': normal(SEQ, D_MODEL, std=0.5),
        'ln1_w': 1 + normal(D_MODEL, std=0.1), 'ln1_b': normal(D_MODEL, std=0.1),
        'w_qkv': normal(D_MODEL, 3 * D_MODEL, std=0.3),
        'b_q': normal(D_MODEL, std=0.1), 'b_v': normal(D_MODEL, std=0.1),
        'w_o': normal(D_MODEL, D_MODEL, std=0.25), 'b_o': normal(D_MODEL, std=0.1),
        'ln2_w': 1 + normal(D_MODEL, std=0.1), 'ln2_b': normal(D_MODEL, std=0.1),
        'w_1': normal(D_MODEL, D_MLP, std=0.25), 'b_1': normal(D_MLP, std=0.1),
        'w_2': normal(D_MLP, D_MODEL, std=0.125), 'b_2': normal(D_MODEL, std=0.1),
        'lnf_w': 1 + normal(D_MODEL, std=0.1), 'lnf_b': normal(D_MODEL, std=0.1),
        'w_out': normal(D_MODEL, VOCAB, std=0.25), 'b_out': normal(VOCAB, std=0.1),
    }


def token_batch(seed=18):
    """(inputs, targets), each (BATCH, SEQ) INT64: sequences of SEQ + 1 tokens in [1, VOCAB) of
    lengths 5 to SEQ + 1, padded with PAD; the targets are the inputs shifted by one. Two rows
    are padded at the start, so later tokens attend to padding and only the skip id keeps the
    PAD row of the table from getting a gradient; one is padded at the end."""
    rng = np.random.default_rng(seed)
    tokens = np.full((BATCH, SEQ + 1), PAD, np.int64)
    for row, (length, at_start) in enumerate([(SEQ + 1, 0), (7, 1), (5, 1), (SEQ, 0)]):
        tokens[row, SEQ + 1 - length if at_start else 0:][:length] = rng.integers(1, VOCAB, length)
    return tokens[:, :-1], tokens[:, 1:]


def om_block(s, p, tokens, targets):
    """The block's mean next-token loss from onemodeld operations (p: name -> Tensor)."""
    x = p['tok_emb'].embedding(tokens, padding_idx=PAD) + p['pos_emb'].embedding(np.arange(SEQ))
    h = x.layer_norm(p['ln1_w'], p['ln1_b'])
    b_qkv = p['b_q'].concat(np.zeros(D_MODEL, np.float32), p['b_v'])   # see NO_KEY_BIAS
    q, k, v = (h @ p['w_qkv'] + b_qkv).split(D_MODEL, dim=-1)
    q, k, v = (t.reshape(BATCH, SEQ, HEADS, D_HEAD).permute(0, 2, 1, 3) for t in (q, k, v))
    scores = q @ k.transpose(2, 3)                                  # (B, H, T, T)
    positions = np.arange(SEQ, dtype=np.float32)
    causal = s.tensor(positions[None, :]) <= s.tensor(positions[:, None])   # key <= query
    att = scores.where(causal, float('-inf')).softmax(-1, scale=1 / np.sqrt(D_HEAD))
    heads = (att @ v).permute(0, 2, 1, 3).reshape(BATCH, SEQ, D_MODEL)
    x = x + (heads @ p['w_o'] + p['b_o'])
    x = x + ((x.layer_norm(p['ln2_w'], p['ln2_b']) @ p['w_1'] + p['b_1']).gelu(approximate='none')
             @ p['w_2'] + p['b_2'])
    logits = x.layer_norm(p['lnf_w'], p['lnf_b']) @ p['w_out'] + p['b_out']
    return logits.reshape(BATCH * SEQ, VOCAB).cross_entropy(targets.reshape(-1), ignore_index=PAD)


def torch_block(p, tokens, targets):
    """The same block in PyTorch (p: name -> torch tensor)."""
    tokens, targets = torch.from_numpy(tokens), torch.from_numpy(targets)
    x = F.embedding(tokens, p['tok_emb'], padding_idx=PAD) + p['pos_emb']
    h = F.layer_norm(x, (D_MODEL,), p['ln1_w'], p['ln1_b'])
    b_qkv = torch.cat([p['b_q'], torch.zeros(D_MODEL), p['b_v']])
    q, k, v = (h @ p['w_qkv'] + b_qkv).split(D_MODEL, dim=-1)
    q, k, v = (t.reshape(BATCH, SEQ, HEADS, D_HEAD).permute(0, 2, 1, 3) for t in (q, k, v))
    scores = q @ k.transpose(2, 3)
    causal = torch.ones(SEQ, SEQ, dtype=torch.bool).tril()
    att = F.softmax(scores.masked_fill(~causal, float('-inf')) / np.sqrt(D_HEAD), dim=-1)
    heads = (att @ v).permute(0, 2, 1, 3).reshape(BATCH, SEQ, D_MODEL)
    x = x + (heads @ p['w_o'] + p['b_o'])
    x = x + (F.gelu(F.layer_norm(x, (D_MODEL,), p['ln2_w'], p['ln2_b']) @ p['w_1'] + p['b_1'])
             @ p['w_2'] + p['b_2'])
    logits = F.layer_norm(x, (D_MODEL,), p['lnf_w'], p['lnf_b']) @ p['w_out'] + p['b_out']
    return F.cross_entropy(logits.reshape(BATCH * SEQ, VOCAB), targets.reshape(-1),
                           ignore_index=PAD)


def rel_error(ours, theirs):
    """Norm-wise relative error of `ours` against the torch value `theirs`."""
    theirs = np.asarray(theirs, np.float64)
    return float(np.linalg.norm(np.asarray(ours, np.float64) - theirs) / np.linalg.norm(theirs))


def check(what, ours, theirs, worst):
    """Asserts one tensor (or the loss) within RTOL and records its error in `worst`."""
    err = rel_error(ours, theirs)
    worst[what] = max(worst.get(what, 0.0), err)
    assert err <= RTOL, '%s differs from PyTorch: relative error %.3g > %g' % (what, err, RTOL)


def make_parameters(s):
    """The same initial weights as onemodeld parameters and as torch leaves, by name."""
    weights = initial_weights()
    params = {name: s.parameter(w) for name, w in weights.items()}
    tparams = {name: torch.tensor(w, requires_grad=True) for name, w in weights.items()}
    return params, tparams


def report(kernels, title, worst):
    print('\n[%s] %s max relative errors: %s' % (kernels, title, ', '.join(
        '%s %.2e' % item for item in worst.items())))


@pytest.mark.parametrize('kernels', ['exact', 'fast'])
def test_loss_and_every_gradient_match_torch(client, kernels):
    tokens, targets = token_batch()
    assert (targets == PAD).any() and (tokens == PAD).any()
    with client.session(kernels=kernels) as s:
        params, tparams = make_parameters(s)
        loss = om_block(s, params, tokens, targets)
        loss.backward()
        tloss = torch_block(tparams, tokens, targets)
        tloss.backward()
        worst = {}
        check('loss', loss.item(), tloss.item(), worst)
        for name, p in params.items():
            check('grad of ' + name, p.grad.numpy(), tparams[name].grad.numpy(), worst)
        assert not params['tok_emb'].grad.numpy()[PAD].any(), 'the skip id row got a gradient'
        report(kernels, 'forward and gradient', worst)


@pytest.mark.parametrize('kernels', ['exact', 'fast'])
def test_adamw_training_matches_torch(client, kernels):
    tokens, targets = token_batch()
    with client.session(kernels=kernels) as s:
        params, tparams = make_parameters(s)
        opt = optim.AdamW(list(params.values()), **ADAMW)
        topt = torch.optim.AdamW(list(tparams.values()), **ADAMW)
        worst, losses, start = {}, [], time.monotonic()
        for step in range(STEPS):
            s.reset_arena()
            opt.zero_grad()
            loss = om_block(s, params, tokens, targets)
            loss.backward()
            opt.step()
            topt.zero_grad()
            tloss = torch_block(tparams, tokens, targets)
            tloss.backward()
            topt.step()
            losses.append(loss.item())
            check('loss at step %d' % step, losses[-1], tloss.item(), worst)
        for name, p in params.items():
            check('parameter %s after %d steps' % (name, STEPS), p.numpy(),
                  tparams[name].detach().numpy(), worst)
        assert losses[-1] < 0.5 * losses[0], 'the block did not learn: %s' % losses
        print('\n[%s] %d AdamW steps in %.2f s, loss %.4f -> %.4f' % (
            kernels, STEPS, time.monotonic() - start, losses[0], losses[-1]))
        report(kernels, 'training', {
            'loss (any step)': max(v for k, v in worst.items() if k.startswith('loss')),
            **{k.split()[1]: v for k, v in worst.items() if k.startswith('parameter')}})
