"""onemodel's private protobuf descriptor pool.

The generated modules in onemodel._proto add their files here instead of to protobuf's default
pool, so that `onnx.TensorProto` (and the rest of onnx/onnx.proto) can be registered a second
time by the real `onnx` package in the same process without a "duplicate symbol" error. The
price: onemodel's TensorProto class is not the `onnx` package's class; pass such objects to
onemodel as they are (they are converted through their serialized bytes) or via
`onemodel.tensors.from_onnx()`.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.internal import enum_type_wrapper

POOL = descriptor_pool.DescriptorPool()
_FACTORY = None


def message_class(descriptor):
    """The message class of `descriptor` (a descriptor of POOL)."""
    global _FACTORY
    get = getattr(message_factory, 'GetMessageClass', None)  # protobuf >= 4.22
    if get is not None:
        return get(descriptor)
    if _FACTORY is None:
        _FACTORY = message_factory.MessageFactory(POOL)
    return _FACTORY.GetPrototype(descriptor)


def _message_class_with_nested(descriptor):
    """The class of `descriptor`, with its nested message classes as attributes (as protoc's
    generated code has them: TensorProto.Segment)."""
    cls = message_class(descriptor)
    for nested in descriptor.nested_types:
        if not getattr(nested.GetOptions(), 'map_entry', False) and not hasattr(cls, nested.name):
            setattr(cls, nested.name, _message_class_with_nested(nested))
    return cls


def add_file(serialized, namespace):
    """Adds one serialized FileDescriptorProto to POOL and fills `namespace` the way a protoc
    generated *_pb2 module would: message classes, enum wrappers and top-level enum values.
    Returns the FileDescriptor."""
    name = descriptor_pb2.FileDescriptorProto.FromString(serialized).name
    try:
        fd = POOL.FindFileByName(name)
    except KeyError:
        POOL.AddSerializedFile(serialized)
        fd = POOL.FindFileByName(name)
    for msg_name, desc in fd.message_types_by_name.items():
        namespace[msg_name] = _message_class_with_nested(desc)
    for enum_name, desc in fd.enum_types_by_name.items():
        namespace[enum_name] = enum_type_wrapper.EnumTypeWrapper(desc)
        for value in desc.values:
            namespace[value.name] = value.number
    return fd
