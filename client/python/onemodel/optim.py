"""Optimizers for onemodel.Tensor parameters, with torch.optim's definitions, run on the server.

step() is one Run of the server's SGD or AdamW operation (docs/protocol.md section 5) over
every parameter that has a gradient (step(wait=False): sent without waiting for the reply, which
the session's next call waits for): parameters and their states (momentum buffers, moment
estimates, the step counter) are updated in place on the server, and nothing is downloaded.
States are pool tensors of zeros the optimizer makes when it is created (PutTensor each), so
every step is exactly one Run. clip_grad_norm_ is
torch.nn.utils.clip_grad_norm_ as the server's ClipGradNorm.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Tuple

import numpy as np

from .lazy_tensor import Tensor, apply, tensor


class Optimizer:
    """Holds the parameters and their server-side states; subclasses name the operation,
    its attributes and its state lists."""

    op = ''
    state_lists: Tuple[str, ...] = ()

    def __init__(self, params: Iterable[Any], defaults: Dict[str, Any]) -> None:
        self.params = list(params)
        self.defaults = defaults
        if not self.params:
            raise ValueError('the optimizer got an empty parameter list')
        for p in self.params:
            if not isinstance(p, Tensor):
                raise TypeError('%r is not a onemodel.Tensor: make parameters with '
                                'Session.parameter()' % (p,))
        self.state: List[Dict[str, Tensor]] = [{} for _ in self.params]
        # the updates so far, an INT64 scalar on the server
        self._step = tensor(self.params[0].session, np.zeros((), np.int64), placement='pool')

    def _make_states(self, names: Tuple[str, ...]) -> None:
        """The state tensors `names` of every parameter: zeros in the pool."""
        self.state_lists = names
        for p, state in zip(self.params, self.state):
            for name in names:
                state[name] = tensor(p.session, np.zeros(p.shape, np.float32), placement='pool')

    def _attributes(self) -> Dict[str, Any]:
        """The operation's attributes from the hyperparameters."""
        raise NotImplementedError

    def zero_grad(self) -> None:
        """Forgets the gradients (like torch's set_to_none=True). Backward returns new
        gradients each time, so nothing on the server needs zeroing."""
        for p in self.params:
            p.grad = None

    def step(self, wait: bool = True) -> None:
        """Updates every parameter that has a gradient: one Run. wait=False sends it without
        waiting for the reply, so the next step is made while the server runs this one: the
        session's next call waits for it and raises its error, if any (onemodel.pending);
        Session.flush() waits at once."""
        chosen = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not chosen:
            return
        lists: List[List[Tensor]] = [[self.params[i] for i in chosen]]
        grads = [self.params[i].grad for i in chosen]
        lists.append([-g for g in grads] if self.defaults.get('maximize') else grads)
        for name in self.state_lists:
            lists.append([self.state[i][name] for i in chosen])
        update = apply(self.op, self._step, *[t for ts in lists for t in ts],
                       **self._attributes())
        update._graph.flush(wait=wait)


class SGD(Optimizer):
    """torch.optim.SGD: momentum, dampening, nesterov, weight_decay, maximize."""

    op = 'SGD'

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False) -> None:
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError('Nesterov momentum requires a momentum and zero dampening')
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))
        self._make_states(('momentum_buffer',) if momentum != 0 else ())

    def _attributes(self) -> Dict[str, Any]:
        d = self.defaults
        return dict(lr=float(d['lr']), momentum=float(d['momentum']),
                    dampening=float(d['dampening']), nesterov=int(bool(d['nesterov'])),
                    weight_decay=float(d['weight_decay']))


class AdamW(Optimizer):
    """torch.optim.AdamW: betas, eps, weight_decay (decoupled), amsgrad, maximize."""

    op = 'AdamW'

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))
        self._make_states(('exp_avg', 'exp_avg_sq') + (('max_exp_avg_sq',) if amsgrad else ()))

    def _attributes(self) -> Dict[str, Any]:
        d = self.defaults
        return dict(lr=float(d['lr']), beta1=float(d['betas'][0]), beta2=float(d['betas'][1]),
                    eps=float(d['eps']), weight_decay=float(d['weight_decay']),
                    amsgrad=int(bool(d['amsgrad'])))


def clip_grad_norm_(parameters: Iterable[Any], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """torch.nn.utils.clip_grad_norm_: scales the gradients of `parameters` in place so that
    their total norm is at most max_norm (one Run); returns the total norm before clipping, a
    FLOAT scalar Tensor."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        raise ValueError('no parameter has a gradient: call backward() first')
    return apply('ClipGradNorm', *grads, max_norm=float(max_norm), norm_type=float(norm_type),
                 error_if_nonfinite=int(bool(error_if_nonfinite))).flush()
