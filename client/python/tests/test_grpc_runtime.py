"""The package turns off abseil's lock-order tracking in Debian's grpcio (_grpc_runtime.py), as
the C++ server and client do (no server: each case is a child process, since the setting is
process-wide and cannot be undone)."""

import os
import signal
import subprocess
import sys
import textwrap

# Locks two absl::Mutexes of the grpcio's own libabsl (one zeroed word each is an unlocked
# Mutex) in one order, then in the other: with the tracking on, abseil aborts at the second.
INVERSION = '''
import ctypes
from onemodel import _grpc_runtime
lib = ctypes.CDLL(_grpc_runtime.loaded_abseil_synchronization(), mode=os.RTLD_NOLOAD)
lock = lib._ZN4absl7debian35Mutex4LockEv
unlock = lib._ZN4absl7debian35Mutex6UnlockEv
a, b = ctypes.c_int64(0), ctypes.c_int64(0)
for first, second in ((a, b), (b, a)):
    lock(ctypes.byref(first)); lock(ctypes.byref(second))
    unlock(ctypes.byref(second)); unlock(ctypes.byref(first))
print('no abort', flush=True)
'''


def run_python(setup):
    code = 'import os, grpc\n' + textwrap.dedent(setup) + INVERSION
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)


def test_debians_grpcio_tracks_lock_order_by_default():
    # the premise of the tests below: they would fail if the package did not turn it off
    r = run_python('')
    assert r.returncode == -signal.SIGABRT, r.stdout + r.stderr
    assert 'potential deadlock' in r.stderr


def test_a_client_turns_the_tracking_off():
    r = run_python('''
        import onemodel
        onemodel.Client('127.0.0.1:1')  # never called: the channel connects lazily
    ''')
    assert r.returncode == 0 and 'no abort' in r.stdout, r.stdout + r.stderr


def test_an_async_client_turns_the_tracking_off():
    r = run_python('''
        from onemodel.aio import AsyncClient
        AsyncClient('127.0.0.1:1')
    ''')
    assert r.returncode == 0 and 'no abort' in r.stdout, r.stdout + r.stderr


def test_quiet_abseil_mutexes_reports_what_it_did():
    r = subprocess.run([sys.executable, '-c', textwrap.dedent('''
        import grpc
        from onemodel import _grpc_runtime
        print(_grpc_runtime.loaded_abseil_synchronization() is not None,
              _grpc_runtime.quiet_abseil_mutexes(), _grpc_runtime.quiet_abseil_mutexes())
    ''')], capture_output=True, text=True, env=dict(os.environ), timeout=60)
    assert r.stdout.split() == ['True', 'True', 'True'], r.stdout + r.stderr
