"""Errors raised by the onemodel client.

Every failed RPC raises OneModelError (or the subclass for its status code) carrying the gRPC
status code and the server's message:

    try:
        session.get("a3.deadbeef")
    except onemodel.NotFound as e:
        print(e.code, e.details)   # StatusCode.NOT_FOUND  "handle a3.deadbeef not found ..."
"""

import grpc


class OneModelError(Exception):
    """A failed RPC: .code (grpc.StatusCode), .details (the server's message), .method;
    .rpc_error is the grpc.RpcError when the server answered (None for client-side checks)."""

    rpc_error = None

    def __init__(self, code, details, method=''):
        self.code = code
        self.details = details or ''
        self.method = method
        where = ' (%s)' % method if method else ''
        super().__init__('%s%s: %s' % (getattr(code, 'name', code), where, self.details))


class InvalidArgument(OneModelError):
    """INVALID_ARGUMENT: bad shape, dtype, attribute, malformed TensorProto."""


class NotFound(OneModelError):
    """NOT_FOUND: unknown, closed or expired session; unknown or released handle."""


class FailedPrecondition(OneModelError):
    """FAILED_PRECONDITION: stale handle (arena reset, released owner), version change."""


class ResourceExhausted(OneModelError):
    """RESOURCE_EXHAUSTED: message size, memory quota, session limit."""


class DeadlineExceeded(OneModelError):
    """DEADLINE_EXCEEDED: the call's deadline (Client(timeout=...)) passed before it finished,
    or a streamed transfer stalled (--stream-idle-timeout)."""


class Unauthenticated(OneModelError):
    """UNAUTHENTICATED: missing or wrong token."""


class Unavailable(OneModelError):
    """UNAVAILABLE: no server at the address, or it is shutting down."""


class ProtocolError(OneModelError):
    """The server answered something the protocol does not allow (a client-side check)."""

    def __init__(self, details, method=''):
        super().__init__(grpc.StatusCode.INTERNAL, details, method)


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
}


# gRPC's words when a message is above the receiver's limit (the server's --max-message-bytes)
_TOO_LARGE = 'Received message larger than max'
_TOO_LARGE_HINT = (
    '\n  (the server refuses messages above its --max-message-bytes, Session.max_message_bytes: '
    'upload large arrays first with s.put() or s.tensor(), which stream them in chunks, and '
    'pass the handle or Tensor instead of the array inline)')


def _hint(code, details):
    """What to do about a refusal, appended to its details: '' unless there is advice."""
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and details.startswith(_TOO_LARGE):
        return _TOO_LARGE_HINT
    return ''


def from_rpc_error(err, method=''):
    """The OneModelError for a grpc.RpcError (which is also a grpc.Call); a request the server
    refused for its size gets a hint to stream large operands instead."""
    code = err.code() if hasattr(err, 'code') else grpc.StatusCode.UNKNOWN
    details = (err.details() if hasattr(err, 'details') else str(err)) or ''
    cls = _BY_CODE.get(code, OneModelError)
    e = cls(code, details + _hint(code, details), method)
    e.rpc_error = err
    return e
