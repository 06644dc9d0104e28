"""The proofs' fixtures are the Python client suite's (client/python/tests/conftest.py):
`server` (one onemodeld for the module's tests), `client`, `rng`."""

import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    'onemodel_client_fixtures',
    os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'client', 'python',
                 'tests', 'conftest.py'))
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

server = _fixtures.server
client = _fixtures.client
rng = _fixtures.rng
