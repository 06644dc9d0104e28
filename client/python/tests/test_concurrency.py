"""Many sessions at once: 16 threads, 16 sessions, each checking its own results."""

import threading

import numpy as np
import pytest

import onemodel

THREADS = 16
ROUNDS = 8


def test_sixteen_threads_sixteen_sessions(client):
    errors = []
    handles = {}
    barrier = threading.Barrier(THREADS)

    def work(k):
        try:
            rng = np.random.default_rng(100 + k)
            with client.session(kernels='exact' if k % 2 else 'fast', client_name='thread-%d' % k) as s:

                def close(got, ref):
                    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())

                w = rng.standard_normal((8, 4)).astype(np.float32) + k
                wh = s.put(w, requires_grad=True)
                handles[k] = (s, wh.handle)
                barrier.wait()
                for r in range(ROUNDS):
                    x = rng.standard_normal((5, 8)).astype(np.float32) * (k + 1)
                    b = s.batch(reset_arena=True)
                    y = b.add('MatMul', x, wh)
                    z = b.add('Mean', b.add('Mul', y, y))
                    b.run()
                    close(b[y].numpy(), x @ w)
                    (g,) = s.backward(b[z], [wh])
                    close(g.numpy(), x.T @ (2 * (x @ w) / (x @ w).size))
                    big = s.put(np.full((64, 64), k * 1000 + r, np.float32))
                    assert s.get(big)[0, 0] == k * 1000 + r
                    s.release(big)
                barrier.wait()
                # the neighbour's handle is not ours
                other_s, other_h = handles[(k + 1) % THREADS]
                with pytest.raises(onemodel.NotFound):
                    s.get(other_h)
                assert s.get(wh).tobytes() == w.tobytes()
                st = s.stats().session
                assert st.session_id == s.id
                assert st.arena.resets >= ROUNDS
                barrier.wait()
        except BaseException as e:  # noqa: B902 - reported below
            errors.append((k, e))
            barrier.abort()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    real = [(k, e) for k, e in errors if not isinstance(e, threading.BrokenBarrierError)]
    assert not real, real[:3]
    assert not errors, errors[:3]


def test_one_session_shared_by_threads_is_serialized(client):
    with client.session() as s:
        acc = s.put(np.zeros(4, np.float32))
        ones = s.put(np.ones(4, np.float32))
        results = []

        def work():
            for _ in range(20):
                results.append(s.op('Add', acc, ones, placement='pool'))

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(results) == 160
        assert len({r.handle for r in results}) == 160
        for r in results[::17]:
            assert s.get(r).tolist() == [1, 1, 1, 1]
