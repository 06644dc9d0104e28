"""numpy arrays <-> ONNX TensorProto, as onemodeld sends and accepts them.

    tp = to_tensor_proto(np.arange(6, dtype=np.float32).reshape(2, 3))   # raw_data, dims, data_type
    a = from_tensor_proto(tp)                                              # a writable copy

Supported element types (ONNX code, numpy dtype):
    FLOAT 1 float32, UINT8 2 uint8, INT8 3 int8, UINT16 4 uint16, INT16 5 int16, INT32 6 int32,
    INT64 7 int64, BOOL 9 bool, FLOAT16 10 float16, DOUBLE 11 float64, UINT32 12 uint32,
    UINT64 13 uint64, BFLOAT16 16 (see below).

bfloat16: numpy has no bfloat16 dtype. Such tensors travel as their 16-bit patterns in a uint16
array: pass `dtype="bfloat16"` with a uint16 array of bit patterns (or a floating array, which is
rounded to nearest-even), and read them back as uint16 bits (default) or, with
`bfloat16="float32"`, widened to float32. `float32_to_bfloat16_bits` / `bfloat16_bits_to_float32`
convert by hand. torch.bfloat16 tensors are accepted directly.

Arrays are sent row-major little-endian (big-endian and non-contiguous inputs are converted).
Replies from the server always use raw_data; typed fields (float_data, int32_data, ...) are
decoded too, and `to_typed_tensor_proto` builds them for peers that want them.
"""

import enum
from typing import Any, Dict, cast

import numpy as np

try:
    from ._proto.onnx import onnx_pb2
except ImportError as e:  # pragma: no cover - a setup problem, explained
    raise ImportError(
        "onemodel's generated protobuf modules (onemodel._proto) are missing: install the "
        "package with scripts/install-python-client (a .venv; then `. .venv/bin/activate`), "
        "or build the CMake target onemodel_python_stubs and put <build>/client/python/gen on "
        "PYTHONPATH (client/python/README.md)") from e

TensorProto = onnx_pb2.TensorProto


class DataType(enum.IntEnum):
    """ONNX TensorProto.DataType codes."""
    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16

    def __str__(self) -> str:
        """The name ('FLOAT'): print(t.dtype) reads as the type, on every Python (3.11's
        IntEnum prints the number). The value is still the int: int(t.dtype), ==, arithmetic."""
        return self.name


# code -> numpy dtype of the values as they travel (bfloat16: its uint16 bit patterns)
NUMPY_DTYPES: Dict[DataType, np.dtype] = {
    DataType.FLOAT: np.dtype('<f4'),
    DataType.UINT8: np.dtype('u1'),
    DataType.INT8: np.dtype('i1'),
    DataType.UINT16: np.dtype('<u2'),
    DataType.INT16: np.dtype('<i2'),
    DataType.INT32: np.dtype('<i4'),
    DataType.INT64: np.dtype('<i8'),
    DataType.BOOL: np.dtype('?'),
    DataType.FLOAT16: np.dtype('<f2'),
    DataType.DOUBLE: np.dtype('<f8'),
    DataType.UINT32: np.dtype('<u4'),
    DataType.UINT64: np.dtype('<u8'),
    DataType.BFLOAT16: np.dtype('<u2'),
}
SUPPORTED = frozenset(NUMPY_DTYPES)
FLOATING = frozenset({DataType.FLOAT, DataType.FLOAT16, DataType.DOUBLE, DataType.BFLOAT16})

_FROM_NUMPY: Dict[np.dtype, DataType] = {
    np.dtype(np.float32): DataType.FLOAT,
    np.dtype(np.uint8): DataType.UINT8,
    np.dtype(np.int8): DataType.INT8,
    np.dtype(np.uint16): DataType.UINT16,
    np.dtype(np.int16): DataType.INT16,
    np.dtype(np.int32): DataType.INT32,
    np.dtype(np.int64): DataType.INT64,
    np.dtype(np.bool_): DataType.BOOL,
    np.dtype(np.float16): DataType.FLOAT16,
    np.dtype(np.float64): DataType.DOUBLE,
    np.dtype(np.uint32): DataType.UINT32,
    np.dtype(np.uint64): DataType.UINT64,
}


def data_type(dtype):
    """The DataType of a numpy dtype, an ONNX code, a name ("float16", "BFLOAT16") or a
    torch dtype. Raises ValueError for anything onemodeld does not support."""
    if isinstance(dtype, DataType):
        code = dtype
    elif isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        code = DataType(int(dtype))
    elif isinstance(dtype, str) and dtype.upper() in DataType.__members__:
        code = DataType[dtype.upper()]
    elif isinstance(dtype, str) and dtype.lower() == 'bfloat16':
        code = DataType.BFLOAT16
    elif type(dtype).__module__ == 'torch':
        name = str(dtype).split('.')[-1]
        torch_names = {'float32': 'FLOAT', 'float': 'FLOAT', 'float64': 'DOUBLE', 'double': 'DOUBLE',
                       'float16': 'FLOAT16', 'half': 'FLOAT16', 'bfloat16': 'BFLOAT16', 'bool': 'BOOL',
                       'uint8': 'UINT8', 'int8': 'INT8', 'int16': 'INT16', 'int32': 'INT32',
                       'int64': 'INT64', 'long': 'INT64', 'int': 'INT32', 'short': 'INT16'}
        if name not in torch_names:
            raise ValueError('torch dtype %s has no onemodel equivalent' % dtype)
        code = DataType[torch_names[name]]
    else:
        try:
            npd = np.dtype(cast(Any, dtype))  # narrowed by the checks above
        except TypeError:
            raise ValueError('not a data type: %r' % (dtype,)) from None
        found = _FROM_NUMPY.get(npd.newbyteorder('=')) if npd.byteorder in '<>=|' else None
        if found is None:
            raise ValueError('numpy dtype %s is not supported by onemodeld (supported: %s)'
                             % (npd, ', '.join(sorted(str(d) for d in _FROM_NUMPY))))
        code = found
    if code not in SUPPORTED:
        raise ValueError('data type %s (%d) is not supported by onemodeld' % (code.name, code))
    return code


def numpy_dtype(code):
    """The (little-endian) numpy dtype tensors of `code` travel as."""
    return NUMPY_DTYPES[data_type(code)]


def float32_to_bfloat16_bits(a):
    """Rounds float values to bfloat16 (nearest-even, NaN stays NaN); returns uint16 bits."""
    a = np.asarray(a, dtype=np.float32)
    shape = a.shape
    a = a.reshape(-1)
    u = a.view(np.uint32)
    one, sixteen = np.uint32(1), np.uint32(16)
    # no overflow below NaN's bit patterns, which are fixed afterwards
    rounded = ((u + np.uint32(0x7FFF) + ((u >> sixteen) & one)) >> sixteen).astype(np.uint16)
    nan = np.isnan(a)
    if nan.any():
        rounded[nan] = ((u[nan] >> sixteen) | np.uint32(0x40)).astype(np.uint16)
    return rounded.reshape(shape)


def bfloat16_bits_to_float32(bits):
    """Widens bfloat16 bit patterns (uint16) to float32 exactly."""
    bits = np.asarray(bits, dtype=np.uint16)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def _foreign_proto(obj):
    """An onnx.TensorProto from another descriptor pool (e.g. the `onnx` package)?"""
    desc = getattr(obj, 'DESCRIPTOR', None)
    return (not isinstance(obj, TensorProto) and desc is not None
            and getattr(desc, 'full_name', None) == 'onnx.TensorProto'
            and hasattr(obj, 'SerializeToString'))


def from_onnx(obj):
    """onemodel's TensorProto from any onnx.TensorProto object (e.g. the `onnx` package's)."""
    if isinstance(obj, TensorProto):
        return obj
    return TensorProto.FromString(obj.SerializeToString())


def _torch_to_numpy(t):
    """(array, code) for a torch tensor; bfloat16 as bits."""
    import torch  # only when given a torch tensor
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16), DataType.BFLOAT16
    return t.numpy(), data_type(t.dtype)


def as_array(value, dtype=None):
    """(little-endian C-contiguous numpy array, DataType) ready to send.

    `value`: numpy array, anything np.asarray takes, or a torch tensor. `dtype` converts; with
    dtype BFLOAT16 a uint16 array is taken as bit patterns and a floating one is rounded."""
    if _from_torch(value):
        arr, code = _torch_to_numpy(value)
    else:
        arr = np.asarray(value)
        code = None
    if dtype is not None:
        want = data_type(dtype)
        if want == DataType.BFLOAT16:
            if code != DataType.BFLOAT16:
                if arr.dtype == np.uint16:
                    pass  # already bit patterns
                elif arr.dtype.kind == 'f':
                    arr = float32_to_bfloat16_bits(arr)
                else:
                    raise ValueError('bfloat16 needs a uint16 array of bit patterns or a floating array, got %s'
                                     % arr.dtype)
        elif code == DataType.BFLOAT16:
            arr = bfloat16_bits_to_float32(arr).astype(NUMPY_DTYPES[want])
        else:
            arr = arr.astype(NUMPY_DTYPES[want], copy=False)
        code = want
    elif code is None:
        code = data_type(arr.dtype)
    target = NUMPY_DTYPES[code]
    if arr.dtype != target:
        arr = arr.astype(target)  # byte order (or bfloat16's uint16 view)
    if not arr.flags.c_contiguous:
        arr = arr.copy(order='C')  # (np.ascontiguousarray would turn 0-d into 1-d)
    return arr, code


def _from_torch(value):
    return type(value).__module__.startswith('torch') and hasattr(value, 'detach')


def as_input_array(value, dtype=None):
    """as_array under the dtype policy of a Session's put() and inline operation inputs:
    without `dtype`, float64 values that do not come from torch (numpy float64 arrays, Python
    floats, lists of them) travel as FLOAT, the type operations run on; every other type
    (integers, bool, float16, torch tensors of any type) keeps its own. An explicit `dtype`
    (e.g. "double") is always kept."""
    if dtype is None and not _from_torch(value) and not isinstance(value, np.ndarray):
        value = np.asarray(value)
    if dtype is None and isinstance(value, np.ndarray) and value.dtype.kind == 'f' \
            and value.dtype.itemsize == 8:
        dtype = DataType.FLOAT
    return as_array(value, dtype)


def to_tensor_proto(value, dtype=None, name=''):
    """A TensorProto (raw_data) for a numpy array, torch tensor, nested list or scalar.
    TensorProtos are returned as they are (another pool's onnx.TensorProto is converted)."""
    if isinstance(value, TensorProto):
        return value
    if _foreign_proto(value):
        return from_onnx(value)
    arr, code = as_array(value, dtype)
    tp = TensorProto(data_type=int(code), dims=list(arr.shape), raw_data=arr.tobytes())
    if name:
        tp.name = name
    return tp


def to_typed_tensor_proto(value, dtype=None, name=''):
    """A TensorProto using the typed fields ONNX defines instead of raw_data: float_data
    (FLOAT), double_data (DOUBLE), int64_data (INT64), uint64_data (UINT32, UINT64) and
    int32_data for the rest (FLOAT16/BFLOAT16 as their bit patterns, BOOL as 0/1)."""
    arr, code = as_array(value, dtype)
    tp = TensorProto(data_type=int(code), dims=list(arr.shape))
    flat = arr.reshape(-1)
    if code == DataType.FLOAT:
        tp.float_data.extend(flat.tolist())
    elif code == DataType.DOUBLE:
        tp.double_data.extend(flat.tolist())
    elif code == DataType.INT64:
        tp.int64_data.extend(flat.tolist())
    elif code in (DataType.UINT32, DataType.UINT64):
        tp.uint64_data.extend(flat.tolist())
    elif code in (DataType.FLOAT16, DataType.BFLOAT16):
        tp.int32_data.extend(flat.view(np.uint16).astype(np.int32).tolist())
    else:
        tp.int32_data.extend(flat.astype(np.int32).tolist())
    if name:
        tp.name = name
    return tp


def element_count(dims):
    n = 1
    for d in dims:
        n *= int(d)
    return n


def from_tensor_proto(tp, bfloat16='bits'):
    """A writable numpy array holding a TensorProto's values (raw_data or typed fields).

    bfloat16: 'bits' returns BFLOAT16 tensors as uint16 bit patterns, 'float32' widens them."""
    if _foreign_proto(tp):
        tp = from_onnx(tp)
    code = data_type(tp.data_type)
    dims = [int(d) for d in tp.dims]
    if any(d < 0 for d in dims):
        raise ValueError('negative dimension in %s' % dims)
    n = element_count(dims)
    npd = NUMPY_DTYPES[code]
    if tp.HasField('raw_data'):
        if len(tp.raw_data) != n * npd.itemsize:
            raise ValueError('raw_data holds %d bytes; dims %s of %s need %d'
                             % (len(tp.raw_data), dims, code.name, n * npd.itemsize))
        arr = np.frombuffer(tp.raw_data, dtype=npd).copy()
    else:
        src: Any
        if code == DataType.FLOAT:
            values, src = tp.float_data, np.float32
        elif code == DataType.DOUBLE:
            values, src = tp.double_data, np.float64
        elif code == DataType.INT64:
            values, src = tp.int64_data, np.int64
        elif code in (DataType.UINT32, DataType.UINT64):
            values, src = tp.uint64_data, np.uint64
        else:
            values, src = tp.int32_data, np.int32
        if len(values) != n:
            raise ValueError('%d values for dims %s (%d elements)' % (len(values), dims, n))
        arr = np.array(values, dtype=src)
        if code in (DataType.FLOAT16, DataType.BFLOAT16):
            arr = arr.astype(np.uint16).view(npd)
        else:
            arr = arr.astype(npd)
    arr = arr.reshape(dims)
    if code == DataType.BFLOAT16 and bfloat16 == 'float32':
        arr = bfloat16_bits_to_float32(arr)
    elif code == DataType.BFLOAT16 and bfloat16 != 'bits':
        raise ValueError("bfloat16 must be 'bits' or 'float32', got %r" % (bfloat16,))
    return arr
