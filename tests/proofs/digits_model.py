"""The digits CNN's definition, shared by tests/proofs/test_digits_cnn.py and the bench's
bench/compare/digits_cnn.py. numpy only, so each caller brings its own tensor library.

Conv2d(1->8, 3x3, pad 1) + ReLU + MaxPool 2x2 + Conv2d(8->16, 3x3, pad 1) + ReLU + MaxPool 2x2
+ flatten + Linear(64->10); trained with CrossEntropy and SGD (SGD_ARGS) on minibatches of
BATCH from N_TRAIN resident 8x8 images.
"""
import numpy as np

BATCH = 256
N_TRAIN = 1500
SGD_ARGS = dict(lr=0.1, momentum=0.9)


def initial_weights(seed):
    """conv1 (8,1,3,3), b1, conv2 (16,8,3,3), b2, linear (64,10), b3: torch's default ranges
    (uniform within 1/sqrt(fan_in)), drawn from a numpy generator seeded with `seed`."""
    rng = np.random.default_rng(seed)

    def uniform(shape, fan_in):
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)
    return [uniform((8, 1, 3, 3), 9), uniform(8, 9), uniform((16, 8, 3, 3), 72), uniform(16, 72),
            uniform((64, 10), 64), uniform(10, 64)]


def forward(x, p, conv2d, pool, flatten):
    """The model over either library's tensors: conv2d(x, w, b), pool(x) and flatten(x) are
    that library's."""
    h = pool(conv2d(x, p[0], p[1]).relu())
    h = pool(conv2d(h, p[2], p[3]).relu())
    return flatten(h) @ p[4] + p[5]
