"""Install hook: the generated modules (onemodel._proto) are written into the build folder by
generate_stubs.py (the same generator the CMake build runs), so that a wheel or an install
carries them while the source tree never does. The documented install (scripts/start runs it):

    scripts/install-python-client [DIR]     # a venv (--system-site-packages) in DIR, default .venv

which is `/usr/bin/python3 -m venv --system-site-packages DIR` and
`DIR/bin/python -m pip install --no-index --no-build-isolation --force-reinstall --no-deps
client/python`. Metadata lives in pyproject.toml. The protos are read from ../../proto
(override with ONEMODEL_PROTO_DIR) and /usr/include/onnx/onnx.proto (override with
ONNX_PROTO_DIR).
"""

import os
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithStubs(build_py):
    def run(self):
        # a module deleted from the sources must not survive in an earlier build's folder
        shutil.rmtree(os.path.join(self.build_lib, 'onemodel'), ignore_errors=True)
        super().run()
        sys.path.insert(0, HERE)
        try:
            import generate_stubs
        finally:
            sys.path.pop(0)
        generate_stubs.generate(
            self.build_lib,
            os.environ.get('ONEMODEL_PROTO_DIR', generate_stubs.DEFAULT_PROTO_DIR),
            os.environ.get('ONNX_PROTO_DIR', generate_stubs.DEFAULT_ONNX_PROTO_DIR))


setup(cmdclass={'build_py': BuildPyWithStubs})
