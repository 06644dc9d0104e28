"""onemodeld as a process: flags, environment, ready file, limits, idle expiry, auth, signals.
Each test starts a server of its own."""

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import grpc
import numpy as np
import pytest

import onemodel
from onemodel import pb, health_pb2
from conftest import assert_error, start_server, stop_and_check
from onemodel.aio import AsyncClient

KiB = 1 << 10
MiB = 1 << 20


NO_METRICS = ['--listen', '127.0.0.1:0', '--metrics-listen', '']


@pytest.fixture
def started():
    """start(*flags, metrics=False, env=None): a server stopped (SIGTERM, exit 0) after the test.
    Without metrics unless asked: civetweb takes ~2 s to stop."""
    servers = []

    def start(*args, metrics=False, **kw):
        if not metrics:
            kw.setdefault('listen_args', NO_METRICS)
        s = start_server(*args, **kw)
        servers.append(s)
        return s

    yield start
    for s in servers:
        stop_and_check(s)


def test_ready_file(server):
    s = server
    with open(s.ready_path) as f:
        lines = f.read().splitlines()
    keys = [line.split('=', 1)[0] for line in lines if line]
    assert keys == ['grpc', 'metrics', 'instance']
    assert re.fullmatch(r'127\.0\.0\.1:\d+', s.grpc) and not s.grpc.endswith(':0')
    assert re.fullmatch(r'127\.0\.0\.1:\d+', s.metrics) and not s.metrics.endswith(':0')
    assert s.instance
    assert s.client().ping() == s.instance
    assert s.client().health() == 'SERVING'
    assert not [f for f in os.listdir(s.workdir) if f.startswith('ready') and f != 'ready']  # tmp renamed


def test_ready_file_without_metrics(started):
    s = started()
    assert 'metrics' not in s.ready and s.grpc
    assert s.client().health() == 'SERVING'


def test_metrics_other_paths_do_not_crash(started):
    s = started(metrics=True)
    for path in ('/', '/nothing-here', '/metrics/extra'):
        try:
            urllib.request.urlopen('http://%s%s' % (s.metrics, path), timeout=10).read()
        except urllib.error.HTTPError as e:
            assert e.code == 404, (path, e.code)
        except (urllib.error.URLError, ConnectionError) as e:
            pytest.fail('GET %s on the metrics port: %r; onemodeld exit status %s\n%s'
                        % (path, e, s.proc.poll(), s.log_tail()))
    assert s.proc.poll() is None
    assert s.client().ping() == s.instance


def test_two_instances_differ_and_sessions_do_not_cross(started):
    a, b = started(), started()
    assert a.instance != b.instance
    ca, cb = a.client(), b.client()
    with ca.session() as s:
        with pytest.raises(grpc.RpcError) as ei:
            cb.stub.KeepAlive(pb.KeepAliveRequest(session_id=s.id))
        assert ei.value.code() == grpc.StatusCode.NOT_FOUND
        msg = ei.value.details().lower()
        assert 'session' in msg and 'not found' in msg
        assert s.keep_alive().server_instance_id == a.instance


def test_message_limit_flag_and_auto_streaming(started):
    s = started('--max-message-bytes', '64KiB')
    c = s.client()
    with c.session() as sess:
        assert sess.max_message_bytes == 64 * KiB
        a = np.arange(40000, dtype=np.float32)                 # 160 KB
        with pytest.raises(onemodel.ResourceExhausted) as ei:
            sess.put(a, stream=False)
        e = assert_error(ei, grpc.StatusCode.RESOURCE_EXHAUSTED)
        details = e.details.replace(',', '')
        assert str(64 * KiB) in details or '64 KiB' in details, details
        t = sess.put(a)                                        # streamed automatically
        with pytest.raises(onemodel.ResourceExhausted) as ei:
            sess.get(t.handle, stream=False)
        details = ei.value.details.replace(',', '')
        assert (str(160000) in details or '156.25 KiB' in details) and \
            (str(64 * KiB) in details or '64 KiB' in details), details
        assert np.array_equal(sess.get(t.handle), a)          # unary refused, then streamed
        assert np.array_equal(sess.get(t), a)                 # known size: streamed directly
        small = sess.put(np.ones(100, np.float32))
        assert sess.get(small).sum() == 100
        # the largest tensor the client sends unary, and one just above it (streamed)
        for n in (64 * KiB - onemodel.client.MESSAGE_OVERHEAD, 64 * KiB - 100, 64 * KiB):
            b = (np.arange(n) % 253).astype(np.uint8)
            h = sess.put(b)
            assert sess.get(h).tobytes() == b.tobytes()
            assert sess.get(h.handle).tobytes() == b.tobytes()


def test_a_request_too_large_for_the_server_hints_at_streaming(started):
    s = started('--max-message-bytes', '1MiB')
    with s.client().session() as sess:
        t = sess.tensor(np.ones(1, np.float32))
        big = np.ones(300000)                                  # 1.2 MB inline as FLOAT
        for compute in (lambda: (t + big).numpy(), lambda: sess.op('Add', t.handle, big)):
            with pytest.raises(onemodel.ResourceExhausted) as ei:
                compute()
            assert_error(ei, grpc.StatusCode.RESOURCE_EXHAUSTED, 'larger than max',
                         '--max-message-bytes', 'upload large arrays first with s.put() or '
                         's.tensor(), which stream them')
        assert (t + sess.tensor(big)).numpy().shape == (300000,)  # streamed: the hint works
    with s.client().session(memory_limit_bytes=1024) as small:  # other refusals: no hint
        with pytest.raises(onemodel.ResourceExhausted) as ei:
            small.put(np.ones(4096, np.float32))
        assert 'stream' not in ei.value.details


def test_environment_variables_configure(started):
    s = started(env={'ONEMODEL_MAX_MESSAGE_BYTES': '128KiB', 'ONEMODEL_MAX_SESSIONS': '2'})
    c = s.client()
    a, b = c.session(), c.session()
    assert a.max_message_bytes == 128 * KiB
    with pytest.raises(onemodel.ResourceExhausted) as ei:
        c.session()
    assert_error(ei, grpc.StatusCode.RESOURCE_EXHAUSTED)
    a.close()
    c.session().close()   # room again
    b.close()


def test_flag_wins_over_environment(started):
    s = started('--max-message-bytes', '96KiB', env={'ONEMODEL_MAX_MESSAGE_BYTES': '128KiB'})
    with s.client().session() as sess:
        assert sess.max_message_bytes == 96 * KiB


def test_handle_and_run_operation_limits(started):
    s = started('--max-handles', '4', '--max-run-operations', '3')
    with s.client().session() as sess:
        a = sess.put(np.ones(2, np.float32))
        with pytest.raises(onemodel.ResourceExhausted) as ei:
            sess.run([{'op': 'Neg', 'inputs': [a]}] * 4)
        assert_error(ei, grpc.StatusCode.RESOURCE_EXHAUSTED, '--max-run-operations')
        outs = sess.run([{'op': 'Neg', 'inputs': [a]}] * 3)      # 4 handles now
        with pytest.raises(onemodel.ResourceExhausted) as ei:
            sess.put(np.ones(2, np.float32))
        assert_error(ei, grpc.StatusCode.RESOURCE_EXHAUSTED, '--max-handles')
        sess.release(outs[0])
        sess.put(np.ones(2, np.float32))
        sess.reset_arena()                                         # drops the arena handles
        assert len(sess.run([{'op': 'Neg', 'inputs': [a]}] * 2)) == 2


def test_idle_sessions_expire(started):
    s = started('--idle-timeout', '1')
    c = s.client()
    idle = c.session()
    kept = c.session()
    assert idle.reply.idle_timeout_ms == 1000
    t = idle.put(np.ones(1000, np.float32))
    deadline = time.monotonic() + 8
    expired = False
    while time.monotonic() < deadline and not expired:
        time.sleep(0.25)
        kept.keep_alive()
        expired = c.stats().sessions.expired >= 1
    assert expired, 'the idle session did not expire within 8 s'
    with pytest.raises(onemodel.NotFound) as ei:
        idle.get(t)
    assert_error(ei, grpc.StatusCode.NOT_FOUND, 'session', 'not found')
    kept.put(np.ones(3, np.float32))        # kept alive by KeepAlive
    st = c.stats()
    assert st.sessions.expired == 1
    assert st.sessions.leaked_buffers_reclaimed >= 1
    kept.close()


def test_session_of_a_restarted_server(started):
    first = started()
    c = onemodel.Client(first.grpc)  # not first.client(): stopping the server closes those
    async def async_session():  # the asyncio client's, across the same restart
        ac = AsyncClient(first.grpc)
        return ac, await ac.session()
    loop = asyncio.new_event_loop()
    ac, s_async = loop.run_until_complete(async_session())
    with c.session() as s:
        assert not s.server_restarted()
        assert not loop.run_until_complete(s_async.server_restarted())
        stop_and_check(first)
        second = started(listen_args=['--listen', first.grpc, '--metrics-listen', ''])
        c.wait_for_ready(10)
        assert s.server_restarted()
        loop.run_until_complete(asyncio.wait_for(ac.channel.channel_ready(), 10))
        assert loop.run_until_complete(s_async.server_restarted())
        with pytest.raises(onemodel.NotFound):
            loop.run_until_complete(s_async.keep_alive())
        assert loop.run_until_complete(s_async.close()) is None
        loop.run_until_complete(ac.close())
        loop.close()
        with pytest.raises(onemodel.NotFound):
            s.keep_alive()
    assert s.closed  # leaving the block closed quietly: the session had gone with the server
    assert second.instance != first.instance
    c.close()


def test_auth_token(started, tmp_path):
    token_file = tmp_path / 'token'
    token_file.write_text('s3cret-token\n')
    s = started('--auth-token-file', str(token_file))
    anon = s.client()
    assert anon.health() == 'SERVING'                        # health checks stay open
    with pytest.raises(onemodel.Unauthenticated) as ei:
        anon.ping()
    assert_error(ei, grpc.StatusCode.UNAUTHENTICATED, 'authorization')
    with pytest.raises(onemodel.Unauthenticated):
        s.client(token='wrong').session()
    good = s.client(token='s3cret-token')
    assert good.ping() == s.instance
    with good.session() as sess:
        t = sess.put(np.ones(3, np.float32))
        assert sess.get(t).tolist() == [1, 1, 1]
        assert len(list(good.stub.DownloadTensor(
            pb.DownloadTensorRequest(session_id=sess.id, handle=t.handle), metadata=sess.metadata))) >= 2
        with pytest.raises(grpc.RpcError) as ei:
            anon.stub.GetTensor(pb.GetTensorRequest(session_id=sess.id, handle=t.handle))
        assert ei.value.code() == grpc.StatusCode.UNAUTHENTICATED


def _busy_server(*flags):
    """A server with open sessions (leaked tensors, arena results), a health Watch and a
    WatchStats stream in flight; returns (server, client, statuses seen by the watch, stats call)."""
    s = start_server(*flags, listen_args=NO_METRICS)
    c = s.client()
    for sess in [c.session() for _ in range(3)]:
        sess.put(np.ones((128, 128), np.float32))          # leaked on purpose
        sess.op('Exp', sess.put(np.ones(10, np.float32)))
    statuses = []
    watch = c.health_stub.Watch(health_pb2.HealthCheckRequest(service=''))
    stats = c.stub.WatchStats(pb.WatchStatsRequest(interval_ms=100))
    next(stats)

    def read_watch():
        try:
            for r in watch:
                statuses.append(health_pb2.HealthCheckResponse.ServingStatus.Name(r.status))
        except grpc.RpcError as e:
            statuses.append(e.code().name)

    threading.Thread(target=read_watch, daemon=True).start()
    deadline = time.monotonic() + 5
    while not statuses and time.monotonic() < deadline:
        time.sleep(0.01)
    assert statuses[:1] == ['SERVING']
    return s, c, statuses, stats


def _wait_exit(s, timeout):
    try:
        rc = s.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        s.proc.kill()
        s.proc.wait()
        rc = None
    s.returncode = rc if rc is not None else s.proc.returncode
    s._log.close()
    return rc


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGINT], ids=['SIGTERM', 'SIGINT'])
def test_signal_with_streams_drains_and_exits_zero(sig):
    s, c, statuses, stats = _busy_server('--drain-seconds', '1')
    t0 = time.monotonic()
    s.proc.send_signal(sig)
    rc = _wait_exit(s, 15)
    assert rc == 0, 'exit code %s after %s\n%s' % (rc, sig.name, s.log_tail())
    shutil.rmtree(s.workdir, ignore_errors=True)
    assert time.monotonic() - t0 < 10
    assert 'NOT_SERVING' in statuses, statuses     # health turned NOT_SERVING first
    try:                                           # the stats stream ended one way or another
        for _ in stats:
            pass
    except grpc.RpcError:
        pass
    c.close()


def test_sigterm_ends_endless_streams_promptly():
    """WatchStats and Health/Watch never finish by themselves; with the default --drain-seconds
    (30 s, also Kubernetes' default grace period before SIGKILL) the server should end them at
    SIGTERM rather than wait out the drain."""
    s, c, statuses, stats = _busy_server()
    t0 = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    rc = _wait_exit(s, 8)
    waited = time.monotonic() - t0
    c.close()
    if rc == 0:
        shutil.rmtree(s.workdir, ignore_errors=True)
    assert rc == 0, 'no clean exit within 8 s of SIGTERM with a WatchStats and a Health/Watch stream ' \
                    'open (exit code %s after %.1f s)\n%s' % (rc, waited, s.log_tail())


def test_failed_calls_logged_at_most_the_rate_the_flag_allows(started):
    """A client failing calls in a loop (stale handles) gets a burst of lines in the log, then
    one per earned interval, each after a line counting those held back; every failure is
    still in the statistics."""
    s = started('--max-request-warnings-per-second', '3', '--log-format', 'json')
    with s.client() as c, c.session() as session:
        x = session.put(np.ones(4, np.float32))
        y = session.op('Neg', x)
        session.reset_arena()
        begin = time.monotonic()
        for _ in range(200):
            with pytest.raises(onemodel.FailedPrecondition):
                session.get(y)
        time.sleep(0.4)  # earns one more line
        with pytest.raises(onemodel.FailedPrecondition):
            session.get(y)
        elapsed = time.monotonic() - begin
        errors = sum(m.errors for m in c.stats().rpcs)
    with open(s.log_path, encoding='utf-8') as f:
        lines = [json.loads(line) for line in f if line.startswith('{')]
    warnings = [line for line in lines if line['level'] == 'warning']
    failed = [line for line in warnings if line['msg'].startswith('failed: ')]
    held = [line for line in warnings if 'request warning(s) not logged' in line['msg']]
    assert len(failed) + len(held) == len(warnings)
    # the burst of 3, then at most 3 a second (a slow build earns more during the loop)
    assert 3 < len(failed) <= 3 + 3 * elapsed + 1
    assert held, 'the last failure came after refused ones'
    counts = []
    for line in held:
        count = int(line['msg'].split()[0])
        assert line['msg'] == ('%d request warning(s) not logged: over '
                               '--max-request-warnings-per-second 3' % count)
        counts.append(count)
        following = warnings[warnings.index(line) + 1]
        assert following['msg'].startswith('failed: '), 'a count line comes before a logged one'
    assert sum(counts) + len(failed) == 201
    assert errors >= 201
