"""Python client of onemodeld, the OneModel tensor service (see README.md).

    import numpy as np, onemodel
    with onemodel.Client("127.0.0.1:50051") as client, client.session() as s:
        x = s.put(np.ones((2, 3), np.float32))
        print(s.op("Sum", x, axes=[1]).numpy())
"""

# The generated modules (onemodel._proto) may live in another folder on sys.path than these
# sources (the CMake build puts them in <build>/client/python/gen/onemodel/_proto).
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from .errors import (OneModelError, InvalidArgument, NotFound, FailedPrecondition,  # noqa: E402
                     ResourceExhausted, DeadlineExceeded, Unauthenticated, Unavailable,
                     ProtocolError)
from .tensors import (DataType, TensorProto, to_tensor_proto, to_typed_tensor_proto,  # noqa: E402
                      from_tensor_proto, from_onnx, float32_to_bfloat16_bits,
                      bfloat16_bits_to_float32)
from .client import (Client, Session, Batch, RemoteTensor, Output, StatsWatch,  # noqa: E402
                     read_ready_file, make_attribute, make_input, make_operation,
                     SESSION_HEADER, INSTANCE_HEADER)
from .client import pb, health_pb2  # noqa: E402  (the generated message modules, for raw use)
from .lazy_tensor import Tensor, ComparisonNotSupported, apply, grad  # noqa: E402
from . import nn, optim  # noqa: E402,F401  (onemodel.nn.Linear, onemodel.optim.SGD)
from ._proto.onnx import onnx_pb2  # noqa: E402

__version__ = '0.1.0'

__all__ = [
    'Client', 'Session', 'Batch', 'RemoteTensor', 'Output', 'StatsWatch', 'read_ready_file',
    'make_attribute', 'make_input', 'make_operation', 'SESSION_HEADER', 'INSTANCE_HEADER',
    'OneModelError', 'InvalidArgument', 'NotFound', 'FailedPrecondition', 'ResourceExhausted',
    'DeadlineExceeded', 'Unauthenticated', 'Unavailable', 'ProtocolError',
    'DataType', 'TensorProto', 'to_tensor_proto', 'to_typed_tensor_proto', 'from_tensor_proto',
    'from_onnx', 'float32_to_bfloat16_bits', 'bfloat16_bits_to_float32', 'pb', 'health_pb2',
    'onnx_pb2', 'Tensor', 'ComparisonNotSupported', 'apply', 'grad', 'nn', 'optim',
]
