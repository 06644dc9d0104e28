"""The digits CNN of tests/proofs/test_digits_cnn.py as bench data, for the
train_step_rpc_vs_torch_local entry: torch_runner.py steps it in local PyTorch,
py_client_runner.py through onemodeld. Imports neither library, so each runner takes only its
own.

Conv2d(1->8, 3x3, pad 1) + ReLU + MaxPool 2x2 + Conv2d(8->16, 3x3, pad 1) + ReLU + MaxPool 2x2
+ flatten + Linear(64->10), CrossEntropy, SGD (lr 0.1, momentum 0.9), batch 256 picked from
1500 resident 8x8 images by a row of an index table. The images are seeded uniform values, not
scikit-learn's digits: the step's work does not depend on them.
"""
import numpy as np

BATCH = 256
N_TRAIN = 1500
SGD_ARGS = dict(lr=0.1, momentum=0.9)


def data(seed=0):
    """(images (1500, 1, 8, 8) float32 in [0, 1), labels (1500,) int64 in [0, 10), index table
    (5, 256) int64: the rows of one epoch's minibatches)."""
    rng = np.random.default_rng(seed)
    x = rng.random((N_TRAIN, 1, 8, 8), dtype=np.float32)
    y = rng.integers(0, 10, N_TRAIN).astype(np.int64)
    per_epoch = N_TRAIN // BATCH
    order = rng.permutation(N_TRAIN)[:per_epoch * BATCH].reshape(per_epoch, BATCH)
    return x, y, order.astype(np.int64)


def initial_weights(seed=1):
    """conv1, b1, conv2, b2, linear (64, 10), b3: uniform within 1/sqrt(fan_in), as torch's
    defaults."""
    rng = np.random.default_rng(seed)

    def uniform(shape, fan_in):
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)
    return [uniform((8, 1, 3, 3), 9), uniform(8, 9), uniform((16, 8, 3, 3), 72), uniform(16, 72),
            uniform((64, 10), 64), uniform(10, 64)]


def forward(x, p, conv2d, pool, flatten):
    """The model over either library's tensors (conv2d(x, w, b), pool(x), flatten(x) are that
    library's)."""
    h = pool(conv2d(x, p[0], p[1]).relu())
    h = pool(conv2d(h, p[2], p[3]).relu())
    return flatten(h) @ p[4] + p[5]
