"""The Python client side of bench/compare: the onemodel package against the raw generated
gRPC stub, both in this process, against one onemodeld it starts (--listen 127.0.0.1:0).
Speaks runner_protocol.py's protocol on stdin/stdout. Run with /usr/bin/python3 and
PYTHONPATH=<build>/client/python/gen:client/python, ONEMODELD=<build>/server/onemodeld
(compare.py sets them).

Cases: small_op (Session.op("Relu") on a 16-float tensor: request building, the call,
RemoteTensor) and small_op_raw_stub (the same RunRequest sent through the stub);
put_get_64m (Session.put + get of a 64 MiB float32 array, then release) and
put_get_64m_raw_stream (the same bytes through the stub's UploadTensor / DownloadTensor in 1 MiB
chunks sliced beforehand, downloaded chunks kept as they come: no conversion either way);
digits_cnn_step (digits_cnn.py's training step through the server, against torch_runner.py's
digits_cnn_step in local PyTorch; digits_cnn_step_nhwc: the same with NHWC convolutions and
keep_layout, to compare).

    python3 bench/compare/py_client_runner.py --sweep    # the streaming threshold measurement

prints put+get times of 1-64 MiB sent as one message and streamed (the crossover chosen for
onemodel._transfer.STREAM_THRESHOLD_BYTES; docs/performance.md).
"""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import onemodel
from onemodel import optim, pb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner_protocol import serve  # noqa: E402
import digits_cnn  # noqa: E402

MiB = 1 << 20


class Server:
    """onemodeld on free ports, stopped with SIGTERM at exit."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="py-bench-")
        ready = os.path.join(self.dir, "ready")
        self.proc = subprocess.Popen(
            [os.environ["ONEMODELD"], "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
             "--ready-file", ready, "--log-level", "warn"], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not os.path.exists(ready):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("onemodeld did not start")
            time.sleep(0.02)
        self.target = onemodel.read_ready_file(ready)["grpc"]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)


def raw_upload_download(session, chunks, dims):
    """UploadTensor + DownloadTensor + ReleaseTensors through the stub, no conversion."""
    stub, md = session.client.stub, session.metadata

    def requests():
        yield pb.UploadTensorRequest(header=pb.UploadHeader(session_id=session.id, data_type=1,
                                                            dims=dims))
        for c in chunks:
            yield pb.UploadTensorRequest(data=c)
    info = stub.UploadTensor(requests(), metadata=md)
    got = [m.data for m in stub.DownloadTensor(
        pb.DownloadTensorRequest(session_id=session.id, handle=info.handle), metadata=md)]
    stub.ReleaseTensors(pb.ReleaseTensorsRequest(session_id=session.id, handles=[info.handle]),
                        metadata=md)
    return got


def cases(session):
    """name -> setup returning the callable to time."""
    def small_op():
        x = session.put(np.arange(16, dtype=np.float32))
        return lambda: session.op("Relu", x)

    def small_op_raw_stub():
        x = session.put(np.arange(16, dtype=np.float32))
        req = pb.RunRequest(session_id=session.id)
        req.operations.append(pb.Operation(op="Relu", inputs=[pb.Input(handle=x.handle)]))
        stub, md = session.client.stub, session.metadata
        return lambda: stub.Run(req, metadata=md)

    a = np.random.default_rng(0).standard_normal(64 * MiB // 4, dtype=np.float32)

    def put_get_64m():
        def step():
            t = session.put(a)
            session.get(t)
            session.release(t)
        return step

    def put_get_64m_raw_stream():
        raw = a.tobytes()
        chunks = [raw[i:i + MiB] for i in range(0, len(raw), MiB)]
        return lambda: raw_upload_download(session, chunks, [a.size])

    return {"small_op": small_op, "small_op_raw_stub": small_op_raw_stub,
            "put_get_64m": put_get_64m, "put_get_64m_raw_stream": put_get_64m_raw_stream,
            "digits_cnn_step": lambda: digits_cnn_step(session),
            "digits_cnn_step_nhwc": lambda: digits_cnn_step(session, nhwc=True)}


def digits_cnn_step(session, nhwc=False):
    """digits_cnn.py's step through onemodeld, as tests/proofs/test_digits_cnn.py takes it:
    one Run (reset_arena, the forward and the loss, the Grad operations of backward(), the SGD
    updating the parameters in place), images, labels and index table resident in the
    session's pool (as FLOAT: Gather takes FLOAT data; each step Casts its pieces to INT64),
    nothing fetched.
    nhwc (case digits_cnn_step_nhwc, not an entry): each convolution takes its input as NHWC
    with keep_layout (the oneDNN path); measured no faster than this NCHW step once the layout
    conversions around the ReLUs are paid (docs/performance.md)."""
    x, y, order = (session.tensor(a.astype(np.float32)) for a in digits_cnn.data())
    params = [session.parameter(w) for w in digits_cnn.initial_weights(1)]
    opt = optim.SGD(params, **digits_cnn.SGD_ARGS)
    step = [0]

    def run():
        session.reset_arena()  # goes with the forward Run
        opt.zero_grad()
        rows = order[step[0] % order.shape[0]].cast("int64")
        step[0] += 1
        labels = y.index_select(0, rows).cast("int64")
        conv = ((lambda x, w, b: x.to_layout("NHWC").conv2d(w, b, padding=1, keep_layout=True))
                if nhwc else (lambda x, w, b: x.conv2d(w, b, padding=1)))
        z = digits_cnn.forward(x.index_select(0, rows), params, conv,
                               lambda h: h.max_pool2d(2, stride=2),
                               lambda h: h.reshape(h.shape[0], -1))
        z.cross_entropy(labels).backward()
        opt.step()
    return run


def sweep(session, repeats=7):
    """put+get of 1-64 MiB as one message and streamed: median ms of `repeats`."""
    def ms(fn):
        fn()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3

    print("%8s %12s %12s" % ("MiB", "one msg ms", "streamed ms"))
    for mib in (0.25, 0.5, 1, 2, 4, 8, 16, 32, 63.99):
        a = np.ones(int(mib * MiB) // 4, np.float32)

        def one(stream):
            t = session.put(a, stream=stream)
            session.get(t, stream=stream)
            session.release(t)
        print("%8g %12.1f %12.1f" % (mib, ms(lambda: one(False)), ms(lambda: one(True))),
              flush=True)


def main():
    server = Server()
    try:
        with onemodel.Client(server.target) as client, client.session() as session:
            if "--sweep" in sys.argv:
                sweep(session)
            else:
                serve(cases(session), lambda: {"onemodel": onemodel.__version__,
                                               "grpc": __import__("grpc").__version__,
                                               "numpy": np.__version__})
    finally:
        server.stop()


if __name__ == "__main__":
    main()
