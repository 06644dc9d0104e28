"""mapping's operations run on a real onemodeld: used by test_onnx_node.py and ../ort_ops."""

import importlib.util
import os

import numpy as np

import onemodel

import mapping

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..'))


def server_fixtures():
    """The Python client suite's onemodeld process fixture module (start_server,
    stop_and_check), loaded from client/python/tests/conftest.py."""
    spec = importlib.util.spec_from_file_location(
        'onemodel_server_fixtures', os.path.join(REPO, 'client', 'python', 'tests', 'conftest.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(session, ops, protos, which=(-1,)):
    """The TensorProtos of the outputs `which` (default: the last) of `ops` (mapping's list,
    whose TensorInputs index `protos`, sent inline) after one Run; onemodel.OneModelError when
    the server refuses."""
    outputs = session.run([_operation(o, protos) for o in ops], no_grad=True, reset_arena=True)
    return [session.get_proto(outputs[i]) for i in which]


def _operation(o, protos):
    """mapping's operation as the client's dict: TensorInput inline, int = earlier output."""
    def source(v):
        if isinstance(v, mapping.TensorInput):
            return {'tensor': protos[v.index]}
        if isinstance(v, int):
            return onemodel.Output(v)
        return np.float32(v)
    return {'op': o['op'], 'inputs': [source(v) for v in o['inputs']], 'attrs': o['attrs']}
