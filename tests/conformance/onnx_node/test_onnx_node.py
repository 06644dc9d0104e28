"""ONNX's node tests (Debian's libonnx-testdata) on a real onemodeld, with both kernel choices.

Every test_*/ directory is read (model.onnx, test_data_set_0/input_*.pb, output_*.pb), its node
translated through mapping.MAPPING, run in one Run per kernel choice and checked with
compare.check. A test passes when both kernel choices pass. expected.txt lists the tests that
pass: the run fails when a listed one does not, and when one that is not listed does (add it).
The summary table goes to onnx_node_summary.txt in the working directory (the build tree).
"""

import collections
import glob
import os
import sys

import numpy as np
import pytest

import onemodel
from onemodel import tensors

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import mapping  # noqa: E402
import run_ops  # noqa: E402

DATA = os.environ.get('ONNX_NODE_TEST_DATA', '/usr/share/libonnx-testdata/data/node')
EXPECTED = os.path.join(HERE, 'expected.txt')
SUMMARY = os.path.join(os.getcwd(), 'onnx_node_summary.txt')
KERNELS = ('exact', 'fast')

server_fixtures = run_ops.server_fixtures()


class Case:
    """One node test: name, op_type, and after run(): reason (not expressible), failures."""

    def __init__(self, directory):
        import onnx
        self.name = os.path.basename(directory)
        model = onnx.load(os.path.join(directory, 'model.onnx'))
        graph = model.graph
        self.op_type = graph.node[0].op_type if len(graph.node) == 1 else '(%d nodes)' % len(graph.node)
        self.reason = None
        self.failures = {}
        self.ops = None
        if len(graph.node) != 1:
            self.reason = 'model has %d nodes (an expanded function), not one' % len(graph.node)
            return
        if not all(vi.type.HasField('tensor_type') for vi in list(graph.input) + list(graph.output)):
            self.reason = 'an input or output is not a tensor (a sequence or an optional)'
            return
        data = os.path.join(directory, 'test_data_set_0')
        try:
            self.inputs = [_read_proto(os.path.join(data, 'input_%d.pb' % i), vi)
                           for i, vi in enumerate(graph.input)]
            self.outputs = [_read_proto(os.path.join(data, 'output_%d.pb' % i), vi)
                            for i, vi in enumerate(graph.output)]
        except ValueError as e:
            self.reason = str(e)
            return
        node = graph.node[0]
        opset = max((o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')), default=0)
        by_name = {vi.name: tp for vi, tp in zip(graph.input, self.inputs)}
        if any(n and n not in by_name for n in node.input):
            self.reason = 'an input is a constant of the graph, not of the test data'
            return
        protos = [by_name[n] if n else None for n in node.input]
        try:
            arrays = [None if tp is None else tensors.from_tensor_proto(tp) for tp in protos]
            self.expected = [tensors.from_tensor_proto(tp) for tp in self.outputs]
        except (ValueError, KeyError) as e:
            self.reason = 'a tensor onemodeld cannot hold: %s' % e
            return
        self.protos, self.arrays = protos, arrays
        try:
            self.ops, self.family = mapping.translate(
                mapping.Node(node, opset, protos, arrays, len(node.output)))
        except mapping.NotExpressible as e:
            self.reason = str(e)

    @property
    def expressible(self):
        return self.reason is None

    def run(self, session, kernels):
        """Runs the operations in `session`; records a failure reason for `kernels` or none.
        The last operation gives the node's output, or, for a node of several outputs, the
        operations marked 'node_output' give theirs (mapping.by_output)."""
        marked = [(i, o['node_output']) for i, o in enumerate(self.ops) if 'node_output' in o]
        try:
            which = marked or [(len(self.ops) - 1, 0)]
            replies = zip(run_ops.run(session, self.ops, self.protos, [i for i, _ in which]),
                          [k for _, k in which])
        except onemodel.OneModelError as e:
            self.failures[kernels] = 'server refused: %s' % e.details
            return
        float_inputs = [a for a in self.arrays if a is not None]
        for reply, k in replies:
            if reply.data_type != self.outputs[k].data_type:
                self.failures[kernels] = 'output %d: type %s, expected %s' % (
                    k, mapping.type_name(reply.data_type), mapping.type_name(self.outputs[k].data_type))
                return
            actual = tensors.from_tensor_proto(reply)
            reason = compare.check(self.family, kernels, actual, self.expected[k], float_inputs)
            if reason:
                self.failures[kernels] = 'output %d: %s' % (k, reason) if marked else reason
                return

    def passed(self, kernels):
        return self.expressible and kernels not in self.failures


def _read_proto(path, value_info):
    """The TensorProto in `path`, of the type the model declares for it. ONNX 1.12 wrote its
    BFLOAT16 test values as UINT16 tensors of the same bits: those are retyped; any other
    difference is a test this runner cannot use (ValueError)."""
    import onnx
    tp = onnx.TensorProto()
    with open(path, 'rb') as f:
        tp.ParseFromString(f.read())
    declared = value_info.type.tensor_type.elem_type
    if tp.data_type != declared:
        if (tp.data_type, declared) != (onnx.TensorProto.UINT16, onnx.TensorProto.BFLOAT16):
            raise ValueError('%s is %s but the model declares %s' % (
                os.path.basename(path), mapping.type_name(tp.data_type), mapping.type_name(declared)))
        if not tp.HasField('raw_data'):
            tp.raw_data = np.asarray(tp.int32_data, dtype=np.uint16).tobytes()
            del tp.int32_data[:]
        tp.data_type = declared
    return tp


def _load_cases():
    dirs = sorted(glob.glob(os.path.join(DATA, 'test_*')))
    if not dirs:
        pytest.fail('no ONNX node tests in %s: install libonnx-testdata and python3-onnx '
                    '(scripts/install-deps)' % DATA, pytrace=False)
    return [Case(d) for d in dirs]


def _read_expected():
    with open(EXPECTED, encoding='utf-8') as f:
        return {line.strip() for line in f if line.strip() and not line.startswith('#')}


def _summary(cases):
    """The table: per op, tests, expressible, passing per kernel choice, and the reasons."""
    rows = collections.OrderedDict()
    for c in sorted(cases, key=lambda c: c.op_type):
        r = rows.setdefault(c.op_type, {'tests': 0, 'expressible': 0, 'exact': 0, 'fast': 0,
                                        'reasons': collections.Counter()})
        r['tests'] += 1
        r['expressible'] += c.expressible
        for k in KERNELS:
            r[k] += c.passed(k)
        if not c.expressible:
            r['reasons'][c.reason] += 1
        for k, why in sorted(c.failures.items()):
            r['reasons']['%s fails (%s): %s' % (c.name, k, why)] += 1
    total = {k: sum(r[k] for r in rows.values()) for k in ('tests', 'expressible', 'exact', 'fast')}
    lines = ['%-28s %5s %11s %5s %5s  %s' % ('op', 'tests', 'expressible', 'exact', 'fast', 'why not'),
             '%-28s %5d %11d %5d %5d' % ('(all)', total['tests'], total['expressible'],
                                         total['exact'], total['fast'])]
    for name, r in rows.items():
        reasons = '; '.join('%s (x%d)' % (w, n) if n > 1 else w for w, n in r['reasons'].items())
        lines.append('%-28s %5d %11d %5d %5d  %s' % (name, r['tests'], r['expressible'],
                                                     r['exact'], r['fast'], reasons))
    return '\n'.join(lines) + '\n'


@pytest.fixture(scope='module')
def server():
    s = server_fixtures.start_server()
    yield s
    server_fixtures.stop_and_check(s)


def test_mapping_sends_only_operations_and_attributes_the_server_lists(server):
    """Every operation and attribute the translations produce is in ListOperations."""
    client = server.client()
    with client.session() as s:
        listed = {o.name: {a.name for a in o.attributes} for o in s.operations()}
    seen = set()
    for c in _load_cases():
        for o in c.ops or ():
            seen.add(o['op'])
            assert o['op'] in listed, '%s: %s is not a onemodeld operation' % (c.name, o['op'])
            extra = set(o['attrs']) - listed[o['op']]
            assert not extra, '%s: %s takes no %s' % (c.name, o['op'], sorted(extra))
    assert seen, 'no test was translated'


def test_node_tests_pass_as_expected_with_both_kernel_choices(server):
    cases = _load_cases()
    client = server.client()
    for kernels in KERNELS:
        with client.session(kernels=kernels, client_name='onnx-node-tests') as s:
            for c in cases:
                if c.expressible:
                    c.run(s, kernels)
    table = _summary(cases)
    with open(SUMMARY, 'w', encoding='utf-8') as f:
        f.write(table)
    print('\n' + table + 'written to %s' % SUMMARY)
    passing = {c.name for c in cases if all(c.passed(k) for k in KERNELS)}
    expected = _read_expected()
    missing = sorted(expected - passing)
    extra = sorted(passing - expected)
    by_name = {c.name: c for c in cases}
    assert not missing, 'listed in %s but not passing:\n%s' % (EXPECTED, '\n'.join(
        '%s: %s' % (n, by_name[n].reason or by_name[n].failures if n in by_name else 'no such test')
        for n in missing))
    assert not extra, 'passing but not listed in %s (add them):\n%s' % (EXPECTED, '\n'.join(extra))
