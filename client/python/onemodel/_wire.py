"""The tensor API's RunRequest, written in protobuf's wire format directly.

A training step queues the same few operations every time; building them as messages field
by field and serializing the RunRequest by reflection (the C++ backend of Python protobuf)
was a third of the package's time per step (docs/performance.md). Here each part is encoded as
bytes (the name, attributes and placement of an operation once, when it is queued; the
inputs when the Run is sent) and the parts are joined. A message's fields may come in any
order and the entries of a repeated field or a map are the concatenation of their
encodings, so a parser reads exactly the message the fields describe (tests/test_wire.py
compares with protobuf's own encoding).

The field numbers are those of proto/onemodel/v1/onemodel.proto.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable

_BYTES = tuple(bytes((i,)) for i in range(128))  # the one-byte varints
# tags: field number << 3 | wire type (0 varint, 2 length-delimited)
_LEN_1 = b'\x0a'  # Operation.op, Input.handle, RunRequest.session_id, a map entry's key
_LEN_2 = b'\x12'  # Operation.inputs, RunRequest.operations, a map entry's value
_LEN_3 = b'\x1a'  # Operation.attributes, Input.tensor
_VARINT_2 = b'\x10'  # Input.output
_NO_GRAD = b'\x18\x01'  # RunRequest.no_grad = true
_RESET_ARENA = b'\x20\x01'  # RunRequest.reset_arena = true
# Operation.placement (field 4, varint) by the tensor API's names; the default 0 is left out
PLACEMENTS = {None: b'', 'pool': b'\x20\x01', 'arena': b'\x20\x02'}


def varint(n: int) -> bytes:
    """n (0 <= n < 2^64) as a protobuf varint."""
    if n < 0x80:
        return _BYTES[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload."""
    return tag + varint(len(payload)) + payload


@functools.lru_cache(maxsize=1024)
def op_name(op: str) -> bytes:
    """Operation.op."""
    return _field(_LEN_1, op.encode())


def attribute(name: str, value: Any) -> bytes:
    """One entry of Operation.attributes: `name` and the Attribute message `value`."""
    return _field(_LEN_3, _field(_LEN_1, name.encode()) + _field(_LEN_2, value.SerializeToString()))


@functools.lru_cache(maxsize=4096)  # a training step names the same parameters every time
def handle_input(handle: str) -> bytes:
    """One of Operation.inputs: a tensor of the session."""
    return _field(_LEN_2, _field(_LEN_1, handle.encode()))


@functools.lru_cache(maxsize=4096)
def output_input(index: int) -> bytes:
    """One of Operation.inputs: the output of the Run's operation `index` (>= 0)."""
    return _field(_LEN_2, _VARINT_2 + varint(index))


def tensor_input(tensor: Any) -> bytes:
    """One of Operation.inputs: the onnx TensorProto `tensor` sent inline."""
    return _field(_LEN_2, _field(_LEN_3, tensor.SerializeToString()))


def operation(fields: Iterable[bytes]) -> bytes:
    """One of RunRequest.operations, from its encoded fields (op_name, the inputs in order,
    the attributes, PLACEMENTS), in any order but the inputs'."""
    return _field(_LEN_2, b''.join(fields))


def run_request(session_id: str, operations: Iterable[bytes], no_grad: bool,
                reset_arena: bool) -> bytes:
    """A serialized RunRequest of the encoded `operations` (see operation)."""
    return b''.join([_field(_LEN_1, session_id.encode()), *operations,
                     _NO_GRAD if no_grad else b'', _RESET_ARENA if reset_arena else b''])
