"""Lazy batching for the tensor API: a session's operations wait here and go as one Run.

Each operation made through onemodel.Tensor is queued with the Python line that created it.
The queue is sent as one RunRequest when a value is needed (numpy(), item(), backward(), a
shape that could not be inferred, describe()), on Session.flush(), when the recording mode
changes (no_grad), or when it reaches max_run_operations. Operations whose Tensor was dropped
before a flush (and that nothing alive depends on) are never sent.

Optimizer.step(wait=False) sends its Run without waiting for the reply (flush(wait=False)),
so the next step's operations are made while the server runs this one. The Run is then in
flight: the session's next call of any kind (the next flush, a download, an upload, close(),
the client's stats()) first waits for its reply, so calls reach the server in the order they
were made, and raises its error there if the server refused it (the message names the line
that created the refused operation, as always). Session.flush() waits at once.

When the server refuses operation K of the Run, the error is raised again with the line that
created operation K; that tensor and everything made from it keep the error; the other queued
operations stay queued. Session.reset_arena() is deferred into the next Run (reset_arena=True):
arena tensors made before it are stale from then on, as the server would say.
"""

from __future__ import annotations

import contextlib
import linecache
import re
import sys
import weakref
from typing import Any, Dict, Iterator, List, Optional

import grpc
import numpy as np

from . import _wire
from . import client as _client  # (loaded first by the package: it imports this one lazily)
from . import errors
from . import tensors as _t

MAX_RUN_OPERATIONS = 4096  # the server's default --max-run-operations (docs/protocol.md 11)
_OPERATION_ERROR = re.compile(r'^operation (\d+) \(')
_PACKAGE = __name__.rpartition('.')[0]


class Site:
    """Where user code created an operation: file, line, function."""

    __slots__ = ('filename', 'lineno', 'function')

    def __init__(self, filename: str, lineno: int, function: str) -> None:
        self.filename, self.lineno, self.function = filename, lineno, function

    def __str__(self) -> str:
        code = linecache.getline(self.filename, self.lineno).strip()
        return '%s:%d in %s%s' % (self.filename, self.lineno, self.function,
                                  (': ' + code) if code else '')

    def __repr__(self) -> str:
        return 'Site(%s:%d)' % (self.filename, self.lineno)


def creation_site() -> Optional[Site]:
    """The innermost frame outside the onemodel package (the user's line)."""
    f: Any = sys._getframe(1)
    while f is not None and f.f_globals.get('__name__', '').partition('.')[0] == _PACKAGE:
        f = f.f_back
    if f is None:
        return None
    return Site(f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


def with_site(err: errors.OneModelError, site: Optional[Site],
              method: str = 'Run') -> errors.OneModelError:
    """A copy of a OneModelError whose message ends with the line that created the operation."""
    if site is None:
        return err
    new: Any = errors.OneModelError.__new__(type(err))
    errors.OneModelError.__init__(new, err.code, '%s\n  (the operation was created at %s)'
                                  % (err.details, site), method)
    new.site = site
    new.rpc_error = getattr(err, 'rpc_error', None)
    return new


def stale_error(handle: str) -> errors.OneModelError:
    """The FailedPrecondition of using an arena tensor made before s.reset_arena(): found by
    the client, so no RPC is named (.method is '')."""
    return errors.FailedPrecondition(
        grpc.StatusCode.FAILED_PRECONDITION,
        "tensor '%s' is stale: it lived in the session's arena, which was reset since "
        "(Session.reset_arena()); run the operations again, or keep the result in the pool "
        "(placement='pool')" % handle)


class Graph:
    """The tensor API's state of one session: queued operations, recording mode, arena epoch."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.queue: List[Any] = []   # weak references to pending Tensors, in creation order
        self.queue_no_grad = False   # the recording mode of the queued operations
        self.no_grad_depth = 0
        self.reset_next = False      # send reset_arena with the next Run
        self.arena_epoch = 0         # increases with every reset_arena()
        self.max_run_operations = MAX_RUN_OPERATIONS
        self.in_flight: Optional[Any] = None  # (future, operations, reset, epoch) sent unawaited

    @property
    def grad_enabled(self) -> bool:
        return self.no_grad_depth == 0

    @contextlib.contextmanager
    def no_grad(self) -> Iterator[None]:
        """Operations made inside record nothing for backward (RunRequest.no_grad)."""
        self.no_grad_depth += 1
        try:
            yield
        finally:
            self.no_grad_depth -= 1

    def _live(self) -> List[Any]:
        out = []
        for ref in self.queue:
            t = ref()
            if t is not None and t._pending:
                out.append(t)
        return out

    def add(self, tensor: Any) -> None:
        """Queues a pending Tensor (flushing first when the recording mode differs)."""
        if self.queue and self.queue_no_grad != tensor._no_grad:
            self.flush()
        self.queue_no_grad = tensor._no_grad
        self.queue.append(weakref.ref(tensor))
        if len(self.queue) >= self.max_run_operations:
            self.flush()

    def flush(self, wait: bool = True) -> None:
        """Sends every queued operation that is still wanted, as one Run (several when more
        than max_run_operations or of both recording modes), with a deferred arena reset;
        raises the error of a refused operation with the line that created it. Waits for the
        Run in flight first. wait=False (Optimizer.step(wait=False)): a single Run is sent and
        left in flight (settle() waits for it)."""
        pb = _client.pb
        self.settle()
        live = self._live()
        self.queue = []
        if not live:
            if self.reset_next:
                self.reset_next = False
                self.session._call('ResetArena', pb.ResetArenaRequest(session_id=self.session.id))
            return
        starts = [0]  # runs: consecutive operations of one recording mode, at most max each
        for i in range(1, len(live)):
            if (live[i]._no_grad != live[i - 1]._no_grad
                    or i - starts[-1] >= self.max_run_operations):
                starts.append(i)
        if not wait and len(starts) == 1:
            request, reset = self._request(live)
            future = self.session._run_serialized_future(request)
            self.in_flight = (future, live, reset, self.arena_epoch)
            return
        for k, start in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else len(live)
            request, reset = self._request(live[start:end])
            try:
                reply = self.session._run_serialized(request)
            except errors.OneModelError as e:
                raise self._refused(live[start:], reset, e) from None
            self._materialize(live[start:end], reply, self.arena_epoch)

    def settle(self) -> None:
        """Waits for the Run in flight, if any: materializes its tensors, or fails them (and
        the queued operations made from them) and raises the error."""
        if self.in_flight is None:
            return
        future, chunk, reset, epoch = self.in_flight
        self.in_flight = None
        try:
            reply = self.session._run_result(future)
        except errors.OneModelError as e:
            raise self._refused(chunk, reset, e) from None
        self._materialize(chunk, reply, epoch)

    def _request(self, chunk: List[Any]) -> Any:
        """The serialized RunRequest of `chunk` (with the deferred arena reset, which it
        takes) and whether it resets."""
        index = {id(t): i for i, t in enumerate(chunk)}
        reset, self.reset_next = self.reset_next, False
        return (_wire.run_request(self.session.id, [_operation(t, index) for t in chunk],
                                  chunk[0]._no_grad, reset), reset)

    @staticmethod
    def _materialize(chunk: List[Any], reply: Any, epoch: int) -> None:
        for t, info in zip(chunk, reply.outputs):
            t._materialize(info, epoch)

    def _refused(self, rest: List[Any], reset: bool,
                 err: errors.OneModelError) -> errors.OneModelError:
        """The error to raise for a refused Run of the first operations of `rest`."""
        if not _OPERATION_ERROR.match(err.details):
            self.reset_next = self.reset_next or reset  # refused before the reset: retry it
        return self._fail(rest, err)

    def _fail(self, live: List[Any], err: errors.OneModelError) -> errors.OneModelError:
        """Marks the refused operation and its dependents failed (among `live` and the
        operations queued since it was sent), requeues the rest ahead of those; returns the
        error to raise."""
        m = _OPERATION_ERROR.match(err.details)
        later = self._live()
        if not m or int(m.group(1)) >= len(live):
            # not one operation's fault: try again later
            self.queue = [weakref.ref(t) for t in live + later]
            return err
        bad = live[int(m.group(1))]
        located = with_site(err, bad._site)
        failed = {id(bad)}
        keep = []
        for t in live + later:
            if id(t) in failed or any(id(x) in failed for x in t._inputs):
                failed.add(id(t))
                t._fail(located)
            else:
                keep.append(weakref.ref(t))
        self.queue = keep
        return located

    def reset_arena(self) -> None:
        """Defers an arena reset into the next Run. Queued operations placed in the pool run
        first (one Run now); queued arena operations would be stale at once, so they are
        dropped and fail with the stale error if used."""
        live = self._live()
        if any(t._placement == 'pool' for t in live):
            self.flush()
            live = []
        for t in live:
            t._fail(stale_error('(created at %s, not yet run)' % (t._site,)))
        self.queue = []
        self.arena_epoch += 1
        self.reset_next = True


def _operation(t: Any, index: Dict[int, int]) -> bytes:
    """The queued Tensor `t` as one encoded Operation of a RunRequest (onemodel._wire);
    `index` numbers the Run's earlier outputs."""
    fields = [t._fields]
    for x in t._inputs:
        if isinstance(x, np.ndarray):
            fields.append(_wire.tensor_input(_t.TensorProto(
                data_type=_t.DataType.FLOAT, dims=x.shape,
                raw_data=x.astype('<f4', copy=False).tobytes())))
        else:
            i = index.get(id(x))
            fields.append(_wire.handle_input(x._info.handle) if i is None
                          else _wire.output_input(i))
    return _wire.operation(fields)


def graph(session: Any) -> Graph:
    """The session's Graph (made on first use)."""
    g = getattr(session, '_graph', None)
    if g is None:
        g = session._graph = Graph(session)
    return g
