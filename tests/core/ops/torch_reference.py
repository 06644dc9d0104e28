#!/usr/bin/python3
"""Computes the PyTorch side of tests/core/ops/torch_test.cc.

Reads cases from argv[1] and writes results to argv[2], one token stream per line:

  case NAME OP ATTR...          one case; OP and ATTR as in OPS below
  tensor RANK DIMS... VALUES... an input (in order), values as float.hex() / C99 %a
  grad RANK DIMS... VALUES...   the output gradient
  end

  mlp STEPS LR IN HIDDEN OUT BATCH   a two-layer MLP trained with SGD; then tensors
                                     w1 b1 w2 b2 x onehot follow, then `end`
  cnn STEPS LR BATCH                 tests/common/lenet.h's CNN trained with SGD, step s on
                                     rows [s * BATCH, (s + 1) * BATCH) modulo the data set;
                                     tensors conv1_w conv1_b conv2_w conv2_b fc_w fc_b, the
                                     images (M, 1, S, S) and the labels (M) follow, then `end`

For a case the output is `result NAME`, then the forward values and the gradient of every
input, each as `values COUNT V...`. For the MLP and the CNN it is `losses STEPS L...`.
Run with Debian's /usr/bin/python3 and python3-torch; float32 throughout, one thread.
"""
import sys

import torch
import torch.nn.functional as F


def floats(tokens):
    return [float.fromhex(t) for t in tokens]


def read_tensor(tokens):
    rank = int(tokens[0])
    dims = [int(t) for t in tokens[1:1 + rank]]
    return torch.tensor(floats(tokens[1 + rank:]), dtype=torch.float32).reshape(dims)


def index_tensor(tokens):
    """RANK DIMS... VALUES... as an int64 tensor."""
    rank = int(tokens[0])
    return torch.tensor(ints(tokens[1 + rank:]), dtype=torch.int64).reshape(ints(tokens[1:1 + rank]))


def ints(attrs):
    return [int(a) for a in attrs]


UNARY = {
    "Neg": torch.neg, "Abs": torch.abs, "Exp": torch.exp, "Log": torch.log,
    "Sqrt": torch.sqrt, "Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh,
    "Gelu": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "Erf": torch.erf, "GeluNone": lambda x: torch.nn.functional.gelu(x, approximate="none"),
}
COMPARE = {
    "Equal": torch.eq, "Less": torch.lt, "LessEqual": torch.le, "Greater": torch.gt,
    "GreaterEqual": torch.ge,
}
BINARY = {
    "Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div,
    "Max": torch.maximum, "Min": torch.minimum, "Pow": torch.pow,
}


def run(op, attrs, xs):
    if op in UNARY:
        return UNARY[op](xs[0])
    if op in BINARY:
        return BINARY[op](xs[0], xs[1])
    if op == "MatMul":
        return torch.matmul(xs[0], xs[1])
    if op in ("MaxPool2d", "ReluMaxPool2d"):
        kh, kw, sh, sw, ph, pw, dh, dw, ceil = ints(attrs)
        x = torch.relu(xs[0]) if op == "ReluMaxPool2d" else xs[0]
        return torch.nn.functional.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw), (dh, dw),
                                              ceil_mode=bool(ceil))
    if op == "AvgPool2d":
        kh, kw, sh, sw, ph, pw, ceil, include = ints(attrs)
        return torch.nn.functional.avg_pool2d(xs[0], (kh, kw), (sh, sw), (ph, pw),
                                              ceil_mode=bool(ceil),
                                              count_include_pad=bool(include))
    if op == "GlobalAvgPool2d":
        return torch.nn.functional.adaptive_avg_pool2d(xs[0], 1)
    if op == "Conv2d":
        sh, sw, pt, pl, pb, pr, dh, dw, groups = ints(attrs)
        x = torch.nn.functional.pad(xs[0], (pl, pr, pt, pb))
        bias = xs[2] if len(xs) > 2 else None
        return torch.nn.functional.conv2d(x, xs[1], bias, (sh, sw), 0, (dh, dw), groups)
    if op == "ConvTranspose2d":  # asymmetric pads: PyTorch's unpadded output, cropped
        sh, sw, pt, pl, pb, pr, dh, dw, groups, oph, opw = ints(attrs)
        bias = xs[2] if len(xs) > 2 else None
        y = torch.nn.functional.conv_transpose2d(xs[0], xs[1], bias, (sh, sw), 0, (oph, opw),
                                                 groups, (dh, dw))
        return y[:, :, pt:y.shape[2] - pb, pl:y.shape[3] - pr]
    if op in ("Sum", "Mean"):
        keep = attrs[0] == "1"
        axes = ints(attrs[1:])
        f = torch.sum if op == "Sum" else torch.mean
        return f(xs[0], dim=axes, keepdim=keep) if axes else f(xs[0])
    if op in ("Softmax", "LogSoftmax"):
        axis, scale = int(attrs[0]), float.fromhex(attrs[1])
        f = torch.softmax if op == "Softmax" else torch.log_softmax
        return f(xs[0] * scale, dim=axis)
    if op == "Reshape":
        return xs[0].reshape(ints(attrs))
    if op == "Permute":
        return xs[0].permute(ints(attrs))
    if op == "Expand":
        return xs[0].expand(ints(attrs))
    if op == "Where":  # picks between its inputs by comparing them
        return torch.where(COMPARE[attrs[0]](xs[0], xs[1]), xs[0], xs[1])
    if op == "Clip":
        return torch.clamp(xs[0], float.fromhex(attrs[0]), float.fromhex(attrs[1]))
    if op == "LeakyRelu":
        return torch.nn.functional.leaky_relu(xs[0], float.fromhex(attrs[0]))
    if op == "Cast":
        return xs[0].double().float() * xs[0]
    if op == "Embedding":  # attrs: skip id (-1: none), then the indices' rank, dims, values
        skip, idx = int(attrs[0]), index_tensor(attrs[1:])
        return torch.nn.functional.embedding(idx, xs[0], None if skip < 0 else skip)
    if op == "Gather":  # attrs: axis, then the indices as for Embedding
        axis, idx = int(attrs[0]), index_tensor(attrs[1:])
        axis %= xs[0].dim()
        picked = torch.index_select(xs[0], axis, idx.reshape(-1) % xs[0].shape[axis])
        return picked.reshape(xs[0].shape[:axis] + idx.shape + xs[0].shape[axis + 1:])
    if op == "Concat":
        return torch.cat(xs, dim=int(attrs[0]))
    if op == "Split":  # attrs: axis, index, then the piece sizes
        axis, index = int(attrs[0]), int(attrs[1])
        return torch.split(xs[0], ints(attrs[2:]), dim=axis)[index]
    if op in ("ReduceMax", "ReduceMin"):  # keepdims, axes...: torch.max(dim) over the
        x, keep = xs[0], attrs[0] == "1"  # reduced axes flattened (gradient to the index)
        axes = sorted(a % x.dim() for a in ints(attrs[1:])) or list(range(x.dim()))
        kept = [d for d in range(x.dim()) if d not in axes]
        flat = x.permute(kept + axes).reshape([x.shape[d] for d in kept] + [-1])
        v = (torch.max if op == "ReduceMax" else torch.min)(flat, dim=-1).values
        return v.reshape([1 if d in axes else x.shape[d] for d in range(x.dim())]) if keep else v
    if op == "Pad":  # mode value pads (ONNX order) -> F.pad's last-axis-first pairs
        mode = {"constant": "constant", "reflect": "reflect", "edge": "replicate",
                "wrap": "circular"}[attrs[0]]
        pads = ints(attrs[2:])
        rank = len(pads) // 2
        torch_pads = [p for d in reversed(range(rank)) for p in (pads[d], pads[d + rank])]
        while torch_pads[-2:] == [0, 0]:  # F.pad's other modes take the last axes only
            torch_pads = torch_pads[:-2]
        if mode == "constant":
            return torch.nn.functional.pad(xs[0], torch_pads, value=float.fromhex(attrs[1]))
        batched = xs[0].unsqueeze(0)  # circular wants a batch axis
        return torch.nn.functional.pad(batched, torch_pads, mode=mode).squeeze(0)
    if op == "Tile":
        return xs[0].repeat(ints(attrs))
    if op == "CumSum":  # axis exclusive reverse
        axis, exclusive, reverse = ints(attrs)
        x = xs[0].flip(axis) if reverse else xs[0]
        y = torch.cumsum(x, axis)
        if exclusive:
            zero = torch.zeros_like(x.narrow(axis, 0, 1))
            y = torch.cat([zero, y.narrow(axis, 0, x.shape[axis] - 1)], axis)
        return y.flip(axis) if reverse else y
    if op == "LayerNorm":  # attrs: normalized rank, eps; inputs x[, scale[, bias]]
        k, eps = int(attrs[0]), float.fromhex(attrs[1])
        return torch.nn.functional.layer_norm(xs[0], xs[0].shape[xs[0].dim() - k:],
                                              xs[1] if len(xs) > 1 else None,
                                              xs[2] if len(xs) > 2 else None, eps)
    if op == "RMSNorm":  # attrs: normalized rank, eps; inputs x[, scale]
        k, eps = int(attrs[0]), float.fromhex(attrs[1])
        dims = list(range(xs[0].dim() - k, xs[0].dim()))
        y = xs[0] * torch.rsqrt(xs[0].pow(2).mean(dims, keepdim=True) + eps)
        return y * xs[1] if len(xs) > 1 else y
    if op == "BatchNorm2d":  # attrs: training, momentum, eps; inputs x, scale, bias
        training, momentum, eps = attrs[0] == "1", float.fromhex(attrs[1]), float.fromhex(attrs[2])
        c = xs[0].shape[1]
        mean, var = torch.linspace(-1, 1, c), torch.linspace(0.5, 2, c)
        return torch.nn.functional.batch_norm(xs[0], mean, var, xs[1], xs[2], training,
                                              momentum, eps)
    if op in ("CrossEntropy", "NLLLoss"):  # REDUCTION IGNORE SMOOTHING NW WEIGHTS... TARGETS...
        reduction, ignore, smoothing, nw = attrs[0], int(attrs[1]), float.fromhex(attrs[2]), int(attrs[3])
        weight = torch.tensor(floats(attrs[4:4 + nw])) if nw else None
        x = xs[0]
        shape = [x.shape[0]] + list(x.shape[2:]) if x.dim() > 1 else []
        target = torch.tensor(ints(attrs[4 + nw:]), dtype=torch.int64).reshape(shape)
        if op == "NLLLoss":
            return torch.nn.functional.nll_loss(x, target, weight, ignore_index=ignore,
                                                reduction=reduction)
        return torch.nn.functional.cross_entropy(x, target, weight, ignore_index=ignore,
                                                 reduction=reduction, label_smoothing=smoothing)
    if op == "MSELoss":
        return torch.nn.functional.mse_loss(xs[0], xs[1], reduction=attrs[0])
    raise ValueError("unknown op " + op)


def values(t):
    flat = t.detach().reshape(-1).tolist()
    return "values %d %s" % (len(flat), " ".join(float(v).hex() for v in flat))


def sgd_step(loss, params, lr):
    """Gradients of loss, then p -= lr * g in place (the product rounded first)."""
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for p, g in zip(params, grads):
            p.sub_(g * lr)


def losses_line(losses):
    """The `losses COUNT L...` line of a training run, values as float.hex()."""
    return "losses %d %s\n" % (len(losses), " ".join(float(v).hex() for v in losses))


def mlp(header, tensors, out):
    steps, lr = int(header[0]), float.fromhex(header[1])
    w1, b1, w2, b2, x, onehot = tensors
    params = [p.clone().requires_grad_(True) for p in (w1, b1, w2, b2)]
    losses = []
    for _ in range(steps):
        h = torch.relu(torch.matmul(x, params[0]) + params[1])
        logp = torch.log_softmax(torch.matmul(h, params[2]) + params[3], dim=1)
        loss = -torch.mean(torch.sum(logp * onehot, dim=1))
        sgd_step(loss, params, lr)
        losses.append(loss.item())
    out.write(losses_line(losses))


def lenet_loss(x, labels, params):
    """tests/common/lenet.h's LeNet: the mean NLL of int64 `labels` for images x (N, 1, S, S)
    under params conv1_w, conv1_b, conv2_w, conv2_b, fc_w, fc_b (bench/compare's torch_runner.py
    times it too)."""
    w1, b1, w2, b2, fc_w, fc_b = params
    h = F.max_pool2d(torch.relu(F.conv2d(x, w1, b1, padding=1)), 2, 2)
    h = F.avg_pool2d(torch.relu(F.conv2d(h, w2, b2, padding=1)), 2, 2)
    z = h.reshape(x.shape[0], -1) @ fc_w + fc_b
    return F.nll_loss(torch.log_softmax(z, 1), labels)


def cnn(header, tensors, out):
    steps, lr, batch = int(header[0]), float.fromhex(header[1]), int(header[2])
    params = [p.clone().requires_grad_(True) for p in tensors[:6]]
    x, labels = tensors[6], tensors[7].long()
    losses = []
    for step in range(steps):
        start = step * batch % x.shape[0]
        loss = lenet_loss(x[start:start + batch], labels[start:start + batch], params)
        sgd_step(loss, params, lr)
        losses.append(loss.item())
    out.write(losses_line(losses))


def main():
    torch.set_num_threads(1)
    out = open(sys.argv[2], "w")
    lines = [l.split() for l in open(sys.argv[1])]
    i = 0
    while i < len(lines):
        head = lines[i]
        i += 1
        xs, grad = [], None
        while lines[i][0] != "end":
            if lines[i][0] == "tensor":
                xs.append(read_tensor(lines[i][1:]))
            else:
                grad = read_tensor(lines[i][1:])
            i += 1
        i += 1
        if head[0] == "mlp":
            mlp(head[1:], xs, out)
            continue
        if head[0] == "cnn":
            cnn(head[1:], xs, out)
            continue
        name, op, attrs = head[1], head[2], head[3:]
        xs = [x.requires_grad_(True) for x in xs]
        y = run(op, attrs, xs)
        gs = torch.autograd.grad(y, xs, grad)
        out.write("result %s\n%s\n" % (name, values(y)))
        for g in gs:
            out.write(values(g) + "\n")
    out.close()


if __name__ == "__main__":
    main()
