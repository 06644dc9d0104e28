"""Optimizers for onemodel.Tensor parameters, with torch.optim's definitions.

onemodeld has no optimizer operations yet, so these are the documented client-side fallback
(docs/python.md): step() downloads each gradient (GetTensor), updates a host copy of the
parameter in float32 numpy exactly as torch.optim.SGD / AdamW define it, and writes the new
values into the parameter in place (PutTensor target): two round trips per parameter, and the
parameter keeps its handle. Parameters must come from Session.parameter() (which keeps the host
copy) and be written only through Tensor.copy_() or these optimizers.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Tuple

import numpy as np


class Optimizer:
    """Holds the parameters and per-parameter state; subclasses define _update."""

    def __init__(self, params: Iterable[Any], defaults: Dict[str, Any]) -> None:
        self.params = list(params)
        self.defaults = defaults
        self.state: List[Dict[str, Any]] = [{} for _ in self.params]
        for p in self.params:
            if getattr(p, '_host', None) is None:
                raise ValueError('%r is not a parameter: make it with Session.parameter()' % (p,))

    def _update(self, p: np.ndarray, g: np.ndarray, state: Dict[str, Any]) -> np.ndarray:
        """The parameter's new values from its values, gradient and state."""
        raise NotImplementedError

    def zero_grad(self) -> None:
        """Forgets the gradients (like torch's set_to_none=True)."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """Updates every parameter that has a gradient."""
        for p, state in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = np.asarray(p.grad.numpy(), dtype=np.float32)
            p.copy_(self._update(p._host, g, state))


class SGD(Optimizer):
    """torch.optim.SGD: momentum, dampening, nesterov, weight_decay, maximize."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False) -> None:
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError('Nesterov momentum requires a momentum and zero dampening')
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, p: np.ndarray, g: np.ndarray, state: Dict[str, Any]) -> np.ndarray:
        d = self.defaults
        f = np.float32
        if d['maximize']:
            g = -g
        if d['weight_decay']:
            g = g + f(d['weight_decay']) * p
        if d['momentum']:
            buf = state.get('momentum_buffer')
            if buf is None:
                buf = g.copy()
            else:
                buf = f(d['momentum']) * buf + f(1 - d['dampening']) * g
            state['momentum_buffer'] = buf
            g = g + f(d['momentum']) * buf if d['nesterov'] else buf
        return p - f(d['lr']) * g


class AdamW(Optimizer):
    """torch.optim.AdamW: betas, eps, weight_decay (decoupled), amsgrad, maximize."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _update(self, p: np.ndarray, g: np.ndarray, state: Dict[str, Any]) -> np.ndarray:
        d = self.defaults
        f = np.float32
        b1, b2 = d['betas']
        if d['maximize']:
            g = -g
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(p), exp_avg_sq=np.zeros_like(p),
                         max_exp_avg_sq=np.zeros_like(p))
        state['step'] += 1
        t = state['step']
        p = p * f(1 - d['lr'] * d['weight_decay'])
        m = state['exp_avg'] = state['exp_avg'] * f(b1) + f(1 - b1) * g
        v = state['exp_avg_sq'] = state['exp_avg_sq'] * f(b2) + f(1 - b2) * g * g
        if d['amsgrad']:
            v = state['max_exp_avg_sq'] = np.maximum(state['max_exp_avg_sq'], v)
        bias1, bias2 = 1 - b1 ** t, 1 - b2 ** t
        denom = np.sqrt(v) / f(np.sqrt(bias2)) + f(d['eps'])
        return (p - f(d['lr'] / bias1) * (m / denom)).astype(np.float32)
