"""The digits CNN of tests/proofs/test_digits_cnn.py (its definition:
tests/proofs/digits_model.py) as bench data, for the train_step_rpc_vs_torch_local entry:
torch_runner.py steps it in local PyTorch, py_client_runner.py through onemodeld. Imports
neither library, so each runner takes only its own.

Conv2d(1->8, 3x3, pad 1) + ReLU + MaxPool 2x2 + Conv2d(8->16, 3x3, pad 1) + ReLU + MaxPool 2x2
+ flatten + Linear(64->10), CrossEntropy, SGD (lr 0.1, momentum 0.9), batch 256 picked from
1500 resident 8x8 images by a row of an index table. The images are seeded uniform values, not
scikit-learn's digits: the step's work does not depend on them.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/proofs"))
from digits_model import BATCH, N_TRAIN, SGD_ARGS, forward, initial_weights  # noqa: E402,F401


def data(seed=0):
    """(images (1500, 1, 8, 8) float32 in [0, 1), labels (1500,) int64 in [0, 10), index table
    (5, 256) int64: the rows of one epoch's minibatches)."""
    rng = np.random.default_rng(seed)
    x = rng.random((N_TRAIN, 1, 8, 8), dtype=np.float32)
    y = rng.integers(0, 10, N_TRAIN).astype(np.int64)
    per_epoch = N_TRAIN // BATCH
    order = rng.permutation(N_TRAIN)[:per_epoch * BATCH].reshape(per_epoch, BATCH)
    return x, y, order.astype(np.int64)
