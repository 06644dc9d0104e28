"""The comparisons of issue 9, as data for compare.py: each entry names the runner and case on
our side and on the baseline's, the unit it is reported in, and its goal (the ratio wanted;
every ratio is "how many times better we are", above 1 better).

Runners: "ours" (compare_runner, C++, on glibc's malloc as onemodeld), "mimalloc" (the same
compare_runner with Debian's libmimalloc preloaded: its malloc_* cases time mimalloc as the
process's allocator), "torch" (torch_runner.py), "ort" (ort_runner.mjs), "py"
(py_client_runner.py: the Python package against the raw generated stub, issue 18).
Units: "GB/s" and "GFLOPS" are rates (work / seconds, each side's own work, or ours when the
baseline does not say); "ms" and "ns/op" are times (seconds x 1e3, or seconds / work x 1e9).
"""
from dataclasses import dataclass, field


@dataclass
class Entry:
    name: str
    unit: str
    ours: tuple          # (runner, case)
    baseline: tuple      # (runner, case)
    baseline_name: str
    goal: float | None   # None: issue 9 sets none
    limit: str           # what bounds the figure
    extra: dict = field(default_factory=dict)  # label -> (runner, case), sampled in turn too
    settle: bool = False  # pause before each sample: OpenBLAS threads spin ~0.1 s after a call
    # Cases each side runs under the same name (ours and baseline then name only the runners):
    # the figures and the ratio are geometric means over them (compare.measure_parts).
    parts: tuple = ()
    # Seconds each sample lasts at least, when the run's default (0.05 s) would time a handful
    # of millisecond steps mostly in the wake-up from the settle pause (not with --quick).
    sample_seconds: float | None = None


def _bw(name, case, stream, goal=0.85):
    stream_name = {"triad_16m": "STREAM triad 16M floats (same run)",
                   "triad_nt_16m": "STREAM triad with streaming stores 16M floats (same run)",
                   "copy_16m": "STREAM copy 16M floats (same run)"}[stream]
    return Entry(name, "GB/s", ("ours", case), ("ours", stream), stream_name, goal, "bandwidth")


ENTRIES = [
    _bw("add_16m_vs_bandwidth", "add_16m", "triad_16m"),
    _bw("relu_16m_vs_bandwidth", "relu_16m", "copy_16m"),
    _bw("add_rowbcast_16m_vs_bandwidth", "add_rowbcast_16m", "copy_16m"),
    _bw("half_convert_16m_vs_bandwidth", "half_convert_16m", "copy_16m", 0.7),
    _bw("bf16_convert_16m_vs_bandwidth", "bf16_convert_16m", "copy_16m", 0.7),
    Entry("matmul_1024_vs_peak", "GFLOPS", ("ours", "matmul_1024"), ("ours", "fma_peak"),
          "FP32 FMA peak, all threads (same run)", 0.8, "compute", settle=True),
    Entry("add_16m_vs_torch", "GB/s", ("ours", "add_16m"), ("torch", "add_16m"),
          "torch.add(out=)", 1.4, "bandwidth"),
    Entry("exp_16m_vs_torch", "GB/s", ("ours", "exp_16m"), ("torch", "exp_16m"),
          "torch.exp(out=)", 1.0, "bandwidth"),
    Entry("matmul_small_vs_torch", "GFLOPS", ("ours", None), ("torch", None),
          "torch.matmul(out=), 2 threads (OpenBLAS); geometric mean over the parts", 1.2,
          "per-call overhead, compute",
          parts=("matmul_64x784x256", "matmul_64x256x10", "matmul_512x20x64")),
    Entry("matmul_1024_vs_torch", "GFLOPS", ("ours", "matmul_1024"), ("torch", "matmul_1024"),
          "torch.matmul(out=) (OpenBLAS)", 1.0, "compute", settle=True),
    Entry("maxpool_nchw_vs_torch", "ms", ("ours", "maxpool_nchw"),
          ("torch", "maxpool_channels_last"), "torch max_pool2d, channels-last", 1.0,
          "bandwidth"),
    Entry("maxpool_nhwc_vs_torch", "ms", ("ours", "maxpool_nhwc"),
          ("torch", "maxpool_channels_last"), "torch max_pool2d, channels-last", 1.0,
          "bandwidth"),
    Entry("maxpool_backward_vs_torch", "ms", ("ours", "maxpool_backward"),
          ("torch", "maxpool_backward"), "torch autograd.grad, channels-last", 1.0,
          "bandwidth"),
    Entry("mlp_step_vs_torch", "ms", ("ours", "mlp_step"), ("torch", "mlp_step"),
          "torch autograd + SGD step", 1.0, "compute", settle=True),
    Entry("add_16m_vs_onnxruntime", "GB/s", ("ours", "add_16m"), ("ort", "add_16m"),
          "onnxruntime-node Add (node time)", 1.4, "bandwidth"),
    Entry("matmul_1024_vs_onnxruntime", "GFLOPS", ("ours", "matmul_1024"),
          ("ort", "matmul_1024"), "onnxruntime-node MatMul (node time)", 1.0, "compute",
          settle=True),
    Entry("maxpool_vs_onnxruntime", "ms", ("ours", "maxpool_nchw"), ("ort", "maxpool_nchw"),
          "onnxruntime-node MaxPool NCHW (node time)", 1.0, "bandwidth"),
    # No goal (issue 21): it was set when this runner's "glibc" was in fact mimalloc (whose
    # same-size pair needs no locked instruction); pool_64k_vs_atomic_floor says how close the
    # pool is to its own floor (docs/performance.md).
    Entry("pool_64k_vs_malloc", "ns/op", ("ours", "pool_64k"), ("ours", "malloc_64k"),
          "glibc malloc/free 64 KiB", None, "bookkeeping",
          extra={"mimalloc": ("mimalloc", "malloc_64k")}),
    Entry("pool_64k_vs_atomic_floor", "ns/op", ("ours", "pool_64k"), ("ours", "atomic_floor"),
          "two uncontended lock/unlock pairs (xchg + store), the pool's locked instructions",
          0.8, "locked instructions"),
    Entry("pool_16m_vs_malloc", "ns/op", ("ours", "pool_16m"), ("ours", "malloc_16m"),
          "glibc malloc/free 16 MiB", 3.0, "locked instructions",
          extra={"mimalloc": ("mimalloc", "malloc_16m")}),
    Entry("arena_vs_malloc", "ns/op", ("ours", "arena_256"), ("ours", "malloc_256"),
          "glibc malloc/free 256 B", 3.0, "bookkeeping",
          extra={"mimalloc": ("mimalloc", "malloc_256")}),
    Entry("pool_mixed_2t_vs_malloc", "ns/op", ("ours", "pool_mixed_2t"),
          ("ours", "malloc_mixed_2t"), "glibc malloc/free, 2 threads, 64 B-16 MiB", 2.0,
          "lock contention"),
    Entry("pool_mixed_2t_vs_mimalloc", "ns/op", ("ours", "pool_mixed_2t"),
          ("mimalloc", "malloc_mixed_2t"), "mimalloc, 2 threads, 64 B-16 MiB", 2.0,
          "lock contention"),
    Entry("py_small_op_vs_raw_stub", "ms", ("py", "small_op"), ("py", "small_op_raw_stub"),
          "the same RunRequest through the generated stub (Python)", 0.8,
          "Python per-call work"),
    Entry("py_put_get_64m_vs_raw_stream", "ms", ("py", "put_get_64m"),
          ("py", "put_get_64m_raw_stream"),
          "UploadTensor + DownloadTensor through the stub, 1 MiB chunks, no conversion (Python)",
          0.8, "gRPC transport in Python"),
    # Issue 21: large outputs are written with streaming stores (docs/kernels.md).
    _bw("add_16m_vs_stream_triad_nt", "add_16m", "triad_nt_16m", 0.9),
    Entry("relu_16m_vs_torch", "GB/s", ("ours", "relu_16m"), ("torch", "relu_16m"),
          "torch.clamp_min(x, 0, out=) (relu has no out= form)", 1.4, "bandwidth"),
    # No goal: what skipping the read-for-ownership is worth on this machine, the same loops
    # with streaming and with ordinary stores. PyTorch's add and relu store as the ordinary
    # loops do, so these bound add_16m_vs_torch and relu_16m_vs_torch from above while both
    # sides run at memory speed (docs/performance.md, "The ceiling of streaming stores").
    Entry("stream_triad_nt_vs_triad", "GB/s", ("ours", "triad_nt_16m"), ("ours", "triad_16m"),
          "STREAM triad 16M floats (same run)", None, "read-for-ownership"),
    Entry("stream_copy_nt_vs_copy", "GB/s", ("ours", "copy_nt_16m"), ("ours", "copy_16m"),
          "STREAM copy 16M floats (same run)", None, "read-for-ownership"),
    Entry("adamw_1m_params_vs_torch", "ms", ("ours", "adamw_1m"), ("torch", "adamw_1m"),
          "torch.optim.AdamW(foreach=True).step, four [512, 512] parameters", 2.0,
          "bandwidth"),
    _bw("avgpool_vs_bandwidth", "avgpool_nhwc", "copy_16m", 0.8),
    Entry("relumaxpool_vs_relu_then_maxpool", "ms", ("ours", "relumaxpool_nhwc"),
          ("ours", "relu_then_maxpool_nhwc"), "Relu then MaxPool2d, NHWC (same run)", 1.5,
          "bandwidth"),
    # Issue 17: an Embedding lookup moves rows at memory speed (one memcpy per row).
    _bw("embedding_gather_vs_bandwidth", "embedding_64k_x256", "copy_16m", 0.7),
    # Issue 17: LayerNorm [8192, 1024] with scale and bias (kernel_cases.cc, torch_runner.py).
    _bw("layernorm_8192x1024_vs_bandwidth", "layernorm_8192x1024", "copy_16m", 0.8),
    Entry("layernorm_vs_torch", "GB/s", ("ours", "layernorm_8192x1024"),
          ("torch", "layernorm_8192x1024"), "torch F.layer_norm, no grad", 3.0, "bandwidth"),
    # Issue 16: convolution layers of ResNet-50 and MobileNet (conv_cases.cc), ours with NHWC
    # input against PyTorch channels-last, no bias; the LeNet step of tests/common/lenet.h.
    *[Entry(case + "_vs_torch", "GFLOPS", ("ours", case), ("torch", case),
            "torch F.conv2d, channels-last, no grad", 1.0, limit, settle=True)
      for case, limit in (("conv_resnet_3x3", "compute"), ("conv_resnet_1x1", "compute"),
                          ("conv_stem_7x7", "compute"), ("conv_depthwise", "bandwidth"))],
    Entry("conv_3x3_vs_peak", "GFLOPS", ("ours", "conv_resnet_3x3"), ("ours", "fma_peak"),
          "FP32 FMA peak, all threads (same run)", 0.75, "compute", settle=True),
    Entry("conv_backward_vs_torch", "GFLOPS", ("ours", "conv_resnet_3x3_backward"),
          ("torch", "conv_resnet_3x3_backward"),
          "torch autograd.grad of input and weight, channels-last", 1.0, "compute", settle=True),
    Entry("conv_vs_onnxruntime", "GFLOPS", ("ours", "conv_resnet_3x3"),
          ("ort", "conv_resnet_3x3"), "onnxruntime-node Conv NCHW, weight an initializer "
          "(node time)", 1.0, "compute", settle=True),
    Entry("cnn_step_vs_torch", "ms", ("ours", "cnn_step"), ("torch", "cnn_step"),
          "torch autograd + SGD step, the same CNN", 1.0, "per-op overhead, compute",
          settle=True),
    # Issue 17: the digits CNN of tests/proofs/test_digits_cnn.py (digits_cnn.py), batch 256,
    # one step (one Run: arena reset, forward + loss, Grads, SGD) through the Python client.
    # Samples of 0.5 s: a 0.05 s sample is ~15 steps, timed mostly while this VM's vCPUs and
    # each side's threads wake from the settle pause (docs/performance.md, "Training steps").
    Entry("train_step_rpc_vs_torch_local", "ms", ("py", "digits_cnn_step"),
          ("torch", "digits_cnn_step"),
          "torch autograd + optim.SGD(momentum) step in this machine's PyTorch, default threads",
          1.0, "compute, round trips", settle=True, sample_seconds=0.5,
          extra={"torch_1_thread": ("torch", "digits_cnn_step_1_thread")}),
]

# Entries rpc_bench measures itself (through a running server on loopback), with their goals.
RPC_ENTRIES = {
    # Issue 21 raised this goal from issue 9's 0.67 (Add <= 1.5 x Ping) to 0.9 (inline runs).
    "rpc_small_add_vs_empty_rpc": (0.9, "syscalls and wake-ups"),
    "rpc_batch10_vs_10_single": (5.0, "round trips"),
    "rpc_put_get_256m_vs_raw_stream": (0.8, "gRPC transport, page faults"),
    "sessions_32_throughput_vs_1": (1.6, "cores"),
    # Issue 17: 2 x the in-process step + 3 x Ping over the RPC step (bench/rpc/train_step.cc).
    "train_step_rpc_vs_inprocess": (1.0, "round trips"),
}
