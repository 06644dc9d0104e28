"""docs/protocol.md section 10 "Worked example": its Python block runs as written (against
the test server's address) and the server replies what its comments say."""

import os
import re

import grpc
import numpy as np

from conftest import onemodeld_binary
from onemodel import pb

DOC = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'docs', 'protocol.md')
ADDRESS = '"127.0.0.1:50051"'
MiB = 1 << 20


def worked_example():
    """The one python block of section 10."""
    with open(DOC, encoding='utf-8') as f:
        section = f.read().split('## 10. Worked example', 1)[1].split('\n## ', 1)[0]
    (code,) = re.findall(r'^```python\n(.*?)^```', section, re.S | re.M)
    return code


def checked_build():
    """Whether the onemodeld under test is a CHECKED build (its CMakeCache says so), whose
    64-byte canaries make every allocation, and so the memory figures, larger."""
    cache = os.path.join(os.path.dirname(os.path.dirname(onemodeld_binary())), 'CMakeCache.txt')
    try:
        with open(cache, encoding='utf-8') as f:
            return 'ONEMODEL_CHECKED:BOOL=ON' in f.read()
    except OSError:
        return False


def assert_bytes(got, documented):
    """A memory figure: the documented one, or above it in a CHECKED build."""
    assert got == documented or (checked_build() and got > documented), (got, documented)


def test_worked_example_runs_and_replies_as_documented(server):
    code = worked_example()
    assert code.count(ADDRESS) == 1
    code = code.replace(ADDRESS, repr(server.grpc))
    step9 = code.index('# 9. Close.')
    before_close, close = code[:step9], code[step9:]
    ns = {'__name__': 'docs_protocol_md'}
    exec(compile(before_close, DOC, 'exec'), ns)
    check_session(ns, server.instance)
    check_tensors(ns)
    check_run_and_backward(ns)
    check_reset_and_stale(ns)
    exec(compile(close, DOC, 'exec'), ns)
    assert ns['c'].released_buffers == 2 and ns['c'].leaked_buffers == 0
    assert_bytes(ns['c'].released_bytes, 1048704 + 240 * 2)  # x and w were still held


def check_session(ns, instance):
    """Step 1: the CreateSession reply and the instance header."""
    reply = ns['reply']
    assert re.fullmatch('[0-9a-f]{32}', reply.session_id)
    assert reply.kernel_variant == 'reference' and reply.server_instance_id == instance
    assert (reply.arena_chunk_bytes, reply.memory_limit_bytes) == (MiB, 1 << 30)
    assert (reply.idle_timeout_ms, reply.max_message_bytes) == (300000, 64 * MiB)
    assert ('onemodel-instance', instance) in ns['call'].initial_metadata()


def check_tensors(ns):
    """Step 2: the uploads' TensorInfo."""
    x, w = ns['x'], ns['w']
    assert x.handle.startswith('p1.') and w.handle.startswith('p2.')
    assert (x.data_type, x.data_type_name, list(x.dims), list(x.strides), x.layout) == (
        1, 'FLOAT', [2, 2], [2, 1], 'Strided')
    assert (x.version, x.placement, x.buffer_bytes) == (1, pb.PLACEMENT_POOL, 16)
    assert (list(w.dims), w.requires_grad, w.grad_fn, w.placement, w.version) == (
        [2, 2], True, 'leaf', pb.PLACEMENT_POOL, 1)


def check_run_and_backward(ns):
    """Steps 3 to 6: the Run's outputs, the loss, the gradient."""
    outs = ns['run'].outputs
    assert [o.handle[:3] for o in outs] == ['a3.', 'a4.', 'a5.', 'a6.']
    assert [o.grad_fn for o in outs] == ['MatMul', 'Add', 'Relu', 'Mean']
    assert all(o.requires_grad and o.placement == pb.PLACEMENT_ARENA for o in outs)
    assert list(outs[0].dims) == [2, 2]
    assert (list(outs[3].dims), outs[3].buffer_bytes) == ([], 4)
    t = ns['t']
    assert (t.data_type, list(t.dims), t.name, t.raw_data) == (1, [], ns['loss'], b'33\x03@')
    np.testing.assert_allclose(np.frombuffer(t.raw_data, '<f4'), [2.05], rtol=1e-6)
    grad = ns['bw'].gradients[0]
    assert grad.handle.startswith('a7.') and list(grad.dims) == [2, 2]
    assert (grad.requires_grad, grad.grad_fn, grad.placement) == (False, '', pb.PLACEMENT_ARENA)
    g = ns['g']
    assert (g.data_type, list(g.dims), g.name, len(g.raw_data)) == (1, [2, 2], grad.handle, 16)
    np.testing.assert_array_equal(np.frombuffer(g.raw_data, '<f4').reshape(2, 2),
                                  [[1.0, 0.0], [1.5, 0.0]])


def check_reset_and_stale(ns):
    """Steps 7 and 8: the ResetArena reply, and the error a stale handle gets (asked again
    here: the example's except block keeps nothing)."""
    r = ns['r']
    assert r.stale_handles == 5
    assert (r.arena.chunks, r.arena.reserved_bytes, r.arena.used_bytes) == (1, MiB, 0)
    assert (r.arena.resets, r.arena.allocations, r.arena.growth_events) == (1, 11, 13)
    assert_bytes(r.arena.peak_used_bytes, 704)
    handle = ns['bw'].gradients[0].handle
    try:
        ns['stub'].GetTensor(pb.GetTensorRequest(handle=handle), metadata=ns['md'])
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert e.details() == (
            "tensor '%s' is stale: it lived in the session's arena, which was reset since; run "
            "the operations again, or ask for PLACEMENT_POOL to keep a result across resets"
            % handle)
    else:
        raise AssertionError('GetTensor of the stale handle %s did not fail' % handle)
