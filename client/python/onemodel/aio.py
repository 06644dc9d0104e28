"""The asyncio client (grpc.aio), for programs that fan out over many sessions or servers:

    import asyncio, numpy as np
    from onemodel.aio import AsyncClient

    async def main():
        async with AsyncClient() as client, await client.session() as s:
            x = await s.put(np.ones((2, 3)))
            y = await s.op("Softmax", x, axis=1)
            print(await s.get(y))

    asyncio.run(main())

The same requests, dtype policy, attribute checks, streaming threshold and errors as the
blocking Client (onemodel.client); results are the same RemoteTensor objects (their
.numpy() returns a coroutine here). One AsyncClient belongs to one event loop.
"""

import os
from typing import Any, Iterable, List, Optional, Sequence

import grpc
import grpc.aio

from . import _grpc_runtime
from . import _token
from . import _transfer
from . import errors
from . import tensors as _t
from .client import (DEFAULT_TARGET, SESSION_HEADER, STREAM_THRESHOLD_BYTES, RemoteTensor,
                     _handle, _kernels, _placement, backward_request, pb, pb_grpc, run_request,
                     upload_header)


async def _rpc(method: str, call: Any) -> Any:
    try:
        return await call
    except grpc.RpcError as e:
        raise errors.from_rpc_error(e, method) from None


class AsyncClient:
    """One grpc.aio channel to onemodeld; the arguments are those of onemodel.Client."""

    def __init__(self, target: Optional[str] = None, *, credentials: Any = None,
                 token: Optional[str] = None, token_file: Optional[str] = None,
                 timeout: Optional[float] = None, options: Sequence[Any] = (),
                 stream_threshold_bytes: int = STREAM_THRESHOLD_BYTES) -> None:
        self.metadata: tuple = _token.authorization(_token.bearer_token(token, token_file))
        if target is None:
            target = os.environ.get('ONEMODEL_SERVER') or DEFAULT_TARGET
        opts = [('grpc.max_send_message_length', -1), ('grpc.max_receive_message_length', -1)]
        opts.extend(options)
        _grpc_runtime.quiet_abseil_mutexes()
        self.target = target
        self.channel = (grpc.aio.secure_channel(target, credentials, opts) if credentials is not None
                        else grpc.aio.insecure_channel(target, opts))
        self.stub = pb_grpc.OneModelStub(self.channel)
        self.timeout = timeout
        self.stream_threshold_bytes = int(stream_threshold_bytes)

    async def ping(self) -> str:
        """The server's instance id (an empty round trip)."""
        reply = await _rpc('Ping', self.stub.Ping(pb.PingRequest(), metadata=self.metadata,
                                                   timeout=self.timeout))
        return reply.server_instance_id

    async def session(self, *, kernels: Any = None, arena_chunk_bytes: int = 0,
                      memory_limit_bytes: int = 0, idle_timeout_ms: int = 0,
                      client_name: str = '') -> 'AsyncSession':
        """Creates a session (an async context manager that closes it)."""
        req = pb.CreateSessionRequest(kernels=_kernels(kernels), arena_chunk_bytes=arena_chunk_bytes,
                                      memory_limit_bytes=memory_limit_bytes,
                                      idle_timeout_ms=idle_timeout_ms, client_name=client_name)
        reply = await _rpc('CreateSession', self.stub.CreateSession(
            req, metadata=self.metadata, timeout=self.timeout))
        return AsyncSession(self, reply)

    async def close(self) -> None:
        await self.channel.close()

    async def __aenter__(self) -> 'AsyncClient':
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class AsyncSession:
    """A session of an AsyncClient: put, get, run, op, backward, release, keep_alive,
    server_restarted, close."""

    def __init__(self, client: AsyncClient, reply: Any) -> None:
        self.client = client
        self.id = reply.session_id
        self.kernel_variant = reply.kernel_variant
        self.server_instance_id = reply.server_instance_id
        self.max_message_bytes = reply.max_message_bytes or (64 << 20)
        self.metadata = client.metadata + ((SESSION_HEADER, self.id),)
        self.closed = False

    def _unary(self, method: str, request: Any) -> Any:
        fn = getattr(self.client.stub, method)
        return _rpc(method, fn(request, metadata=self.metadata, timeout=self.client.timeout))

    def _streams(self, nbytes: int, stream: Optional[bool]) -> bool:
        return _transfer.should_stream(nbytes, stream, self.client.stream_threshold_bytes,
                                       self.max_message_bytes)

    async def put(self, value: Any, *, requires_grad: bool = False, placement: Any = None,
                  dtype: Any = None, target: Any = None, stream: Optional[bool] = None,
                  chunk_bytes: Optional[int] = None,
                  progress: Optional[_transfer.Progress] = None) -> RemoteTensor:
        """As Session.put (dtype policy, streaming above the threshold, progress)."""
        if _is_proto(value):  # a TensorProto keeps its own type
            value, dtype = _t.from_tensor_proto(value), _t.to_tensor_proto(value).data_type
        arr, code = _t.as_input_array(value, dtype)
        if self._streams(arr.nbytes, stream):
            header = upload_header(self.id, arr, code, requires_grad, placement, target)
            size = _transfer.chunk_size(chunk_bytes, self.max_message_bytes)

            async def requests() -> Any:
                yield pb.UploadTensorRequest(header=header)
                for chunk in _transfer.upload_chunks(arr, size, progress):
                    yield pb.UploadTensorRequest(data=chunk)

            info = await _rpc('UploadTensor', self.client.stub.UploadTensor(
                requests(), metadata=self.metadata, timeout=self.client.timeout))
            return RemoteTensor(self, info)
        tp = _t.TensorProto(data_type=int(code), dims=list(arr.shape), raw_data=arr.tobytes())
        req = pb.PutTensorRequest(session_id=self.id, tensor=tp, requires_grad=requires_grad,
                                  placement=_placement(placement))
        if target is not None:
            req.target = _handle(target)
        info = await self._unary('PutTensor', req)
        if progress is not None:
            progress(arr.nbytes, arr.nbytes)
        return RemoteTensor(self, info)

    async def get(self, handle: Any, *, bfloat16: str = 'bits', stream: Optional[bool] = None,
                  chunk_bytes: int = 0, progress: Optional[_transfer.Progress] = None) -> Any:
        """As Session.get: a numpy array, streamed above the threshold (RemoteTensor handles)
        or when one message is refused."""
        if stream is None and isinstance(handle, RemoteTensor):
            stream = self._streams(handle.nbytes, None)
        if not stream:
            try:
                tp = await self._unary('GetTensor', pb.GetTensorRequest(session_id=self.id,
                                                                        handle=_handle(handle)))
            except errors.ResourceExhausted:
                if stream is False:
                    raise
            else:
                if progress is not None:
                    progress(len(tp.raw_data), len(tp.raw_data))
                return _t.from_tensor_proto(tp, bfloat16=bfloat16)
        req = pb.DownloadTensorRequest(session_id=self.id, handle=_handle(handle),
                                       chunk_bytes=chunk_bytes)
        parts = _transfer.DownloadAssembler(progress)
        try:
            async for msg in self.client.stub.DownloadTensor(req, metadata=self.metadata,
                                                             timeout=self.client.timeout):
                parts.add(msg)
        except grpc.RpcError as e:
            raise errors.from_rpc_error(e, 'DownloadTensor') from None
        return parts.result(bfloat16)

    async def run(self, operations: Iterable[Any], *, no_grad: bool = False,
                  reset_arena: bool = False) -> List[RemoteTensor]:
        """As Session.run: one Run request, one RemoteTensor per operation."""
        reply = await self._unary('Run', run_request(self.id, operations, no_grad, reset_arena))
        return [RemoteTensor(self, info) for info in reply.outputs]

    async def op(self, op: str, *inputs: Any, placement: Any = None, no_grad: bool = False,
                 **attrs: Any) -> RemoteTensor:
        """Runs one operation: await s.op("Softmax", x, axis=1)."""
        (out,) = await self.run([{'op': op, 'inputs': inputs, 'attrs': attrs,
                                  'placement': placement}], no_grad=no_grad)
        return out

    async def backward(self, root: Any, inputs: Any, *, grad_output: Any = None,
                       retain_graph: bool = False, placement: Any = None) -> List[RemoteTensor]:
        """As Session.backward: one gradient RemoteTensor per input."""
        req = backward_request(self.id, root, inputs, grad_output, retain_graph, placement)
        reply = await self._unary('Backward', req)
        return [RemoteTensor(self, info) for info in reply.gradients]

    async def release(self, *handles: Any) -> int:
        """ReleaseTensors; returns how many were released."""
        req = pb.ReleaseTensorsRequest(session_id=self.id, handles=[_handle(h) for h in handles])
        return (await self._unary('ReleaseTensors', req)).released

    async def keep_alive(self) -> Any:
        """As Session.keep_alive: KeepAlive resets the idle timer; the reply names the server
        instance."""
        return await self._unary('KeepAlive', pb.KeepAliveRequest(session_id=self.id))

    async def server_restarted(self) -> bool:
        """As Session.server_restarted: whether the server answering now is not the one that
        created the session, asked with Ping (which answers for a session that is gone, and
        does not keep it alive)."""
        reply = await self._unary('Ping', pb.PingRequest())
        return bool(reply.server_instance_id != self.server_instance_id)

    async def close(self) -> Any:
        """As Session.close: CloseSession (once); the reply, or None when already closed by
        this object or already gone on the server (NOT_FOUND)."""
        if self.closed:
            return None
        self.closed = True
        try:
            return await self._unary('CloseSession', pb.CloseSessionRequest(session_id=self.id))
        except errors.NotFound:
            return None  # gone already (expired, closed elsewhere, server restarted)

    async def __aenter__(self) -> 'AsyncSession':
        return self

    async def __aexit__(self, exc_type: Any, *exc: Any) -> None:
        """Closes the session; an error of the close never replaces the block's exception."""
        try:
            await self.close()
        except errors.OneModelError:
            if exc_type is None:
                raise


def _is_proto(value: Any) -> bool:
    return isinstance(value, _t.TensorProto) or _t._foreign_proto(value)
