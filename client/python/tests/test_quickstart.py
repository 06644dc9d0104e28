"""The README's quick start, as a new user follows it: scripts/start makes a virtual
environment with scripts/install-python-client (Debian's python3 with --system-site-packages,
the package built from client/python offline, its stubs generated at install time). Here the
same script builds a fresh environment in a temporary folder; the package installed there is
imported (without the build tree on PYTHONPATH) and the README's Python example runs in it
verbatim against a real onemodeld."""

import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
INSTALL = os.path.join(ROOT, 'scripts', 'install-python-client')
README = os.path.join(ROOT, 'README.md')


def clean_env(**extra):
    """The environment of a user's shell: no PYTHONPATH pointing into a build tree."""
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'ONEMODELD')}
    env.update(extra)
    return env


@pytest.fixture(scope='module')
def venv(tmp_path_factory):
    path = tmp_path_factory.mktemp('quickstart') / 'venv'
    r = subprocess.run([INSTALL, str(path)], capture_output=True, text=True, env=clean_env(),
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return path


def readme_python_example():
    """The first ```python block of the README's quick start."""
    with open(README, encoding='utf-8') as f:
        text = f.read()
    quick = text[text.index('## Quick start'):]
    quick = quick[:quick.index('\n## ', 1)]
    blocks = re.findall(r'^```python\n(.*?)^```', quick, re.S | re.M)
    assert blocks, 'no ```python block in the README quick start'
    return quick, blocks[0]


def test_readme_gives_the_activation_line_of_the_script_default():
    quick, _ = readme_python_example()
    assert '. .venv/bin/activate' in quick
    with open(INSTALL, encoding='utf-8') as f:
        assert 'venv=${1:-$root/.venv}' in f.read()
    with open(os.path.join(ROOT, 'scripts', 'start'), encoding='utf-8') as f:
        assert 'scripts/install-python-client' in f.read()


def test_installed_package_imports_with_stubs_and_types(venv, tmp_path):
    code = ('import onemodel, onemodel.aio, os, sys\n'
            'from onemodel._proto.onemodel.v1 import onemodel_pb2_grpc\n'
            'd = os.path.dirname(onemodel.__file__)\n'
            'print(d); print(os.path.isfile(os.path.join(d, "py.typed"))); print(sys.prefix)\n')
    r = subprocess.run([str(venv / 'bin' / 'python'), '-c', code], capture_output=True, text=True,
                       cwd=tmp_path, env=clean_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    where, typed, prefix = r.stdout.split()
    assert where.startswith(str(venv)), where  # the installed copy, not the source tree
    assert typed == 'True'
    assert prefix == str(venv)


def test_readme_python_example_runs_verbatim(venv, server, tmp_path):
    _, code = readme_python_example()
    r = subprocess.run([str(venv / 'bin' / 'python'), '-c', code], capture_output=True, text=True,
                       cwd=tmp_path, env=clean_env(ONEMODEL_SERVER=server.grpc), timeout=120)
    assert r.returncode == 0, 'the README example failed:\n%s\n%s' % (code, r.stdout + r.stderr)
    assert r.stdout.strip(), 'the README example printed nothing'
