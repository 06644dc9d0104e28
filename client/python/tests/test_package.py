"""The package itself: generated stubs, no top-level `onnx`, coexistence with the real onnx
package's descriptors (no server)."""

import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)


def run_python(code):
    r = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True,
                       env=dict(os.environ), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_import_creates_no_top_level_onnx_or_grpc_health():
    out = run_python('''
        import sys, onemodel
        bad = [m for m in sys.modules if m == 'onnx' or m.startswith('onnx.') or m.startswith('grpc.health')]
        print('BAD', bad)
        from google.protobuf import descriptor_pool
        try:
            descriptor_pool.Default().FindMessageTypeByName('onnx.TensorProto')
            print('DEFAULT_POOL_HAS_IT')
        except KeyError:
            print('DEFAULT_POOL_CLEAN')
    ''')
    assert 'BAD []' in out
    assert 'DEFAULT_POOL_CLEAN' in out


# What the real onnx package's onnx_ml_pb2 does on import: it adds a file of package `onnx`
# (onnx/onnx-ml.proto, defining onnx.TensorProto again) to protobuf's default pool.
SIMULATE_ONNX = '''
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
def import_real_onnx(serialized):
    fdp = descriptor_pb2.FileDescriptorProto.FromString(serialized)
    fdp.name = 'onnx/onnx-ml.proto'
    pool = descriptor_pool.Default()
    pool.AddSerializedFile(fdp.SerializeToString())
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName('onnx.TensorProto'))
'''


@pytest.mark.parametrize('order', ['onnx-first', 'onemodel-first'])
def test_coexists_with_real_onnx_package_registration(order):
    # onnx.proto's serialized descriptor, read from the generated module without importing it
    code = SIMULATE_ONNX + '''
import ast, sys
import numpy as np
import importlib.util
spec = importlib.util.find_spec('onemodel._proto.onnx.onnx_pb2')
src = open(spec.origin).read()
call = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call) and getattr(n.func, 'attr', '') == 'add_file'][0]
serialized = ast.literal_eval(call.args[0])
order = %r
if order == 'onnx-first':
    RealTensorProto = import_real_onnx(serialized)
import onemodel
if order == 'onemodel-first':
    RealTensorProto = import_real_onnx(serialized)
real = RealTensorProto(data_type=1, dims=[3], float_data=[1, 2, 3])
ours = onemodel.to_tensor_proto(real)
assert type(ours) is onemodel.TensorProto and type(ours) is not RealTensorProto
assert onemodel.from_tensor_proto(real).tolist() == [1.0, 2.0, 3.0]
assert onemodel.from_tensor_proto(ours).tolist() == [1.0, 2.0, 3.0]
print('OK')
''' % order
    assert 'OK' in run_python(code)


def test_generator_writes_private_package(tmp_path):
    out = subprocess.run([sys.executable, os.path.join(PKG_ROOT, 'generate_stubs.py'), '--out', str(tmp_path),
                          '--stamp', str(tmp_path / 'stamp')], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    root = tmp_path / 'onemodel' / '_proto'
    expected = ['onnx/onnx_pb2.py', 'onemodel/v1/onemodel_pb2.py', 'onemodel/v1/onemodel_pb2_grpc.py',
                'grpc/health/v1/health_pb2.py', 'grpc/health/v1/health_pb2_grpc.py']
    for rel in expected:
        assert (root / rel).is_file(), rel
    assert not (tmp_path / 'onnx').exists() and not (tmp_path / 'onemodel' / '__init__.py').exists()
    for path in root.rglob('*.py'):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            assert not stripped.startswith(('from onnx', 'import onnx', 'from grpc.health', 'from onemodel.v1')), \
                '%s: %s' % (path, line)
    assert (tmp_path / 'stamp').is_file()


def test_stubs_cover_every_rpc():
    import onemodel
    from onemodel._proto.onemodel.v1 import onemodel_pb2_grpc
    stub = onemodel_pb2_grpc.OneModelStub(__import__('grpc').insecure_channel('127.0.0.1:1'))
    service = onemodel.pb.DESCRIPTOR.services_by_name['OneModel']
    names = [m.name for m in service.methods]
    assert len(names) == 16  # ListOperations included
    for name in names:
        assert hasattr(stub, name), name
