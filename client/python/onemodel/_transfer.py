"""Moving tensor bytes: when to stream, the UploadTensor request stream, and the assembly of a
DownloadTensor stream into a numpy array. Shared by the blocking client (client.py) and the
asyncio one (aio.py), so both decide and check alike.

STREAM_THRESHOLD_BYTES: tensors with more bytes than this go through UploadTensor /
DownloadTensor in CHUNK_BYTES chunks instead of one PutTensor / GetTensor message. Measured with
this package's put()+get() on loopback (docs/performance.md, "When put/get stream"): one
message is faster up to 1 MiB, even at 2 MiB, and loses from 4 MiB up (4 MiB: 50 ms against
20 ms; 32 MiB: 0.53 s against 0.12 s), because grpcio's Python layer copies and reallocates a
large single message several times; the stream's chunks stay small.
"""

from typing import Any, Callable, Iterator, List, Optional

import numpy as np

from . import errors
from . import tensors as _t

MiB = 1 << 20
STREAM_THRESHOLD_BYTES = 1 * MiB
CHUNK_BYTES = 1 * MiB
# room for a message's fields besides the tensor bytes (dims, type, ids, framing): a tensor
# goes unary only when its bytes plus this fit in max_message_bytes; stream chunks leave it free
MESSAGE_OVERHEAD = 1024

# progress(done_bytes, total_bytes), called after every chunk (and once for a single message)
Progress = Callable[[int, int], None]


def should_stream(nbytes: int, stream: Optional[bool], threshold: int, max_message_bytes: int) -> bool:
    """Whether a tensor of `nbytes` goes by stream: `stream` when given, else above the
    threshold or when one message could not hold it."""
    if stream is not None:
        return bool(stream)
    return nbytes > threshold or nbytes + MESSAGE_OVERHEAD > max_message_bytes


def chunk_size(chunk_bytes: Optional[int], max_message_bytes: int) -> int:
    """The upload chunk: `chunk_bytes` or CHUNK_BYTES, and never more than a message holds."""
    want = CHUNK_BYTES if chunk_bytes is None else int(chunk_bytes)
    if want <= 0:
        raise ValueError('chunk_bytes must be positive, got %d' % want)
    return max(1, min(want, max_message_bytes - MESSAGE_OVERHEAD))


def upload_chunks(arr: np.ndarray, chunk_bytes: int, progress: Optional[Progress]) -> Iterator[bytes]:
    """The bytes of a C-contiguous array in chunks, reporting progress after each."""
    flat = arr.reshape(-1).view(np.uint8).data
    total = len(flat)
    for off in range(0, total, chunk_bytes):
        chunk = flat[off:off + chunk_bytes].tobytes()
        yield chunk
        if progress is not None:
            progress(min(off + chunk_bytes, total), total)


class DownloadAssembler:
    """Checks a DownloadTensor stream (a header, then data) and assembles its array."""

    METHOD = 'DownloadTensor'

    def __init__(self, progress: Optional[Progress] = None) -> None:
        self.progress = progress
        self.buf: Optional[np.ndarray] = None
        self.pos = 0
        self.expect = 0
        self.code = _t.DataType.UNDEFINED
        self.dims: List[int] = []

    def _fail(self, message: str) -> None:
        raise errors.ProtocolError(message, self.METHOD)

    def add(self, msg: Any) -> None:
        """Takes the next message of the stream."""
        part = msg.WhichOneof('part')
        if self.buf is None:
            if part != 'header':
                self._fail('DownloadTensor did not start with a header')
            self._start(msg.header)
            return
        if part != 'data':
            self._fail('DownloadTensor sent a second header')
        n = len(msg.data)
        if self.pos + n > self.expect:
            self._fail('DownloadTensor sent more than %d bytes' % self.expect)
        self.buf[self.pos:self.pos + n] = np.frombuffer(msg.data, dtype=np.uint8)
        self.pos += n
        if self.progress is not None:
            self.progress(self.pos, self.expect)

    def _start(self, h: Any) -> None:
        self.code = _t.data_type(h.data_type)
        self.dims = [int(d) for d in h.dims]
        self.expect = _t.element_count(self.dims) * _t.NUMPY_DTYPES[self.code].itemsize
        if h.total_bytes != self.expect:
            self._fail('DownloadTensor header says %d bytes; dims %s of %s need %d'
                       % (h.total_bytes, self.dims, self.code.name, self.expect))
        self.buf = np.empty(self.expect, dtype=np.uint8)
        if self.expect == 0 and self.progress is not None:
            self.progress(0, 0)

    def result(self, bfloat16: str = 'bits') -> np.ndarray:
        """The array, once the stream has ended."""
        if self.buf is None:
            self._fail('DownloadTensor did not start with a header')
        assert self.buf is not None
        if self.pos != self.expect:
            self._fail('DownloadTensor ended after %d of %d bytes' % (self.pos, self.expect))
        arr = self.buf.view(_t.NUMPY_DTYPES[self.code]).reshape(self.dims)
        if self.code == _t.DataType.BFLOAT16 and bfloat16 == 'float32':
            arr = _t.bfloat16_bits_to_float32(arr)
        return arr
