"""Session.operations(): ListOperations replies as readable records; first from an in-process
stub serving fixed replies (every field and kind), then from onemodeld itself (its operations
are exactly those onemodel.Tensor wraps)."""

from concurrent import futures

import grpc
import pytest

import onemodel
from onemodel import pb
from onemodel.client import pb_grpc

K = pb.AttributeKind


def softmax_spec():
    return pb.OperationSpec(
        name='Softmax', differentiable=True, doc='softmax(scale * x) along axis',
        inputs=[pb.OperationInput(name='x')],
        attributes=[
            pb.AttributeSpec(name='axis', kind=K.ATTRIBUTE_KIND_INT, default_value=pb.Attribute(i=-1),
                             doc='the axis'),
            pb.AttributeSpec(name='scale', kind=K.ATTRIBUTE_KIND_FLOAT,
                             default_value=pb.Attribute(f=1.0))])


def pool_spec():
    return pb.OperationSpec(
        name='MaxPool2d', differentiable=True, doc='2-D max pooling',
        inputs=[pb.OperationInput(name='x')],
        attributes=[
            pb.AttributeSpec(name='kernel_shape', kind=K.ATTRIBUTE_KIND_INTS, required=True),
            pb.AttributeSpec(name='strides', kind=K.ATTRIBUTE_KIND_INTS,
                             default_value=pb.Attribute(ints=pb.Ints(values=[1, 1])))])


def odd_spec():
    return pb.OperationSpec(
        name='Concat', doc='joins tensors',
        inputs=[pb.OperationInput(name='a'), pb.OperationInput(name='rest', variadic=True)],
        attributes=[pb.AttributeSpec(name='mode', kind=K.ATTRIBUTE_KIND_STRING,
                                     default_value=pb.Attribute(s='x')),
                    pb.AttributeSpec(name='w', kind=K.ATTRIBUTE_KIND_FLOATS,
                                     default_value=pb.Attribute(floats=pb.Floats(values=[0.5])))])


class Stub(pb_grpc.OneModelServicer):
    def __init__(self):
        self.requests = []

    def ListOperations(self, request, context):
        self.requests.append((request.name, dict(context.invocation_metadata())))
        specs = [softmax_spec(), pool_spec(), odd_spec()]
        if request.name:
            specs = [s for s in specs if s.name == request.name]
            if not specs:
                context.abort(grpc.StatusCode.NOT_FOUND,
                              "unknown operation '%s'; did you mean Softmax?" % request.name)
        return pb.ListOperationsReply(operations=specs)


@pytest.fixture
def stub_session():
    stub = Stub()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_OneModelServicer_to_server(stub, server)
    port = server.add_insecure_port('127.0.0.1:0')
    server.start()
    client = onemodel.Client('127.0.0.1:%d' % port)
    yield onemodel.Session(client, pb.CreateSessionReply(session_id='s1')), stub
    client.close()
    server.stop(None)


def test_operations_are_readable_records(stub_session):
    s, stub = stub_session
    ops = s.operations()
    assert [o.name for o in ops] == ['Softmax', 'MaxPool2d', 'Concat']
    soft, pool, odd = ops
    assert soft.inputs == ['x'] and soft.differentiable and soft.doc.startswith('softmax')
    assert [(a.name, a.kind, a.required, a.default) for a in soft.attributes] == [
        ('axis', 'int', False, -1), ('scale', 'float', False, 1.0)]
    assert soft.attributes[0].doc == 'the axis'
    assert str(soft) == ('Softmax(x, *, axis: int = -1, scale: float = 1.0)  [differentiable]  '
                         'softmax(scale * x) along axis')
    assert repr(soft) == 'OperationInfo(Softmax(x, *, axis: int = -1, scale: float = 1.0))'
    assert pool.signature == 'MaxPool2d(x, *, kernel_shape: ints, strides: ints = [1, 1])'
    assert pool.attributes[0].default is None
    assert odd.signature == "Concat(a, rest..., *, mode: str = 'x', w: floats = [0.5])"
    assert not odd.differentiable and '[differentiable]' not in str(odd)
    assert stub.requests[0] == ('', stub.requests[0][1])
    assert stub.requests[0][1][onemodel.SESSION_HEADER] == 's1'


def test_operations_by_name_and_unknown_name(stub_session):
    s, stub = stub_session
    (soft,) = s.operations('Softmax')
    assert soft.name == 'Softmax'
    with pytest.raises(onemodel.NotFound, match='did you mean Softmax'):
        s.operations('Softmx')


# how onemodel.Tensor exposes each operation of the server
TENSOR_METHOD = {
    'Add': 'add', 'Sub': 'sub', 'Mul': 'mul', 'Div': 'div', 'Max': 'maximum', 'Min': 'minimum',
    'Pow': 'pow', 'Neg': 'neg', 'Abs': 'abs', 'Exp': 'exp', 'Log': 'log', 'Sqrt': 'sqrt',
    'Relu': 'relu', 'Sigmoid': 'sigmoid', 'Tanh': 'tanh', 'Gelu': 'gelu', 'MatMul': 'matmul',
    'MaxPool2d': 'max_pool2d', 'Sum': 'sum', 'Mean': 'mean', 'Softmax': 'softmax',
    'LogSoftmax': 'log_softmax', 'Cast': 'cast', 'Contiguous': 'contiguous', 'Copy': 'copy',
    'Detach': 'detach', 'ToLayout': 'to_layout', 'Reshape': 'reshape', 'Permute': 'permute',
    'Transpose': 'transpose', 'Slice': 'slice', 'Expand': 'expand', 'Squeeze': 'squeeze',
    'Unsqueeze': 'unsqueeze', 'Conv2d': 'conv2d', 'Erf': 'erf', 'Equal': 'eq', 'Less': 'lt',
    'LessEqual': 'le', 'Greater': 'gt', 'GreaterEqual': 'ge', 'Where': 'where', 'Clip': 'clip',
    'LeakyRelu': 'leaky_relu', 'ReluMaxPool2d': 'relu_max_pool2d', 'AvgPool2d': 'avg_pool2d',
    'GlobalAvgPool2d': 'global_avg_pool2d', 'Embedding': 'embedding', 'Gather': 'index_select',
    'Concat': 'concat', 'Split': 'split', 'ReduceMax': 'reduce_max', 'ReduceMin': 'reduce_min',
    'ArgMax': 'argmax', 'ArgMin': 'argmin', 'Pad': 'pad', 'Tile': 'tile', 'CumSum': 'cumsum',
    'LayerNorm': 'layer_norm', 'RMSNorm': 'rms_norm', 'BatchNorm2d': 'batch_norm2d',
    'CrossEntropy': 'cross_entropy', 'NLLLoss': 'nll_loss', 'MSELoss': 'mse_loss',
    'Dropout': 'dropout',
    'ConvTranspose2d': 'conv_transpose2d', 'Grad': 'backward',
    'GlobalAvgPool2d': 'global_avg_pool2d', 'ConvTranspose2d': 'conv_transpose2d',
}
# operations over lists of tensors, wrapped by onemodel.optim instead
OPTIM_FUNCTION = {'SGD': 'SGD', 'AdamW': 'AdamW', 'ClipGradNorm': 'clip_grad_norm_'}


def test_every_server_operation_has_a_tensor_method_and_shape_rule(sess):
    ops = sess.operations()
    names = [o.name for o in ops]
    assert set(names) == set(TENSOR_METHOD) | set(OPTIM_FUNCTION), \
        'wrap the new operations in onemodel.Tensor'
    assert set(names) == set(onemodel.shape_infer.KNOWN)
    for name in names:
        if name in OPTIM_FUNCTION:
            assert callable(getattr(onemodel.optim, OPTIM_FUNCTION[name])), name
        else:
            assert callable(getattr(onemodel.Tensor, TENSOR_METHOD[name])), name
    differentiable = {o.name for o in ops if o.differentiable}
    assert set(names) - differentiable == set(onemodel.shape_infer.NOT_DIFFERENTIABLE)


def test_operations_from_onemodeld(sess):
    (soft,) = sess.operations('Softmax')
    assert soft.signature == 'Softmax(X, *, axis: int = -1, scale: float = 1.0)'
    assert soft.differentiable and soft.doc
    (sl,) = sess.operations('Slice')
    assert [(a.name, a.required) for a in sl.attributes] == [
        ('dim', False), ('start', True), ('stop', True), ('step', False)]
    with pytest.raises(onemodel.NotFound, match="did you mean 'Softmax'"):
        sess.operations('Softmx')


def test_switch_attributes_are_the_servers_0_1_switches(sess):
    """The attributes the client takes True/False for are the int attributes the server
    documents as a 0/1 switch (doc "1 ..." or "0 ..."), and only those."""
    switches, numbers = set(), set()
    for op in sess.operations():
        for a in op.attributes:
            is_switch = a.kind == 'int' and a.default in (0, 1) and a.doc[:2] in ('0 ', '1 ')
            (switches if is_switch else numbers).add(a.name)
    assert switches == onemodel.client.SWITCH_ATTRIBUTES
    assert not switches & numbers, 'a name that is a switch in one operation and not in another'
