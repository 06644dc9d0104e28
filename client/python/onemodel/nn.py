"""A thin layer of models over onemodel.Tensor: Module (collects parameters) and Linear.

Not a rebuild of torch.nn: write the forward pass with Tensor methods (x.relu(),
x.log_softmax(1), ...); docs/python.md has the training loop.
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Optional

import numpy as np

from .lazy_tensor import Tensor


class Module:
    """A model: parameters() yields the parameter Tensors among its attributes and those of
    its sub-modules (also in lists and tuples), in the order they were set; calling it runs
    forward()."""

    def parameters(self) -> Iterator[Tensor]:
        seen = set()
        for value in vars(self).values():
            for p in _parameters_of(value):
                if id(p) not in seen:
                    seen.add(id(p))
                    yield p

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError('%s must define forward()' % type(self).__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)


def _parameters_of(value: Any) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        if value.requires_grad and value.is_leaf:
            yield value
    elif isinstance(value, Module):
        yield from value.parameters()
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _parameters_of(v)


class Linear(Module):
    """y = x @ weight.T + bias, weight [out, in]; initialized like torch.nn.Linear (uniform in
    +-1/sqrt(in_features)). The parameters live in the session's pool."""

    def __init__(self, session: Any, in_features: int, out_features: int, bias: bool = True,
                 rng: Optional[np.random.Generator] = None) -> None:
        rng = np.random.default_rng() if rng is None else rng
        bound = 1.0 / math.sqrt(in_features)
        self.weight = session.parameter(
            rng.uniform(-bound, bound, (out_features, in_features)).astype(np.float32))
        self.bias = (session.parameter(rng.uniform(-bound, bound, out_features).astype(np.float32))
                     if bias else None)

    def forward(self, x: Any) -> Tensor:
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias
