#!/usr/bin/env python3
"""What distribution costs (issue 21): three `parley app-server --cluster`
nodes on this machine (TLS links, one private PostgreSQL), a stdio client on
n1, against one node on the same database kind.

1. Latency of a forwarded request: turn/start -> the approval request, and
   the answer -> serverRequest/resolved, for threads that live on n1 (local)
   and on n2/n3 (forwarded), p50/p99 over N threads each.
2. THREADS threads x 1 approval, declined, through n1's client: wall time
   and the servers' CPU (all processes), three nodes vs one. On one machine
   this is the cost of distribution, not a speed-up: the same two cores run
   three processes and the middleman.

Usage: cluster_bench.py PARLEY_BINARY [THREADS] [N]
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "transport"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import app_server_peer  # noqa: E402
import cluster_test  # noqa: E402  (reads the binary from argv[1])
import pg_cluster  # noqa: E402
import pipelined_peers  # noqa: E402
from process_stats import cpu_seconds  # noqa: E402

PARLEY = sys.argv[1]
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
N = int(sys.argv[3]) if len(sys.argv) > 3 else 100


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def is_ask(m, t):
    return m.get("method") == "item/commandExecution/requestApproval" and "id" in m \
        and m["params"]["threadId"] == t


def one_approval(p, t, timings):
    t0 = time.monotonic()
    p.start_turn(t, "run[escalate]: echo x\nsay: done")
    ask = p.wait(lambda m: is_ask(m, t))
    t1 = time.monotonic()
    p.write({"id": ask["id"], "result": {"decision": "decline"}})
    p.wait(lambda m: m.get("method") == "serverRequest/resolved"
           and m["params"]["requestId"] == ask["id"])
    t2 = time.monotonic()
    p.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["threadId"] == t)
    timings.append((t1 - t0, t2 - t1))


def latency(c):
    p1 = c.peers["n1"]
    local, remote = [], []
    leases = {}
    while len(local) < N or len(remote) < N:
        batch = [p1.start_thread() for _ in range(50)]
        leases.update(c.leases())
        for t in batch:
            (local if leases.get(t) == "n1" else remote).append(t)
    out = {}
    for name, threads in (("local", local[:N]), ("forwarded", remote[:N])):
        timings = []
        for t in threads:
            one_approval(p1, t, timings)
        out[name] = timings
        print("%-9s turn/start -> ask p50 %.2f ms p99 %.2f ms; answer -> resolved p50 %.2f ms "
              "p99 %.2f ms (N=%d)" % (name, pct([a for a, _ in timings], .5),
                                      pct([a for a, _ in timings], .99),
                                      pct([b for _, b in timings], .5),
                                      pct([b for _, b in timings], .99), len(timings)),
              flush=True)


def load(peer, pids):
    """THREADS threads started at once through `peer`, a turn each as its
    thread starts, every approval declined as it comes (pipelined: no
    request waits for the one before)."""
    drive = pipelined_peers.Pipelined({"c": peer})
    started, asked, ended = [0], [0], [0]

    def on_message(_, m):
        if is_ask(m, m.get("params", {}).get("threadId")):
            asked[0] += 1
            drive.answer("c", m["id"], {"decision": "decline"})
        elif m.get("method") == "turn/completed":
            ended[0] += 1

    def on_started(reply):
        t = reply["result"]["thread"]["id"]
        started[0] += 1
        drive.call("c", "turn/start", {"threadId": t, "input": [
            {"type": "text", "text": "run[escalate]: echo x\nsay: done"}]}, lambda r: None)

    drive.on_message = on_message
    cpu0 = sum(cpu_seconds(pid) for pid in pids)
    t0 = time.monotonic()
    for _ in range(THREADS):
        drive.call("c", "thread/start", {"approvalPolicy": "on-request"}, on_started)
    if not drive.pump(until=lambda: ended[0] >= THREADS, quiet=60):
        raise RuntimeError("%d of %d turns ended (%d asked)" % (ended[0], THREADS, asked[0]))
    wall = time.monotonic() - t0
    cpu = sum(cpu_seconds(pid) for pid in pids) - cpu0
    return wall, cpu


def main():
    with pg_cluster.started() as pg:
        cluster_test.PG = pg
        with cluster_test.Cluster() as c:
            c.start_all()
            latency(c)
            pids = [p.proc.pid for p in c.peers.values()]
            wall, cpu = load(c.peers["n1"], pids)
            print("three nodes: %d threads x 1 approval declined: wall %.2f s, servers' CPU %.2f s "
                  "(%.0f us per thread-turn)" % (THREADS, wall, cpu, cpu / THREADS * 1e6),
                  flush=True)
        # One node on the same kind of database, same client.
        db = pg.create_database("single_%d" % os.getpid())
        subprocess.run([PARLEY, "store", "migrate", "--store-url=" + db], check=True,
                       stdout=subprocess.DEVNULL)
        d = "/tmp/parley-bench-single-%d" % os.getpid()
        os.makedirs(d + "/work", exist_ok=True)
        p = app_server_peer.StdioPeer([PARLEY, "app-server", "--store=postgres", "--store-url=" + db,
                                       "--home=" + d + "/home", "--cwd=" + d + "/work",
                                       "--log-level=warn"], dict(os.environ), d + "/server.log",
                                      client_name="cluster-bench")
        wall, cpu = load(p, [p.proc.pid])
        print("one node:    %d threads x 1 approval declined: wall %.2f s, server's CPU %.2f s "
              "(%.0f us per thread-turn)" % (THREADS, wall, cpu, cpu / THREADS * 1e6), flush=True)
        p.stop()
        subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
