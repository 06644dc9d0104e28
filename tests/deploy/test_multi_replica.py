"""Three onemodeld replicas behind nginx with the shipped routing config (deploy/nginx/nginx.conf).

Sessions created through the proxy stay on one replica for all their calls (every reply's
`onemodel-instance` header is recorded); when a replica stops, its sessions get NOT_FOUND
saying to create a new session, the others keep their tensors, and new sessions land on the
survivors. Run through ctest (test deploy_multi_replica), which sets ONEMODELD and PYTHONPATH.
"""

import shutil
import tempfile

import grpc
import numpy as np
import pytest

import onemodel
from cluster import (SHIPPED_NGINX_CONF, NginxProcess, free_port, render_nginx_conf,
                     server_fixtures)

REPLICAS = 3
SESSIONS = 30
NEW_SESSIONS = 12


class InstanceRecorder(grpc.UnaryUnaryClientInterceptor):
    """Remembers the `onemodel-instance` header of the last unary reply (.last; None if absent)."""

    def __init__(self):
        self.last = None

    def intercept_unary_unary(self, continuation, details, request):
        outcome = continuation(details, request)
        headers = dict(outcome.initial_metadata() or ()) | dict(outcome.trailing_metadata() or ())
        self.last = headers.get(onemodel.INSTANCE_HEADER)
        return outcome


@pytest.fixture
def cluster():
    """(replicas, proxy address): three onemodeld and nginx in front; all stopped afterwards."""
    workdir = tempfile.mkdtemp(prefix='onemodel-deploy-')
    replicas, proxy = [], None
    try:
        replicas = [server_fixtures.start_server() for _ in range(REPLICAS)]
        address = '127.0.0.1:%d' % free_port()
        conf = render_nginx_conf(SHIPPED_NGINX_CONF, address, [r.grpc for r in replicas], workdir)
        proxy = NginxProcess(conf, workdir, address)
        yield replicas, proxy
    finally:
        if proxy is not None:
            proxy.stop()
        for r in replicas:
            r.stop()
            shutil.rmtree(r.workdir, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)


def open_client(address):
    """A client of `address` and the recorder of its replies' instance ids."""
    recorder = InstanceRecorder()
    channel = grpc.intercept_channel(grpc.insecure_channel(address), recorder)
    return onemodel.Client(address, channel=channel, timeout=10), recorder


def use_session(session, recorder, data):
    """Put, Run, Get and KeepAlive in `session`; returns the input's handle. Asserts the result
    and that every reply came from the replica that created the session."""
    x = session.put(data)
    assert recorder.last == session.server_instance_id, 'PutTensor answered by another replica'
    y = session.op('Relu', x)
    assert recorder.last == session.server_instance_id, 'Run answered by another replica'
    np.testing.assert_array_equal(y.numpy(), np.maximum(data, 0))
    assert recorder.last == session.server_instance_id, 'GetTensor answered by another replica'
    session.keep_alive()
    assert recorder.last == session.server_instance_id, 'KeepAlive answered by another replica'
    return x


def test_sessions_stay_on_their_replica_and_die_only_with_it(cluster):
    replicas, proxy = cluster
    client, recorder = open_client(proxy.address)
    rng = np.random.default_rng(8)
    sessions = []
    for i in range(SESSIONS):
        s = client.session(client_name='deploy-test-%d' % i)
        assert recorder.last == s.server_instance_id
        data = rng.standard_normal((3, 4)).astype(np.float32)
        sessions.append((s, data, use_session(s, recorder, data)))

    by_replica = {r.instance: [s for s, _, _ in sessions if s.server_instance_id == r.instance]
                  for r in replicas}
    assert all(by_replica.values()), 'every replica should get sessions: %s' % {
        k: len(v) for k, v in by_replica.items()}
    for r in replicas:  # each replica holds exactly the sessions the proxy placed on it
        with onemodel.Client(r.grpc) as direct:
            assert direct.stats().sessions.open == len(by_replica[r.instance])

    victim = replicas[0]
    assert victim.stop() == 0, victim.log_tail()
    survivors = {r.instance for r in replicas[1:]}

    for s, data, x in sessions:
        if s.server_instance_id == victim.instance:
            with pytest.raises(onemodel.NotFound) as gone:
                s.get(x)
            assert 'not found' in gone.value.details and 'create a new session' in gone.value.details
            assert recorder.last in survivors, 'a survivor answers for the stopped replica'
        else:
            np.testing.assert_array_equal(s.get(x), data)  # its tensor is intact
            assert recorder.last == s.server_instance_id
            use_session(s, recorder, -data)

    for i in range(NEW_SESSIONS):
        s = client.session(client_name='deploy-test-new-%d' % i)
        assert s.server_instance_id in survivors
        use_session(s, recorder, rng.standard_normal((2, 2)).astype(np.float32))
        s.close()
    for s, _, _ in sessions:
        if s.server_instance_id != victim.instance:  # the victim's are gone already
            s.close()
    client.close()
