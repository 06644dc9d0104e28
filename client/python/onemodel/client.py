"""The onemodeld client: a Client (one channel) and Sessions (a context manager each).

    import numpy as np, onemodel

    with onemodel.Client("127.0.0.1:50051") as client:
        with client.session(kernels="exact") as s:
            w = s.put(np.random.rand(4, 3).astype(np.float32), requires_grad=True)
            x = s.put(np.random.rand(2, 4).astype(np.float32))
            b = s.batch()
            y = b.add("MatMul", x, w)
            loss = b.add("Mean", b.add("Relu", y))
            outs = b.run()                       # one round trip for three operations
            (gw,) = s.backward(outs[loss], [w])
            print(outs[y].numpy(), gw.numpy())

Every session RPC carries the metadata header `onemodel-session` (and the message's
session_id). Failures raise onemodel.OneModelError (subclasses by status code) with .code and
.details. Tensors above Client.stream_threshold_bytes (1 MiB, measured: see _transfer.py) go
through UploadTensor and DownloadTensor automatically, in both directions.

dtype policy of put() and inline inputs: numpy float64 arrays and Python floats and lists
become FLOAT (what operations run on); an explicit dtype= keeps any supported type.
"""

import os
import threading
import weakref
from typing import Any, List, Optional

import grpc
import numpy as np

from . import _grpc_runtime
from . import _token
from . import _transfer
from . import errors
from . import tensors as _t

try:
    from ._proto.onemodel.v1 import onemodel_pb2 as pb
    from ._proto.onemodel.v1 import onemodel_pb2_grpc as pb_grpc
    from ._proto.grpc.health.v1 import health_pb2, health_pb2_grpc
except ImportError as e:  # pragma: no cover - a setup problem, explained
    raise ImportError(
        "onemodel's generated gRPC stubs (onemodel._proto) are missing: install the package "
        "with scripts/install-python-client (a .venv; then `. .venv/bin/activate`), or build "
        "the CMake target onemodel_python_stubs and put <build>/client/python/gen on "
        "PYTHONPATH (client/python/README.md)") from e

SESSION_HEADER = 'onemodel-session'
INSTANCE_HEADER = 'onemodel-instance'
DEFAULT_TARGET = '127.0.0.1:50051'
STREAM_THRESHOLD_BYTES = _transfer.STREAM_THRESHOLD_BYTES
MESSAGE_OVERHEAD = _transfer.MESSAGE_OVERHEAD

_PLACEMENTS = {None: pb.PLACEMENT_UNSPECIFIED, 'pool': pb.PLACEMENT_POOL, 'arena': pb.PLACEMENT_ARENA}
_KERNELS = {None: pb.KERNEL_CHOICE_UNSPECIFIED, 'fast': pb.KERNEL_CHOICE_FAST, 'exact': pb.KERNEL_CHOICE_EXACT}


def _placement(p):
    if isinstance(p, str):
        p = p.lower()
    if p in _PLACEMENTS:
        return _PLACEMENTS[p]
    if isinstance(p, int) and p in (0, 1, 2):
        return p
    raise ValueError("placement must be None, 'pool', 'arena' or a Placement value, got %r" % (p,))


def _kernels(k):
    if isinstance(k, str):
        k = k.lower()
    if k in _KERNELS:
        return _KERNELS[k]
    if isinstance(k, int) and k in (0, 1, 2):
        return k
    raise ValueError("kernels must be None, 'fast', 'exact' or a KernelChoice value, got %r" % (k,))


def read_ready_file(path):
    """The key=value lines onemodeld writes to --ready-file: {'grpc': ..., 'metrics': ..., 'instance': ...}."""
    out = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            if line and '=' in line:
                k, v = line.split('=', 1)
                out[k.strip()] = v.strip()
    return out


def _rpc(method, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except grpc.RpcError as e:
        raise errors.from_rpc_error(e, method) from None


class Output(int):
    """A reference to the output of an earlier operation of the same Run (its index).
    Batch.add's Outputs also know their batch: only that batch takes them (in add() and as
    its index), so that one cannot silently name an operation of another Run. They hold it
    weakly: an Output does not keep its batch's operations and results alive."""

    _batch: Optional['weakref.ref[Batch]']

    def __new__(cls, index: int, batch: Optional['Batch'] = None) -> 'Output':
        out = super().__new__(cls, index)
        out._batch = None if batch is None else weakref.ref(batch)
        return out

    @property
    def from_batch(self) -> bool:
        """Whether Batch.add returned it (rather than Output(i) for a list of operations)."""
        return self._batch is not None

    @property
    def batch(self) -> Optional['Batch']:
        """The batch whose add() returned it; None for a plain Output(i) or once that batch
        is gone."""
        return None if self._batch is None else self._batch()

    def __repr__(self):
        return 'Output(%d)' % int(self)


class RemoteTensor:
    """A handle to a tensor on the server, with what the server said about it (TensorInfo).

    str(t) is the handle; t.numpy() downloads it; t.release() forgets it."""

    __slots__ = ('session', 'info')

    def __init__(self, session, info):
        self.session = session
        self.info = info

    handle = property(lambda self: self.info.handle)
    shape = property(lambda self: tuple(int(d) for d in self.info.dims))
    dtype = property(lambda self: _t.DataType(self.info.data_type))
    requires_grad = property(lambda self: self.info.requires_grad)
    placement = property(lambda self: self.info.placement)
    grad_fn = property(lambda self: self.info.grad_fn)

    @property
    def nbytes(self):
        """Bytes of the tensor's elements (as downloaded)."""
        return _t.element_count(self.info.dims) * _t.NUMPY_DTYPES[self.dtype].itemsize

    def numpy(self, **kwargs):
        return self.session.get(self, **kwargs)

    def describe(self):
        return self.session.describe(self)

    def release(self):
        return self.session.release(self)

    def __str__(self):
        return self.handle

    def __repr__(self):
        return 'RemoteTensor(%s, %s, shape=%s%s)' % (
            self.handle, self.info.data_type_name or self.dtype.name, self.shape,
            ', requires_grad=True' if self.requires_grad else '')


def _handle(h):
    if isinstance(h, RemoteTensor):
        return h.handle
    if isinstance(h, str):
        return h
    raise TypeError('expected a handle (str or RemoteTensor), got %r' % (type(h).__name__,))


_INT64 = (-(1 << 63), (1 << 63) - 1)
_INTEGRAL = (bool, int, np.integer)
_REAL = (bool, int, float, np.integer, np.floating)
# The int attributes that are 0/1 switches (the server documents them as "1 ..." or "0 ...";
# test_operations.py checks the list against ListOperations): they take True and False.
SWITCH_ATTRIBUTES = frozenset({
    'amsgrad', 'ceil_mode', 'count_include_pad', 'error_if_nonfinite', 'exclusive', 'keep_layout',
    'keepdims', 'nesterov', 'retain_graph', 'reverse', 'select_last_index', 'training'})


def _bad_attribute(name: str, message: str) -> errors.InvalidArgument:
    """The InvalidArgument the server would answer, raised before sending (method 'Run')."""
    return errors.InvalidArgument(grpc.StatusCode.INVALID_ARGUMENT,
                                  "attribute '%s' %s" % (name, message), 'Run')


def _int64(name: str, v: Any) -> int:
    v = int(v)
    if not _INT64[0] <= v <= _INT64[1]:
        raise _bad_attribute(name, '= %d does not fit in 64 bits' % v)
    return v


def _refuse_bool(name: str, value: Any) -> None:
    """Raises InvalidArgument for True/False in `value` (axis=True would run as axis=1),
    unless `name` is one of the SWITCH_ATTRIBUTES and `value` a single bool (1 or 0)."""
    if isinstance(value, bool) and name in SWITCH_ATTRIBUTES:
        return
    items = value if isinstance(value, (list, tuple)) else (value,)
    if any(isinstance(v, bool) for v in items):
        raise _bad_attribute(name, '= %r: a bool where a number is expected (it would be sent '
                                   'as 1 or 0); write the number if that is what you mean. Only '
                                   'the 0/1 switches (%s) take True and False'
                             % (value, ', '.join(sorted(SWITCH_ATTRIBUTES))))


def make_attribute(value: Any, name: str = '?') -> Any:
    """A protocol Attribute from a Python value: int -> i, float -> f, str -> s,
    a sequence of ints -> ints, a sequence with a float -> floats. Attribute messages pass.
    The server takes an int where a float or a list of ints is expected (scale=2, axes=1).
    A bool is taken (as 1 or 0) only by the SWITCH_ATTRIBUTES (keepdims=True).
    Anything else raises onemodel.InvalidArgument in the server's words, before sending."""
    if isinstance(value, pb.Attribute):
        return value
    if isinstance(value, _INTEGRAL):
        _refuse_bool(name, value)
        return pb.Attribute(i=_int64(name, value))
    if isinstance(value, (float, np.floating)):
        return pb.Attribute(f=float(value))
    if isinstance(value, str):
        return pb.Attribute(s=value)
    if isinstance(value, np.ndarray) and value.ndim <= 1:
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        _refuse_bool(name, value)
        if all(isinstance(v, _INTEGRAL) for v in value):
            return pb.Attribute(ints=pb.Ints(values=[_int64(name, v) for v in value]))
        if all(isinstance(v, _REAL) for v in value):
            return pb.Attribute(floats=pb.Floats(values=[float(v) for v in value]))
    raise _bad_attribute(name, 'must be an int (i), a float (f), a string (s), a list of ints '
                               '(ints) or a list of floats (floats) (got %s)' % _describe(value))


def _describe(value: Any) -> str:
    """'a dict', 'a list holding a str', ... for attribute errors."""
    kind = type(value).__name__
    if isinstance(value, (list, tuple)):
        odd = [v for v in value if not isinstance(v, _REAL)]
        return 'a %s holding a %s' % (kind, type(odd[0]).__name__) if odd else 'a ' + kind
    if isinstance(value, np.ndarray):
        return 'a %d-dimensional array' % value.ndim
    return 'None' if value is None else 'a ' + kind


def make_input(value):
    """A protocol Input: handle (str / RemoteTensor), Output(i) or {'output': i}, or a tensor sent
    inline (numpy array, torch tensor, TensorProto; Python int/float scalars as float32)."""
    if isinstance(value, pb.Input):
        return value
    if isinstance(value, Output):
        if value.from_batch:
            raise ValueError(
                '%r came from Batch.add and refers to an operation of that batch (%r), not of '
                'this list of operations: pass its result, batch[output] after batch.run() (a '
                'RemoteTensor), or onemodel.Output(i) for operation i of this list'
                % (value, value.batch))
        return pb.Input(output=int(value))
    if isinstance(value, (RemoteTensor, str)):
        return pb.Input(handle=_handle(value))
    if isinstance(value, dict):
        (key, v), = value.items()
        if key == 'output':
            return pb.Input(output=int(v))
        if key == 'handle':
            return pb.Input(handle=_handle(v))
        if key == 'tensor':
            return pb.Input(tensor=_t.to_tensor_proto(v))
        raise ValueError('input dict must have one key: output, handle or tensor; got %r' % (key,))
    if isinstance(value, (bool, int, float)):
        return pb.Input(tensor=_t.to_tensor_proto(np.float32(value)))
    if isinstance(value, _t.TensorProto) or _t._foreign_proto(value):
        return pb.Input(tensor=_t.to_tensor_proto(value))
    arr, code = _t.as_input_array(value)
    return pb.Input(tensor=_t.TensorProto(data_type=int(code), dims=list(arr.shape),
                                          raw_data=arr.tobytes()))


def _operation_error(index: int, op: str, e: errors.OneModelError) -> errors.InvalidArgument:
    """A client-side error of operation `index` with the server's prefix."""
    return errors.InvalidArgument(e.code, 'operation %d (%s): %s' % (index, op, e.details), e.method)


def run_request(session_id: str, operations: Any, no_grad: bool, reset_arena: bool) -> Any:
    """A RunRequest; a client-side attribute error names its operation as the server would."""
    req = pb.RunRequest(session_id=session_id, no_grad=no_grad, reset_arena=reset_arena)
    for i, o in enumerate(operations):
        try:
            if isinstance(o, pb.Operation):
                req.operations.append(o)
            else:
                _fill_operation(req.operations.add(), o)  # in place: no copy
        except errors.InvalidArgument as e:
            name = o.op if isinstance(o, pb.Operation) else dict(o).get('op', '?')
            raise _operation_error(i, name, e) from None
    return req


def upload_header(session_id: str, arr: np.ndarray, code: _t.DataType, requires_grad: bool,
                  placement: Any, target: Any) -> Any:
    """The UploadHeader of an array about to be streamed."""
    header = pb.UploadHeader(session_id=session_id, data_type=int(code), dims=list(arr.shape),
                             requires_grad=requires_grad, placement=_placement(placement))
    if target is not None:
        header.target = _handle(target)
    return header


def make_operation(spec):
    """A protocol Operation from an Operation message or a dict
    {'op': 'Add', 'inputs': [...], 'attrs': {...}, 'placement': None|'pool'|'arena'}."""
    if isinstance(spec, pb.Operation):
        return spec
    op = pb.Operation()
    _fill_operation(op, spec)
    return op


def _fill_operation(op, spec):
    """Fills the empty Operation `op` from the dict `spec` (see make_operation)."""
    spec = dict(spec)
    op.op = spec.pop('op')
    op.placement = _placement(spec.pop('placement', None))
    op.inputs.extend(make_input(v) for v in spec.pop('inputs', ()))
    attrs = spec.pop('attrs', None) or spec.pop('attributes', None) or {}
    for k, v in attrs.items():
        op.attributes[k].CopyFrom(make_attribute(v, k))
    if spec:
        raise ValueError('unknown operation keys: %s' % sorted(spec))


class StatsWatch:
    """An iterator of Stats pushed by WatchStats; cancel() (or leaving a with block) ends it."""

    def __init__(self, call):
        self._call = call
        self._cancelled = False

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._call)
        except grpc.RpcError as e:
            if self._cancelled and e.code() == grpc.StatusCode.CANCELLED:
                raise StopIteration from None
            raise errors.from_rpc_error(e, 'WatchStats') from None

    def cancel(self):
        self._cancelled = True
        self._call.cancel()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cancel()


class Client:
    """One gRPC channel to onemodeld. Thread-safe; sessions share it.

    target: "host:port"; None: $ONEMODEL_SERVER (as the CLI), else 127.0.0.1:50051.
    credentials: grpc.ChannelCredentials for TLS. token: sent as `authorization: Bearer
    <token>`, without surrounding whitespace; token_file: a file holding the token (one line);
    with neither, the file $ONEMODEL_TOKEN_FILE names, if set (as the CLI). timeout: seconds
    for unary calls (None: no deadline). stream_threshold_bytes: tensors above it are streamed
    (default: the measured crossover, 1 MiB).
    """

    def __init__(self, target=None, *, credentials=None, token=None, token_file=None,
                 timeout=None, options=(), channel=None,
                 stream_threshold_bytes=STREAM_THRESHOLD_BYTES):
        self.metadata = _token.authorization(_token.bearer_token(token, token_file))
        if target is None:
            target = os.environ.get('ONEMODEL_SERVER') or DEFAULT_TARGET
        self.stream_threshold_bytes = int(stream_threshold_bytes)
        opts = [('grpc.max_send_message_length', -1), ('grpc.max_receive_message_length', -1)]
        opts.extend(options)
        _grpc_runtime.quiet_abseil_mutexes()
        if channel is None:
            channel = (grpc.secure_channel(target, credentials, opts) if credentials is not None
                       else grpc.insecure_channel(target, opts))
        self.target = target
        self.channel = channel
        self.stub = pb_grpc.OneModelStub(channel)
        # Run for a RunRequest already serialized (the tensor API writes its own: _wire.py)
        self._serialized_run = channel.unary_unary(
            '/%s/Run' % pb.DESCRIPTOR.services_by_name['OneModel'].full_name,
            request_serializer=None, response_deserializer=pb.RunReply.FromString)
        self.health_stub = health_pb2_grpc.HealthStub(channel)
        # made by session(): stats() waits for their Runs
        self._sessions: "weakref.WeakSet[Session]" = weakref.WeakSet()
        self.timeout = timeout

    @classmethod
    def from_ready_file(cls, path, **kwargs):
        """A client of the server that wrote `path` (onemodeld --ready-file)."""
        return cls(read_ready_file(path)['grpc'], **kwargs)

    def wait_for_ready(self, timeout=10.0):
        grpc.channel_ready_future(self.channel).result(timeout=timeout)
        return self

    def ping(self):
        """The server's instance id (an empty round trip)."""
        return _rpc('Ping', self.stub.Ping, pb.PingRequest(), metadata=self.metadata,
                    timeout=self.timeout).server_instance_id

    def health(self, service=''):
        """grpc.health.v1 Check: 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN' or 'UNKNOWN'."""
        reply = _rpc('Health/Check', self.health_stub.Check,
                     health_pb2.HealthCheckRequest(service=service),
                     metadata=self.metadata, timeout=self.timeout)
        return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)

    def session(self, *, kernels=None, arena_chunk_bytes=0, memory_limit_bytes=0,
                idle_timeout_ms=0, client_name=''):
        """Creates a session (a context manager that closes it). kernels: None (server
        default), 'fast' or 'exact'."""
        req = pb.CreateSessionRequest(kernels=_kernels(kernels), arena_chunk_bytes=arena_chunk_bytes,
                                      memory_limit_bytes=memory_limit_bytes,
                                      idle_timeout_ms=idle_timeout_ms, client_name=client_name)
        reply = _rpc('CreateSession', self.stub.CreateSession, req, metadata=self.metadata,
                     timeout=self.timeout)
        session = Session(self, reply)
        self._sessions.add(session)
        return session

    def stats(self, session=None):
        """Server statistics (pool, sessions, per-RPC); with a session also its own. Waits
        first for the Runs this client's sessions have in flight
        (Optimizer.step(wait=False)), so the figures include them."""
        for s in list(self._sessions):
            s._settle()
        sid = session.id if isinstance(session, Session) else (session or '')
        md = self.metadata + (((SESSION_HEADER, sid),) if sid else ())
        return _rpc('GetStats', self.stub.GetStats, pb.StatsRequest(session_id=sid), metadata=md,
                    timeout=self.timeout)

    def watch_stats(self, interval_ms=1000, session=None):
        """A StatsWatch iterator of Stats every interval_ms (cancel() to stop)."""
        sid = session.id if isinstance(session, Session) else (session or '')
        md = self.metadata + (((SESSION_HEADER, sid),) if sid else ())
        call = _rpc('WatchStats', self.stub.WatchStats,
                    pb.WatchStatsRequest(session_id=sid, interval_ms=interval_ms), metadata=md)
        return StatsWatch(call)

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Batch:
    """Builds one Run: add() returns an Output reference usable by later operations; run()
    sends them all and returns one RemoteTensor per operation (index it with the Output)."""

    def __init__(self, session, no_grad=False, reset_arena=False):
        self.session = session
        self.no_grad = no_grad
        self.reset_arena = reset_arena
        self.operations = []
        self.results = None

    def __repr__(self):
        n = len(self.operations)
        return 'Batch(%d operation%s, %s)' % (n, '' if n == 1 else 's',
                                              'not run' if self.results is None else 'run')

    def add(self, op: str, *inputs: Any, placement: Any = None, **attrs: Any) -> Output:
        """Appends an operation; returns its Output (of this batch). Attribute errors, and an
        Output of another batch among the inputs, raise here."""
        inputs = tuple(self._own(v) if isinstance(v, Output) else v for v in inputs)
        try:
            self.operations.append(make_operation(
                {'op': op, 'inputs': inputs, 'attrs': attrs, 'placement': placement}))
        except errors.InvalidArgument as e:
            raise _operation_error(len(self.operations), op, e) from None
        return Output(len(self.operations) - 1, self)

    def _own(self, ref: Output, *, as_index: bool = False) -> Output:
        """`ref` as a plain Output(i) when it is this batch's (or a plain one); ValueError,
        saying what to do instead (as an input, or `as_index`), when another batch's add()
        returned it."""
        owner = ref.batch
        if not ref.from_batch or owner is self:
            return Output(int(ref))
        if owner is None:
            advice = 'the batch that returned it no longer exists'
        elif as_index:
            advice = 'index the batch that returned it: that_batch[output]'
        elif owner.results is None:
            advice = ('add this operation to that batch too, or run that batch first and pass '
                      'its result, that_batch[output] (a RemoteTensor)')
        else:
            advice = 'that batch has run: pass its result, that_batch[output] (a RemoteTensor)'
        raise ValueError('%r is an output of another batch (%r), not of this one (%r): an '
                         'Output names an operation of its own batch only; %s'
                         % (ref, owner, self, advice))

    def run(self):
        self.results = self.session.run(self.operations, no_grad=self.no_grad,
                                        reset_arena=self.reset_arena)
        return self.results

    def __getitem__(self, ref: Output) -> 'RemoteTensor':
        """The RemoteTensor of an Output of this batch, once run() has sent it."""
        if not isinstance(ref, Output):
            raise TypeError('a Batch is indexed with an Output its add() returned, got %r (%s)'
                            % (ref, type(ref).__name__))
        i = int(self._own(ref, as_index=True))
        if self.results is None:
            raise RuntimeError('this batch has not run yet: call run() first (or leave its with '
                               'block), then index it with the Output that add() returned')
        if not 0 <= i < len(self.results):
            raise IndexError('Output(%d) is not an operation of this batch (it ran %d)'
                             % (i, len(self.results)))
        return self.results[i]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None and self.results is None:
            self.run()



SESSION_ID_PREFIX_CHARS = 8


def session_id_prefix(session_id: str) -> str:
    """The first SESSION_ID_PREFIX_CHARS characters of a session id and '...': enough to tell
    sessions apart, far too little to use one (32 of its 128 random bits)."""
    return session_id[:SESSION_ID_PREFIX_CHARS] + '...'


def backward_request(session_id, root, inputs, grad_output=None, retain_graph=False,
                     placement=None):
    """The BackwardRequest of Session.backward (and AsyncSession.backward): `inputs` is one
    handle or a list of them."""
    if isinstance(inputs, (str, RemoteTensor)):
        inputs = [inputs]
    req = pb.BackwardRequest(session_id=session_id, root=_handle(root),
                             inputs=[_handle(h) for h in inputs], retain_graph=retain_graph,
                             placement=_placement(placement))
    if grad_output is not None:
        req.grad_output.CopyFrom(make_input(grad_output))
    return req

class Session:
    """A session on the server: its tensors, arena and kernels. Use as a context manager (or
    call close()). Not meant for concurrent use from several threads: the server serializes a
    session's requests anyway; use one session per thread."""

    def __init__(self, client, reply):
        self.client = client
        self.reply = reply
        self.id = reply.session_id
        self.kernel_variant = reply.kernel_variant
        self.server_instance_id = reply.server_instance_id
        self.max_message_bytes = reply.max_message_bytes or (64 << 20)
        self.metadata = client.metadata + ((SESSION_HEADER, self.id),)
        self.closed = False
        self._lock = threading.Lock()

    def __repr__(self):
        """Session(<id prefix>..., <kernels>): the id is a secret (protocol.md 1.2), so only
        its first characters, enough to tell sessions apart in a log."""
        return 'Session(%s, %s%s)' % (session_id_prefix(self.id), self.kernel_variant,
                                      ', closed' if self.closed else '')

    def _settle(self):
        """Waits for the tensor API's Run in flight (Optimizer.step(wait=False)'s), raising its
        error: every call of the session goes after it, in order."""
        graph = getattr(self, '_graph', None)
        if graph is not None:
            graph.settle()

    def _call(self, method, request, **kwargs):
        self._settle()
        fn = getattr(self.client.stub, method)
        kwargs.setdefault('timeout', self.client.timeout)
        return _rpc(method, fn, request, metadata=self.metadata, **kwargs)

    def _run_serialized(self, request: bytes):
        """Run of a serialized RunRequest: the RunReply, or the OneModelError of _call."""
        self._settle()
        return _rpc('Run', self.client._serialized_run, request, metadata=self.metadata,
                    timeout=self.client.timeout)

    def _run_serialized_future(self, request: bytes):
        """Sends a serialized RunRequest without waiting: a grpc.Future of the RunReply, for
        _run_result."""
        self._settle()
        return self.client._serialized_run.future(request, metadata=self.metadata,
                                                  timeout=self.client.timeout)

    @staticmethod
    def _run_result(future):
        """The RunReply of a _run_serialized_future, or the OneModelError of _call."""
        return _rpc('Run', future.result)

    def _streams(self, nbytes: int, stream: Optional[bool]) -> bool:
        return _transfer.should_stream(nbytes, stream, self.client.stream_threshold_bytes,
                                       self.max_message_bytes)

    # ---- tensors ------------------------------------------------------------------------

    def put(self, value: Any, *, requires_grad: bool = False, placement: Any = None,
            dtype: Any = None, target: Any = None, stream: Optional[bool] = None,
            progress: Optional[_transfer.Progress] = None) -> RemoteTensor:
        """Uploads a tensor (numpy array, torch tensor, list, scalar or TensorProto) and returns
        its RemoteTensor. numpy float64 arrays and Python floats/lists become FLOAT unless
        `dtype` says otherwise. Above the client's stream_threshold_bytes (or with stream=True)
        it is streamed (UploadTensor); progress(done_bytes, total_bytes) is called as it goes.

        target: a handle; the values are written into that tensor in place instead (same type
        and shape; not recorded for backward; its version increases), and its RemoteTensor is
        returned. requires_grad and placement are then ignored by the server."""
        if isinstance(value, _t.TensorProto) or _t._foreign_proto(value):
            tp = _t.to_tensor_proto(value)
            if self._streams(tp.ByteSize(), stream):
                return self.upload(_t.from_tensor_proto(tp), requires_grad=requires_grad,
                                   placement=placement, dtype=tp.data_type, target=target,
                                   progress=progress)
            return self.put_proto(tp, requires_grad=requires_grad, placement=placement,
                                  target=target, progress=progress)
        arr, code = _t.as_input_array(value, dtype)
        if self._streams(arr.nbytes, stream):
            return self.upload(arr, requires_grad=requires_grad, placement=placement, dtype=code,
                               target=target, progress=progress)
        tp = _t.TensorProto(data_type=int(code), dims=list(arr.shape), raw_data=arr.tobytes())
        return self.put_proto(tp, requires_grad=requires_grad, placement=placement, target=target,
                              progress=progress)

    def put_proto(self, tensor_proto: Any, *, requires_grad: bool = False, placement: Any = None,
                  target: Any = None, progress: Optional[_transfer.Progress] = None) -> RemoteTensor:
        """PutTensor with exactly this TensorProto (no conversion, no streaming)."""
        req = pb.PutTensorRequest(session_id=self.id, tensor=_t.to_tensor_proto(tensor_proto),
                                  requires_grad=requires_grad, placement=_placement(placement))
        if target is not None:
            req.target = _handle(target)
        out = RemoteTensor(self, self._call('PutTensor', req))
        if progress is not None:
            progress(len(req.tensor.raw_data), len(req.tensor.raw_data))
        return out

    def upload(self, value: Any, *, requires_grad: bool = False, placement: Any = None,
               dtype: Any = None, target: Any = None, chunk_bytes: Optional[int] = None,
               progress: Optional[_transfer.Progress] = None) -> RemoteTensor:
        """UploadTensor: a header, then the bytes in chunks of chunk_bytes (default 1 MiB; any
        size up to 2^31-1 bytes). dtype policy, target and progress: as put()."""
        arr, code = _t.as_input_array(value, dtype)
        size = _transfer.chunk_size(chunk_bytes, self.max_message_bytes)
        header = upload_header(self.id, arr, code, requires_grad, placement, target)

        def requests():
            yield pb.UploadTensorRequest(header=header)
            for chunk in _transfer.upload_chunks(arr, size, progress):
                yield pb.UploadTensorRequest(data=chunk)

        self._settle()
        info = _rpc('UploadTensor', self.client.stub.UploadTensor, requests(),
                    metadata=self.metadata, timeout=self.client.timeout)
        return RemoteTensor(self, info)

    def get(self, handle: Any, *, bfloat16: str = 'bits', stream: Optional[bool] = None,
            progress: Optional[_transfer.Progress] = None) -> np.ndarray:
        """Downloads a tensor as a numpy array: streamed (DownloadTensor) above the client's
        stream_threshold_bytes when the handle is a RemoteTensor (its size is known), or when a
        single message is refused; progress(done_bytes, total_bytes) as put()."""
        if stream is None and isinstance(handle, RemoteTensor):
            stream = self._streams(handle.nbytes, None)
        if stream:
            return self.download(handle, bfloat16=bfloat16, progress=progress)
        try:
            tp = self.get_proto(handle)
        except errors.ResourceExhausted:
            if stream is False:
                raise
            return self.download(handle, bfloat16=bfloat16, progress=progress)
        arr = _t.from_tensor_proto(tp, bfloat16=bfloat16)
        if progress is not None:
            progress(len(tp.raw_data), len(tp.raw_data))
        return arr

    def get_proto(self, handle):
        """GetTensor: the TensorProto exactly as the server sent it."""
        return self._call('GetTensor', pb.GetTensorRequest(session_id=self.id, handle=_handle(handle)))

    def download(self, handle: Any, *, chunk_bytes: int = 0, bfloat16: str = 'bits',
                 progress: Optional[_transfer.Progress] = None) -> np.ndarray:
        """DownloadTensor: a header, then the bytes in chunks (chunk_bytes 0: the server's 1
        MiB), assembled into a numpy array; progress as put()."""
        req = pb.DownloadTensorRequest(session_id=self.id, handle=_handle(handle), chunk_bytes=chunk_bytes)
        self._settle()
        call = _rpc('DownloadTensor', self.client.stub.DownloadTensor, req, metadata=self.metadata,
                    timeout=self.client.timeout)
        parts = _transfer.DownloadAssembler(progress)
        try:
            for msg in call:
                parts.add(msg)
        except grpc.RpcError as e:
            raise errors.from_rpc_error(e, 'DownloadTensor') from None
        return parts.result(bfloat16)

    def describe(self, handle):
        """DescribeTensor: a fresh RemoteTensor (TensorInfo) for the handle."""
        req = pb.DescribeTensorRequest(session_id=self.id, handle=_handle(handle))
        return RemoteTensor(self, self._call('DescribeTensor', req))

    def release(self, *handles):
        """ReleaseTensors: forgets the handles; returns how many were released."""
        flat: List[str] = []
        for h in handles:
            if isinstance(h, (list, tuple)):
                flat.extend(_handle(x) for x in h)
            else:
                flat.append(_handle(h))
        req = pb.ReleaseTensorsRequest(session_id=self.id, handles=flat)
        return self._call('ReleaseTensors', req).released

    # ---- runs -----------------------------------------------------------------------------

    def run(self, operations, *, no_grad=False, reset_arena=False):
        """Runs a list of operations (dicts, see make_operation, or Operation messages) in one
        request; returns one RemoteTensor per operation."""
        reply = self._call('Run', run_request(self.id, operations, no_grad, reset_arena))
        return [RemoteTensor(self, info) for info in reply.outputs]

    def op(self, op, *inputs, placement=None, no_grad=False, **attrs):
        """Runs one operation: s.op("Softmax", x, axis=1)."""
        (out,) = self.run([{'op': op, 'inputs': inputs, 'attrs': attrs, 'placement': placement}],
                          no_grad=no_grad)
        return out

    def batch(self, *, no_grad=False, reset_arena=False):
        """A Batch builder (runs on leaving a with block, or on run())."""
        return Batch(self, no_grad=no_grad, reset_arena=reset_arena)

    # ---- the tensor API (onemodel.lazy_tensor, docs/python.md) ----------------------------

    def tensor(self, data, *, requires_grad=False, dtype=None, placement=None):
        """Uploads `data` and returns an onemodel.Tensor leaf (floating data becomes FLOAT)."""
        from .lazy_tensor import tensor
        return tensor(self, data, requires_grad=requires_grad, dtype=dtype, placement=placement)

    def parameter(self, data, *, dtype=None):
        """A pool Tensor that requires gradients (what onemodel.optim updates)."""
        from .lazy_tensor import parameter
        return parameter(self, data, dtype=dtype)

    def no_grad(self):
        """`with s.no_grad():` Tensor operations made inside record nothing for backward."""
        from .pending import graph
        return graph(self).no_grad()

    def flush(self):
        """Sends the Tensor operations queued so far (one Run)."""
        from .pending import graph
        graph(self).flush()

    def operations(self, name=''):
        """ListOperations: the operations the server runs (onemodel.operations.OperationInfo:
        name, inputs, attributes with kinds and defaults, differentiable, doc); `name` asks
        for one (NotFound names the nearest)."""
        from .operations import list_operations
        return list_operations(self, name)

    def backward(self, root, inputs, *, grad_output=None, retain_graph=False, placement=None):
        """Gradients of `root` with respect to `inputs` (like torch.autograd.grad), one
        RemoteTensor per input. grad_output: a handle or an array (required unless the root has
        one element)."""
        req = backward_request(self.id, root, inputs, grad_output, retain_graph, placement)
        return [RemoteTensor(self, info) for info in self._call('Backward', req).gradients]

    def reset_arena(self, trim=False, keep_bytes=0):
        """ResetArena: every arena handle of the session becomes stale; with trim, the arena's
        chunks beyond keep_bytes also go back to the server's pool. Returns the reply (arena
        statistics, stale_handles). Once the session has used onemodel.Tensor, a reset without
        trim is sent with the Tensor API's next Run instead (no round trip of its own; returns
        None); one with trim goes at once."""
        graph = getattr(self, '_graph', None)
        if graph is not None:
            graph.reset_arena()
            if not trim:
                return None
            graph.reset_next = False  # this call resets now
        return self._call('ResetArena', pb.ResetArenaRequest(session_id=self.id, trim=trim,
                                                             keep_bytes=keep_bytes))

    # ---- session --------------------------------------------------------------------------

    def keep_alive(self):
        """KeepAlive: resets the idle timer; the reply names the server instance."""
        return self._call('KeepAlive', pb.KeepAliveRequest(session_id=self.id))

    def server_restarted(self):
        """True when the server answering now is not the one that created the session (a
        restart or another replica: the session is gone), False when it is the same one. Asks
        with Ping, which answers whether or not the session still exists (closed or expired:
        False) and carries the session header (a proxy routing by it asks the session's
        replica); it does not keep the session alive. Unavailable when no server answers."""
        return self._call('Ping', pb.PingRequest()).server_instance_id != self.server_instance_id

    def stats(self):
        """GetStats with this session: server statistics plus .session."""
        return self.client.stats(self)

    def watch_stats(self, interval_ms=1000):
        return self.client.watch_stats(interval_ms, self)

    def close(self):
        """CloseSession (once); returns the reply (released_buffers, released_bytes), or None when
        there was nothing to close: already closed by this object, or already gone on the server
        (expired, closed elsewhere, or the server restarted: CloseSession's NOT_FOUND). Other
        failures raise."""
        with self._lock:
            if self.closed:
                return None
            self.closed = True
        try:  # the session is closed whether or not the Run in flight failed; then its error
            self._settle()
        finally:
            reply = self._close_on_server()
        return reply

    def _close_on_server(self):
        """CloseSession's reply, or None on NOT_FOUND: the session is already gone, which is
        what closing wants."""
        try:
            return self._call('CloseSession', pb.CloseSessionRequest(session_id=self.id))
        except errors.NotFound:
            return None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        """Closes the session (see close()); an error of the close never replaces the
        exception the block raised."""
        if exc_type is None:
            self.close()
        else:
            try:
                self.close()
            except errors.OneModelError:
                pass  # do not hide the original exception
