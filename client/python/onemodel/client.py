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
.details. Tensors larger than the server's max_message_bytes go through UploadTensor and
DownloadTensor automatically.
"""

import threading

import grpc
import numpy as np

from . import errors
from . import tensors as _t

try:
    from ._proto.onemodel.v1 import onemodel_pb2 as pb
    from ._proto.onemodel.v1 import onemodel_pb2_grpc as pb_grpc
    from ._proto.grpc.health.v1 import health_pb2, health_pb2_grpc
except ImportError as e:  # pragma: no cover - a setup problem, explained
    raise ImportError(
        "onemodel's generated gRPC stubs (onemodel._proto) are missing: build the CMake target "
        "onemodel_python_stubs and put <build>/client/python/gen on PYTHONPATH, run "
        "client/python/generate_stubs.py --out DIR, or install the package") from e

SESSION_HEADER = 'onemodel-session'
INSTANCE_HEADER = 'onemodel-instance'
DEFAULT_CHUNK_BYTES = 4 << 20
# room for a message's fields besides the tensor bytes (dims, type, ids, framing): a tensor
# goes unary only when its bytes plus this fit in max_message_bytes; stream chunks leave it free
MESSAGE_OVERHEAD = 1024

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
    """A reference to the output of an earlier operation of the same Run (its index)."""

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


def make_attribute(value):
    """A protocol Attribute from a Python value: int/bool -> i, float -> f, str -> s,
    a sequence of ints -> ints, a sequence with a float -> floats. Attribute messages pass."""
    if isinstance(value, pb.Attribute):
        return value
    if isinstance(value, (bool, int, np.integer)):
        return pb.Attribute(i=int(value))
    if isinstance(value, (float, np.floating)):
        return pb.Attribute(f=float(value))
    if isinstance(value, str):
        return pb.Attribute(s=value)
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (bool, int, np.integer)) for v in value):
            return pb.Attribute(ints=pb.Ints(values=[int(v) for v in value]))
        return pb.Attribute(floats=pb.Floats(values=[float(v) for v in value]))
    raise TypeError('cannot make an attribute of %r' % (value,))


def make_input(value):
    """A protocol Input: handle (str / RemoteTensor), Output(i) or {'output': i}, or a tensor sent
    inline (numpy array, torch tensor, TensorProto; Python int/float scalars as float32)."""
    if isinstance(value, pb.Input):
        return value
    if isinstance(value, Output):
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
    return pb.Input(tensor=_t.to_tensor_proto(value))


def make_operation(spec):
    """A protocol Operation from an Operation message or a dict
    {'op': 'Add', 'inputs': [...], 'attrs': {...}, 'placement': None|'pool'|'arena'}."""
    if isinstance(spec, pb.Operation):
        return spec
    spec = dict(spec)
    op = pb.Operation(op=spec.pop('op'), placement=_placement(spec.pop('placement', None)))
    op.inputs.extend(make_input(v) for v in spec.pop('inputs', ()))
    attrs = spec.pop('attrs', None) or spec.pop('attributes', None) or {}
    for k, v in attrs.items():
        op.attributes[k].CopyFrom(make_attribute(v))
    if spec:
        raise ValueError('unknown operation keys: %s' % sorted(spec))
    return op


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

    target: "host:port". credentials: grpc.ChannelCredentials for TLS. token: sent as
    `authorization: Bearer <token>`. timeout: seconds for unary calls (None: no deadline).
    """

    def __init__(self, target='127.0.0.1:50051', *, credentials=None, token=None, timeout=None,
                 options=(), channel=None):
        opts = [('grpc.max_send_message_length', -1), ('grpc.max_receive_message_length', -1)]
        opts.extend(options)
        if channel is None:
            channel = (grpc.secure_channel(target, credentials, opts) if credentials is not None
                       else grpc.insecure_channel(target, opts))
        self.target = target
        self.channel = channel
        self.stub = pb_grpc.OneModelStub(channel)
        self.health_stub = health_pb2_grpc.HealthStub(channel)
        self.metadata = (('authorization', 'Bearer ' + token),) if token else ()
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
        return Session(self, reply)

    def stats(self, session=None):
        """Server statistics (pool, sessions, per-RPC); with a session also its own."""
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

    def add(self, op, *inputs, placement=None, **attrs):
        self.operations.append(make_operation(
            {'op': op, 'inputs': inputs, 'attrs': attrs, 'placement': placement}))
        return Output(len(self.operations) - 1)

    def run(self):
        self.results = self.session.run(self.operations, no_grad=self.no_grad,
                                        reset_arena=self.reset_arena)
        return self.results

    def __getitem__(self, ref):
        return self.results[int(ref)]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None and self.results is None:
            self.run()


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
        return 'Session(%s, %s%s)' % (self.id, self.kernel_variant, ', closed' if self.closed else '')

    def _call(self, method, request, **kwargs):
        fn = getattr(self.client.stub, method)
        kwargs.setdefault('timeout', self.client.timeout)
        return _rpc(method, fn, request, metadata=self.metadata, **kwargs)

    def _fits(self, nbytes):
        # the server refuses GetTensor above max_message_bytes - 1024 (docs/protocol.md 1.7)
        return nbytes + MESSAGE_OVERHEAD <= self.max_message_bytes

    # ---- tensors ------------------------------------------------------------------------

    def put(self, value, *, requires_grad=False, placement=None, dtype=None, target=None, stream=None):
        """Uploads a tensor (numpy array, torch tensor, list, scalar or TensorProto) and returns
        its RemoteTensor. Above max_message_bytes (or with stream=True) it is streamed.

        target: a handle; the values are written into that tensor in place instead (same type
        and shape; not recorded for backward; its version increases), and its RemoteTensor is
        returned. requires_grad and placement are then ignored by the server."""
        if isinstance(value, _t.TensorProto) or _t._foreign_proto(value):
            tp = _t.to_tensor_proto(value)
            if stream or (stream is None and not self._fits(tp.ByteSize())):
                return self.upload(_t.from_tensor_proto(tp), requires_grad=requires_grad,
                                   placement=placement, dtype=tp.data_type, target=target)
            return self.put_proto(tp, requires_grad=requires_grad, placement=placement, target=target)
        arr, code = _t.as_array(value, dtype)
        if stream or (stream is None and not self._fits(arr.nbytes)):
            return self.upload(arr, requires_grad=requires_grad, placement=placement, dtype=code,
                               target=target)
        tp = _t.TensorProto(data_type=int(code), dims=list(arr.shape), raw_data=arr.tobytes())
        return self.put_proto(tp, requires_grad=requires_grad, placement=placement, target=target)

    def put_proto(self, tensor_proto, *, requires_grad=False, placement=None, target=None):
        """PutTensor with exactly this TensorProto (no conversion, no streaming)."""
        req = pb.PutTensorRequest(session_id=self.id, tensor=_t.to_tensor_proto(tensor_proto),
                                  requires_grad=requires_grad, placement=_placement(placement))
        if target is not None:
            req.target = _handle(target)
        return RemoteTensor(self, self._call('PutTensor', req))

    def upload(self, value, *, requires_grad=False, placement=None, dtype=None, target=None,
               chunk_bytes=None):
        """UploadTensor: a header, then the bytes in chunks (any size up to 2^31-1 bytes).
        target: as put()."""
        arr, code = _t.as_array(value, dtype)
        if chunk_bytes is None:
            chunk_bytes = min(DEFAULT_CHUNK_BYTES, max(1024, self.max_message_bytes - MESSAGE_OVERHEAD))
        header = pb.UploadHeader(session_id=self.id, data_type=int(code), dims=list(arr.shape),
                                 requires_grad=requires_grad, placement=_placement(placement))
        if target is not None:
            header.target = _handle(target)
        flat = memoryview(arr.reshape(-1).view(np.uint8))

        def requests():
            yield pb.UploadTensorRequest(header=header)
            for off in range(0, len(flat), chunk_bytes):
                yield pb.UploadTensorRequest(data=flat[off:off + chunk_bytes].tobytes())

        info = _rpc('UploadTensor', self.client.stub.UploadTensor, requests(),
                    metadata=self.metadata, timeout=self.client.timeout)
        return RemoteTensor(self, info)

    def get(self, handle, *, bfloat16='bits', stream=None):
        """Downloads a tensor as a numpy array (streamed when above max_message_bytes)."""
        if stream is None and isinstance(handle, RemoteTensor):
            stream = not self._fits(handle.nbytes)
        if stream:
            return self.download(handle, bfloat16=bfloat16)
        try:
            tp = self.get_proto(handle)
        except errors.ResourceExhausted:
            if stream is False:
                raise
            return self.download(handle, bfloat16=bfloat16)
        return _t.from_tensor_proto(tp, bfloat16=bfloat16)

    def get_proto(self, handle):
        """GetTensor: the TensorProto exactly as the server sent it."""
        return self._call('GetTensor', pb.GetTensorRequest(session_id=self.id, handle=_handle(handle)))

    def download(self, handle, *, chunk_bytes=0, bfloat16='bits'):
        """DownloadTensor: a header, then the bytes in chunks, assembled into a numpy array."""
        req = pb.DownloadTensorRequest(session_id=self.id, handle=_handle(handle), chunk_bytes=chunk_bytes)
        call = _rpc('DownloadTensor', self.client.stub.DownloadTensor, req, metadata=self.metadata,
                    timeout=self.client.timeout)
        try:
            first = next(call, None)
            if first is None or first.WhichOneof('part') != 'header':
                raise errors.ProtocolError('DownloadTensor did not start with a header', 'DownloadTensor')
            h = first.header
            code = _t.data_type(h.data_type)
            npd = _t.NUMPY_DTYPES[code]
            dims = [int(d) for d in h.dims]
            expect = _t.element_count(dims) * npd.itemsize
            if h.total_bytes != expect:
                raise errors.ProtocolError('DownloadTensor header says %d bytes; dims %s of %s need %d'
                                           % (h.total_bytes, dims, code.name, expect), 'DownloadTensor')
            buf = np.empty(expect, dtype=np.uint8)
            pos = 0
            for msg in call:
                if msg.WhichOneof('part') != 'data':
                    raise errors.ProtocolError('DownloadTensor sent a second header', 'DownloadTensor')
                n = len(msg.data)
                if pos + n > expect:
                    raise errors.ProtocolError('DownloadTensor sent more than %d bytes' % expect,
                                               'DownloadTensor')
                buf[pos:pos + n] = np.frombuffer(msg.data, dtype=np.uint8)
                pos += n
        except grpc.RpcError as e:
            raise errors.from_rpc_error(e, 'DownloadTensor') from None
        if pos != expect:
            raise errors.ProtocolError('DownloadTensor ended after %d of %d bytes' % (pos, expect),
                                       'DownloadTensor')
        arr = buf.view(npd).reshape(dims)
        if code == _t.DataType.BFLOAT16 and bfloat16 == 'float32':
            arr = _t.bfloat16_bits_to_float32(arr)
        return arr

    def describe(self, handle):
        """DescribeTensor: a fresh RemoteTensor (TensorInfo) for the handle."""
        req = pb.DescribeTensorRequest(session_id=self.id, handle=_handle(handle))
        return RemoteTensor(self, self._call('DescribeTensor', req))

    def release(self, *handles):
        """ReleaseTensors: forgets the handles; returns how many were released."""
        flat = []
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
        req = pb.RunRequest(session_id=self.id, no_grad=no_grad, reset_arena=reset_arena)
        req.operations.extend(make_operation(o) for o in operations)
        reply = self._call('Run', req)
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
        if isinstance(inputs, (str, RemoteTensor)):
            inputs = [inputs]
        req = pb.BackwardRequest(session_id=self.id, root=_handle(root),
                                 inputs=[_handle(h) for h in inputs], retain_graph=retain_graph,
                                 placement=_placement(placement))
        if grad_output is not None:
            req.grad_output.CopyFrom(make_input(grad_output))
        return [RemoteTensor(self, info) for info in self._call('Backward', req).gradients]

    def reset_arena(self):
        """ResetArena: every arena handle of the session becomes stale. Returns the reply
        (arena statistics, stale_handles). Once the session has used onemodel.Tensor, the reset
        is sent with the Tensor API's next Run instead (no round trip of its own; returns None)."""
        graph = getattr(self, '_graph', None)
        if graph is not None:
            return graph.reset_arena()
        return self._call('ResetArena', pb.ResetArenaRequest(session_id=self.id))

    # ---- session --------------------------------------------------------------------------

    def keep_alive(self):
        """KeepAlive: resets the idle timer; the reply names the server instance."""
        return self._call('KeepAlive', pb.KeepAliveRequest(session_id=self.id))

    def server_restarted(self):
        """True when the server answering now is not the one that created the session."""
        return self.keep_alive().server_instance_id != self.server_instance_id

    def stats(self):
        """GetStats with this session: server statistics plus .session."""
        return self.client.stats(self)

    def watch_stats(self, interval_ms=1000):
        return self.client.watch_stats(interval_ms, self)

    def close(self):
        """CloseSession (once); returns the reply (leaked_buffers, released_bytes), or None when
        already closed."""
        with self._lock:
            if self.closed:
                return None
            self.closed = True
        return self._call('CloseSession', pb.CloseSessionRequest(session_id=self.id))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.close()
        else:
            try:
                self.close()
            except errors.OneModelError:
                pass  # do not hide the original exception
