#!/usr/bin/env python3
"""A slow stdio reader and 1,000 streaming threads (issue 22): parley's peak
RSS while the client does not read, with the bound (this branch) and
without it (a binary from before it), and the wall time from the client's
resumed reading to the last delta. Each run is ctest `backpressure`'s run()
(tests/transport/backpressure_test.py: its own streaming HTTP model, the
real binary on stdio), with the checks reported rather than asserted.

Usage: backpressure_bench.py PARLEY [BASE_PARLEY] [--threads N] [--deltas N]
       [--pause S] [--max-queue BYTES]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "transport"))
import backpressure_test  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parley")
    ap.add_argument("base", nargs="?")
    ap.add_argument("--threads", type=int, default=1000)
    ap.add_argument("--deltas", type=int, default=1000)
    ap.add_argument("--pause", type=float, default=10.0)
    ap.add_argument("--max-queue", type=int, default=0, help="0: the binary's default")
    a = ap.parse_args()
    runs = [("bounded", a.parley, a.max_queue)]
    if a.base:
        runs.append(("unbounded (base)", a.base, 0))
    for name, binary, max_queue in runs:
        figures = backpressure_test.run(binary, a.threads, a.deltas, a.pause, max_queue=max_queue)
        print(name, json.dumps(figures), flush=True)


if __name__ == "__main__":
    sys.exit(main())
