#!/usr/bin/env python3
"""A client that sends all its requests at once, and the shutdown after it.

One stdio client writes `initialize` and then N `thread/start` requests without
waiting for any answer (as a script or a harness without a concurrency bound
does), reads until every one is answered, then closes its input. Reported, for
each build and round (builds alternated, so a machine's drift falls on both):

  start     first thread/start written -> last answer read (s)
  shutdown  input closed -> the server's exit (s): every conversation stopped

Both were quadratic in N while CAF 0.17 kept each request's response handler in
a flat map (linear lookup and erase): the connection's, one per pipelined
request, and the thread manager's, one per conversation it asked to stop.

    bench/pipelined_bench.py --build before=/path/parley --build after=/path/parley \
        --threads 100000 --rounds 3
"""

import argparse
import json
import os
import statistics
import subprocess
import time


def run_once(parley, threads):
    server = subprocess.Popen([parley, "app-server", "--store", "memory"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(message):
        server.stdin.write((json.dumps(message) + "\n").encode())

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"clientInfo": {"name": "pipelined_bench", "version": "1"}}})
    send({"jsonrpc": "2.0", "method": "initialized"})
    began = time.monotonic()
    for i in range(1, threads + 1):
        send({"jsonrpc": "2.0", "id": i, "method": "thread/start", "params": {"cwd": "/tmp"}})
    server.stdin.flush()
    answered, errors = 0, 0
    while answered < threads + 1:
        line = server.stdout.readline()
        if not line:
            raise SystemExit(f"{parley}: output ended after {answered} answers")
        if b'"result"' in line or b'"error"' in line:
            answered += 1
            errors += b'"error"' in line
    started = time.monotonic()
    server.stdin.close()
    server.stdout.read()
    server.wait()
    stopped = time.monotonic()
    if errors or server.returncode != 0:
        raise SystemExit(f"{parley}: {errors} errors, exit {server.returncode}")
    return started - began, stopped - started


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="append", required=True, help="LABEL=path/to/parley")
    parser.add_argument("--threads", type=int, default=100000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    builds = [b.split("=", 1) for b in args.build]
    results = {label: {"start": [], "shutdown": []} for label, _ in builds}
    for round_index in range(args.rounds):
        for label, parley in builds:
            load = os.getloadavg()[0]
            start, shutdown = run_once(parley, args.threads)
            results[label]["start"].append(start)
            results[label]["shutdown"].append(shutdown)
            print(f"round {round_index + 1} {label}: start {start:.2f} s, shutdown {shutdown:.2f} s "
                  f"(load {load:.1f})", flush=True)
    print(f"\n{args.threads} pipelined thread/start, medians of {args.rounds}:")
    for label, figures in results.items():
        print(f"  {label}: start {statistics.median(figures['start']):.2f} s "
              f"[{min(figures['start']):.2f}-{max(figures['start']):.2f}], shutdown "
              f"{statistics.median(figures['shutdown']):.2f} s "
              f"[{min(figures['shutdown']):.2f}-{max(figures['shutdown']):.2f}]")


if __name__ == "__main__":
    main()
