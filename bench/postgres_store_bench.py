#!/usr/bin/env python3
"""The PostgreSQL store's figures (issue 20), on a private cluster on this
machine (tests/support/pg_cluster.py: the database shares the cores).

1. 10,000 threads x 1 approval, declined (parley-bench), on the memory, the
   local and the PostgreSQL store, runs interleaved: median wall, server CPU.
2. 10,000 threads x 10 turns on PostgreSQL: the database's size, its rows,
   and the WAL written per turn (bytes the database wrote for it).
3. A restart with 10,000 threads of which 1,000 wait on an approval: parley
   killed (SIGKILL) and started again, timed from spawn to `thread/list`
   showing all 10,000 (the 1,000 as waiting on an approval).

  postgres_store_bench.py --parley PARLEY --bench PARLEY_BENCH [--runs 3]
      [--threads 10000] [--only 1,2,3]
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "support"))
import pg_cluster  # noqa: E402


def migrate(parley, url):
    subprocess.run([parley, "store", "migrate", "--store-url=" + url], check=True,
                   capture_output=True)


def bench_run(bench, server, threads, turns, out):
    subprocess.run([bench, "--server", server, "--threads", str(threads), "--turns", str(turns),
                    "--mix", "decline=1", "--json", out, "--quiet", "--timeout", "1200"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def figure_declined(args, cluster, root):
    rows = {"memory": [], "local": [], "postgres": []}
    for run in range(args.runs):
        for store in rows:
            if store == "postgres":
                url = cluster.create_database("declined%d" % run)
                migrate(args.parley, url)
                server = "%s app-server --store=postgres --store-url='%s' --log-level=warn" % (args.parley, url)
            elif store == "local":
                home = os.path.join(root, "home-declined-%d" % run)
                server = "%s app-server --store=local --home=%s --log-level=warn" % (args.parley, home)
            else:
                server = "%s app-server --store=memory --log-level=warn" % args.parley
            r = bench_run(args.bench, server, args.threads, 1, os.path.join(root, "b.json"))
            rows[store].append(r)
            print("  run %d %-8s wall %.2f s, server CPU %.2f s, peak RSS %d MB, violations %d"
                  % (run + 1, store, r["wall_s"], r["server_cpu_s"], r["server_peak_rss_kb"] // 1024,
                     len(r["violations"]) if isinstance(r["violations"], list) else r["violations"]),
                  flush=True)
    med = {s: statistics.median(r["wall_s"] for r in rs) for s, rs in rows.items()}
    for s, rs in rows.items():
        print("%-8s wall median %.2f s (runs %s), server CPU median %.2f s" % (
            s, med[s], ", ".join("%.2f" % r["wall_s"] for r in rs),
            statistics.median(r["server_cpu_s"] for r in rs)))
    print("postgres / local = %.2fx" % (med["postgres"] / med["local"]))


def figure_size(args, cluster, root):
    url = cluster.create_database("tenturns")
    migrate(args.parley, url)
    lsn0 = cluster.psql("SELECT pg_current_wal_lsn()").strip()
    server = "%s app-server --store=postgres --store-url='%s' --log-level=warn" % (args.parley, url)
    r = bench_run(args.bench, server, args.threads, 10, os.path.join(root, "s.json"))
    lsn1 = cluster.psql("SELECT pg_current_wal_lsn()").strip()
    wal = int(cluster.psql("SELECT pg_wal_lsn_diff('%s', '%s')" % (lsn1, lsn0)).strip().split(".")[0])
    size = int(cluster.psql("SELECT pg_database_size('tenturns')").strip())
    lines = int(cluster.psql("SELECT count(*) FROM thread_lines", db="tenturns").strip())
    threads = int(cluster.psql("SELECT count(*) FROM threads", db="tenturns").strip())
    line_bytes = int(cluster.psql("SELECT sum(pg_column_size(line)) FROM thread_lines",
                                  db="tenturns").strip())
    turns = r["turns_completed"]
    print("%d threads x 10 turns (%d turns, each one approval declined): wall %.1f s" % (
        args.threads, turns, r["wall_s"]))
    print("database %.1f MB; %d thread rows, %d line rows (%.1f per turn), lines %.0f B per turn "
          "(JSONB, TOASTed); WAL %.0f B per turn" % (
              size / 1e6, threads, lines, lines / max(turns, 1), line_bytes / max(turns, 1),
              wal / max(turns, 1)))


def rpc(proc, msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def read_until(proc, pred):
    for line in proc.stdout:
        m = json.loads(line)
        if pred(m):
            return m
    raise RuntimeError("the server closed its output")


def start(parley, url, work):
    return subprocess.Popen([parley, "app-server", "--store=postgres", "--store-url=" + url,
                             "--cwd=" + work, "--approval-timeout=1h", "--log-level=warn"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def initialize(proc):
    rpc(proc, {"id": 0, "method": "initialize",
               "params": {"clientInfo": {"name": "bench", "version": "1"}}})
    read_until(proc, lambda m: m.get("id") == 0 and "method" not in m)
    rpc(proc, {"method": "initialized"})


def figure_restart(args, cluster, root):
    url = cluster.create_database("restart")
    migrate(args.parley, url)
    work = os.path.join(root, "work")
    os.makedirs(work, exist_ok=True)
    n, waiting = args.threads, args.threads // 10
    proc = start(args.parley, url, work)
    initialize(proc)
    for i in range(n):
        rpc(proc, {"id": 1 + i, "method": "thread/start", "params": {"approvalPolicy": "on-request"}})
    ids = []
    while len(ids) < n:
        m = read_until(proc, lambda m: "result" in m and 1 <= m.get("id", 0) <= n)
        ids.append(m["result"]["thread"]["id"])
    for i, t in enumerate(ids):
        text = "run[escalate]: true" if i < waiting else "say: done"
        rpc(proc, {"id": n + 1 + i, "method": "turn/start",
                   "params": {"threadId": t, "input": [{"type": "text", "text": text}]}})
    asked = completed = 0
    while asked < waiting or completed < n - waiting:
        m = read_until(proc, lambda m: m.get("method") in ("turn/completed",)
                       or (m.get("method", "").endswith("requestApproval") and "id" in m))
        if m["method"] == "turn/completed":
            completed += 1
        else:
            asked += 1
    time.sleep(0.5)  # the asked records are stored before the ask is sent; margin
    proc.kill()
    proc.wait()
    times = []
    for run in range(args.runs):
        t0 = time.monotonic()
        proc = start(args.parley, url, work)
        initialize(proc)
        t_init = time.monotonic() - t0
        while True:
            listed, pending, cursor = 0, 0, None
            while True:
                params = {"limit": 1000}
                if cursor:
                    params["cursor"] = cursor
                rpc(proc, {"id": 7, "method": "thread/list", "params": params})
                r = read_until(proc, lambda m: m.get("id") == 7 and "method" not in m)["result"]
                listed += len(r["data"])
                pending += sum(1 for t in r["data"]
                               if "waitingOnApproval" in (t.get("status") or {}).get("activeFlags", []))
                cursor = r.get("nextCursor")
                if not cursor:
                    break
            if listed >= n and pending >= waiting:
                break
            time.sleep(0.05)
        t_all = time.monotonic() - t0
        times.append((t_init, t_all))
        print("  restart %d: initialize %.2f s, thread/list shows all %d (%d waiting) %.2f s"
              % (run + 1, t_init, listed, pending, t_all), flush=True)
        proc.kill()
        proc.wait()
    print("restart, %d threads (%d waiting): initialize median %.2f s, all listed median %.2f s" % (
        n, waiting, statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parley", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=10000)
    ap.add_argument("--only", default="1,2,3")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="parley-pgbench-")
    try:
        with pg_cluster.started() as cluster:
            only = args.only.split(",")
            if "1" in only:
                print("== 1. %d threads x 1 approval declined" % args.threads, flush=True)
                figure_declined(args, cluster, root)
            if "2" in only:
                print("== 2. %d threads x 10 turns on postgres" % args.threads, flush=True)
                figure_size(args, cluster, root)
            if "3" in only:
                print("== 3. restart", flush=True)
                figure_restart(args, cluster, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
