"""Large tensors: streamed above Client.stream_threshold_bytes in both directions, with
progress callbacks; one message below it (counted in the server's per-RPC statistics)."""

import numpy as np
import pytest

import onemodel

MiB = 1 << 20


def rpc_counts(client):
    return {r.method.rsplit('/', 1)[-1]: r.requests for r in client.stats().rpcs}


def calls_between(client, fn):
    before = rpc_counts(client)
    out = fn()
    after = rpc_counts(client)
    return out, {m: after[m] - before.get(m, 0) for m in ('PutTensor', 'GetTensor', 'UploadTensor',
                                                          'DownloadTensor') if m in after}


def test_threshold_is_the_measured_one(client):
    assert client.stream_threshold_bytes == onemodel.client.STREAM_THRESHOLD_BYTES == MiB


def test_above_threshold_streams_both_ways_with_progress(client):
    a = np.arange(3 * MiB // 4 + 5, dtype=np.float32)  # 3 MiB + 20 bytes
    ups, downs = [], []
    with client.session() as s:
        t, n = calls_between(client, lambda: s.put(a, progress=lambda d, tot: ups.append((d, tot))))
        assert n.get('UploadTensor') == 1 and n.get('PutTensor', 0) == 0
        b, n = calls_between(client, lambda: s.get(t, progress=lambda d, tot: downs.append((d, tot))))
        assert n.get('DownloadTensor') == 1 and n.get('GetTensor', 0) == 0
    assert np.array_equal(a, b)
    for seen in (ups, downs):
        assert len(seen) == 4, seen  # 1 MiB chunks
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)
        assert seen[-1] == (a.nbytes, a.nbytes) and all(tot == a.nbytes for _, tot in seen)


def test_at_threshold_one_message_each_way(client):
    a = np.ones(MiB // 4, np.float32)  # exactly 1 MiB
    seen = []
    with client.session() as s:
        t, n = calls_between(client, lambda: s.put(a, progress=lambda d, tot: seen.append(d)))
        assert n.get('PutTensor') == 1 and n.get('UploadTensor', 0) == 0
        b, n = calls_between(client, lambda: s.get(t, progress=lambda d, tot: seen.append(d)))
        assert n.get('GetTensor') == 1 and n.get('DownloadTensor', 0) == 0
    assert np.array_equal(a, b) and seen == [a.nbytes, a.nbytes]


def test_threshold_is_a_client_setting(server):
    with server.client(stream_threshold_bytes=1000) as c, c.session() as s:
        t, n = calls_between(c, lambda: s.put(np.ones(300, np.float32)))
        assert n.get('UploadTensor') == 1
        assert s.get(t).tolist() == [1.0] * 300


def test_string_handle_of_a_large_tensor_downloads(sess):
    a = np.arange(2 * MiB // 4, dtype=np.float32)
    t = sess.put(a)
    assert np.array_equal(sess.get(t.handle), a)  # size unknown: GetTensor (fits the limit)
    assert np.array_equal(sess.get(t.handle, stream=True), a)


def test_bad_chunk_size_is_refused(sess):
    with pytest.raises(ValueError, match='chunk_bytes must be positive'):
        sess.upload(np.ones(3), chunk_bytes=0)
