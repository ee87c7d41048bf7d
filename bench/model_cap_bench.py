#!/usr/bin/env python3
"""Many threads against a model endpoint that serves few at a time (issue 22).

A local model server (Ollama, llama.cpp's server) serves a few requests at once
and its accept backlog is small. The mock plays one: --threads connections
served, --backlog more held by the kernel, and the listener stops accepting
while every thread is busy (--queue-connections=0), so further SYNs are
dropped and the client waits out TCP's retransmissions (1 s, 3 s, 7 s, ...).
--threads-count parley threads each start one streaming turn at once; the wall
time from the first turn/start to the last turn/completed is measured for each
value of the provider's max_concurrent_requests (0: no cap, parley before).

  model_cap_bench.py --binary PARLEY --mock MOCK [--threads-count 50] [--caps 0,8,2]
                     [--served 2] [--backlog 5] [--pace-ms 20] [--runs 3]
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "transport"))
import app_server_peer  # noqa: E402


def one_run(args, cap):
    mock = app_server_peer.Mock(args.mock, "--threads=%d" % args.served, "--backlog=%d" % args.backlog,
                                "--queue-connections=0", "--keep-alive=0")
    root = tempfile.mkdtemp(prefix="parley-capbench-")
    os.makedirs(os.path.join(root, "home"))
    os.makedirs(os.path.join(root, "work"))
    cmd = [args.binary, "app-server", "--home", os.path.join(root, "home"), "--cwd",
           os.path.join(root, "work"), "--store", "memory", "-c", "model=mock-model",
           "-c", "model_provider=mock", "-c", "model_providers.mock.base_url=%s/v1" % mock.url]
    if cap is not None:
        cmd += ["-c", "model_providers.mock.max_concurrent_requests=%d" % cap]
    p = app_server_peer.StdioPeer(cmd, dict(os.environ), os.path.join(root, "parley.stderr"))
    try:
        threads = [p.start_thread() for _ in range(args.threads_count)]
        start = time.monotonic()
        for n, t in enumerate(threads):
            p.send("turn/start", {"threadId": t, "input": [{"type": "text", "text":
                   "mock: pace %d\nmock: say turn %d one two three four five" % (args.pace_ms, n)}]})
        done = {}
        while len(done) < args.threads_count:
            m = p.wait(lambda m: m.get("method") == "turn/completed", 600)
            done[m["params"]["turn"]["id"]] = m["params"]["turn"]["status"]
        wall = time.monotonic() - start
        assert set(done.values()) == {"completed"}, done
        return wall
    finally:
        p.stop()
        mock.stop()
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--mock", required=True)
    ap.add_argument("--threads-count", type=int, default=50)
    ap.add_argument("--caps", default="0,8,2", help="max_concurrent_requests values; 0: no cap")
    ap.add_argument("--served", type=int, default=2)
    ap.add_argument("--backlog", type=int, default=5)
    ap.add_argument("--pace-ms", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print("%d threads, endpoint serving %d at once with a backlog of %d, %d ms between events"
          % (args.threads_count, args.served, args.backlog, args.pace_ms))
    for cap in [int(c) for c in args.caps.split(",")]:
        walls = sorted(one_run(args, cap) for _ in range(args.runs))
        print("max_concurrent_requests=%-3d wall median %.2f s [%.2f-%.2f]"
              % (cap, walls[len(walls) // 2], walls[0], walls[-1]), flush=True)


if __name__ == "__main__":
    main()
