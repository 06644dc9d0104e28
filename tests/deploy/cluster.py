"""A local cluster for the deployment tests: onemodeld replicas behind Debian's nginx.

The replicas are real onemodeld processes on free loopback ports (the Python client suite's
ServerProcess: ONEMODELD names the binary). nginx runs in the foreground with the shipped
deploy/nginx/nginx.conf, rendered with test-local ports and paths and nothing else changed.

    replicas = [start_server() for _ in range(3)]
    proxy = NginxProcess(render_nginx_conf(SHIPPED_NGINX_CONF, '127.0.0.1:%d' % free_port(),
                                           [r.grpc for r in replicas], workdir), workdir)
    ... onemodel.Client(proxy.address) ...
    proxy.stop()
"""

import importlib.util
import os
import re
import signal
import socket
import subprocess
import time

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
SHIPPED_NGINX_CONF = os.path.join(REPO, 'deploy', 'nginx', 'nginx.conf')
START_TIMEOUT_S = 15
STOP_TIMEOUT_S = 15

# The Python client suite's onemodeld process fixture (start_server, stop_and_check).
_spec = importlib.util.spec_from_file_location(
    'onemodel_server_fixtures', os.path.join(REPO, 'client', 'python', 'tests', 'conftest.py'))
server_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(server_fixtures)

_UPSTREAM_SERVER = re.compile(r'^(\s*)server\s+[^\s;]+:\d+(.*)$')
_LISTEN = re.compile(r'^(\s*)listen\s+\S+\s+http2;$')


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def render_nginx_conf(path, listen, replicas, prefix):
    """The shipped config at `path` with its `listen` set to `listen`, its upstream `server`
    lines replaced by one per address in `replicas` (same parameters), one worker, the process
    in the foreground and every file under `prefix`; its routing lines are left as they are."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    servers = [i for i, line in enumerate(lines) if _UPSTREAM_SERVER.match(line)]
    listens = [i for i, line in enumerate(lines) if _LISTEN.match(line)]
    if not servers or len(listens) != 1:
        raise ValueError('%s must have upstream `server host:port ...;` lines and one '
                         '`listen ... http2;` line (found %d and %d)' % (path, len(servers), len(listens)))
    indent, params = _UPSTREAM_SERVER.match(lines[servers[0]]).groups()
    out = []
    for i, line in enumerate(lines):
        if i == servers[0]:
            out.extend('%sserver %s%s' % (indent, address, params) for address in replicas)
        elif i in servers:
            continue
        elif i == listens[0]:
            out.append('%slisten %s http2;' % (_LISTEN.match(line).group(1), listen))
        elif line.strip() == 'worker_processes auto;':
            out.append('worker_processes 1;')
        elif line.strip() == 'http {':
            out.append(line)
            out.extend('  %s_temp_path %s/%s;' % (kind, prefix, kind)
                       for kind in ('client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'))
        else:
            out.append(line)
    # As root nginx would switch its worker to `nobody`, which cannot use the private prefix.
    head = ['daemon off;', 'pid %s/nginx.pid;' % prefix] + (['user root root;'] if os.geteuid() == 0 else [])
    conf = os.path.join(prefix, 'nginx.conf')
    with open(conf, 'w', encoding='utf-8') as f:
        f.write('\n'.join(head + out) + '\n')
    return conf


class NginxProcess:
    """nginx in the foreground with config `conf`; .address is its listen address."""

    def __init__(self, conf, prefix, address):
        self.address = address
        self.log_path = os.path.join(prefix, 'nginx.log')
        self._log = open(self.log_path, 'wb')
        self.proc = subprocess.Popen(['nginx', '-p', prefix, '-c', conf, '-e', 'stderr'],
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        host, port = address.rsplit(':', 1)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                self._log.close()
                raise RuntimeError('nginx exited with code %s before it listened on %s:\n%s'
                                   % (self.proc.returncode, address, self.log_tail()))
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError('nginx did not listen on %s within %d s:\n%s'
                                       % (address, START_TIMEOUT_S, self.log_tail()))
                time.sleep(0.05)

    def log_tail(self, n=4000):
        with open(self.log_path, 'rb') as f:
            return f.read()[-n:].decode('utf-8', 'replace')

    def stop(self):
        """Stops nginx and its worker (the whole process group); returns its exit code."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if not self._log.closed:
            self._log.close()
        return self.proc.returncode
