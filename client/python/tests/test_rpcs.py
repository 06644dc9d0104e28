"""Every RPC of onemodel.v1.OneModel (and health, reflection) against a real onemodeld."""

import re
import time

import grpc
import numpy as np
import pytest

import onemodel
from onemodel import DataType, pb
from conftest import assert_error

from test_tensors import ALL_DTYPES, sample

MiB = 1 << 20


def md_instance(metadata):
    return dict(metadata or ()).get(onemodel.INSTANCE_HEADER)


# ---- Ping, health, reflection, instance metadata --------------------------------------------

def test_ping_and_instance_metadata(server, client):
    assert client.ping() == server.instance
    reply, call = client.stub.Ping.with_call(pb.PingRequest())
    assert reply.server_instance_id == server.instance
    assert md_instance(call.initial_metadata()) == server.instance


def test_every_reply_carries_instance_metadata(server, client, sess):
    md = sess.metadata
    _, call = client.stub.GetStats.with_call(pb.StatsRequest())
    assert md_instance(call.initial_metadata()) == server.instance
    t = onemodel.to_tensor_proto(np.ones(2, np.float32))
    _, call = client.stub.PutTensor.with_call(pb.PutTensorRequest(tensor=t), metadata=md)
    assert md_instance(call.initial_metadata()) == server.instance
    _, call = client.stub.CreateSession.with_call(pb.CreateSessionRequest())
    assert md_instance(call.initial_metadata()) == server.instance
    # also on an error reply
    with pytest.raises(grpc.RpcError) as ei:
        client.stub.GetTensor(pb.GetTensorRequest(handle='p1.nothing'), metadata=md)
    assert md_instance(ei.value.initial_metadata()) == server.instance
    # streams
    call = client.stub.WatchStats(pb.WatchStatsRequest(interval_ms=100))
    next(call)
    assert md_instance(call.initial_metadata()) == server.instance
    call.cancel()


def test_health_check(client):
    assert client.health('') == 'SERVING'
    assert client.health('onemodel.v1.OneModel') == 'SERVING'
    with pytest.raises(onemodel.OneModelError) as ei:
        client.health('no.such.Service')
    assert ei.value.code == grpc.StatusCode.NOT_FOUND  # the standard health protocol


def _read_varint(buf, pos):
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _fields(buf):
    """(field number, wire type, value) of a protobuf message (bytes for length-delimited)."""
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 2:
            n, pos = _read_varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError('wire type %d' % wire)
        yield field, wire, value


def test_server_reflection_lists_services(client):
    # grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo, hand-encoded:
    # ServerReflectionRequest{list_services = 7: ""} -> ServerReflectionResponse{
    #   list_services_response = 6: ListServiceResponse{service = 1: ServiceResponse{name = 1}}}
    call = client.channel.stream_stream('/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
                                        request_serializer=lambda b: b, response_deserializer=lambda b: b)
    replies = list(call(iter([b'\x3a\x00']), timeout=10))
    assert len(replies) == 1
    names = []
    for field, _, value in _fields(replies[0]):
        if field == 6:
            for f2, _, service in _fields(value):
                if f2 == 1:
                    names += [v.decode() for f3, _, v in _fields(service) if f3 == 1]
    assert 'onemodel.v1.OneModel' in names
    assert 'grpc.health.v1.Health' in names


# ---- sessions ---------------------------------------------------------------------------------

def test_create_session_reply(server, client):
    with client.session(kernels='exact', client_name='t') as s:
        r = s.reply
        assert re.fullmatch(r'[0-9a-f]{32}', r.session_id), r.session_id
        assert r.kernel_variant == 'reference'
        assert r.server_instance_id == server.instance
        assert r.arena_chunk_bytes == 1 * MiB
        assert r.memory_limit_bytes > 0 and r.idle_timeout_ms > 0
        assert r.max_message_bytes == 64 * MiB
    with client.session(kernels='fast') as s:
        assert s.kernel_variant in ('fast-avx3', 'fast-avx2', 'fast-scalar')
    with client.session() as s:  # unspecified: the server's default, fast
        assert s.kernel_variant.startswith('fast-')


def test_create_session_options_echoed(client):
    with client.session(arena_chunk_bytes=256 << 10, idle_timeout_ms=5000,
                        memory_limit_bytes=32 * MiB) as s:
        assert s.reply.arena_chunk_bytes == 256 << 10
        assert s.reply.idle_timeout_ms == 5000
        assert s.reply.memory_limit_bytes == 32 * MiB


def test_session_ids_unique(client):
    sessions = [client.session() for _ in range(8)]
    assert len({s.id for s in sessions}) == 8
    for s in sessions:
        s.close()


def test_keep_alive(server, client):
    with client.session(idle_timeout_ms=7000) as s:
        r = s.keep_alive()
        assert r.server_instance_id == server.instance
        assert r.idle_timeout_ms == 7000
        assert not s.server_restarted()


def test_close_session_releases_unreleased_buffers(client):
    s = client.session()
    a = s.put(np.ones((64, 64), np.float32))
    s.put(np.ones(1000, np.float64), dtype='double')
    b = s.put(np.ones(10, np.int8))
    s.release(b)
    s.op('Add', a, a)  # an arena result, not a leak
    r = s.close()
    assert r.released_buffers == 2 and r.leaked_buffers == 0  # a close releases, it leaks nothing
    assert r.released_bytes >= 64 * 64 * 4 + 8000
    assert s.close() is None  # the client closes once
    with pytest.raises(onemodel.NotFound) as ei:
        s.keep_alive()
    assert_error(ei, grpc.StatusCode.NOT_FOUND, 'session', 'not found')
    with pytest.raises(grpc.RpcError) as ei:
        client.stub.CloseSession(pb.CloseSessionRequest(session_id=s.id))
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(onemodel.NotFound) as ei:
        s.get(a)
    assert_error(ei, grpc.StatusCode.NOT_FOUND, 'session', 'not found')


def test_session_context_manager_closes(client):
    with client.session() as s:
        sid = s.id
    assert s.closed
    with pytest.raises(grpc.RpcError) as ei:
        client.stub.KeepAlive(pb.KeepAliveRequest(session_id=sid))
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND


def close_behind_its_back(client, session):
    """Ends `session` on the server without telling the Session object, as an idle expiry
    does."""
    client.stub.CloseSession(pb.CloseSessionRequest(session_id=session.id))


def test_leaving_the_block_of_a_session_already_gone_is_quiet(client):
    with client.session() as s:
        close_behind_its_back(client, s)
    assert s.closed
    gone = client.session()
    close_behind_its_back(client, gone)
    assert gone.close() is None and gone.close() is None  # nothing left to close


def test_leaving_the_block_keeps_the_error_of_the_body(client):
    with pytest.raises(KeyError, match='from the body'):
        with client.session() as s:
            close_behind_its_back(client, s)
            raise KeyError('from the body')
    with pytest.raises(onemodel.NotFound) as ei:
        with client.session() as s:
            close_behind_its_back(client, s)
            s.keep_alive()
    assert ei.value.method == 'KeepAlive'


def test_server_restarted_answers_for_a_session_already_gone(client):
    s = client.session()
    close_behind_its_back(client, s)
    assert s.server_restarted() is False  # the same server: it answers Ping
    s.close()
    assert s.server_restarted() is False


def test_session_repr_shows_an_id_prefix_only(client):
    with client.session(kernels='exact') as s:
        assert repr(s) == 'Session(%s..., reference)' % s.id[:8]
    assert repr(s) == 'Session(%s..., reference, closed)' % s.id[:8]
    assert s.id[8:] not in repr(s)


# ---- session id: metadata, field, both ---------------------------------------------------------

def test_session_id_in_metadata_only_field_only_and_both(client, sess):
    t = onemodel.to_tensor_proto(np.arange(3, dtype=np.float32))
    info = client.stub.PutTensor(pb.PutTensorRequest(tensor=t), metadata=((onemodel.SESSION_HEADER, sess.id),))
    info2 = client.stub.PutTensor(pb.PutTensorRequest(session_id=sess.id, tensor=t))
    info3 = client.stub.PutTensor(pb.PutTensorRequest(session_id=sess.id, tensor=t),
                                  metadata=((onemodel.SESSION_HEADER, sess.id),))
    for i in (info, info2, info3):
        assert sess.get(i.handle).tolist() == [0, 1, 2]


def test_session_id_mismatch_is_invalid_argument(client):
    with client.session() as a, client.session() as b:
        t = onemodel.to_tensor_proto(np.arange(3, dtype=np.float32))
        with pytest.raises(grpc.RpcError) as ei:
            client.stub.PutTensor(pb.PutTensorRequest(session_id=a.id, tensor=t),
                                  metadata=((onemodel.SESSION_HEADER, b.id),))
        assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT, ei.value.details()


def test_unknown_session_not_found(client):
    with pytest.raises(grpc.RpcError) as ei:
        client.stub.KeepAlive(pb.KeepAliveRequest(session_id='0' * 32))
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND
    msg = ei.value.details().lower()
    assert 'session' in msg and 'not found' in msg, msg


# ---- tensors ------------------------------------------------------------------------------

@pytest.mark.parametrize('npd,code', ALL_DTYPES, ids=[c.name for _, c in ALL_DTYPES])
def test_put_get_every_dtype(sess, npd, code):
    a = sample(npd, (3, 5))
    t = sess.put(onemodel.to_tensor_proto(a, name='ignored'))  # the name is accepted, not kept
    assert t.dtype == code and t.shape == (3, 5)
    assert t.info.data_type_name == code.name
    tp = sess.get_proto(t)
    assert tp.data_type == code and list(tp.dims) == [3, 5]
    assert tp.HasField('raw_data') and not tp.float_data and not tp.int32_data
    assert tp.name == t.handle  # replies are named by their handle
    assert tp.raw_data == a.tobytes()
    b = sess.get(t)
    assert b.dtype == a.dtype and b.tobytes() == a.tobytes()


def test_put_get_bfloat16(sess):
    x = np.array([[1.0, -2.5, 3.140625], [0.0, 1e-3, 65280.0]], np.float32)
    t = sess.put(x, dtype='bfloat16')
    assert t.dtype == DataType.BFLOAT16 and t.info.data_type_name == 'BFLOAT16'
    bits = sess.get(t)
    assert bits.dtype == np.uint16
    assert bits.tolist() == onemodel.float32_to_bfloat16_bits(x).tolist()
    assert np.array_equal(sess.get(t, bfloat16='float32'),
                          onemodel.bfloat16_bits_to_float32(onemodel.float32_to_bfloat16_bits(x)))


def test_put_scalar_and_empty(sess):
    s = sess.put(np.float32(4.5))
    assert s.shape == () and sess.get(s).item() == 4.5
    e = sess.put(np.zeros((0, 7), np.float32))
    assert e.shape == (0, 7) and sess.get(e).shape == (0, 7)


@pytest.mark.parametrize('npd,code', ALL_DTYPES + [(None, DataType.BFLOAT16)],
                         ids=[c.name for _, c in ALL_DTYPES] + ['BFLOAT16'])
def test_typed_field_tensor_protos_accepted(sess, npd, code):
    if code == DataType.BFLOAT16:
        a = onemodel.float32_to_bfloat16_bits(np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4))
        tp = onemodel.to_typed_tensor_proto(a, dtype='bfloat16')
    else:
        a = sample(npd, (3, 4), seed=7)
        tp = onemodel.to_typed_tensor_proto(a)
    assert not tp.HasField('raw_data')
    t = sess.put(tp)
    assert t.dtype == code
    assert sess.get(t).tobytes() == a.tobytes()


def test_typed_float16_in_int32_data_and_float_data(sess):
    tp = onemodel.TensorProto(data_type=DataType.FLOAT16, dims=[3], int32_data=[0x3C00, 0xC000, 0x7BFF])
    assert sess.get(sess.put(tp)).tolist() == [1.0, -2.0, 65504.0]
    tp = onemodel.TensorProto(data_type=DataType.FLOAT, dims=[2, 2], float_data=[1, 2, 3, 4])
    assert sess.get(sess.put(tp)).tolist() == [[1, 2], [3, 4]]


def test_upload_download_chunks(sess, rng):
    a = rng.standard_normal((37, 29)).astype(np.float32)
    t = sess.upload(a, chunk_bytes=7)
    assert t.shape == (37, 29) and t.placement == pb.PLACEMENT_POOL
    assert sess.get(t).tobytes() == a.tobytes()
    # chunk_bytes on the way down
    parts = list(sess.client.stub.DownloadTensor(
        pb.DownloadTensorRequest(session_id=sess.id, handle=t.handle, chunk_bytes=1000),
        metadata=sess.metadata))
    assert parts[0].WhichOneof('part') == 'header'
    h = parts[0].header
    assert h.data_type == DataType.FLOAT and list(h.dims) == [37, 29] and h.total_bytes == a.nbytes
    assert h.name == t.handle
    data = [p.data for p in parts[1:]]
    assert all(p.WhichOneof('part') == 'data' for p in parts[1:])
    assert all(len(d) <= 1000 for d in data) and len(data) == -(-a.nbytes // 1000)
    assert b''.join(data) == a.tobytes()
    assert np.array_equal(sess.download(t), a)


def test_upload_every_dtype_and_requires_grad(sess):
    for npd, code in ALL_DTYPES:
        a = sample(npd, (4, 3), seed=3)
        t = sess.upload(a, chunk_bytes=5, dtype=code)  # float64 would go as FLOAT without it
        assert t.dtype == code
        assert sess.download(t, chunk_bytes=3).tobytes() == a.tobytes()
    g = sess.upload(np.ones(3, np.float32), requires_grad=True, placement='arena')
    assert g.requires_grad and g.placement == pb.PLACEMENT_ARENA


def test_describe_tensor_info(sess):
    a = sess.put(np.ones((2, 3, 4), np.float32), requires_grad=True)
    d = sess.describe(a).info
    assert d.handle == a.handle and d.handle.startswith('p')
    assert list(d.dims) == [2, 3, 4] and list(d.strides) == [12, 4, 1] and d.offset == 0
    assert d.data_type == DataType.FLOAT and d.data_type_name == 'FLOAT'
    assert d.requires_grad and d.placement == pb.PLACEMENT_POOL and d.grad_fn == 'leaf'
    assert d.buffer_bytes >= 96 and d.block_size == 0
    assert d.layout == 'Strided'  # rank 3 (docs/protocol.md section 3)
    assert d.version == 1
    assert sess.describe(sess.put(np.ones((1, 2, 3, 4), np.float32))).info.layout == 'NCHW'
    out = sess.op('Transpose', a, dim0=0, dim1=2)
    o = sess.describe(out).info
    assert list(o.dims) == [4, 3, 2] and list(o.strides) == [1, 4, 12]
    assert o.grad_fn == 'Permute' and o.requires_grad   # Transpose records as Permute
    assert o.buffer_id == d.buffer_id  # a view of a's buffer
    e = sess.describe(sess.op('Exp', a)).info
    assert e.handle.startswith('a') and e.placement == pb.PLACEMENT_ARENA and e.grad_fn == 'Exp'
    assert list(e.strides) == [12, 4, 1]
    plain = sess.put(np.ones(3, np.float32))
    assert sess.describe(plain).info.grad_fn == '' and not sess.describe(plain).requires_grad


def test_release_tensors(sess):
    a, b, c = (sess.put(np.full(4, i, np.float32)) for i in range(3))
    assert sess.release(a, b) == 2
    with pytest.raises(onemodel.NotFound) as ei:
        sess.get(a)
    assert_error(ei, grpc.StatusCode.NOT_FOUND, a.handle)
    with pytest.raises(onemodel.NotFound) as ei:
        sess.release(a)  # released twice
    assert_error(ei, grpc.StatusCode.NOT_FOUND, a.handle)
    with pytest.raises(onemodel.NotFound) as ei:
        sess.release('p999.0123456789abcdef')  # never existed
    assert sess.get(c).tolist() == [2, 2, 2, 2]
    # all or nothing: one bad handle releases none; a handle listed twice is refused
    with pytest.raises(onemodel.NotFound):
        sess.release(c, a)
    assert sess.get(c).tolist() == [2, 2, 2, 2]
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.release(c, c)
    assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT, c.handle, 'twice')
    assert sess.get(c).tolist() == [2, 2, 2, 2]
    # releasing a view only forgets the name; an arena handle too
    v = sess.op('Reshape', c, shape=[2, 2])
    e = sess.op('Exp', c)
    assert sess.release(v, e) == 2
    assert sess.get(c).tolist() == [2, 2, 2, 2]
    with pytest.raises(onemodel.NotFound) as ei:
        sess.get(v)
    assert_error(ei, grpc.StatusCode.NOT_FOUND, v.handle, 'released')


# ---- Run, Backward, ResetArena --------------------------------------------------------------

def test_run_chained_operations_and_inline_tensors(sess, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    xh = sess.put(x)
    outs = sess.run([
        {'op': 'MatMul', 'inputs': [xh, w]},                           # inline w
        {'op': 'Add', 'inputs': [onemodel.Output(0), np.float32(1)]},
        {'op': 'Relu', 'inputs': [{'output': 1}]},
        {'op': 'Sum', 'inputs': [onemodel.Output(2)], 'attrs': {'axes': [1], 'keepdims': 1},
         'placement': 'pool'},
    ], no_grad=True)
    assert len(outs) == 4
    ref = np.maximum(x @ w + 1, 0)
    np.testing.assert_allclose(outs[2].numpy(), ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(outs[3].numpy(), ref.sum(1, keepdims=True), rtol=1e-6, atol=1e-6)
    assert [o.placement for o in outs] == [pb.PLACEMENT_ARENA] * 3 + [pb.PLACEMENT_POOL]
    assert outs[0].shape == (3, 2) and outs[3].shape == (3, 1)


def test_batch_builder(sess):
    a = sess.put(np.arange(6, dtype=np.float32).reshape(2, 3))
    with sess.batch() as b:
        y = b.add('Mul', a, a)
        z = b.add('Sum', y)
    assert b[z].numpy().item() == 55.0
    assert b[y].shape == (2, 3)


def test_no_grad_records_nothing(sess):
    w = sess.put(np.ones(3, np.float32), requires_grad=True)
    y = sess.op('Mul', w, w, no_grad=True)
    assert not y.requires_grad and y.grad_fn == ''
    with pytest.raises(onemodel.InvalidArgument):
        sess.backward(sess.op('Sum', y), [w])


def test_backward_basic_and_placement(sess):
    w = sess.put(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    loss = sess.op('Sum', sess.op('Mul', w, w))
    assert loss.requires_grad and loss.grad_fn == 'Sum'
    (g,) = sess.backward(loss, [w], placement='pool')
    assert g.placement == pb.PLACEMENT_POOL
    assert g.numpy().tolist() == [2.0, 4.0, 6.0]
    # grad_output given (inline array, non-scalar root)
    y = sess.op('Mul', w, w)
    (g2,) = sess.backward(y, [w], grad_output=np.array([1, 0, 2], np.float32))
    assert g2.numpy().tolist() == [2.0, 0.0, 12.0]
    assert g2.placement == pb.PLACEMENT_ARENA
    # grad_output as a handle
    go = sess.put(np.array([3, 3, 3], np.float32))
    y = sess.op('Mul', w, w)
    (g3,) = sess.backward(y, [w], grad_output=go)
    assert g3.numpy().tolist() == [6.0, 12.0, 18.0]


def test_reset_arena(sess):
    a = sess.put(np.ones(4, np.float32))
    outs = [sess.op('Exp', a) for _ in range(3)]
    kept = sess.op('Neg', a, placement='pool')
    before = sess.stats().session.arena.resets
    r = sess.reset_arena()
    assert r.stale_handles >= 3
    assert r.arena.resets == before + 1
    assert sess.get(a).tolist() == [1, 1, 1, 1]     # pool: unaffected
    assert sess.get(kept).tolist() == [-1, -1, -1, -1]
    for o in outs:
        with pytest.raises(onemodel.FailedPrecondition) as ei:
            sess.get(o)
        assert_error(ei, grpc.StatusCode.FAILED_PRECONDITION, o.handle, 'arena', 'reset')


def test_reset_arena_trim_gives_chunks_back(sess):
    a = sess.put(np.ones(1, np.float32))
    for _ in range(3):                                  # three results of 1 MiB: three chunks
        sess.op('Exp', sess.op('Expand', a, shape=[(1 << 20) // 4 - 1024]))
    assert sess.reset_arena().arena.chunks >= 3         # without trim the chunks stay
    r = sess.reset_arena(trim=True, keep_bytes=1 << 20)
    assert r.arena.chunks == 1 and r.arena.reserved_bytes <= 1 << 20
    assert sess.reset_arena(trim=True).arena.chunks == 0
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.reset_arena(trim=True, keep_bytes=-1)
    assert_error(ei, grpc.StatusCode.INVALID_ARGUMENT, 'keep_bytes must be at least 0')


def test_run_reset_arena_flag(sess):
    a = sess.put(np.ones(2, np.float32))
    old = sess.op('Exp', a)
    (new,) = sess.run([{'op': 'Neg', 'inputs': [a]}], reset_arena=True)
    assert new.numpy().tolist() == [-1, -1]
    with pytest.raises(onemodel.FailedPrecondition) as ei:
        sess.get(old)
    assert_error(ei, grpc.StatusCode.FAILED_PRECONDITION, old.handle)


# ---- stats --------------------------------------------------------------------------------

def test_get_stats_shape(server, client, sess):
    st = client.stats()
    assert st.server_instance_id == server.instance
    assert st.sessions.open >= 1 and st.sessions.created >= st.sessions.open
    assert not st.HasField('session')
    methods = {r.method: r for r in st.rpcs}
    assert any('CreateSession' in m for m in methods), sorted(methods)
    s2 = sess.stats()
    assert s2.session.session_id == sess.id
    assert s2.session.kernel_variant == 'reference'
    assert s2.session.memory_limit_bytes == sess.reply.memory_limit_bytes


def test_watch_stats_streams_until_cancelled(client, sess):
    t0 = time.monotonic()
    with sess.watch_stats(interval_ms=100) as w:
        got = []
        for st in w:
            got.append(st)
            if len(got) == 4:
                w.cancel()
    assert len(got) == 4
    assert all(s.session.session_id == sess.id for s in got)
    assert time.monotonic() - t0 < 5
    # server-wide (no session)
    w = client.watch_stats(interval_ms=100)
    assert next(w).HasField('pool')
    w.cancel()
    assert list(w) == []
