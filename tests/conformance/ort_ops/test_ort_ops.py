"""Every row of cases.py run in ONNX Runtime and on a real onemodeld (exact and fast kernels).

Each row becomes a one-node ONNX model (onnx.helper) with seeded numpy inputs. All models go to
one temporary directory and run_ort_ops.mjs runs them in ONNX Runtime in one Node.js process.
The same node is translated by ../onnx_node/mapping.py, run by ../onnx_node/run_ops.py and
checked by ../onnx_node/compare.py against ONNX Runtime's output, with the tolerance family
mapping gives the op. A row marked `differs` must fail the comparison (its reason is the
documented difference). The summary (cases per op, passes, largest differences) goes to
ort_ops_summary.txt in the working directory (the build tree).
"""

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import onemodel
from onemodel import tensors

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'onnx_node'))
sys.path.insert(0, HERE)
import cases  # noqa: E402
import compare  # noqa: E402
import mapping  # noqa: E402
import run_ops  # noqa: E402

KERNELS = ('exact', 'fast')
RUNNER = os.path.join(HERE, 'run_ort_ops.mjs')
SUMMARY = os.path.join(os.getcwd(), 'ort_ops_summary.txt')
# numpy dtype <-> onnxruntime-node's tensor type names (run_ort_ops.mjs's kTypedArrays).
JS_TYPES = {np.dtype(np.float32): 'float32', np.dtype(np.bool_): 'bool',
            np.dtype(np.int64): 'int64', np.dtype(np.int32): 'int32'}
TIES = np.array([-1, -0.0, 0, 0.5, 1, np.nan, np.inf, -np.inf], dtype=np.float32)
TIES_NO_NAN = TIES[~np.isnan(TIES)]
SPECIALS = {'specials': np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=np.float32),
            'infinities': np.array([np.inf, -np.inf], dtype=np.float32)}


def _values(spec, rng):
    """The numpy array of one cases.F / B / scalar / I / ints input, drawn from `rng`."""
    if spec.kind == 'scalar':
        return np.array(spec.value, dtype=np.float32)
    if spec.kind == 'ints':
        return rng.integers(spec.low, spec.high, size=spec.shape, dtype=np.int64)
    if spec.kind == 'const_ints':
        return np.array(spec.values, dtype=np.int64)
    if spec.kind == 'bool':
        return rng.random(spec.shape) < 0.5
    if spec.kind in ('ties', 'ties_no_nan'):
        return rng.choice(TIES if spec.kind == 'ties' else TIES_NO_NAN, size=spec.shape)
    x = np.asarray(rng.standard_normal(spec.shape) * spec.scale, dtype=np.float32)
    if spec.kind == 'positive':
        return np.abs(x) + np.float32(0.5)
    if spec.kind in SPECIALS:
        where = rng.random(spec.shape) < 1 / 6
        x = np.where(where, rng.choice(SPECIALS[spec.kind], size=spec.shape), x).astype(np.float32)
    return x


class Case:
    """One row made concrete: its node, inputs, ONNX Runtime's output and onemodeld's verdicts."""

    def __init__(self, row):
        import onnx
        from onnx import helper, numpy_helper
        self.row = row
        rng = np.random.default_rng(row.seed)
        names = ['' if s is None else 'x%d' % i for i, s in enumerate(row.inputs)]
        self.arrays = [None if s is None else _values(s, rng) for s in row.inputs]
        self.protos = [None if a is None else numpy_helper.from_array(a, n)
                       for a, n in zip(self.arrays, names)]
        self.node = helper.make_node(row.op, names, ['y'], **row.attrs)
        out_type = onnx.TensorProto.DataType.Value(row.out_type)
        graph = helper.make_graph(
            [self.node], row.name,
            [helper.make_tensor_value_info(n, p.data_type, a.shape)
             for n, p, a in zip(names, self.protos, self.arrays) if p is not None],
            [helper.make_tensor_value_info('y', out_type, None)])
        self.model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', row.opset)])
        self.expected = None      # ONNX Runtime's output
        self.ort_error = None
        self.failures = {}        # kernels -> reason
        self.max_abs = 0.0        # over both kernel choices, finite elements
        self.max_ulp = 0

    def write(self, directory):
        """The model and inputs in `directory`, and this case's entry of cases.json."""
        with open(os.path.join(directory, self.row.name + '.onnx'), 'wb') as f:
            f.write(self.model.SerializeToString())
        inputs = []
        for i, a in enumerate(self.arrays):
            if a is None:
                continue
            file = '%s.in%d' % (self.row.name, i)
            with open(os.path.join(directory, file), 'wb') as f:
                f.write(np.ascontiguousarray(a).tobytes())
            inputs.append({'name': 'x%d' % i, 'type': JS_TYPES[a.dtype], 'dims': list(a.shape),
                           'file': file})
        return {'name': self.row.name, 'model': self.row.name + '.onnx', 'inputs': inputs,
                'output': 'y'}

    def read(self, directory, result):
        """Takes this case's entry of results.json: ONNX Runtime's output, or its refusal."""
        if 'error' in result:
            self.ort_error = result['error']
            return
        dtype = next(d for d, js in JS_TYPES.items() if js == result['type'])
        with open(os.path.join(directory, result['file']), 'rb') as f:
            self.expected = np.frombuffer(f.read(), dtype=dtype).reshape(result['dims'])

    def run(self, session, kernels):
        """Runs the node on onemodeld; records a failure reason for `kernels` or none."""
        if self.ort_error:
            self.failures[kernels] = 'ONNX Runtime refused: %s' % self.ort_error
            return
        try:
            ops, family = mapping.translate(mapping.Node(
                self.node, self.row.opset, self.protos, self.arrays, 1))
            actual = tensors.from_tensor_proto(run_ops.run(session, ops, self.protos)[0])
        except mapping.NotExpressible as e:
            self.failures[kernels] = 'not expressible: %s' % e
            return
        except onemodel.OneModelError as e:
            self.failures[kernels] = 'server refused: %s' % e.details
            return
        floats = [a for a in self.arrays if a is not None and a.dtype == np.float32]
        reason = compare.check(family, kernels, actual, self.expected, floats)
        if reason:
            self.failures[kernels] = reason
        self._measure(actual)

    def _measure(self, actual):
        """Largest absolute difference (finite elements) and ULP distance (non-NaN ones)."""
        e = self.expected
        if e.dtype != np.float32 or actual.shape != e.shape or actual.dtype != e.dtype:
            return
        both = ~np.isnan(e) & ~np.isnan(actual)
        if both.any():
            self.max_ulp = max(self.max_ulp, int(compare.ulp_distance(actual[both], e[both]).max()))
        finite = np.isfinite(e) & np.isfinite(actual)
        if finite.any():
            diff = np.abs(actual[finite].astype(np.float64) - e[finite])
            self.max_abs = max(self.max_abs, float(diff.max()))


def _run_onnx_runtime(all_cases):
    """Runs every case's model in ONNX Runtime with one Node.js process; fills case.expected."""
    node = shutil.which('node')
    if node is None:
        pytest.fail('Node.js (node) is not on PATH: run scripts/install-deps (it installs Node.js '
                    'and onnxruntime-node through scripts/install-npm-deps)', pytrace=False)
    directory = tempfile.mkdtemp(prefix='ort-ops-')
    try:
        entries = [c.write(directory) for c in all_cases]
        with open(os.path.join(directory, 'cases.json'), 'w', encoding='utf-8') as f:
            json.dump(entries, f)
        done = subprocess.run([node, RUNNER, directory], capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            pytest.fail('%s exited with %d:\n%s' % (RUNNER, done.returncode, done.stderr),
                        pytrace=False)
        with open(os.path.join(directory, 'results.json'), encoding='utf-8') as f:
            results = json.load(f)
        for c in all_cases:
            c.read(directory, results[c.row.name])
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _summary(all_cases):
    """Per op: cases, passing per kernel choice, documented differences, largest differences."""
    rows = collections.OrderedDict()
    for c in all_cases:
        r = rows.setdefault(c.row.op, {'cases': 0, 'exact': 0, 'fast': 0, 'differs': 0,
                                       'abs': 0.0, 'ulp': 0})
        r['cases'] += 1
        for k in KERNELS:
            r[k] += k not in c.failures
        r['differs'] += c.row.differs is not None
        if c.row.differs is None:  # the largest differences of the cases that agree
            r['abs'] = max(r['abs'], c.max_abs)
            r['ulp'] = max(r['ulp'], c.max_ulp)
    lines = ['%-18s %5s %5s %5s %7s %10s %7s' % ('op', 'cases', 'exact', 'fast', 'differs',
                                                 'max |diff|', 'max ULP'),
             '%-18s %5d %5d %5d %7d' % ('(all)', len(all_cases), *(
                 sum(r[k] for r in rows.values()) for k in ('exact', 'fast', 'differs')))]
    for op, r in rows.items():
        lines.append('%-18s %5d %5d %5d %7d %10.3g %7d' % (
            op, r['cases'], r['exact'], r['fast'], r['differs'], r['abs'], r['ulp']))
    for c in all_cases:
        for k, why in sorted(c.failures.items()):
            lines.append('%s (%s): %s%s' % (c.row.name, k, why,
                                            ' [documented: %s]' % c.row.differs
                                            if c.row.differs else ''))
    return '\n'.join(lines) + '\n'


@pytest.fixture(scope='module')
def server():
    fixtures = run_ops.server_fixtures()
    s = fixtures.start_server()
    yield s
    fixtures.stop_and_check(s)


def test_case_names_are_unique():
    names = [r.name for r in cases.ROWS]
    assert len(names) == len(set(names)), 'repeated case names in cases.py'


def test_onemodeld_matches_onnx_runtime_with_both_kernel_choices(server):
    all_cases = [Case(r) for r in cases.ROWS]
    _run_onnx_runtime(all_cases)
    client = server.client()
    for kernels in KERNELS:
        with client.session(kernels=kernels, client_name='ort-ops-tests') as s:
            for c in all_cases:
                c.run(s, kernels)
    table = _summary(all_cases)
    with open(SUMMARY, 'w', encoding='utf-8') as f:
        f.write(table)
    print('\n' + table + 'written to %s' % SUMMARY)
    failing = ['%s (%s): %s' % (c.row.name, k, why) for c in all_cases if not c.row.differs
               for k, why in sorted(c.failures.items())]
    assert not failing, 'onemodeld differs from ONNX Runtime:\n' + '\n'.join(failing)
    agreeing = [c.row.name for c in all_cases if c.row.differs and not c.failures]
    assert not agreeing, ('documented as differing in cases.py but now agreeing with ONNX '
                          'Runtime (remove the `differs` note):\n' + '\n'.join(agreeing))
