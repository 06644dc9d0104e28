"""The asyncio client (onemodel.aio): session, put, get, run, op, backward, release,
keep_alive, server_restarted, close, streaming both ways, errors, and several sessions at once
on one channel."""

import asyncio

import numpy as np
import pytest

import onemodel
from onemodel import pb
from onemodel.aio import AsyncClient

MiB = 1 << 20


def run(coro):
    return asyncio.run(coro)


def test_core_calls(server):
    async def main():
        async with AsyncClient(server.grpc) as c:
            assert await c.ping() == server.instance
            async with await c.session(kernels='exact') as s:
                w = await s.put(np.arange(12.0).reshape(4, 3), requires_grad=True)
                x = await s.put(np.ones((2, 4)))
                assert w.dtype == onemodel.DataType.FLOAT and w.requires_grad
                h, loss = await s.run([{'op': 'MatMul', 'inputs': [x, w]},
                                       {'op': 'Sum', 'inputs': [onemodel.Output(0)]}])
                (gw,) = await s.backward(loss, [w])
                y = await s.op('Softmax', h, axis=1, scale=2)
                return (await s.get(h), await s.get(loss), await s.get(gw), await h.numpy(),
                        await s.get(y), await s.release(x))
    h, loss, gw, h2, y, released = run(main())
    want = np.ones((2, 4)) @ np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(h, want)
    np.testing.assert_allclose(h2, want)
    assert loss.item() == want.sum()
    np.testing.assert_allclose(gw, np.full((4, 3), 2.0))
    np.testing.assert_allclose(y.sum(axis=1), [1.0, 1.0], rtol=1e-6)
    assert released == 1


def test_streams_both_ways_with_progress(server):
    a = np.arange(3 * MiB // 4 + 3, dtype=np.float32)
    ups, downs = [], []

    async def main():
        async with AsyncClient(server.grpc) as c, await c.session() as s:
            t = await s.put(a, progress=lambda d, n: ups.append(d))
            b = await s.get(t, progress=lambda d, n: downs.append(d))
            small = await s.get(await s.put([1.0, 2.0]), progress=lambda d, n: downs.append(-d))
            return b, small
    b, small = run(main())
    assert np.array_equal(a, b) and small.tolist() == [1.0, 2.0]
    assert len(ups) == 4 and ups[-1] == a.nbytes
    assert downs[:-1][-1] == a.nbytes and downs[-1] == -8


def test_errors_and_close(server):
    async def main():
        async with AsyncClient(server.grpc) as c:
            s = await c.session()
            with pytest.raises(onemodel.NotFound):
                await s.get('p1.0000000000000000')
            with pytest.raises(onemodel.InvalidArgument, match=r"operation 0 \(Sum\): attribute 'axes'"):
                await s.op('Sum', np.ones(2), axes={'x': 1})
            with pytest.raises(onemodel.InvalidArgument, match='unknown operation'):
                await s.op('Softmx', np.ones(2))
            reply = await s.close()
            assert await s.close() is None
            with pytest.raises(onemodel.NotFound):
                await s.get('p1.0000000000000000')
            return reply
    assert run(main()) is not None


def test_keep_alive_and_server_restarted(server, client):
    async def main():
        async with AsyncClient(server.grpc) as c:
            s = await c.session(idle_timeout_ms=7000)
            assert s.server_instance_id == server.instance
            reply = await s.keep_alive()
            assert reply.server_instance_id == server.instance
            assert reply.idle_timeout_ms == 7000
            assert not await s.server_restarted()
            await s.close()
            with pytest.raises(onemodel.NotFound):
                await s.keep_alive()
            assert not await s.server_restarted()  # gone, but the same server answers
    run(main())


def test_leaving_the_block_of_a_session_already_gone(server, client):
    async def main():
        async with AsyncClient(server.grpc) as c:
            async with await c.session() as s:
                client.stub.CloseSession(pb.CloseSessionRequest(session_id=s.id))  # as expiry
            assert s.closed
            gone = await c.session()
            client.stub.CloseSession(pb.CloseSessionRequest(session_id=gone.id))
            assert await gone.close() is None
            with pytest.raises(KeyError, match='from the body'):
                async with await c.session() as s:
                    client.stub.CloseSession(pb.CloseSessionRequest(session_id=s.id))
                    raise KeyError('from the body')
    run(main())


def test_sessions_fan_out_on_one_channel(server):
    async def one(c, k):
        async with await c.session() as s:
            t = await s.put(np.full(1000, float(k)))
            return (await s.get(await s.op('Sum', t))).item()

    async def main():
        async with AsyncClient(server.grpc) as c:
            return await asyncio.gather(*(one(c, k) for k in range(8)))
    assert run(main()) == [1000.0 * k for k in range(8)]
