"""onemodel._wire: the tensor API's RunRequest, written in protobuf's wire format by hand, is the
message protobuf itself encodes (onemodel.client.run_request) for the same operations."""

import grpc
import numpy as np
import pytest

import onemodel
from conftest import intercepted_session
from onemodel import _wire, pb


class RunRecorder(grpc.UnaryUnaryClientInterceptor):
    """Keeps the Run requests a client sends, as sent."""

    def __init__(self):
        self.runs = []

    def intercept_unary_unary(self, continuation, details, request):
        if details.method.endswith('/Run'):
            self.runs.append(request)
        return continuation(details, request)


@pytest.fixture
def recorded(server):
    """(session, RunRecorder)."""
    recorder = RunRecorder()
    with intercepted_session(server, recorder) as s:
        yield s, recorder


@pytest.mark.parametrize('n', [0, 1, 127, 128, 300, (1 << 14) - 1, 1 << 14, 1 << 31, (1 << 63) - 1])
def test_varint_is_protobufs(n):
    # Ints holding one value: tag, length, then the value's varint
    assert _wire.varint(n) == pb.Ints(values=[n]).SerializeToString()[2:]


def test_run_request_is_the_message_protobuf_encodes(recorded):
    s, recorder = recorded
    a = s.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), placement='pool')
    big = np.linspace(-1, 1, 60, dtype=np.float32).reshape(20, 3)  # inline, > 127 bytes
    s.reset_arena()  # goes with the Run: reset_arena = true
    ys = [a + 1.5,                                                       # an inline scalar
          onemodel.apply('Slice', a, dim=0, start=1, stop=2),            # 0 and 1 under two
          onemodel.apply('Slice', a, dim=1, start=0, stop=1, step=1),    # names each
          onemodel.apply('LeakyRelu', a, alpha=-0.0),
          onemodel.apply('Sum', a, axes=[-1, 0], keepdims=1, placement='pool'),
          onemodel.apply('ToLayout', a.reshape(1, 2, 3, 1), layout='NHWC', placement='arena'),
          onemodel.apply('Clip', a, min=-0.5, max=3.25),
          ((a.reshape(3, 2) @ a).sum() + big).sum()]
    ops = [dict(op='Add', inputs=[a.handle, np.float32(1.5)]),
           dict(op='Slice', inputs=[a.handle], attrs=dict(dim=0, start=1, stop=2)),
           dict(op='Slice', inputs=[a.handle], attrs=dict(dim=1, start=0, stop=1, step=1)),
           dict(op='LeakyRelu', inputs=[a.handle], attrs=dict(alpha=-0.0)),
           dict(op='Sum', inputs=[a.handle], attrs=dict(axes=[-1, 0], keepdims=1),
                placement='pool'),
           dict(op='Reshape', inputs=[a.handle], attrs=dict(shape=[1, 2, 3, 1])),
           dict(op='ToLayout', inputs=[onemodel.Output(5)], attrs=dict(layout='NHWC'),
                placement='arena'),
           dict(op='Clip', inputs=[a.handle], attrs=dict(min=-0.5, max=3.25)),
           dict(op='Reshape', inputs=[a.handle], attrs=dict(shape=[3, 2])),
           dict(op='MatMul', inputs=[onemodel.Output(8), a.handle]),
           dict(op='Sum', inputs=[onemodel.Output(9)], attrs=dict(keepdims=0)),
           dict(op='Add', inputs=[onemodel.Output(10), big]),
           dict(op='Sum', inputs=[onemodel.Output(11)], attrs=dict(keepdims=0))]
    recorder.runs.clear()
    s.flush()
    (sent,) = recorder.runs
    assert isinstance(sent, bytes)
    assert pb.RunRequest.FromString(sent) == onemodel.client.run_request(s.id, ops, False, True)
    product = np.arange(6.0).reshape(3, 2) @ np.arange(6.0).reshape(2, 3)
    assert ys[-1].item() == pytest.approx(60 * product.sum() + big.sum(), rel=1e-6)
    with s.no_grad():
        y = a * 2
    recorder.runs.clear()
    y.flush()
    expected = onemodel.client.run_request(s.id, [dict(op='Mul', inputs=[a.handle, np.float32(2)])],
                                           True, False)
    assert pb.RunRequest.FromString(recorder.runs[0]) == expected


def test_outputs_past_127_and_long_operations(recorded):
    # Output indices of two varint bytes; an operation (the Sum of 200 inputs) longer than 127
    s, recorder = recorded
    a = s.tensor(np.ones(2, np.float32))
    chain = [a]
    for _ in range(200):
        chain.append(chain[-1] + a)
    total = onemodel.apply('Concat', *chain[1:], axis=0).sum()
    recorder.runs.clear()
    assert total.item() == sum(2 * (i + 2) for i in range(200))
    run = pb.RunRequest.FromString(recorder.runs[0])
    assert len(run.operations) == 202
    assert [i.output for i in run.operations[200].inputs] == list(range(200))
