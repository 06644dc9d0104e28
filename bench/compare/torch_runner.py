"""The PyTorch side of bench/compare: the same cases as compare_runner.cc, timed in this
process with PyTorch on CPU (run with /usr/bin/python3: Debian's python3-torch, whose BLAS is
Debian's OpenBLAS), on as many threads as the machine has. Speaks runner_protocol.py's
protocol on stdin/stdout.

Outputs are preallocated where PyTorch has an out= form (add, exp, matmul, max_pool2d via
aten.max_pool2d_with_indices.out, the kernel F.max_pool2d runs on CPU); the backward and the
MLP step go through autograd as a user's code would. Relu has no out= form: its case is
clamp_min(x, 0, out=), the same values (aten.relu.out ran 7x slower here, 145 ms against
19 ms, and torch.relu allocates and page-faults a fresh output on every call). MaxPool2d input is channels-last,
PyTorch's faster layout for it. Conv2d (issue 16) has no out= form: F.conv2d allocates its
output, input and weight channels-last; the CNN step is torch_reference.py's lenet_loss.
"""
import ctypes
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../../tests/core/ops"))
from runner_protocol import serve  # noqa: E402
from torch_reference import lenet_loss, sgd_step  # noqa: E402
import digits_cnn  # noqa: E402

N = 16 << 20
POOL = dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])


def openblas_core():
    """The OpenBLAS kernel this process runs (openblas_get_corename), or why unknown."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        lib.openblas_get_config.restype = ctypes.c_char_p
        return "%s (kernel %s)" % (lib.openblas_get_config().decode(),
                                   lib.openblas_get_corename().decode())
    except (OSError, AttributeError) as e:
        return "unknown (%s)" % e


def cpu_capability():
    """The "CPU capability usage" line of torch.__config__.show() (its SIMD kernels)."""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            return line.split(":", 1)[1].strip()
    return "?"


def info():
    """What this side runs: versions, threads, BLAS kernel, CPU capability."""
    return {"torch": torch.__version__, "threads": torch.get_num_threads(),
            "blas": "OpenBLAS " + openblas_core(),
            "cpu_capability": cpu_capability(),
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)")}


def elementwise(fn, inputs):
    """fn(*inputs, out=c) on 16M-float tensors."""
    xs = [torch.rand(N) * 2 - 1 for _ in range(inputs)]
    out = torch.empty(N)
    return lambda: fn(*xs, out=out)


def matmul(m=1024, k=1024, n=1024):
    a, b, c = torch.rand(m, k), torch.rand(k, n), torch.empty(m, n)
    return lambda: torch.matmul(a, b, out=c)


def pool_input():
    """[8, 64, 112, 112] in channels-last."""
    return torch.rand(8, 64, 112, 112).contiguous(memory_format=torch.channels_last)


def maxpool_forward():
    x = pool_input()
    out, idx = torch.ops.aten.max_pool2d_with_indices(x, **POOL)
    fn = torch.ops.aten.max_pool2d_with_indices.out
    return lambda: fn(x, POOL["kernel_size"], POOL["stride"], POOL["padding"], [1, 1], False,
                      out=out, indices=idx)


def maxpool_backward():
    x = pool_input().requires_grad_()
    y = F.max_pool2d(x, 3, 2, 1)
    g = torch.ones_like(y)
    return lambda: torch.autograd.grad(y, x, g, retain_graph=True)


def mlp_step():
    """The step of mlp_case.cc: 784-256-10, batch 64, SGD with lr 0.01."""
    x = torch.rand(64, 784) * 2 - 1
    target = torch.zeros(64, 10)
    target[torch.arange(64), torch.arange(64) % 10] = -1.0 / 64
    params = [((torch.rand(*s) * 2 - 1) * 0.05).requires_grad_()
              for s in [(784, 256), (256,), (256, 10), (10,)]]

    def step():
        w1, b1, w2, b2 = params
        h = torch.relu(torch.matmul(x, w1) + b1)
        z = torch.matmul(h, w2) + b2
        loss = (torch.log_softmax(z, 1) * target).sum()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(g * 0.01)
    return step


def adamw_1m():
    """optim_case.cc's step: torch.optim.AdamW (foreach) over four [512, 512] parameters."""
    params = [((torch.rand(512, 512) * 2 - 1) * 0.05).requires_grad_() for _ in range(4)]
    for p in params:
        p.grad = torch.rand(512, 512) * 2 - 1
    opt = torch.optim.AdamW(params, lr=1e-3, foreach=True)
    return opt.step


def layernorm():
    """kernel_cases.cc's LayerNorm8192x1024: F.layer_norm over the last axis with weight and
    bias, no grad (it has no out= form: the output is allocated per call)."""
    x = torch.rand(8192, 1024) * 2 - 1
    w, b = torch.rand(1024) * 2 - 1, torch.rand(1024) * 2 - 1

    def run():
        with torch.no_grad():
            F.layer_norm(x, (1024,), w, b)
    return run


def channels_last(*shape):
    """A tensor of `shape` with values in [-1, 1), in channels-last memory."""
    return (torch.rand(*shape) * 2 - 1).contiguous(memory_format=torch.channels_last)


# conv_cases.cc's layers: x (n, c, h, w), k output channels, kernel, stride, padding, groups.
CONV_LAYERS = {
    "conv_resnet_3x3": ((8, 64, 56, 56), 64, 3, 1, 1, 1),
    "conv_resnet_1x1": ((8, 256, 56, 56), 64, 1, 1, 0, 1),
    "conv_stem_7x7": ((1, 3, 224, 224), 64, 7, 2, 3, 1),
    "conv_depthwise": ((8, 32, 112, 112), 32, 3, 1, 1, 32),
}


def conv_inputs(name, grad):
    """The layer's x and weight, channels-last (PyTorch's faster layout for conv here)."""
    (n, c, h, w), k, kernel, stride, pad, groups = CONV_LAYERS[name]
    x = channels_last(n, c, h, w).requires_grad_(grad)
    wt = channels_last(k, c // groups, kernel, kernel).requires_grad_(grad)
    return x, wt, dict(stride=stride, padding=pad, groups=groups)


def conv_forward(name):
    """F.conv2d without bias, no grad (it has no out= form: the output is allocated)."""
    x, wt, args = conv_inputs(name, False)

    def run():
        with torch.no_grad():
            F.conv2d(x, wt, None, **args)
    return run


def conv_backward(name):
    """The input and weight gradients of the layer's recorded conv2d (graph retained)."""
    x, wt, args = conv_inputs(name, True)
    y = F.conv2d(x, wt, None, **args)
    g = torch.ones_like(y)
    return lambda: torch.autograd.grad(y, (x, wt), g, retain_graph=True)


def cnn_step():
    """conv_cases.cc's cnn_step: tests/common/lenet.h's CNN, batch 64 of 28x28, SGD lr 0.01."""
    x = torch.rand(64, 1, 28, 28) * 2 - 1
    labels = torch.arange(64) % 10
    params = [((torch.rand(*s) * 2 - 1) * 0.1).requires_grad_()
              for s in [(6, 1, 3, 3), (6,), (12, 6, 3, 3), (12,), (588, 10), (10,)]]
    return lambda: sgd_step(lenet_loss(x, labels, params), params, 0.01)


def digits_cnn_step():
    """digits_cnn.py's step in local PyTorch: zero_grad, forward + cross-entropy on the next
    minibatch (indexed from the resident images), backward, SGD with momentum."""
    x, y, order = (torch.from_numpy(a) for a in digits_cnn.data())
    params = [torch.tensor(w, requires_grad=True) for w in digits_cnn.initial_weights(1)]
    opt = torch.optim.SGD(params, **digits_cnn.SGD_ARGS)
    step = [0]

    def run():
        rows = order[step[0] % len(order)]
        step[0] += 1
        opt.zero_grad()
        z = digits_cnn.forward(x[rows], params, lambda x, w, b: F.conv2d(x, w, b, padding=1),
                               lambda h: F.max_pool2d(h, 2, 2),
                               lambda h: h.reshape(h.shape[0], -1))
        F.cross_entropy(z, y[rows]).backward()
        opt.step()
    return run


def one_thread(setup):
    """setup's callable run with torch.set_num_threads(1) (the proof's setting: on a loaded
    machine PyTorch's second thread mostly waits for a core)."""
    fn = setup()

    def run():
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            fn()
        finally:
            torch.set_num_threads(threads)
    return run


CASES = {
    "add_16m": lambda: elementwise(torch.add, 2),
    "exp_16m": lambda: elementwise(torch.exp, 1),
    "relu_16m": lambda: elementwise(lambda x, out: torch.clamp_min(x, 0, out=out), 1),
    "matmul_1024": matmul,
    "matmul_64x784x256": lambda: matmul(64, 784, 256),
    "matmul_64x256x10": lambda: matmul(64, 256, 10),
    "matmul_512x20x64": lambda: matmul(512, 20, 64),
    "maxpool_channels_last": maxpool_forward,
    "maxpool_backward": maxpool_backward,
    "mlp_step": mlp_step,
    "adamw_1m": adamw_1m,
    "layernorm_8192x1024": layernorm,
    **{name: (lambda name=name: conv_forward(name)) for name in CONV_LAYERS},
    "conv_resnet_3x3_backward": lambda: conv_backward("conv_resnet_3x3"),
    "cnn_step": cnn_step,
    "digits_cnn_step": digits_cnn_step,
    "digits_cnn_step_1_thread": lambda: one_thread(digits_cnn_step),
}

if __name__ == "__main__":
    torch.set_num_threads(os.cpu_count())
    torch.set_grad_enabled(True)
    serve(CASES, info)
