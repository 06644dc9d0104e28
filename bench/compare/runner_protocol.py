"""The request loop shared by bench/compare's Python runners (see compare_runner.cc for the
protocol): "info" answers info(), "CASE MIN_SECONDS" times cases[CASE]() as
{"case", "seconds", "calls"}, calls fixed on the case's first request after one warm-up call.

    serve({"add_16m": setup_add}, info)   # setup_add() returns the callable to time
"""
import json
import math
import sys
import time


def serve(cases, info):
    """Answers requests from stdin until it closes; cases maps names to setup functions."""
    ready = {}
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        name = words[0]
        if name == "info":
            reply = {"info": info()}
        elif name not in cases:
            reply = {"error": "unknown case " + name}
        else:
            if name not in ready:
                fn = cases[name]()
                fn()  # warm-up
                start = time.perf_counter()
                fn()
                one = time.perf_counter() - start
                min_seconds = float(words[1]) if len(words) > 1 else 0.05
                ready[name] = (fn, max(1, math.ceil(min_seconds / max(one, 1e-9))))
            fn, calls = ready[name]
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            reply = {"case": name, "seconds": (time.perf_counter() - start) / calls,
                     "calls": calls}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
