#!/usr/bin/env python3
"""How long a restart takes to show every pending approval (issue 19).

N threads on the local store each get a turn whose command waits for an
approval nobody answers; the server is killed (SIGKILL) once all N are asked,
started again on the same home, and timed from its spawn to:
  * `initialize` answered;
  * every one of the N threads listed by `thread/list` as waiting
    (`active` with `waitingOnApproval`), paging with the cursor;
and its peak RSS then (nothing loaded: waiting costs no memory until a
client resumes the thread). Medians over --runs restarts of the same home.

  pending_restart_bench.py --binary PARLEY [--threads 10000] [--runs 3] [--work DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def rpc(proc, msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def read_until(proc, pred):
    for line in proc.stdout:
        m = json.loads(line)
        if pred(m):
            return m
    raise RuntimeError("the server closed its output")


def start(binary, home, work):
    return subprocess.Popen([binary, "app-server", "--store=local", "--home=" + home,
                             "--cwd=" + work, "--approval-timeout=1h", "--log-level=warn"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


def initialize(proc):
    rpc(proc, {"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "bench",
                                                                          "version": "1"}}})
    read_until(proc, lambda m: m.get("id") == 0 and "method" not in m)
    rpc(proc, {"method": "initialized"})


def fill(binary, home, work, n):
    """N threads, each with a turn waiting on its approval; then kill -9."""
    proc = start(binary, home, work)
    initialize(proc)
    for i in range(n):
        rpc(proc, {"id": 1 + i, "method": "thread/start", "params": {"approvalPolicy": "on-request"}})
    threads, asked = [], 0
    for line in proc.stdout:
        m = json.loads(line)
        if "method" not in m and isinstance(m.get("id"), int) and 1 <= m["id"] <= n:
            t = m["result"]["thread"]["id"]
            threads.append(t)
            rpc(proc, {"id": n + len(threads), "method": "turn/start", "params": {
                "threadId": t, "input": [{"type": "text", "text": "run[escalate]: true"}]}})
        elif m.get("method") == "item/commandExecution/requestApproval":
            asked += 1
            if asked == n:
                break
    proc.kill()
    proc.wait()
    return threads


def peak_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def restart(binary, home, work, threads):
    t0 = time.monotonic()
    proc = start(binary, home, work)
    initialize(proc)
    t_init = time.monotonic() - t0
    waiting, cursor, rid = set(), None, 1
    while True:
        params = {"limit": 1000}
        if cursor:
            params["cursor"] = cursor
        rpc(proc, {"id": rid, "method": "thread/list", "params": params})
        r = read_until(proc, lambda m, i=rid: m.get("id") == i and "method" not in m)["result"]
        rid += 1
        for t in r["data"]:
            s = t["status"]
            if s.get("type") == "active" and "waitingOnApproval" in s.get("activeFlags", []):
                waiting.add(t["id"])
        cursor = r.get("nextCursor")
        if not cursor:
            if len(waiting) >= len(threads):
                break
            cursor, waiting = None, set()  # not all yet: list again
    t_listed = time.monotonic() - t0
    rss = peak_rss_kb(proc.pid)
    proc.kill()
    proc.wait()
    return t_init, t_listed, rss, len(waiting)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--threads", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default="")
    args = ap.parse_args()
    base = args.work or tempfile.mkdtemp(prefix="parley-pending-bench-")
    home, work = os.path.join(base, "home"), os.path.join(base, "work")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(work)
    t0 = time.monotonic()
    threads = fill(args.binary, home, work, args.threads)
    print("filled: %d threads waiting on an approval in %.1f s" % (len(threads),
                                                                  time.monotonic() - t0))
    inits, lists, rsss = [], [], []
    for _ in range(args.runs):
        t_init, t_listed, rss, n = restart(args.binary, home, work, threads)
        if n != len(threads):
            print("FAIL: %d of %d listed as waiting" % (n, len(threads)))
            return 1
        inits.append(t_init)
        lists.append(t_listed)
        rsss.append(rss)
        print("restart: initialize %.3f s, all %d listed waiting %.3f s, peak RSS %.1f MB"
              % (t_init, n, t_listed, rss / 1024.0), flush=True)
    print("median: initialize %.3f s, every pending approval listed %.3f s, peak RSS %.1f MB"
          % (statistics.median(inits), statistics.median(lists), statistics.median(rsss) / 1024.0))
    if not args.work:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
