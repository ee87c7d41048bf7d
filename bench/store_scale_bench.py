#!/usr/bin/env python3
"""The local store at N threads (issue 28): a restart and the lists after it.

On a home made by store_gen.py (N threads, one short turn each), for each
kind of restart (medians over --runs):
  * idle:  the server starts on a home whose last server wrote nothing;
  * clean: the last server ran --writes turns on unloaded threads, then its
           input closed (an orderly stop);
  * kill:  the same, killed (SIGKILL) with turns in flight;
it times from the spawn to `initialize` answered and to the first
`thread/list` (50) answered, and reads the start's log line (how many
rollouts the index read again). After the idle restart it times, one
request at a time: later pages (cursor), filtered pages (cwd, model
provider, search term, archived, source kind), `thread/read` with turns of
unloaded threads and `thread/resume` of unloaded threads (p50, p99).

With --search-only it starts once, waits until the index is ready (its
reconcile and, on an index from before the search table, the table's fill
logged as done) and times only `thread/list` with a searchTerm, --rounds
times each: up to 20 pages (cursor) of each of search_terms below, in the
default order (created_at, newest first) or --sort-key updated_at.

The PostgreSQL store the same way: --home postgresql://... (a database
filled by pg_store_gen.py).

  store_scale_bench.py --binary PARLEY --home DIR|URL [--runs 3] [--writes 200]
                       [--pages 100] [--reads 300] [--resumes 100]
                       [--search-only [--rounds 10] [--sort-key updated_at]]
"""
import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time


class Server:
    def __init__(self, binary, home, log):
        self.t0 = time.monotonic()
        self.log = log
        # `home` is a directory (the local store) or a postgresql:// URL.
        store = (["--store=postgres", "--store-url=" + home] if home.startswith("postgres")
                 else ["--store=local", "--home=" + home])
        self.proc = subprocess.Popen(
            [binary, "app-server"] + store + ["--cwd=/bench/proj-0", "--log-level=info"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log, "wb"))
        self.next_id = 1
        self.events = []

    def send(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {"id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        return rid

    def notify(self, method):
        self.proc.stdin.write((json.dumps({"method": method}) + "\n").encode())
        self.proc.stdin.flush()

    def wait(self, rid):
        for line in self.proc.stdout:
            m = json.loads(line)
            if m.get("id") == rid and "method" not in m:
                if "error" in m:
                    raise RuntimeError("request %d: %s" % (rid, m["error"]))
                return m["result"]
            if "method" in m:
                self.events.append(m)
        raise RuntimeError("the server closed its output")

    def call(self, method, params=None):
        return self.wait(self.send(method, params))

    def timed(self, method, params=None):
        t = time.perf_counter()
        r = self.call(method, params)
        return (time.perf_counter() - t) * 1000, r

    def initialize(self):
        self.call("initialize", {"clientInfo": {"name": "bench", "version": "1"}})
        self.notify("initialized")

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=600)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def start_log_figures(log):
    text = open(log, errors="replace").read()
    out = {}
    for key in ("reindexed", "reread", "journaled", "threads"):
        m = re.search(r"thread_index event=\w+ .*?\b%s=(\d+)" % key, text)
        if m:
            out[key] = int(m.group(1))
    return out


def restart(binary, home, log):
    s = Server(binary, home, log)
    s.initialize()
    t_init = time.monotonic() - s.t0
    s.call("thread/list", {"limit": 50})
    t_list = time.monotonic() - s.t0
    return s, t_init, t_list


def write_turns(s, ids, kill_after=None):
    """A turn on each of `ids` (resumed first), all in flight at once; with
    kill_after, the server is killed once that many have completed."""
    for t in ids:
        s.call("thread/resume", {"threadId": t})
    turns = {}
    for t in ids:
        turns[s.send("turn/start", {"threadId": t, "input": [
            {"type": "text", "text": "say: more"}]})] = t
    done = 0
    for line in s.proc.stdout:
        m = json.loads(line)
        if m.get("method") == "turn/completed":
            done += 1
            if kill_after is not None and done >= kill_after:
                s.kill()
                return done
            if done == len(ids):
                return done
    return done


# store_gen's first messages are "hello bench <i> topic<i mod 1000>", i = 0
# the oldest. Terms by how many threads they match and where those are.
search_terms = {
    "topic42": "topic42",            # 1.1%, spread evenly (topic42, topic420-429)
    "rare": "topic123",              # 0.1%, spread evenly
    "single": "bench 4242 ",         # one thread
    "none": "no such words",         # no thread (the scan reads every row)
    "common": "hello bench",         # every thread
    "old_only": "bench 1",           # 11%, all among the oldest (at 100k: i < 20,000)
    "short": "42",                   # 2 characters: always the scan
}


def search_pages(s, term, rounds, sort_key=None):
    times = []
    for _ in range(rounds):
        cursor = None
        for _ in range(20):
            p = {"searchTerm": term, "limit": 50}
            if sort_key:
                p["sortKey"] = sort_key
            if cursor:
                p["cursor"] = cursor
            ms, r = s.timed("thread/list", p)
            times.append(ms)
            cursor = r.get("nextCursor")
            if not cursor:
                break
    return times


def wait_ready(log, timeout=1800):
    """Until the start's reconcile is logged done, and the search table's
    fill when one runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = open(log, errors="replace").read()
        if "event=reconciled" in text and (
                "event=search_filling" not in text or "event=search_filled" in text):
            m = re.search(r"event=search_filled .*", text)
            return m.group(0) if m else ""
        time.sleep(0.2)
    raise RuntimeError("the index was not ready within %d s (%s)" % (timeout, log))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def summary(xs):
    return "p50 %.2f ms, p99 %.2f ms" % (pct(xs, 50), pct(xs, 99))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--resumes", type=int, default=100)
    ap.add_argument("--log", default="/tmp/store_scale_bench.log")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--search-only", action="store_true")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--sort-key", choices=["created_at", "updated_at"], default=None)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    results = {}

    if a.search_only:
        t0 = time.monotonic()
        s, _, _ = restart(a.binary, a.home, a.log)
        fill = "" if a.home.startswith("postgres") else wait_ready(a.log)
        print("index ready after %.1f s %s" % (time.monotonic() - t0, fill), flush=True)
        for name, term in search_terms.items():
            times = search_pages(s, term, a.rounds, a.sort_key)
            print("search %-8s %-15r (%3d pages): %s" % (name, term, len(times), summary(times)),
                  flush=True)
        s.stop()
        return

    # Ids to read and write: the first pages of a list.
    s, _, _ = restart(a.binary, a.home, a.log)
    ids, cursor = [], None
    for _ in range(a.pages):
        r = s.call("thread/list", {"limit": 50, "cursor": cursor})
        ids += [t["id"] for t in r["data"]]
        cursor = r.get("nextCursor")
        if not cursor:
            break
    s.stop()
    rng.shuffle(ids)
    pool = iter(ids)

    for kind in ("idle", "clean", "kill"):
        inits, lists, figs = [], [], []
        for _ in range(a.runs):
            if kind != "idle":
                s, _, _ = restart(a.binary, a.home, a.log)
                chosen = [next(pool) for _ in range(a.writes)]
                if kind == "clean":
                    write_turns(s, chosen)
                    s.stop()
                else:
                    write_turns(s, chosen, kill_after=a.writes // 2)
            s, t_init, t_list = restart(a.binary, a.home, a.log)
            s.stop()
            inits.append(t_init * 1000)
            lists.append(t_list * 1000)
            figs.append(start_log_figures(a.log))
        results[kind] = (statistics.median(inits), statistics.median(lists), figs)
        print("restart %-5s initialize %.0f ms, first thread/list(50) %.0f ms, log %s"
              % (kind, statistics.median(inits), statistics.median(lists), figs), flush=True)

    s, _, _ = restart(a.binary, a.home, a.log)
    pages, cursor = [], None
    for _ in range(a.pages):
        ms, r = s.timed("thread/list", {"limit": 50, "cursor": cursor})
        pages.append(ms)
        cursor = r.get("nextCursor")
        if not cursor:
            break
    print("later pages (%d): %s" % (len(pages), summary(pages)), flush=True)
    filters = {
        "cwd": {"cwd": "/bench/proj-7"},
        "provider": {"modelProviders": ["oss"]},
        "search": {"searchTerm": "topic42"},
        "archived": {"archived": True},
        "sourceKinds": {"sourceKinds": ["vscode"]},
        "updated_at": {"sortKey": "updated_at"},
    }
    for name, f in filters.items():
        times, cursor = [], None
        for _ in range(20):
            p = dict(f, limit=50)
            if cursor:
                p["cursor"] = cursor
            ms, r = s.timed("thread/list", p)
            times.append(ms)
            cursor = r.get("nextCursor")
            if not cursor:
                break
        print("filtered %-11s (%d pages): %s" % (name, len(times), summary(times)), flush=True)
    reads = []
    for t in rng.sample(ids, min(a.reads, len(ids))):
        ms, _ = s.timed("thread/read", {"threadId": t, "includeTurns": True})
        reads.append(ms)
    print("thread/read unloaded (%d): %s" % (len(reads), summary(reads)), flush=True)
    resumes = []
    for _ in range(a.resumes):
        t = next(pool)
        ms, _ = s.timed("thread/resume", {"threadId": t})
        resumes.append(ms)
    print("thread/resume unloaded (%d): %s" % (len(resumes), summary(resumes)), flush=True)
    s.stop()


if __name__ == "__main__":
    main()
