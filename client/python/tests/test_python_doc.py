"""docs/python.md: its Python examples run as written (against the test server's address)."""

import contextlib
import io
import os
import re

DOC = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'docs', 'python.md')


def python_blocks():
    with open(DOC, encoding='utf-8') as f:
        return re.findall(r'^```python\n(.*?)^```', f.read(), re.S | re.M)


def test_training_example_runs_and_learns(server):
    (code,) = python_blocks()
    assert len(code.strip().splitlines()) <= 25  # "a ~20-line training example"
    code = code.replace('"127.0.0.1:50051"', repr(server.grpc))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, DOC, 'exec'), {'__name__': 'docs_python_md'})
    m = re.fullmatch(r'loss (\d+\.\d+), accuracy (\d+\.\d+)\n', out.getvalue())
    assert m, out.getvalue()
    assert float(m.group(1)) < 0.3 and float(m.group(2)) >= 0.9, out.getvalue()
