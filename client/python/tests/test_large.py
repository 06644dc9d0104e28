"""A tensor over 64 MiB streamed up and down byte-exact (UploadTensor / DownloadTensor)."""

import numpy as np
import pytest

import onemodel

MiB = 1 << 20


def test_streamed_tensor_over_64_mib_byte_exact(client):
    rng = np.random.default_rng(42)
    n = (64 * MiB) // 4 + 123457            # float32 elements: > 64 MiB, not a multiple of a chunk
    a = rng.standard_normal(n, dtype=np.float32).reshape(-1, 1)
    assert a.nbytes > 64 * MiB
    with client.session() as s:
        before = client.stats().pool.rented_bytes
        t = s.put(a)                         # above max_message_bytes: UploadTensor
        assert t.shape == a.shape and t.dtype == onemodel.DataType.FLOAT
        assert t.nbytes == a.nbytes
        assert s.describe(t).info.buffer_bytes >= a.nbytes
        assert client.stats().pool.rented_bytes >= before + a.nbytes
        b = s.get(t)                         # DownloadTensor, assembled
        assert b.shape == a.shape and b.dtype == np.float32
        assert b.tobytes() == a.tobytes()
        # GetTensor refuses it (RESOURCE_EXHAUSTED naming both sizes)
        with pytest.raises(onemodel.ResourceExhausted) as ei:
            s.get(t, stream=False)
        details = ei.value.details.replace(',', '')
        assert str(a.nbytes) in details and str(64 * MiB) in details, details
        # and the server can work on it
        total = s.op('Sum', t).numpy()
        np.testing.assert_allclose(total, a.astype(np.float64).sum(), rtol=1e-5)
        # a result over the limit comes back streamed too
        neg = s.op('Neg', t)
        assert neg.nbytes > s.max_message_bytes
        assert np.array_equal(s.download(neg, chunk_bytes=3 * MiB + 1), -a)
        held = client.stats().pool.rented_bytes
        assert s.release(t) == 1
        assert client.stats().pool.rented_bytes <= held - a.nbytes
    # the arena's chunk that held `neg` goes back with the session
    assert client.stats().pool.rented_bytes == before


def test_streamed_upload_to_arena_and_bytes_of_every_size_class(sess):
    for n in (1, 4095, 4096, 4097, 1 << 20, (1 << 20) + 3):
        a = (np.arange(n) % 251).astype(np.uint8)
        t = sess.upload(a, placement='arena', chunk_bytes=65536)
        assert sess.download(t, chunk_bytes=4096).tobytes() == a.tobytes()
