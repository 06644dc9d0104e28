"""Every error path of contract.md: status code and message."""

import grpc
import numpy as np
import pytest

import onemodel
from onemodel import DataType, pb
from conftest import assert_error

IA = grpc.StatusCode.INVALID_ARGUMENT
NF = grpc.StatusCode.NOT_FOUND
FP = grpc.StatusCode.FAILED_PRECONDITION
RE = grpc.StatusCode.RESOURCE_EXHAUSTED


def raw_put(sess, tp, **kw):
    return sess.put_proto(tp, **kw)


# ---- operations -----------------------------------------------------------------------------

def test_unknown_op(sess):
    a = sess.put(np.ones(2, np.float32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('Frobnicate', a)
    assert_error(ei, IA, 'Frobnicate')


def test_missing_attribute(sess):
    x = sess.put(np.ones((1, 1, 4, 4), np.float32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('MaxPool2d', x)
    assert_error(ei, IA, 'MaxPool2d', 'kernel_shape', 'ints')
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('Cast', x)
    assert_error(ei, IA, 'Cast', 'to')
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('Reshape', x)
    assert_error(ei, IA, 'Reshape', 'shape')


def test_unknown_attribute(sess):
    x = sess.put(np.ones((2, 2), np.float32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('Softmax', x, axiss=1)
    assert_error(ei, IA, 'Softmax', 'axiss')


@pytest.mark.parametrize('op,attrs,name,expected', [
    ('Softmax', dict(axis=1.5), 'axis', 'int'),
    ('Softmax', dict(scale='2'), 'scale', 'float'),  # an int is taken (test_policy.py)
    ('Cast', dict(to='FLOAT'), 'to', 'int'),
    ('Sum', dict(axes=0.5), 'axes', 'ints'),
    ('ToLayout', dict(layout=1), 'layout', 'string'),
    ('Reshape', dict(shape=[1.5, 2.0]), 'shape', 'ints'),
])
def test_wrong_typed_attribute(sess, op, attrs, name, expected):
    x = sess.put(np.ones((1, 2, 2, 2), np.float32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op(op, x, **attrs)
    assert_error(ei, IA, op, name, expected)


def test_bad_attribute_values(sess):
    x = sess.put(np.ones((1, 1, 4, 4), np.float32))
    for op, attrs in [('ToLayout', dict(layout='NCDHW')), ('Cast', dict(to=8)), ('Cast', dict(to=999)),
                      ('MaxPool2d', dict(kernel_shape=[0, 2])), ('MaxPool2d', dict(kernel_shape=[2])),
                      ('MaxPool2d', dict(kernel_shape=[2, 2], dilations=[0, 1])),
                      ('ReluMaxPool2d', dict(kernel_shape=[2, 2], ceil_mode=3)),
                      ('AvgPool2d', dict(kernel_shape=[2, 2], count_include_pad=2)),
                      ('Reshape', dict(shape=[-1, -1])), ('Reshape', dict(shape=[5])),
                      ('Permute', dict(perm=[0, 0, 1, 2])), ('Transpose', dict(dim0=0, dim1=9)),
                      ('Slice', dict(dim=7, start=0, stop=1)), ('Expand', dict(shape=[2, 2])),
                      ('Sum', dict(axes=[4]))]:
        with pytest.raises(onemodel.InvalidArgument, match='.') as ei:
            sess.op(op, x, **attrs)
        assert ei.value.details, (op, attrs)


@pytest.mark.parametrize('op,n', [('Add', 1), ('Add', 3), ('Relu', 2), ('Relu', 0), ('MatMul', 1)])
def test_wrong_input_count(sess, op, n):
    a = sess.put(np.ones((2, 2), np.float32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op(op, *([a] * n))
    assert_error(ei, IA, op)


def test_shape_and_dtype_errors_from_core(sess):
    a = sess.put(np.ones((2, 3), np.float32))
    b = sess.put(np.ones((4,), np.float32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('Add', a, b)
    assert_error(ei, IA)
    assert '3' in ei.value.details and '4' in ei.value.details, ei.value.details
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('MatMul', a, a)
    assert_error(ei, IA)
    i = sess.put(np.ones((2, 3), np.int32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.op('Exp', i)
    assert_error(ei, IA, 'INT32')


@pytest.mark.parametrize('ref', [1, 2, 5, -1], ids=['itself', 'later', 'past-end', 'negative'])
def test_bad_output_reference(sess, ref):
    # operation 1 may refer to output 0 only
    a = sess.put(np.ones(2, np.float32))
    with pytest.raises(onemodel.InvalidArgument) as ei:
        sess.run([{'op': 'Neg', 'inputs': [a]}, {'op': 'Neg', 'inputs': [onemodel.Output(ref)]},
                  {'op': 'Neg', 'inputs': [a]}])
    assert_error(ei, IA)


def test_failed_run_leaves_no_partial_state_visible(sess):
    a = sess.put(np.ones(2, np.float32))
    handles_before = sess.stats().session.handles
    with pytest.raises(onemodel.InvalidArgument):
        sess.run([{'op': 'Neg', 'inputs': [a]}, {'op': 'Nope', 'inputs': [a]}])
    assert sess.stats().session.handles == handles_before  # nothing got a handle
    with pytest.raises(onemodel.InvalidArgument):
        sess.run([{'op': 'Neg', 'inputs': [a], 'placement': 'pool'}, {'op': 'Add', 'inputs': [a]}])
    assert sess.stats().session.handles == handles_before
    # the session still works
    assert sess.op('Neg', a).numpy().tolist() == [-1, -1]
    assert sess.stats().session.handles == handles_before + 1


# ---- handles ------------------------------------------------------------------------------

def test_unknown_handle_not_found(sess):
    for bad in ['p1.0000000000000000', 'a1.ffff', 'garbage', '']:
        with pytest.raises(onemodel.OneModelError) as ei:
            sess.get(bad)
        assert_error(ei, NF, "'%s'" % bad, 'not a handle of this session')
    with pytest.raises(onemodel.NotFound) as ei:
        sess.get('p1.0000000000000000')
    with pytest.raises(onemodel.NotFound) as ei:
        sess.op('Neg', 'p77.0000000000000000')
    assert_error(ei, NF, 'p77.0000000000000000')


def test_handle_of_another_session_not_found(client):
    with client.session() as a, client.session() as b:
        t = a.put(np.ones(3, np.float32))
        r = a.op('Exp', t)
        for h in (t, r):
            with pytest.raises(onemodel.NotFound) as ei:
                b.get(h.handle)
            assert_error(ei, NF, h.handle)
            with pytest.raises(onemodel.NotFound):
                b.describe(h.handle)
            with pytest.raises(onemodel.NotFound):
                b.op('Neg', h.handle)
            with pytest.raises(onemodel.NotFound):
                b.release(h.handle)
            with pytest.raises(onemodel.NotFound):
                b.download(h.handle)
        with pytest.raises(onemodel.NotFound):
            b.backward(r.handle, [t.handle], grad_output=np.ones(3, np.float32))
        # and it is still fine in its own session
        assert a.get(t).tolist() == [1, 1, 1]


def test_stale_arena_handle_after_reset(sess):
    x = sess.put(np.ones(3, np.float32), requires_grad=True)
    y = sess.op('Exp', x)
    inline = sess.put(np.ones(3, np.float32), placement='arena')
    assert inline.placement == pb.PLACEMENT_ARENA and inline.handle.startswith('a')
    sess.reset_arena()
    for h in (y, inline):
        for call in (lambda: sess.get(h), lambda: sess.describe(h), lambda: sess.op('Neg', h),
                     lambda: sess.download(h)):
            with pytest.raises(onemodel.FailedPrecondition) as ei:
                call()
            assert_error(ei, FP, h.handle, 'arena', 'reset')
    with pytest.raises(onemodel.FailedPrecondition) as ei:
        sess.backward(y, [x], grad_output=np.ones(3, np.float32))
    assert_error(ei, FP, y.handle)


def test_released_owner_makes_views_stale(sess):
    a = sess.put(np.arange(6, dtype=np.float32).reshape(2, 3))
    v = sess.op('Transpose', a, dim0=0, dim1=1)
    r = sess.op('Reshape', a, shape=[6])
    assert sess.describe(v).info.buffer_id == sess.describe(a).info.buffer_id
    sess.release(a)
    for h in (v, r):
        with pytest.raises(onemodel.FailedPrecondition) as ei:
            sess.get(h)
        assert_error(ei, FP, h.handle)
    with pytest.raises(onemodel.NotFound):
        sess.get(a)


def test_requires_grad_only_for_floating(sess):
    for a in (np.ones(3, np.int32), np.ones(3, np.bool_), np.ones(3, np.uint8)):
        with pytest.raises(onemodel.InvalidArgument):
            sess.put(a, requires_grad=True)
        with pytest.raises(onemodel.InvalidArgument):
            sess.upload(a, requires_grad=True)
    for a in (np.ones(3, np.float16), np.ones(3, np.float64)):
        assert sess.put(a, requires_grad=True).requires_grad


# ---- malformed TensorProtos ------------------------------------------------------------------

def TP(**kw):
    return onemodel.TensorProto(**kw)


MALFORMED = [
    ('undefined', TP(data_type=0, dims=[1], raw_data=b'\0' * 4), ['UNDEFINED']),
    ('string', TP(data_type=8, dims=[1], string_data=[b'x']), ['STRING']),
    ('complex64', TP(data_type=14, dims=[1], raw_data=b'\0' * 8), ['COMPLEX64']),
    ('unknown-code', TP(data_type=99, dims=[1], raw_data=b'\0'), ['99']),
    ('external', TP(data_type=1, dims=[1], data_location=onemodel.TensorProto.EXTERNAL,
                    external_data=[onemodel.onnx_pb2.StringStringEntryProto(key='location', value='x.bin')]),
     ['external']),
    ('segment', TP(data_type=1, dims=[2], raw_data=b'\0' * 8, segment=onemodel.TensorProto.Segment(begin=0, end=2)), ['segment']),
    ('raw-too-short', TP(data_type=1, dims=[2, 3], raw_data=b'\0' * 20), ['raw_data', '20', '24']),
    ('raw-too-long', TP(data_type=10, dims=[2], raw_data=b'\0' * 6), ['raw_data', '6', '4']),
    ('negative-dim', TP(data_type=1, dims=[2, -3], raw_data=b''), ['-3']),
    ('rank-too-high', TP(data_type=1, dims=[1] * 9, raw_data=b'\0' * 4), ['rank']),
    ('over-2^31-bytes', TP(data_type=1, dims=[1 << 30, 4]), []),
    ('no-data', TP(data_type=1, dims=[3]), ['no data']),
    ('both-raw-and-typed', TP(data_type=1, dims=[1], raw_data=b'\0' * 4, float_data=[1.0]), ['both']),
    ('wrong-typed-field', TP(data_type=1, dims=[2], int64_data=[1, 2]), ['int64_data', 'float_data']),
    ('typed-count', TP(data_type=1, dims=[3], float_data=[1.0, 2.0]), ['float_data', '2', '3']),
    ('int8-out-of-range', TP(data_type=3, dims=[2], int32_data=[1, 300]), ['int32_data', '300']),
    ('float16-bits-out-of-range', TP(data_type=10, dims=[1], int32_data=[70000]), ['int32_data', '70000']),
]


@pytest.mark.parametrize('name,tp,words', MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_tensor_proto_rejected(sess, name, tp, words):
    with pytest.raises(onemodel.OneModelError) as ei:
        raw_put(sess, tp)
    assert_error(ei, IA, *words)
    # inline in a Run, too
    with pytest.raises(onemodel.OneModelError) as ei:
        sess.run([{'op': 'Neg', 'inputs': [{'tensor': tp}]}])
    assert ei.value.code == IA, ei.value


# ---- streamed upload protocol -----------------------------------------------------------------

def _upload(sess, messages):
    return sess.client.stub.UploadTensor(iter(messages), metadata=sess.metadata)


def test_upload_protocol_errors(sess):
    header = pb.UploadHeader(session_id=sess.id, data_type=DataType.FLOAT, dims=[4])
    cases = {
        'no header': [pb.UploadTensorRequest(data=b'\0' * 16)],
        'nothing': [],
        'two headers': [pb.UploadTensorRequest(header=header), pb.UploadTensorRequest(header=header)],
        'too few bytes': [pb.UploadTensorRequest(header=header), pb.UploadTensorRequest(data=b'\0' * 15)],
        'too many bytes': [pb.UploadTensorRequest(header=header), pb.UploadTensorRequest(data=b'\0' * 10),
                           pb.UploadTensorRequest(data=b'\0' * 10)],
        'bad type': [pb.UploadTensorRequest(header=pb.UploadHeader(session_id=sess.id, data_type=8, dims=[1])),
                     pb.UploadTensorRequest(data=b'x')],
        'negative dims': [pb.UploadTensorRequest(header=pb.UploadHeader(session_id=sess.id, data_type=1, dims=[-1]))],
        'over 2^31-1 bytes': [pb.UploadTensorRequest(header=pb.UploadHeader(session_id=sess.id, data_type=1,
                                                                            dims=[1 << 29]))],
    }
    for what, msgs in cases.items():
        with pytest.raises(grpc.RpcError) as ei:
            _upload(sess, msgs)
        assert ei.value.code() == IA, (what, ei.value.code(), ei.value.details())
        assert ei.value.details(), what


def test_download_errors(sess):
    with pytest.raises(onemodel.NotFound):
        sess.download('p5.0000000000000000')
    t = sess.put(np.ones(3, np.float32))
    with pytest.raises(onemodel.InvalidArgument):
        sess.download(t, chunk_bytes=-1)


# ---- sessions, limits, stats requests ------------------------------------------------------------

def test_session_memory_limit(client):
    with client.session(memory_limit_bytes=1 << 20) as s:
        s.put(np.ones(1000, np.float32))
        with pytest.raises(onemodel.ResourceExhausted) as ei:
            s.put(np.ones(1 << 19, np.float32))  # 2 MiB
        assert_error(ei, RE)
        with pytest.raises(onemodel.ResourceExhausted):
            s.upload(np.ones(1 << 19, np.float32))
        big = s.put(np.ones((256, 256), np.float32))  # 256 KiB
        with pytest.raises(onemodel.ResourceExhausted):
            s.run([{'op': 'Expand', 'inputs': [big], 'attrs': {'shape': [8, 256, 256]}},
                   {'op': 'Contiguous', 'inputs': [onemodel.Output(0)]}])
        assert s.get(big).shape == (256, 256)  # the session survives


def test_bad_session_options(client):
    with pytest.raises(onemodel.ResourceExhausted) as ei:
        client.session(memory_limit_bytes=1 << 62)
    assert_error(ei, RE, '--session-memory-max')
    for kw in (dict(arena_chunk_bytes=-1), dict(memory_limit_bytes=-5), dict(idle_timeout_ms=-1)):
        with pytest.raises(onemodel.InvalidArgument):
            client.session(**kw)
    with pytest.raises(grpc.RpcError) as ei:
        client.stub.CreateSession(pb.CreateSessionRequest(kernels=7))
    assert ei.value.code() == IA


def test_watch_stats_interval_too_small(client):
    w = client.watch_stats(interval_ms=5)
    with pytest.raises(onemodel.InvalidArgument):
        next(w)


def test_session_rpc_without_session_id(client):
    with pytest.raises(grpc.RpcError) as ei:
        client.stub.PutTensor(pb.PutTensorRequest(tensor=onemodel.to_tensor_proto(np.ones(1, np.float32))))
    assert ei.value.code() == IA, ei.value
    assert 'no session id' in ei.value.details().lower()

def test_a_deadline_that_expires_during_a_run_raises_deadline_exceeded(server):
    # as FaultsTest.ADeadlineThatExpiresDuringARunStopsIt: (128 x 2^23) @ (2^23 x 128) of
    # broadcast views is minutes of work on no memory; the server stops it at the deadline
    with server.client(timeout=0.5).session() as s:
        x = s.put(np.ones((1, 1), np.float32))
        a, b = s.op('Expand', x, shape=[128, 1 << 23]), s.op('Expand', x, shape=[1 << 23, 128])
        with pytest.raises(onemodel.DeadlineExceeded) as ei:
            s.op('MatMul', a, b)
        assert_error(ei, grpc.StatusCode.DEADLINE_EXCEEDED)
        assert ei.value.method == 'Run'
        assert s.op('Sum', x).numpy() == 1.0                   # the session carries on


# Unary messages above --max-message-bytes: test_process.py (a 64 KiB server, both directions)
# and test_large.py (GetTensor of a tensor above the default 64 MiB).
