"""onemodel.Tensor: a server-side tensor that reads like a PyTorch tensor (docs/python.md).

    with onemodel.Client("127.0.0.1:50051").session() as s:
        w = s.parameter(np.random.randn(4, 3))          # a leaf in the pool (one PutTensor)
        x = np.ones((2, 4), np.float32)                 # sent inline with the operation
        loss = (x @ w).relu().mean()                    # queued: nothing sent yet
        loss.backward()                                 # queued too (Grad operations)
        print(loss.item(), w.grad.numpy())

Operations are queued and sent as one Run when a value is needed (onemodel.pending). Shapes,
data types, requires_grad and grad_fn of queued operations are inferred client-side
(onemodel.shape_infer); once sent, the server's TensorInfo replaces them. A shape that cannot
be inferred is fetched (a flush) when asked for. numpy arrays and Python numbers mixed with
Tensors travel inline as FLOAT (the operations compute FLOAT only).
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _wire
from . import client as _client  # (loaded first by the package: it imports this one lazily)
from . import pending as _pending
from . import shape_infer as _infer
from . import tensors as _t

_BIG = (1 << 63) - 1
_FLOAT = _t.DataType.FLOAT
_DATA_TYPES = {int(d): d for d in _t.DataType}  # DataType(i) without the Enum call's cost
# what an operation takes besides a Tensor: sent inline as FLOAT
Operand = Union['Tensor', np.ndarray, float, int, Sequence[Any]]
Ints = Union[int, Sequence[int]]


class ComparisonNotSupported(NotImplementedError):
    """Comparisons (<, ==, ...) are not operations of onemodeld yet."""


def _not_supported(name: str) -> Any:
    def method(self: Tensor, other: object) -> bool:
        raise ComparisonNotSupported(
            'Tensor %s: == and != keep tensors hashable by identity, so they do not compare '
            'elements; use t.eq(other) (Equal, a BOOL tensor) instead' % name)
    method.__name__ = name
    return method


def _constant(value: Any) -> np.ndarray:
    """A numpy or Python operand as the FLOAT array sent inline."""
    if type(value).__module__.startswith('torch') and hasattr(value, 'detach'):
        value = value.detach().cpu().numpy()
    arr = np.asarray(value)
    if arr.dtype.kind not in 'biuf':
        raise TypeError('cannot use %r as a tensor operand' % (type(value).__name__,))
    return arr.astype(np.float32, copy=False)


def _placement_name(p: Optional[str]) -> Optional[str]:
    if p is None:
        return None
    if isinstance(p, str) and p.lower() in ('pool', 'arena'):
        return p.lower()
    raise ValueError("placement must be None, 'pool' or 'arena', got %r" % (p,))


def _ints(v: Ints) -> List[int]:
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    return [int(x) for x in v]


def _shape_args(args: Tuple[Any, ...]) -> List[int]:
    """reshape(2, 3) and reshape((2, 3)) alike."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        return _ints(args[0])
    return _ints(args)


def _pair(v: Ints) -> List[int]:
    return [int(v), int(v)] if isinstance(v, (int, np.integer)) else _ints(v)


def _keep_layout(keep_layout: bool) -> Dict[str, Any]:
    """Conv2d's and ConvTranspose2d's keep_layout attribute: sent only when set (servers
    before it take the default), as an int, so that a value other than 0 or 1 reaches the
    server and is refused there with the attribute's name."""
    return {'keep_layout': int(keep_layout)} if keep_layout else {}


def _pool_attrs(kernel_size: Ints, stride: Ints, padding: Ints, ceil_mode: bool) -> dict:
    """The window attributes every pooling operation takes."""
    return {'kernel_shape': _pair(kernel_size), 'strides': _pair(stride),
            'pads': _pair(padding), 'ceil_mode': int(ceil_mode)}


_ATTRIBUTES: Dict[Any, bytes] = {}  # encoded attributes by name and value (onemodel._wire)
_MAX_ATTRIBUTES = 4096


def _attribute(name: str, value: Any) -> bytes:
    """The attribute map entry `name` = make_attribute(value, name) as encoded by
    onemodel._wire, made once per name and value: a training step's operations repeat the
    same few attributes. Raises make_attribute's error for a bad value."""
    # by repr, not by value: -0.0 == 0.0 and 1 == 1.0 == True, the attributes differ
    if not isinstance(value, (list, tuple, bool, int, float, str, np.integer, np.floating)):
        return _wire.attribute(name, _client.make_attribute(value, name))  # an array or a message
    key = (name, type(value), repr(value))
    entry = _ATTRIBUTES.get(key)
    if entry is None:
        entry = _wire.attribute(name, _client.make_attribute(value, name))
        if len(_ATTRIBUTES) >= _MAX_ATTRIBUTES:
            _ATTRIBUTES.clear()
        _ATTRIBUTES[key] = entry
    return entry


def apply(op: str, *inputs: Operand, placement: Optional[str] = None, **attrs: Any) -> Tensor:
    """Queues operation `op` of docs/protocol.md over `inputs` (Tensors, numpy arrays,
    numbers; at least one Tensor) and returns its Tensor. The methods of Tensor use it; call
    it for an operation they do not wrap."""
    for x in inputs:
        if isinstance(x, Tensor):
            g = x._graph
            break
    else:
        raise TypeError('%s needs at least one onemodel.Tensor input' % op)
    # one pass: the inputs, their shapes, types and whether they require gradients
    ins: List[Any] = []
    shapes: List[Optional[Tuple[int, ...]]] = []
    dtypes: List[Optional[_t.DataType]] = []
    req: List[bool] = []
    for x in inputs:
        if isinstance(x, Tensor):
            if x._graph is not g:
                raise ValueError('%s mixes tensors of two sessions; a handle is valid only in the '
                                 'session that made it' % op)
            x._check_usable()
            ins.append(x)
            shapes.append(x._shape)
            dtypes.append(x._dtype)
            req.append(x._requires_grad)
        else:
            c = _constant(x)
            ins.append(c)
            shapes.append(c.shape)
            dtypes.append(_FLOAT)
            req.append(False)
    grad_enabled = g.grad_enabled
    t = Tensor.__new__(Tensor)
    t._init(g)
    # attribute values are checked now, so a bad one is raised at the line that made it
    t._op, t._inputs = op, tuple(ins)
    attributes = [_attribute(name, value) for name, value in attrs.items()]
    t._placement = _placement_name(placement)
    t._fields = b''.join([_wire.op_name(op), *attributes, _wire.PLACEMENTS[t._placement]])
    t._no_grad = not grad_enabled
    t._site = _pending.creation_site()
    t._shape = _infer.infer_shape(op, shapes, attrs)
    t._dtype = _infer.infer_dtype(op, dtypes, attrs)
    t._requires_grad = _infer.records(op, req, dtypes, attrs, grad_enabled)
    t._grad_fn = _infer.GRAD_FN_NAME.get(op, op) if t._requires_grad else None
    g.add(t)
    return t


class Tensor:
    """A tensor on the server (see the module doc). Made by Session.tensor / parameter, by
    operations on other Tensors, and by backward (gradients)."""

    __slots__ = ('_graph', '_info', '_epoch', '_error', '_op', '_inputs', '_fields', '_placement',
                 '_no_grad', '_site', '_shape', '_dtype', '_requires_grad', '_grad_fn', '_leaf',
                 'grad', '__weakref__')

    _graph: Any                     # onemodel.pending.Graph of the session
    _info: Any                      # the server's TensorInfo, once sent
    _epoch: int                     # the graph's arena epoch when it was sent
    _error: Any                     # the OneModelError it failed with (raised again on use)
    _op: Optional[str]              # queued: the operation, its inputs and attributes
    _inputs: Tuple[Any, ...]
    _fields: bytes                  # op, attributes and placement encoded (onemodel._wire)
    _placement: Optional[str]
    _no_grad: bool
    _site: Any                      # onemodel.pending.Site that created it
    _shape: Optional[Tuple[int, ...]]
    _dtype: Optional[_t.DataType]
    _requires_grad: bool
    _grad_fn: Optional[str]
    _leaf: bool
    grad: Optional[Tensor]

    __array_ufunc__ = None  # numpy `array + t` defers to Tensor.__radd__ instead of converting t
    __hash__ = object.__hash__

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError('make a Tensor with Session.tensor(), Session.parameter() or an '
                        'operation on another Tensor')

    def _init(self, graph: Any) -> None:
        self._graph = graph
        self._info = self._error = self._op = self._site = self.grad = None
        self._inputs, self._fields, self._placement, self._no_grad = (), b'', None, False
        self._leaf, self._epoch = False, 0

    @classmethod
    def from_remote(cls, remote: Any, leaf: bool = False) -> Tensor:
        """A Tensor for a low-level RemoteTensor (already on the server)."""
        t = cls.__new__(cls)
        t._init(_pending.graph(remote.session))
        t._leaf = leaf
        t._materialize(remote.info, t._graph.arena_epoch)
        return t

    # ---- lifecycle (onemodel.pending calls these) ----------------------------------------

    @property
    def _pending(self) -> bool:
        return self._info is None and self._error is None

    def _materialize(self, info: Any, epoch: int) -> None:
        self._info, self._epoch = info, epoch
        self._shape = tuple(info.dims)
        dtype = _DATA_TYPES.get(info.data_type)
        self._dtype = _t.DataType(info.data_type) if dtype is None else dtype
        self._requires_grad = info.requires_grad
        grad_fn = info.grad_fn
        self._grad_fn = grad_fn if grad_fn not in ('', 'leaf') else None
        self._inputs = tuple([x for x in self._inputs if isinstance(x, Tensor)])  # for backward()
        self._fields = b''

    def _fail(self, err: Any) -> None:
        self._error = err

    def _check_usable(self) -> None:
        """Raises the error this tensor failed with, or the stale error of a reset arena."""
        if self._error is not None:
            raise self._error
        if (self._info is not None and self._info.placement == 2  # PLACEMENT_ARENA
                and self._epoch != self._graph.arena_epoch):
            raise _pending.stale_error(self._info.handle)

    def _ensure(self) -> None:
        """Sends the queued operations if this tensor is one of them; raises its error."""
        if self._pending:
            self._graph.flush()
        self._check_usable()

    # ---- what it is ------------------------------------------------------------------------

    @property
    def session(self) -> Any:
        return self._graph.session

    @property
    def shape(self) -> Tuple[int, ...]:
        """The shape (a tuple); inferred without a round trip when possible."""
        if self._shape is None:
            self._ensure()
        assert self._shape is not None  # set from the TensorInfo
        return self._shape

    def size(self, dim: Optional[int] = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> _t.DataType:
        """The onemodel.DataType (FLOAT, FLOAT16, ...)."""
        if self._dtype is None:
            self._ensure()
        assert self._dtype is not None  # set from the TensorInfo
        return self._dtype

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @property
    def grad_fn(self) -> Optional[str]:
        """The operation that recorded this tensor ("MatMul"), or None (leaves, untracked)."""
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._leaf or not self._requires_grad

    @property
    def handle(self) -> str:
        self._ensure()
        return self._info.handle

    @property
    def info(self) -> Any:
        """The server's TensorInfo (strides, layout, placement, version...); sends the queue."""
        self._ensure()
        return self._info

    @property
    def remote(self) -> Any:
        """The low-level onemodel.RemoteTensor of this tensor."""
        from .client import RemoteTensor
        return RemoteTensor(self.session, self.info)

    def describe(self) -> Any:
        """DescribeTensor: a fresh low-level RemoteTensor (TensorInfo) from the server."""
        return self.session.describe(self.handle)

    def flush(self) -> Tensor:
        """Sends the session's queued operations now."""
        self._graph.flush()
        return self

    def numpy(self) -> np.ndarray:
        """The values as a numpy array (BFLOAT16 widened to float32)."""
        return self.session.get(self.handle, bfloat16='float32')

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def item(self) -> Any:
        a = self.numpy()
        if a.size != 1:
            raise ValueError('item() of a tensor of %d elements; only one-element tensors have '
                             'an item' % a.size)
        return a.reshape(()).item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError('len() of a 0-d tensor')
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        """t[0], t[1], ... along the first dimension; TypeError for a 0-d tensor, as numpy and
        torch (it holds one value: item() reads it)."""
        if not self.shape:
            raise TypeError('iteration over a 0-d tensor: it holds one value, read it with '
                            'item()')
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __format__(self, spec: str) -> str:
        """f'{loss:.3f}' formats a one-element tensor's value."""
        return format(self.item(), spec) if spec else str(self)

    def release(self) -> int:
        """Forgets the handle on the server (ReleaseTensors); a pool tensor's buffer returns."""
        return self.session.release(self.handle)

    def copy_(self, value: Any) -> Tensor:
        """Writes `value` into this tensor in place (PutTensor target): same shape and type;
        the handle, requires_grad and placement stay. Returns self."""
        arr, _ = _t.as_array(value, self.dtype)
        remote = self.session.put(arr, target=self.handle, dtype=self.dtype)
        self._info = remote.info
        return self

    def __repr__(self) -> str:
        parts = [] if self._info is None else [self._info.handle]
        parts.append('shape=%s' % (list(self._shape) if self._shape is not None else '?'))
        parts.append('dtype=%s' % (self._dtype.name if self._dtype is not None else '?'))
        if self._requires_grad:
            parts.append('requires_grad=True')
        if self._grad_fn:
            parts.append('grad_fn=%s' % self._grad_fn)
        if self._error is not None:
            parts.append('failed: %s' % self._error.code.name)
        elif self._pending:
            parts.append('pending, created at %s:%d' % (self._site.filename.rpartition('/')[2],
                                                         self._site.lineno)
                         if self._site else 'pending')
        else:
            parts.append({1: 'pool', 2: 'arena'}.get(self._info.placement, 'placement?'))
        return 'onemodel.Tensor(%s)' % ', '.join(parts)

    def __str__(self) -> str:
        """The values, numpy-style (this sends the queue and downloads)."""
        return 'tensor(%s%s)' % (np.array2string(self.numpy(), separator=', ', prefix='tensor('),
                                 ', grad_fn=%s' % self._grad_fn if self._grad_fn else '')

    # ---- autograd -----------------------------------------------------------------------------

    def backward(self, gradient: Any = None, inputs: Optional[Iterable[Tensor]] = None,
                 retain_graph: bool = False) -> None:
        """Adds d self / d input to each input's .grad (like torch). inputs: the tensors to
        differentiate with respect to (default: every leaf that requires gradients that self
        depends on). gradient: required unless self has one element.

        Without a gradient (a one-element self, such as a loss) the gradients are queued like
        any operation (Grad, docs/protocol.md): they go with the next Run, so a training
        step's forward, backward and optimizer step are one Run, and an error of the backward
        pass is raised there with this line. With a gradient: one Run for the queued forward,
        then one Backward."""
        if inputs is None:
            inputs = _leaves(self)
        else:
            inputs = list(inputs)
        if gradient is None and self._shape is not None and math.prod(self._shape) == 1:
            grads = _queued_grads(self, inputs, retain_graph)
        else:
            grads = grad(self, inputs, gradient, retain_graph=retain_graph)
        for x, g in zip(inputs, grads):
            x.grad = g if x.grad is None else x.grad + g
        return None

    def detach(self) -> Tensor:
        return apply('Detach', self)

    # ---- operators ----------------------------------------------------------------------------

    def __add__(self, o: Operand) -> Tensor: return apply('Add', self, o)
    def __radd__(self, o: Operand) -> Tensor: return apply('Add', o, self)
    def __sub__(self, o: Operand) -> Tensor: return apply('Sub', self, o)
    def __rsub__(self, o: Operand) -> Tensor: return apply('Sub', o, self)
    def __mul__(self, o: Operand) -> Tensor: return apply('Mul', self, o)
    def __rmul__(self, o: Operand) -> Tensor: return apply('Mul', o, self)
    def __truediv__(self, o: Operand) -> Tensor: return apply('Div', self, o)
    def __rtruediv__(self, o: Operand) -> Tensor: return apply('Div', o, self)
    def __pow__(self, o: Operand) -> Tensor: return apply('Pow', self, o)
    def __rpow__(self, o: Operand) -> Tensor: return apply('Pow', o, self)
    def __matmul__(self, o: Operand) -> Tensor: return apply('MatMul', self, o)
    def __rmatmul__(self, o: Operand) -> Tensor: return apply('MatMul', o, self)
    def __neg__(self) -> Tensor: return apply('Neg', self)
    def __pos__(self) -> Tensor: return self
    def __abs__(self) -> Tensor: return apply('Abs', self)

    def __lt__(self, o: Operand) -> Tensor: return apply('Less', self, o)
    def __le__(self, o: Operand) -> Tensor: return apply('LessEqual', self, o)
    def __gt__(self, o: Operand) -> Tensor: return apply('Greater', self, o)
    def __ge__(self, o: Operand) -> Tensor: return apply('GreaterEqual', self, o)
    __eq__ = _not_supported('__eq__')
    __ne__ = _not_supported('__ne__')

    # ---- elementwise --------------------------------------------------------------------------

    def add(self, o: Operand) -> Tensor: return apply('Add', self, o)
    def sub(self, o: Operand) -> Tensor: return apply('Sub', self, o)
    def mul(self, o: Operand) -> Tensor: return apply('Mul', self, o)
    def div(self, o: Operand) -> Tensor: return apply('Div', self, o)
    def pow(self, o: Operand) -> Tensor: return apply('Pow', self, o)
    def maximum(self, o: Operand) -> Tensor: return apply('Max', self, o)
    def minimum(self, o: Operand) -> Tensor: return apply('Min', self, o)
    def matmul(self, o: Operand) -> Tensor: return apply('MatMul', self, o)
    def neg(self) -> Tensor: return apply('Neg', self)
    def abs(self) -> Tensor: return apply('Abs', self)
    def exp(self) -> Tensor: return apply('Exp', self)
    def log(self) -> Tensor: return apply('Log', self)
    def sqrt(self) -> Tensor: return apply('Sqrt', self)
    def relu(self) -> Tensor: return apply('Relu', self)
    def sigmoid(self) -> Tensor: return apply('Sigmoid', self)
    def tanh(self) -> Tensor: return apply('Tanh', self)

    def gelu(self, approximate: str = 'tanh') -> Tensor:
        """GELU: 'tanh' (the default, torch's gelu(approximate='tanh')) or 'none' (the erf
        form, torch's default)."""
        return apply('Gelu', self, approximate=str(approximate))

    def erf(self) -> Tensor: return apply('Erf', self)

    def leaky_relu(self, alpha: float = 0.01) -> Tensor:
        """x where x > 0, else alpha * x."""
        return apply('LeakyRelu', self, alpha=float(alpha))

    def clip(self, min: Optional[float] = None, max: Optional[float] = None) -> Tensor:
        """x limited to [min, max] (torch.clamp: max wins when min > max); None: unbounded."""
        attrs: Dict[str, Any] = {}
        if min is not None:
            attrs['min'] = float(min)
        if max is not None:
            attrs['max'] = float(max)
        return apply('Clip', self, **attrs)

    # ---- comparisons (BOOL results, numpy broadcasting; NaN compares false) -------------------

    def eq(self, o: Operand) -> Tensor: return apply('Equal', self, o)
    def lt(self, o: Operand) -> Tensor: return apply('Less', self, o)
    def le(self, o: Operand) -> Tensor: return apply('LessEqual', self, o)
    def gt(self, o: Operand) -> Tensor: return apply('Greater', self, o)
    def ge(self, o: Operand) -> Tensor: return apply('GreaterEqual', self, o)

    def where(self, condition: Operand, other: Operand) -> Tensor:
        """self where `condition` (BOOL) holds, else `other` (torch's Tensor.where)."""
        return apply('Where', condition, self, other)

    # ---- reductions, softmax, pooling ---------------------------------------------------------

    def sum(self, axes: Optional[Ints] = None, keepdims: bool = False) -> Tensor:
        """Sum over `axes` (an int or a list; default all)."""
        return apply('Sum', self, **_reduce_attrs(axes, keepdims))

    def mean(self, axes: Optional[Ints] = None, keepdims: bool = False) -> Tensor:
        return apply('Mean', self, **_reduce_attrs(axes, keepdims))

    def softmax(self, axis: int = -1, scale: float = 1.0) -> Tensor:
        """softmax(scale * x) along `axis`."""
        return apply('Softmax', self, axis=int(axis), scale=float(scale))

    def log_softmax(self, axis: int = -1, scale: float = 1.0) -> Tensor:
        return apply('LogSoftmax', self, axis=int(axis), scale=float(scale))

    def max_pool2d(self, kernel_size: Ints, stride: Ints = 1, padding: Ints = 0,
                   dilation: Ints = 1, ceil_mode: bool = False) -> Tensor:
        """Over an (N, C, H, W) tensor; each argument an int or a pair (like torch's)."""
        return apply('MaxPool2d', self, **_pool_attrs(kernel_size, stride, padding, ceil_mode),
                     dilations=_pair(dilation))

    def relu_max_pool2d(self, kernel_size: Ints, stride: Ints = 1, padding: Ints = 0,
                        dilation: Ints = 1, ceil_mode: bool = False) -> Tensor:
        """max_pool2d of relu() in one pass, the same values; windows with no positive
        element pass no gradient."""
        return apply('ReluMaxPool2d', self,
                     **_pool_attrs(kernel_size, stride, padding, ceil_mode),
                     dilations=_pair(dilation))

    def avg_pool2d(self, kernel_size: Ints, stride: Ints = 1, padding: Ints = 0,
                   ceil_mode: bool = False, count_include_pad: bool = False) -> Tensor:
        """Window averages over an (N, C, H, W) tensor (ONNX AveragePool's defaults)."""
        return apply('AvgPool2d', self, **_pool_attrs(kernel_size, stride, padding, ceil_mode),
                     count_include_pad=int(count_include_pad))

    def global_avg_pool2d(self) -> Tensor:
        """The mean of each (n, c) plane of an (N, C, H, W) tensor, shape (N, C, 1, 1)."""
        return apply('GlobalAvgPool2d', self)

    # ---- extrema, padding, tiling, running sums -----------------------------------------------

    def reduce_max(self, axes: Optional[Ints] = None, keepdims: bool = False) -> Tensor:
        """The largest element over `axes` (default all); NaN wins, an empty reduction gives
        -inf; the gradient goes to the first largest element (as torch.max(x, dim))."""
        return apply('ReduceMax', self, **_reduce_attrs(axes, keepdims))

    def reduce_min(self, axes: Optional[Ints] = None, keepdims: bool = False) -> Tensor:
        """As reduce_max for the smallest element (empty: +inf)."""
        return apply('ReduceMin', self, **_reduce_attrs(axes, keepdims))

    def argmax(self, axis: int = 0, keepdims: bool = False,
               select_last_index: bool = False) -> Tensor:
        """The INT64 index of the largest element along `axis`: the first of equals (the last
        with select_last_index); NaN counts as the largest."""
        return apply('ArgMax', self, axis=int(axis), keepdims=int(bool(keepdims)),
                     select_last_index=int(bool(select_last_index)))

    def argmin(self, axis: int = 0, keepdims: bool = False,
               select_last_index: bool = False) -> Tensor:
        """As argmax for the smallest element; NaN still counts as the extremum (as torch)."""
        return apply('ArgMin', self, axis=int(axis), keepdims=int(bool(keepdims)),
                     select_last_index=int(bool(select_last_index)))

    def pad(self, pads: Ints, mode: str = 'constant', value: float = 0.0) -> Tensor:
        """Padded as ONNX Pad: pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (negative
        crops); mode constant (with value), reflect, edge or wrap."""
        return apply('Pad', self, pads=_ints(pads), mode=str(mode), value=float(value))

    def tile(self, repeats: Ints) -> Tensor:
        """Repeated repeats[d] times along each axis d (one value per axis)."""
        return apply('Tile', self, repeats=_ints(repeats))

    def cumsum(self, axis: int, exclusive: bool = False, reverse: bool = False) -> Tensor:
        """Running sums along `axis` (ONNX CumSum's exclusive and reverse), summed in double."""
        return apply('CumSum', self, axis=int(axis), exclusive=int(bool(exclusive)),
                     reverse=int(bool(reverse)))

    def conv2d(self, weight: Operand, bias: Optional[Operand] = None, stride: Ints = 1,
               padding: Ints = 0, dilation: Ints = 1, groups: int = 1,
               keep_layout: bool = False) -> Tensor:
        """Over an (N, C, H, W) tensor with weight (K, C / groups, KH, KW) and an optional bias
        (K), like torch's conv2d; padding an int, a pair (height, width) or four values (top,
        left, bottom, right). The output is NCHW; with keep_layout and an NHWC input
        (`to_layout("NHWC")`) it stays NHWC, with the same values, and the fast kernels use
        oneDNN. The weight may be pre-blocked (`to_layout("BlockedWeights")`): the same bits."""
        pads = [int(padding)] * 4 if isinstance(padding, (int, np.integer)) else _ints(padding)
        inputs = (self, weight) if bias is None else (self, weight, bias)
        return apply('Conv2d', *inputs, strides=_pair(stride), pads=pads,
                     dilations=_pair(dilation), group=int(groups), **_keep_layout(keep_layout))

    # ---- normalization ------------------------------------------------------------------------

    def layer_norm(self, weight: Optional[Operand] = None, bias: Optional[Operand] = None,
                   axis: int = -1, eps: float = 1e-5) -> Tensor:
        """Normalized over the axes [axis, ndim) (torch's layer_norm with normalized_shape =
        shape[axis:]), times weight and plus bias (both of that shape) when given."""
        if weight is None and bias is not None:
            raise ValueError('layer_norm: a bias needs a weight; pass ones for the weight')
        inputs = [v for v in (self, weight, bias) if v is not None]
        return apply('LayerNorm', *inputs, axis=int(axis), epsilon=float(eps))

    def rms_norm(self, weight: Optional[Operand] = None, axis: int = -1,
                 eps: float = 1e-5) -> Tensor:
        """x / sqrt(mean(x**2) + eps) over the axes [axis, ndim), times weight when given."""
        inputs = (self,) if weight is None else (self, weight)
        return apply('RMSNorm', *inputs, axis=int(axis), epsilon=float(eps))

    def batch_norm2d(self, running_mean: Operand, running_var: Operand,
                     weight: Optional[Operand] = None, bias: Optional[Operand] = None,
                     training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
        """torch's batch_norm over an (N, C, H, W) tensor; training uses the batch's statistics
        and updates running_mean and running_var (C) in place on the server."""
        if weight is None and bias is not None:
            raise ValueError('batch_norm2d: a bias needs a weight; pass ones for the weight')
        inputs = [v for v in (self, running_mean, running_var, weight, bias) if v is not None]
        return apply('BatchNorm2d', *inputs, training=int(bool(training)),
                     momentum=float(momentum), epsilon=float(eps))

    # ---- losses and dropout (as torch.nn.functional) -----------------------------------------

    def _class_target(self, target: Any) -> Tensor:
        """`target` as a Tensor of class indices: a Tensor as it is, integers uploaded (INT64)."""
        if isinstance(target, Tensor):
            return target
        arr = np.asarray(target)
        if arr.dtype.kind not in 'iu':
            raise TypeError('class-index targets are integers (INT64 or INT32), got %s' % arr.dtype)
        return tensor(self.session, arr.astype(np.int64, copy=False))

    def cross_entropy(self, target: Any, weight: Optional[Operand] = None,
                      ignore_index: int = -100, reduction: str = 'mean',
                      label_smoothing: float = 0.0) -> Tensor:
        """torch's cross_entropy of these logits (N, C, d1, ...) or (C) and class indices
        `target` (N, d1, ...); `weight` (C) weighs each class; reduction 'none', 'mean' or 'sum'."""
        inputs = [self, self._class_target(target)] + ([] if weight is None else [weight])
        return apply('CrossEntropy', *inputs, ignore_index=int(ignore_index),
                     reduction=str(reduction), label_smoothing=float(label_smoothing))

    def nll_loss(self, target: Any, weight: Optional[Operand] = None, ignore_index: int = -100,
                 reduction: str = 'mean') -> Tensor:
        """torch's nll_loss of these log-probabilities (N, C, d1, ...) and class indices."""
        inputs = [self, self._class_target(target)] + ([] if weight is None else [weight])
        return apply('NLLLoss', *inputs, ignore_index=int(ignore_index), reduction=str(reduction))

    def mse_loss(self, target: Operand, reduction: str = 'mean') -> Tensor:
        """torch's mse_loss: the squared differences from `target` (the same shape), reduced."""
        return apply('MSELoss', self, target, reduction=str(reduction))

    def dropout(self, p: float = 0.5, *, seed: int, training: bool = True) -> Tensor:
        """Elements zeroed with probability p by a mask that depends only on `seed` and the
        element's index (docs/protocol.md), the rest scaled by 1/(1-p); not training: self.
        The seed is required: give each step its own (the same seed, the same mask)."""
        if not training:
            return self
        return apply('Dropout', self, ratio=float(p), seed=int(seed))

    # ---- transposed convolution -------------------------------------------------------------

    def conv_transpose2d(self, weight: Operand, bias: Optional[Operand] = None,
                         stride: Ints = 1, padding: Ints = 0, output_padding: Ints = 0,
                         groups: int = 1, dilation: Ints = 1,
                         keep_layout: bool = False) -> Tensor:
        """Over an (N, C, H, W) tensor with weight (C, K / groups, KH, KW) and an optional bias
        (K), like torch's conv_transpose2d (its argument order); padding, keep_layout and
        pre-blocked weights as conv2d's."""
        pads = [int(padding)] * 4 if isinstance(padding, (int, np.integer)) else _ints(padding)
        inputs = (self, weight) if bias is None else (self, weight, bias)
        return apply('ConvTranspose2d', *inputs, strides=_pair(stride), pads=pads,
                     output_padding=_pair(output_padding), dilations=_pair(dilation),
                     group=int(groups), **_keep_layout(keep_layout))

    # ---- conversion -------------------------------------------------------------------------

    def cast(self, dtype: Any) -> Tensor:
        """A new tensor of `dtype` ("float16", np.float64, onemodel.DataType.INT32, ...)."""
        return apply('Cast', self, to=int(_t.data_type(dtype)))

    def contiguous(self) -> Tensor:
        return apply('Contiguous', self)

    def copy(self, placement: Optional[str] = None) -> Tensor:
        """A new contiguous tensor; placement='pool' keeps it across arena resets."""
        return apply('Copy', self, placement=placement)

    def to_layout(self, layout: str, block: int = 16) -> Tensor:
        """"NCHW", "NHWC", "Blocked" or "BlockedWeights" (rank 4; `block` for the blocked)."""
        attrs: Dict[str, Any] = {'layout': str(layout)}
        if str(layout).lower() in ('blocked', 'blockedweights'):
            attrs['block'] = int(block)
        return apply('ToLayout', self, **attrs)

    # ---- views --------------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        return apply('Reshape', self, shape=_shape_args(shape))

    def permute(self, *dims: Any) -> Tensor:
        return apply('Permute', self, perm=_shape_args(dims))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return apply('Transpose', self, dim0=int(dim0), dim1=int(dim1))

    @property
    def T(self) -> Tensor:
        """The dimensions reversed (a view)."""
        n = self.ndim
        return self if n < 2 else self.permute(list(range(n - 1, -1, -1)))

    def expand(self, *shape: Any) -> Tensor:
        return apply('Expand', self, shape=_shape_args(shape))

    def squeeze(self, axes: Optional[Ints] = None) -> Tensor:
        return apply('Squeeze', self) if axes is None else apply('Squeeze', self, axes=_ints(axes))

    def unsqueeze(self, dim: int) -> Tensor:
        return apply('Unsqueeze', self, dim=int(dim))

    def slice(self, dim: int, start: Optional[int] = None, stop: Optional[int] = None,
              step: Optional[int] = None) -> Tensor:
        """numpy slicing start:stop:step along `dim` (a view). Bounds beyond the int64 range
        are clamped to it, as Python clamps slices (the server then clamps to the extent)."""
        step = 1 if step is None else _clamp_int64(step)
        if start is None:
            start = 0 if step > 0 else _BIG
        if stop is None:
            stop = _BIG if step > 0 else -_BIG - 1
        return apply('Slice', self, dim=int(dim), start=_clamp_int64(start),
                     stop=_clamp_int64(stop), step=step)

    # ---- indexing and joining -----------------------------------------------------------------

    def _indices(self, indices: Any) -> Tensor:
        """`indices` as a Tensor: a Tensor as is (INT32 or INT64), anything else uploaded as
        INT64."""
        if isinstance(indices, Tensor):
            return indices
        return tensor(self._graph.session, np.asarray(indices, dtype=np.int64))

    def embedding(self, indices: Any, padding_idx: Optional[int] = None) -> Tensor:
        """The rows of this (V, D) table at `indices` (any shape), shape indices.shape + (D,),
        like torch.nn.functional.embedding(indices, table, padding_idx): row padding_idx
        (negative: from the end) gets no gradient. An index outside [0, V) is an error naming
        it."""
        if padding_idx is None:
            return apply('Embedding', self, self._indices(indices))
        skip = int(padding_idx) + (self.shape[0] if padding_idx < 0 else 0)
        return apply('Embedding', self, self._indices(indices), skip_id=skip)

    def index_select(self, dim: int, index: Any) -> Tensor:
        """The slices along `dim` at `index` (ONNX Gather: any shape, replacing dimension `dim`;
        negative indices count from the end). torch.index_select for a 1-d index."""
        return apply('Gather', self, self._indices(index), axis=int(dim))

    def concat(self, *others: Operand, axis: int = 0) -> Tensor:
        """This tensor and `others` joined along `axis` (torch.cat([self, *others], axis))."""
        return apply('Concat', self, *others, axis=int(axis))

    def split(self, split_size_or_sections: Ints, dim: int = 0) -> List[Tensor]:
        """The pieces along `dim`, like torch.split: pieces of split_size_or_sections (an int;
        the last may be shorter) or of the listed sizes. One Split operation per piece."""
        n = self.shape[int(dim)]
        if isinstance(split_size_or_sections, (int, np.integer)):
            each = max(int(split_size_or_sections), 1)
            sizes = [min(each, n - i) for i in range(0, n, each)] or [0]
        else:
            sizes = _ints(split_size_or_sections)
        return [apply('Split', self, axis=int(dim), split=sizes, index=i)
                for i in range(len(sizes))]

    def __getitem__(self, key: Any) -> Tensor:
        """Basic indexing through views: ints, slices, None and ... (x[1:3, ::-1], x[0],
        x[..., None]). Tensors or lists as indices are not supported."""
        key = key if isinstance(key, tuple) else (key,)
        real = sum(1 for k in key if k is not None and k is not Ellipsis)
        if sum(1 for k in key if k is Ellipsis) > 1:
            raise IndexError('an index can only have a single ellipsis (...)')
        shape = self.shape
        if real > len(shape):
            raise IndexError('too many indices for a tensor of rank %d' % len(shape))
        out, dim, src, squeeze = self, 0, 0, []
        for k in key:
            if k is Ellipsis:
                dim += len(shape) - real
                src += len(shape) - real
            elif k is None:
                out = out.unsqueeze(dim)
                dim += 1
            elif isinstance(k, slice):
                if k != slice(None):
                    out = out.slice(dim, k.start, k.stop, k.step)
                dim, src = dim + 1, src + 1
            elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                n = shape[src]
                if not -n <= k < n:
                    raise IndexError('index %d is out of bounds for dimension %d with size %d'
                                     % (k, src, n))
                i = int(k) % n
                out = out.slice(dim, i, i + 1)
                squeeze.append(dim)
                dim, src = dim + 1, src + 1
            else:
                raise TypeError('only ints, slices, None and ... index a onemodel.Tensor (got %s)'
                                % type(k).__name__)
        return out.squeeze(squeeze) if squeeze else out


def _clamp_int64(v: Any) -> int:
    """The int `v`, clamped to [-2^63, 2^63 - 1] (a slice bound; the server takes int64)."""
    return min(max(int(v), -_BIG - 1), _BIG)


def _reduce_attrs(axes: Optional[Ints], keepdims: bool) -> dict:
    attrs: Dict[str, Any] = {'keepdims': int(bool(keepdims))}
    if axes is not None:
        attrs['axes'] = _ints(axes)
    return attrs


def _leaves(root: Tensor) -> List[Tensor]:
    """The leaves that require gradients reachable from root, in first-visit order."""
    out, seen, stack = [], set(), [root]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if t._leaf and t._requires_grad:
            out.append(t)
        for x in reversed(t._inputs):
            if isinstance(x, Tensor) and id(x) not in seen:
                stack.append(x)
    if not out:
        raise ValueError('backward(): the tensor depends on no leaf that requires gradients; '
                         'make parameters with Session.parameter() or requires_grad=True')
    return out


def _queued_grads(output: Tensor, inputs: List[Tensor], retain_graph: bool) -> List[Tensor]:
    """d output / d input for each input as queued Grad operations (one backward pass on the
    server for all of them)."""
    for x in inputs:
        if not isinstance(x, Tensor):
            raise TypeError('backward() takes onemodel.Tensor inputs, got %s' % type(x).__name__)
    return [apply('Grad', output, *inputs, index=i, retain_graph=int(bool(retain_graph)))
            for i in range(len(inputs))]


def grad(output: Tensor, inputs: Union[Tensor, Iterable[Tensor]], grad_output: Any = None,
         retain_graph: bool = False) -> List[Tensor]:
    """d output / d input for each input, as new Tensors (like torch.autograd.grad); .grad is
    not touched. Sends the queued operations (one Run), then one Backward."""
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    for x in [output] + inputs:
        if not isinstance(x, Tensor):
            raise TypeError('grad() takes onemodel.Tensor values, got %s' % type(x).__name__)
        x._ensure()
    if isinstance(grad_output, Tensor):
        grad_output = grad_output.handle
    elif grad_output is not None:
        grad_output = _t.to_tensor_proto(_t.as_array(grad_output, output.dtype)[0])
    grads = output.session.backward(output.handle, [x.handle for x in inputs],
                                    grad_output=grad_output, retain_graph=retain_graph)
    return [Tensor.from_remote(g) for g in grads]


def tensor(session: Any, data: Any, *, requires_grad: bool = False, dtype: Any = None,
           placement: Optional[str] = None) -> Tensor:
    """Uploads `data` (PutTensor, or streamed when large) and returns its leaf Tensor. Floating
    numpy arrays and Python numbers become FLOAT unless `dtype` says otherwise."""
    if dtype is None and not (type(data).__module__.startswith('torch')):
        if np.asarray(data).dtype.kind == 'f':
            dtype = _t.DataType.FLOAT
    remote = session.put(data, requires_grad=requires_grad, dtype=dtype, placement=placement)
    return Tensor.from_remote(remote, leaf=True)


def parameter(session: Any, data: Any, *, dtype: Any = None) -> Tensor:
    """A leaf that requires gradients, in the pool (it survives arena resets). The optimizers
    of onemodel.optim update it in place."""
    return tensor(session, data, requires_grad=True, dtype=dtype, placement='pool')
