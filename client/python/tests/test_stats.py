"""Statistics consistent with what was done (GetStats, WatchStats, Prometheus /metrics).

A server of its own, so that the counters move only with what these tests do."""

import re
import urllib.request

import numpy as np
import pytest

import onemodel
from conftest import start_server, stop_and_check

MiB = 1 << 20


@pytest.fixture(scope='module')
def stats_server():
    s = start_server()
    yield s
    stop_and_check(s)


@pytest.fixture(scope='module')
def sc(stats_server):
    return stats_server.client().wait_for_ready(10)


def rpc_counts(stats):
    """{'Ping': (requests, errors), ...} keyed by the method's short name."""
    return {r.method.rsplit('/', 1)[-1]: (r.requests, r.errors) for r in stats.rpcs}


def scrape(server):
    with urllib.request.urlopen('http://%s/metrics' % server.metrics, timeout=10) as r:
        assert r.status == 200
        assert 'text/plain' in r.headers.get('Content-Type', '')
        return r.read().decode()


def metric(text, name, **labels):
    """The value of one sample of `name` with exactly these labels (None if absent)."""
    for line in text.splitlines():
        if line.startswith('#'):
            continue
        m = re.match(r'^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)', line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ''))
        if got == {k: str(v) for k, v in labels.items()}:
            return float(m.group(3))
    return None


def test_pool_rented_bytes_rise_and_fall(sc):
    base0 = sc.stats().pool
    with sc.session() as s:
        base = sc.stats().pool
        t = s.put(np.ones(MiB // 4 * 3, np.float32))        # 3 MiB
        p = sc.stats().pool
        assert p.rented_bytes >= base.rented_bytes + 3 * MiB
        assert p.rented_buffers == base.rented_buffers + 1
        assert p.rented_requested_bytes == base.rented_requested_bytes + 3 * MiB
        assert p.peak_rented_bytes >= p.rented_bytes
        assert sum(c.rented_buffers for c in p.classes) == p.rented_buffers
        ss = s.stats().session
        assert ss.pool_buffers == 1 and ss.pool_bytes >= 3 * MiB and ss.handles == 1
        s.release(t)
        p2 = sc.stats().pool
        assert p2.rented_bytes == base.rented_bytes
        assert p2.rented_buffers == base.rented_buffers
        assert p2.idle_bytes >= 3 * MiB or p2.frees_over_cap > p.frees_over_cap
        ss = s.stats().session
        assert ss.pool_buffers == 0 and ss.pool_bytes == 0 and ss.handles == 0
        # renting the same size again is a hit
        s.put(np.ones(MiB // 4 * 3, np.float32))
        p3 = sc.stats().pool
        assert p3.hits == p2.hits + 1 and p3.misses == p2.misses
    # the session's leaked buffer and arena chunks went back
    end = sc.stats()
    assert end.pool.rented_bytes == base0.rented_bytes
    assert end.pool.rented_buffers == base0.rented_buffers


def test_session_counters(sc):
    before = sc.stats().sessions
    a = sc.session()
    b = sc.session()
    mid = sc.stats().sessions
    assert mid.created == before.created + 2
    assert mid.open == before.open + 2
    a.put(np.ones(10, np.float32))
    a.put(np.ones(10, np.float32))
    assert a.close().released_buffers == 2
    b.close()
    after = sc.stats().sessions
    assert after.closed == before.closed + 2
    assert after.open == before.open
    assert after.expired == before.expired
    assert after.buffers_released_by_close == before.buffers_released_by_close + 2
    assert after.leaked_buffers_reclaimed == before.leaked_buffers_reclaimed  # only expiry leaks


def test_arena_stats_and_resets(sc):
    with sc.session(arena_chunk_bytes=64 << 10) as s:
        x = s.put(np.ones((64, 64), np.float32))
        st0 = s.stats().session.arena
        for _ in range(3):
            s.op('Exp', x)
        st1 = s.stats().session.arena
        assert st1.used_bytes >= st0.used_bytes + 3 * 64 * 64 * 4
        assert st1.allocations >= st0.allocations + 3
        assert st1.chunks >= 1 and st1.reserved_bytes >= st1.used_bytes
        assert st1.peak_used_bytes >= st1.used_bytes
        r = s.reset_arena()
        assert r.stale_handles == 3
        assert r.arena.resets == st1.resets + 1 and r.arena.used_bytes == 0
        s.run([{'op': 'Neg', 'inputs': [x]}], reset_arena=True)
        st2 = s.stats().session.arena
        assert st2.resets == st1.resets + 2
        assert st2.peak_used_bytes >= st1.used_bytes
        # after warm-up a same-sized step needs no new chunks
        growth = st2.growth_events
        for _ in range(5):
            s.run([{'op': 'Exp', 'inputs': [x]}, {'op': 'Neg', 'inputs': [onemodel.Output(0)]}], reset_arena=True)
        assert s.stats().session.arena.growth_events == growth


def test_rpc_counts(sc):
    before = rpc_counts(sc.stats())
    for _ in range(5):
        sc.ping()
    with sc.session() as s:
        with pytest.raises(onemodel.NotFound):
            s.get('p1.0000000000000000')
        r0 = s.stats().session.requests
        t = s.put(np.ones(3, np.float32))
        s.describe(t)
        s.get(t)
        assert s.stats().session.requests >= r0 + 3
    after = rpc_counts(sc.stats())
    assert after['Ping'][0] == before.get('Ping', (0, 0))[0] + 5
    assert after['Ping'][1] == before.get('Ping', (0, 0))[1]
    assert after['GetTensor'][1] == before.get('GetTensor', (0, 0))[1] + 1
    assert after['CreateSession'][0] == before.get('CreateSession', (0, 0))[0] + 1
    assert after['CloseSession'][0] == before.get('CloseSession', (0, 0))[0] + 1
    for name in ('Ping', 'CreateSession', 'KeepAlive', 'CloseSession', 'PutTensor', 'GetTensor', 'UploadTensor',
                 'DownloadTensor', 'DescribeTensor', 'ReleaseTensors', 'Run', 'Backward', 'ResetArena',
                 'GetStats', 'WatchStats'):
        assert name in after, (name, sorted(after))


def test_watch_stats_sees_changes(sc):
    with sc.session() as s:
        with sc.watch_stats(interval_ms=100) as w:
            first = next(w)
            s.put(np.ones(MiB // 4, np.float32))
            for st in w:
                if st.pool.rented_bytes >= first.pool.rented_bytes + MiB:
                    break
            else:
                pytest.fail('no update showed the new tensor')


def test_prometheus_metrics(stats_server, sc):
    with sc.session() as s:
        s.put(np.ones(1000, np.float32))
        s.op('Exp', s.put(np.ones(10, np.float32)))
        s.reset_arena()
        st = sc.stats()
        text = scrape(stats_server)
        for name in ('onemodel_pool_rented_bytes', 'onemodel_pool_rented_buffers', 'onemodel_pool_idle_bytes',
                     'onemodel_pool_peak_rented_bytes', 'onemodel_pool_hits_total', 'onemodel_pool_misses_total',
                     'onemodel_pool_frees_over_cap_total', 'onemodel_sessions_open', 'onemodel_sessions_created_total',
                     'onemodel_sessions_closed_total', 'onemodel_sessions_expired_total',
                     'onemodel_leaked_buffers_reclaimed_total', 'onemodel_arena_resets_total',
                     'onemodel_rpc_requests_total', 'onemodel_rpc_errors_total', 'onemodel_rpc_latency_seconds'):
            assert re.search(r'^# TYPE %s ' % name, text, re.M), name
        assert metric(text, 'onemodel_sessions_open') == st.sessions.open
        assert metric(text, 'onemodel_sessions_created_total') == st.sessions.created
        assert metric(text, 'onemodel_pool_rented_buffers') == st.pool.rented_buffers
        assert re.search(r'^onemodel_rpc_requests_total\{[^}]*method="[^"]*Ping"', text, re.M) or \
            re.search(r'^onemodel_rpc_requests_total\{[^}]*method="[^"]*GetStats"', text, re.M)
        assert re.search(r'^onemodel_rpc_latency_seconds_bucket\{', text, re.M)
        assert re.search(r'^onemodel_arena_resets_total\{[^}]*\} [1-9]', text, re.M), 'per-session arena resets'
