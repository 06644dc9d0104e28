"""scripts/bench's driver: runs every comparison of issue 9 in one run and writes
bench-results.json ({"machine": {...}, "results": [...]}) and the same as a table.

Kernel, memory and autograd entries (entries.py) are timed by runner processes speaking one
protocol (compare_runner.cc): ours in C++ (and the same binary with mimalloc preloaded, for
the allocator entries), PyTorch in /usr/bin/python3, ONNX Runtime in node. Each entry takes
ROUNDS rounds; a round samples our side and the baseline once each, in turn (each side
leads in turn, extra figures such as mimalloc too, and the order runs backwards every other
cycle: sample_order), so drift and other load hit both alike. Until 2026-12-06 two sides
always ran ours first, right after the previous round's baseline. Figures are medians over
the rounds; "ratio" is the median of the per-round ratios, always "how many times better we
are": ours / baseline for rates, baseline / ours for times. The RPC and session entries come
from rpc_bench, which alternates its own sides the same way.

    /usr/bin/python3 bench/compare/compare.py --bin build/release [--quick] [--out FILE]
"""
import argparse
import ctypes.util
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from entries import ENTRIES, RPC_ENTRIES

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RATES = {"GB/s": 1e9, "GFLOPS": 1e9}
SETTLE_SECONDS = 0.25
# machine keys of the JSON <- the runner whose "info" reply fills them
INFO_KEYS = [("ours", "ours"), ("mimalloc", "mimalloc"), ("torch", "torch"),
             ("onnxruntime", "ort"), ("python_client", "py")]


def mimalloc_library():
    """The soname of Debian's libmimalloc, for LD_PRELOAD (exits with advice if missing)."""
    name = ctypes.util.find_library("mimalloc")
    if not name:
        sys.exit("compare.py: libmimalloc is not installed (scripts/install-deps installs it)")
    return name


class Runner:
    """One runner process; sample() sends a request and reads its JSON reply."""

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=ROOT)

    def ask(self, line):
        """The runner's reply to `line` (raises on an error reply or a dead runner)."""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError("runner %s exited" % self.proc.args)
        data = json.loads(reply)
        if "error" in data:
            raise RuntimeError("%s: %s" % (self.proc.args, data["error"]))
        return data

    def close(self):
        """Closes stdin and waits for the process."""
        self.proc.stdin.close()
        self.proc.wait()


def figure(unit, reply, work):
    """The reply's figure in `unit` (`work` used when the reply carries none)."""
    w = reply.get("work", work)
    if unit in RATES:
        return w / reply["seconds"] / RATES[unit]
    if unit == "ns/op":
        return reply["seconds"] / w * 1e9
    return reply["seconds"] * 1e3  # "ms" per call


def better(unit, ours, baseline):
    """How many times better ours is than baseline."""
    return ours / baseline if unit in RATES else baseline / ours


def sample_order(sides, r):
    """The order of round r's samples: each side leads in turn, and every other cycle of
    len(sides) rounds runs backwards, so that no side always follows the same other one (a
    side that leaves threads spinning after its calls, as PyTorch's OpenMP and OpenBLAS do,
    would otherwise slow the same neighbour in every round)."""
    k = r % len(sides)
    order = sides[k:] + sides[:k]
    if (r // len(sides)) % 2:
        order.reverse()
    return order


def measure(entry, runners, rounds, min_seconds):
    """Samples the entry's sides in turn for `rounds` rounds; returns its result object."""
    sides = [("ours", entry.ours), ("baseline", entry.baseline)] + list(entry.extra.items())
    replies = {label: [] for label, _ in sides}
    for r in range(rounds):
        for label, (runner, case) in sample_order(sides, r):
            if entry.settle:
                time.sleep(SETTLE_SECONDS)
            replies[label].append(runners[runner].ask("%s %g" % (case, min_seconds)))
    work = [rep.get("work", 1) for rep in replies["ours"]]
    figs = {label: [figure(entry.unit, rep, w) for rep, w in zip(reps, work)]
            for label, reps in replies.items()}
    ratios = [better(entry.unit, o, b) for o, b in zip(figs["ours"], figs["baseline"])]
    result = {"name": entry.name, "unit": entry.unit,
              "ours": statistics.median(figs["ours"]),
              "baseline": statistics.median(figs["baseline"]),
              "baseline_name": entry.baseline_name,
              "ratio": statistics.median(ratios), "goal": entry.goal,
              "ratio_min": min(ratios), "ratio_max": max(ratios), "rounds": rounds,
              "limit": entry.limit}
    for label in entry.extra:
        result[label] = statistics.median(figs[label])
        result["ratio_vs_" + label] = statistics.median(
            [better(entry.unit, o, b) for o, b in zip(figs["ours"], figs[label])])
    run_seconds = [rep["run_seconds"] for rep in replies["baseline"] if "run_seconds" in rep]
    if run_seconds:
        result["baseline_with_binding_ms"] = statistics.median(run_seconds) * 1e3
    return result


def measure_parts(entry, runners, rounds, min_seconds):
    """Like measure(), over the entry's parts: each round samples every part on both sides in
    turn; the round's ratio is the geometric mean of its parts' ratios, the figures are
    geometric means of the parts' medians (each part's medians are in "parts")."""
    sides = [("ours", entry.ours[0]), ("baseline", entry.baseline[0])]
    figs = {part: {label: [] for label, _ in sides} for part in entry.parts}
    for r in range(rounds):
        for part in entry.parts:
            replies = {}
            for label, runner in (sides if r % 2 == 0 else sides[::-1]):
                if entry.settle:
                    time.sleep(SETTLE_SECONDS)
                replies[label] = runners[runner].ask("%s %g" % (part, min_seconds))
            work = replies["ours"].get("work", 1)
            for label, rep in replies.items():
                figs[part][label].append(figure(entry.unit, rep, work))
    ratios = [statistics.geometric_mean([better(entry.unit, f["ours"][r], f["baseline"][r])
                                         for f in figs.values()]) for r in range(rounds)]
    medians = {p: {label: statistics.median(v) for label, v in figs[p].items()}
               for p in entry.parts}
    return {"name": entry.name, "unit": entry.unit,
            "ours": statistics.geometric_mean([m["ours"] for m in medians.values()]),
            "baseline": statistics.geometric_mean([m["baseline"] for m in medians.values()]),
            "baseline_name": entry.baseline_name,
            "ratio": statistics.median(ratios), "goal": entry.goal,
            "ratio_min": min(ratios), "ratio_max": max(ratios), "rounds": rounds,
            "limit": entry.limit, "parts": medians}


def rpc_results(bin_dir, quick, only=()):
    """The RPC and session entries from one rpc_bench run (--quick: its smoke mode; only: just
    these of RPC_ENTRIES, empty for all)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rpc.json")
        argv = [os.path.join(bin_dir, "bench/rpc/rpc_bench"), "--json", out, "--no-breakdown"]
        if only:
            argv.append("--only=" + ",".join(sorted(only)))
        subprocess.run(argv + (["--quick"] if quick else []), check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
        with open(out) as f:
            data = json.load(f)
    results = []
    for r in data["results"]:
        if r["name"] in RPC_ENTRIES:
            goal, limit = RPC_ENTRIES[r["name"]]
            results.append({"name": r["name"], "unit": r["unit"], "ours": r["ours"],
                            "baseline": r["baseline"], "baseline_name": r["baseline_name"],
                            "ratio": r["ratio"], "goal": goal, "limit": limit})
    return results


def cpu_model():
    """The CPU's model name from /proc/cpuinfo."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def verdict(r):
    """"met", "MISSED" or "no goal"."""
    if r["goal"] is None:
        return "no goal"
    return "met" if r["ratio"] >= r["goal"] else "MISSED"


def print_table(machine, results):
    """The results as a table on stdout."""
    for key in ("cpu", "cores", "ours", "torch", "onnxruntime", "python_client", "loadavg_start",
                "loadavg_end"):
        print("%-14s %s" % (key, json.dumps(machine[key]) if isinstance(machine[key], dict)
                            else machine[key]))
    head = "%-32s %12s %12s %-7s %8s %6s  %-7s  %s"
    print()
    print(head % ("name", "ours", "baseline", "unit", "ratio", "goal", "verdict",
                  "baseline_name"))
    for r in results:
        goal = "-" if r["goal"] is None else "%.2f" % r["goal"]
        extra = "".join("; %s %.4g (ratio %.2f)" % (k, r[k], r["ratio_vs_" + k])
                        for k in ("mimalloc", "torch_1_thread") if k in r)
        print(head % (r["name"], "%.4g" % r["ours"], "%.4g" % r["baseline"], r["unit"],
                      "%.3f" % r["ratio"], goal, verdict(r), r["baseline_name"] + extra))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="release build directory")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-results.json"))
    parser.add_argument("--quick", action="store_true", help="3 short rounds, rpc_bench --quick")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", default="", help="comma-separated entry names")
    args = parser.parse_args()
    rounds, min_seconds = (3, 0.01) if args.quick else (args.rounds, 0.05)
    only = set(filter(None, args.only.split(",")))

    # Issue 9: OpenBLAS chooses its own kernel on both sides in this command.
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    selected = [e for e in ENTRIES if not only or e.name in only]
    needed = {runner for e in selected
              for runner, _ in [e.ours, e.baseline] + list(e.extra.values())}
    py_env = dict(env, ONEMODELD=os.path.join(args.bin, "server/onemodeld"),
                  PYTHONPATH=os.pathsep.join([os.path.join(args.bin, "client/python/gen"),
                                              os.path.join(ROOT, "client/python")]))
    runner_bin = os.path.join(args.bin, "bench/compare_runner")
    argvs = {
        "ours": ([runner_bin], env),
        "mimalloc": ([runner_bin], dict(env, LD_PRELOAD=mimalloc_library()) if "mimalloc" in needed
                     else env),
        "torch": (["/usr/bin/python3", os.path.join(HERE, "torch_runner.py")], env),
        "ort": (["node", os.path.join(HERE, "ort_runner.mjs")], env),
        "py": (["/usr/bin/python3", os.path.join(HERE, "py_client_runner.py")], py_env),
    }
    # only the runners the selected entries use (--only)
    runners = {name: Runner(*argv) for name, argv in argvs.items() if name in needed}
    with open("/proc/loadavg") as f:
        load_start = f.read().strip()
    machine = {"cpu": cpu_model(), "cores": os.cpu_count(),
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "loadavg_start": load_start,
               "OPENBLAS_CORETYPE": "unset for both sides", "rounds": rounds}
    for key, name in INFO_KEYS:
        machine[key] = runners[name].ask("info")["info"] if name in runners else "not run"
    results = []
    try:
        for entry in selected:
            print("measuring %s" % entry.name, file=sys.stderr, flush=True)
            seconds = min_seconds if args.quick else max(min_seconds, entry.sample_seconds or 0)
            results.append((measure_parts if entry.parts else measure)(
                entry, runners, rounds, seconds))
    finally:
        for runner in runners.values():
            runner.close()
    if not only or only & set(RPC_ENTRIES):
        print("measuring rpc_bench entries", file=sys.stderr, flush=True)
        results += rpc_results(args.bin, args.quick, only & set(RPC_ENTRIES))
    with open("/proc/loadavg") as f:
        machine["loadavg_end"] = f.read().strip()
    for r in results:
        r["verdict"] = verdict(r)
    with open(args.out, "w") as f:
        json.dump({"machine": machine, "results": results}, f, indent=2)
        f.write("\n")
    print_table(machine, results)
    print("\nwrote %s" % args.out)


if __name__ == "__main__":
    main()
