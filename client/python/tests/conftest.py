"""Fixtures: a real onemodeld process per test run (and extra ones with other flags).

ONEMODELD names the binary (ctest sets it to the one just built). Each server listens on free
ports (--listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0), announces them in --ready-file, and
at teardown gets SIGTERM and must exit with code 0.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time

import grpc
import numpy as np
import pytest

import onemodel

READY_TIMEOUT_S = 30
STOP_TIMEOUT_S = 30


def onemodeld_binary():
    path = os.environ.get('ONEMODELD')
    if not path:
        pytest.fail('ONEMODELD is not set: run the suite through ctest (test python_client), or set '
                    'ONEMODELD=<build dir>/server/onemodeld and PYTHONPATH=<build dir>/client/python/gen:'
                    'client/python', pytrace=False)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail('ONEMODELD=%s is not an executable file (build the onemodeld target first)' % path,
                    pytrace=False)
    return path


class ServerProcess:
    """A running onemodeld: .grpc ("127.0.0.1:PORT"), .metrics, .instance, .client()."""

    def __init__(self, args, workdir, env=None, listen_args=None):
        self.workdir = workdir
        self.ready_path = os.path.join(workdir, 'ready')
        self.log_path = os.path.join(workdir, 'onemodeld.log')
        child_env = {k: v for k, v in os.environ.items() if not k.startswith('ONEMODEL_')}
        child_env.update(env or {})
        if listen_args is None:
            listen_args = ['--listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0']
        self.argv = [onemodeld_binary()] + listen_args + ['--ready-file', self.ready_path,
                                                          '--log-level', 'warn'] + list(args)
        self._log = open(self.log_path, 'wb')
        self.proc = subprocess.Popen(self.argv, stdout=self._log, stderr=subprocess.STDOUT, env=child_env)
        self.returncode = None
        self._clients = []
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not os.path.exists(self.ready_path):
            if self.proc.poll() is not None:
                self._log.close()
                pytest.fail('onemodeld exited with code %s before it was ready: %s\n%s'
                            % (self.proc.returncode, ' '.join(self.argv), self.log_tail()), pytrace=False)
            if time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait()
                self._log.close()
                pytest.fail('onemodeld wrote no ready file in %d s: %s\n%s'
                            % (READY_TIMEOUT_S, ' '.join(self.argv), self.log_tail()), pytrace=False)
            time.sleep(0.02)
        self.ready = onemodel.read_ready_file(self.ready_path)
        self.grpc = self.ready['grpc']
        self.metrics = self.ready.get('metrics')
        self.instance = self.ready.get('instance')

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, 'rb') as f:
                return f.read()[-n:].decode('utf-8', 'replace')
        except OSError:
            return ''

    def client(self, **kwargs):
        c = onemodel.Client(self.grpc, **kwargs)
        self._clients.append(c)
        return c

    def stop(self, sig=signal.SIGTERM, timeout=STOP_TIMEOUT_S):
        """Sends `sig` and waits; returns the exit code (kills and fails after `timeout`)."""
        if self.returncode is not None:
            return self.returncode
        for c in self._clients:
            c.close()
        self.proc.send_signal(sig)
        try:
            self.returncode = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self._log.close()
            pytest.fail('onemodeld did not exit within %d s of signal %d\n%s' % (timeout, sig, self.log_tail()),
                        pytrace=False)
        self._log.close()
        return self.returncode


def start_server(*args, env=None, listen_args=None):
    return ServerProcess(args, tempfile.mkdtemp(prefix='onemodeld-test-'), env=env, listen_args=listen_args)


def stop_and_check(server):
    rc = server.stop()
    assert rc == 0, 'onemodeld exited with code %s after SIGTERM (log: %s)\n%s' % (
        rc, server.log_path, server.log_tail())
    shutil.rmtree(server.workdir, ignore_errors=True)  # kept when the exit was not clean


@pytest.fixture(scope='session')
def server():
    """The shared onemodeld with default limits (64 MiB messages)."""
    s = start_server()
    yield s
    stop_and_check(s)


@pytest.fixture(params=['exact', 'fast'])
def ksess(request, client):
    """A session on the shared server, once with exact and once with fast kernels."""
    with client.session(kernels=request.param) as s:
        s.kind = request.param
        yield s


@pytest.fixture(scope='session')
def client(server):
    c = server.client()
    c.wait_for_ready(10)
    return c


@pytest.fixture
def sess(client):
    """A session with the exact (reference) kernels, closed after the test."""
    with client.session(kernels='exact', client_name='pytest') as s:
        yield s


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@contextlib.contextmanager
def intercepted_session(server, interceptor):
    """A session (exact kernels) of a client whose channel goes through the gRPC client
    `interceptor`; the client is closed after."""
    channel = grpc.intercept_channel(grpc.insecure_channel(server.grpc), interceptor)
    client = onemodel.Client(server.grpc, channel=channel)
    with client.session(kernels='exact') as s:
        yield s
    client.close()


def assert_error(excinfo, code, *substrings):
    """The OneModelError in `excinfo` has `code` and every substring (case-insensitive)."""
    e = excinfo.value
    assert isinstance(e, onemodel.OneModelError), repr(e)
    assert e.code == code, 'expected %s, got %s: %s' % (code.name, e.code, e.details)
    for s in substrings:
        assert s.lower() in e.details.lower(), 'expected %r in the message: %s' % (s, e.details)
    return e
