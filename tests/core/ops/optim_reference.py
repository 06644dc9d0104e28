"""torch.optim.SGD / AdamW and clip_grad_norm_ on the inputs optimizers_torch_test.cc writes.

Usage: optim_reference.py CASES RESULTS. Each case in CASES:
    case NAME OPTIMIZER key=value ...      (OPTIMIZER: sgd, adamw or clip)
    steps S params N
    shape RANK EXTENT...                   (N lines)
    param VALUE...                         (N lines, hex floats)
    grad VALUE...                          (S x N lines: step 0's gradients, then step 1's...)
RESULTS gets, per case, "case NAME" and one "param VALUE..." line per parameter after every
step (for clip: the clipped gradients, then "norm VALUE").
"""
import sys

import torch


def tensor(values, shape):
    return torch.tensor([float.fromhex(v) for v in values], dtype=torch.float32).reshape(shape)


def hexes(t):
    return " ".join(float(x).hex() for x in t.detach().reshape(-1).tolist())


def main(cases_path, results_path):
    lines = [line.split() for line in open(cases_path) if line.strip()]
    out = open(results_path, "w")
    i = 0
    while i < len(lines):
        header = lines[i]
        name, kind = header[1], header[2]
        attrs = {k: float.fromhex(v) for k, v in (a.split("=") for a in header[3:])}
        steps, n = int(lines[i + 1][1]), int(lines[i + 1][3])
        shapes = [[int(e) for e in lines[i + 2 + k][2:]] for k in range(n)]
        i += 2 + n
        params = [tensor(lines[i + k][1:], shapes[k]).requires_grad_() for k in range(n)]
        i += n
        grads = []
        for s in range(steps):
            grads.append([tensor(lines[i + k][1:], shapes[k]) for k in range(n)])
            i += n
        out.write(f"case {name}\n")
        if kind == "clip":
            for p, g in zip(params, grads[0]):
                p.grad = g.clone()
            norm = torch.nn.utils.clip_grad_norm_(params, attrs["max_norm"], attrs["norm_type"])
            for p in params:
                out.write(f"param {hexes(p.grad)}\n")
            out.write(f"norm {float(norm).hex()}\n")
            continue
        if kind == "sgd":
            opt = torch.optim.SGD(params, lr=attrs["lr"], momentum=attrs["momentum"],
                                  dampening=attrs["dampening"], nesterov=bool(attrs["nesterov"]),
                                  weight_decay=attrs["weight_decay"], foreach=False)
        else:
            opt = torch.optim.AdamW(params, lr=attrs["lr"], betas=(attrs["beta1"], attrs["beta2"]),
                                    eps=attrs["eps"], weight_decay=attrs["weight_decay"],
                                    amsgrad=bool(attrs["amsgrad"]), foreach=False)
        for s in range(steps):
            for p, g in zip(params, grads[s]):
                p.grad = g
            opt.step()
            for p in params:
                out.write(f"param {hexes(p)}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
