"""numpy <-> TensorProto conversion and request building (no server)."""

import numpy as np
import pytest
import torch

import onemodel
from onemodel import DataType, pb
from onemodel import tensors as T

ALL_DTYPES = [
    (np.float32, DataType.FLOAT), (np.uint8, DataType.UINT8), (np.int8, DataType.INT8),
    (np.uint16, DataType.UINT16), (np.int16, DataType.INT16), (np.int32, DataType.INT32),
    (np.int64, DataType.INT64), (np.bool_, DataType.BOOL), (np.float16, DataType.FLOAT16),
    (np.float64, DataType.DOUBLE), (np.uint32, DataType.UINT32), (np.uint64, DataType.UINT64),
]


def sample(dtype, shape=(2, 3, 4), seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == 'f':
        return (rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def test_data_type_prints_its_name_and_stays_an_int(sess):
    t = sess.put(np.ones(2, np.float32))
    assert (str(t.dtype), '%s' % t.dtype, f'{t.dtype}') == ('FLOAT', 'FLOAT', 'FLOAT')
    assert str(sess.tensor(np.ones(2, np.int8)).dtype) == 'INT8'
    assert t.dtype == 1 and int(t.dtype) == 1 and '%d' % t.dtype == '1' and t.dtype + 0 == 1
    assert repr(t.dtype) == '<DataType.FLOAT: 1>' and DataType(1) is t.dtype
    assert {1: 'float'}[t.dtype] == 'float' and pb.Attribute(i=t.dtype).i == 1


@pytest.mark.parametrize('npd,code', ALL_DTYPES, ids=[c.name for _, c in ALL_DTYPES])
def test_raw_round_trip_every_dtype(npd, code):
    a = sample(npd)
    tp = onemodel.to_tensor_proto(a, name='x')
    assert tp.data_type == code
    assert list(tp.dims) == [2, 3, 4]
    assert tp.name == 'x'
    assert tp.raw_data == a.astype(a.dtype.newbyteorder('<')).tobytes()
    b = onemodel.from_tensor_proto(tp)
    assert b.dtype == a.dtype and b.shape == a.shape
    assert b.tobytes() == a.tobytes()
    assert b.flags.writeable


@pytest.mark.parametrize('npd,code', ALL_DTYPES, ids=[c.name for _, c in ALL_DTYPES])
def test_typed_fields_round_trip_every_dtype(npd, code):
    a = sample(npd)
    tp = onemodel.to_typed_tensor_proto(a)
    assert not tp.HasField('raw_data')
    field = {DataType.FLOAT: 'float_data', DataType.DOUBLE: 'double_data', DataType.INT64: 'int64_data',
             DataType.UINT32: 'uint64_data', DataType.UINT64: 'uint64_data'}.get(code, 'int32_data')
    assert len(getattr(tp, field)) == a.size
    assert onemodel.from_tensor_proto(tp).tobytes() == a.tobytes()


def test_float16_typed_field_holds_bit_patterns():
    a = np.array([1.0, -2.0, 65504.0, np.inf], dtype=np.float16)
    tp = onemodel.to_typed_tensor_proto(a)
    assert list(tp.int32_data) == [0x3C00, 0xC000, 0x7BFF, 0x7C00]


def test_bfloat16_bits_float32_and_torch():
    x = np.array([1.0, 3.14159265, -0.0, 1e38, 1.00390625, 1.01171875, np.inf], dtype=np.float32)
    bits = onemodel.float32_to_bfloat16_bits(x)
    ref = torch.from_numpy(x).bfloat16().view(torch.int16).numpy().view(np.uint16)
    assert bits.tolist() == ref.tolist()  # round to nearest even, as torch does
    assert np.isnan(onemodel.bfloat16_bits_to_float32(onemodel.float32_to_bfloat16_bits(np.float32('nan'))))
    tp = onemodel.to_tensor_proto(x, dtype='bfloat16')
    assert tp.data_type == DataType.BFLOAT16 and len(tp.raw_data) == 2 * x.size
    assert onemodel.from_tensor_proto(tp).dtype == np.uint16
    back = onemodel.from_tensor_proto(tp, bfloat16='float32')
    assert back.tolist() == torch.from_numpy(x).bfloat16().float().numpy().tolist()
    # uint16 given with dtype bfloat16: taken as bits; a torch bfloat16 tensor: converted
    assert onemodel.to_tensor_proto(bits, dtype=DataType.BFLOAT16).raw_data == tp.raw_data
    assert onemodel.to_tensor_proto(torch.from_numpy(x).bfloat16()).raw_data == tp.raw_data
    typed = onemodel.to_typed_tensor_proto(bits, dtype='BFLOAT16')
    assert list(typed.int32_data) == bits.astype(np.int32).tolist()


def test_scalars_empty_noncontiguous_bigendian_torch():
    s = onemodel.to_tensor_proto(np.float32(2.5))
    assert list(s.dims) == [] and onemodel.from_tensor_proto(s).shape == ()
    e = onemodel.to_tensor_proto(np.zeros((0, 3), np.int64))
    assert list(e.dims) == [0, 3] and e.raw_data == b''
    assert onemodel.from_tensor_proto(e).shape == (0, 3)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = onemodel.to_tensor_proto(a.T)
    assert list(t.dims) == [4, 3]
    assert np.array_equal(onemodel.from_tensor_proto(t), a.T)
    big = np.arange(5, dtype='>i4')
    assert onemodel.to_tensor_proto(big).raw_data == np.arange(5, dtype='<i4').tobytes()
    tt = onemodel.to_tensor_proto(torch.arange(6, dtype=torch.float32).reshape(2, 3).t())
    assert list(tt.dims) == [3, 2]
    assert np.array_equal(onemodel.from_tensor_proto(tt), np.arange(6, dtype=np.float32).reshape(2, 3).T)
    assert onemodel.to_tensor_proto([[1, 2], [3, 4]], dtype='float32').data_type == DataType.FLOAT


def test_conversion_errors():
    with pytest.raises(ValueError, match='not supported'):
        onemodel.to_tensor_proto(np.zeros(3, np.complex64))
    with pytest.raises(ValueError):
        onemodel.to_tensor_proto(np.array(['a', 'b']))
    bad = onemodel.TensorProto(data_type=1, dims=[4], raw_data=b'\0' * 12)
    with pytest.raises(ValueError, match='12 bytes'):
        onemodel.from_tensor_proto(bad)
    with pytest.raises(ValueError, match='STRING'):
        onemodel.from_tensor_proto(onemodel.TensorProto(data_type=8, dims=[1]))
    with pytest.raises(ValueError, match='values'):
        onemodel.from_tensor_proto(onemodel.TensorProto(data_type=1, dims=[3], float_data=[1, 2]))


def test_make_attribute_kinds():
    assert onemodel.make_attribute(3).WhichOneof('value') == 'i'
    assert onemodel.make_attribute(True, 'keepdims').i == 1  # a 0/1 switch
    with pytest.raises(onemodel.InvalidArgument, match=r"attribute '\?' = True: a bool"):
        onemodel.make_attribute(True)  # no name: not known to be a switch
    assert onemodel.make_attribute(np.int64(2)).i == 2
    assert onemodel.make_attribute(0.5).f == 0.5
    assert onemodel.make_attribute('NHWC').s == 'NHWC'
    assert list(onemodel.make_attribute([2, 2]).ints.values) == [2, 2]
    assert list(onemodel.make_attribute((1.5, 2)).floats.values) == [1.5, 2.0]
    raw = pb.Attribute(f=1.0)
    assert onemodel.make_attribute(raw) is raw
    with pytest.raises(onemodel.InvalidArgument):
        onemodel.make_attribute(object())


def test_make_operation_inputs():
    op = onemodel.make_operation({'op': 'Add', 'inputs': ['p1.ab', onemodel.Output(0), {'output': 1},
                                                         np.ones(2, np.float32), 2.0],
                                  'attrs': {'axis': -1}, 'placement': 'pool'})
    kinds = [i.WhichOneof('source') for i in op.inputs]
    assert kinds == ['handle', 'output', 'output', 'tensor', 'tensor']
    assert op.inputs[4].tensor.data_type == DataType.FLOAT  # Python scalars go as float32
    assert op.placement == pb.PLACEMENT_POOL
    assert op.attributes['axis'].i == -1
    with pytest.raises(ValueError, match='unknown operation keys'):
        onemodel.make_operation({'op': 'Add', 'input': []})
    with pytest.raises(ValueError):
        onemodel.make_operation({'op': 'Add', 'placement': 'gpu'})


def test_data_type_names():
    assert T.data_type('float16') == DataType.FLOAT16
    assert T.data_type('BFLOAT16') == DataType.BFLOAT16
    assert T.data_type(torch.float64) == DataType.DOUBLE
    assert T.data_type(np.dtype('>f4')) == DataType.FLOAT
    assert T.data_type(16) == DataType.BFLOAT16
    with pytest.raises(ValueError):
        T.data_type(DataType.STRING)
