#!/usr/bin/env python3
"""fuzzyFileSearch on a generated tree (issue 29's figure): p50/p99 per
query, the first query of a fresh server (cold) and the repeats (warm), for
parley and, with --codex, for the real Codex 0.169 on the same tree.

  bench/fuzzy_search_bench.py build/release/transport/parley [--files 100000]
      [--runs 30] [--drop-caches] [--codex] [--keep]

The tree (under /tmp): FILES files in nested directories (about 50 per
directory, three levels), names drawn from a fixed vocabulary (seeded), a
.gitignore ignoring one directory in ten. --drop-caches (root only) empties
the page cache before each server's first query, so "first" includes the
disk; without it "first" is a fresh process on a warm cache. Besides wall
time, each query's CPU time in the server (from /proc), which a busy
machine does not inflate. For Codex that CPU includes its parallel walkers.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "transport"))
import app_server_peer  # noqa: E402

WORDS = ("main util config server client parser lexer token stream buffer cache index store "
         "model view controller route handler request response error test spec bench doc "
         "readme build deploy script helper common core api http json yaml proto schema "
         "widget layout render paint event queue worker thread actor session").split()
EXTS = ["rs", "py", "ts", "cpp", "hpp", "md", "json", "txt", "go", "java"]
QUERIES = ["main", "srvhnd", "config.rs", "test_parser", "a", "zzzz_none", "core/api", "^api"]


def make_tree(root, files, seed=7):
    rng = random.Random(seed)
    made = 0
    top = 0
    while made < files:
        d1 = "%s_%d" % (rng.choice(WORDS), top)
        top += 1
        for j in range(4):
            d2 = os.path.join(d1, "%s%d" % (rng.choice(WORDS), j))
            for k in range(5):
                d3 = os.path.join(d2, rng.choice(WORDS) + "_" + str(k))
                os.makedirs(os.path.join(root, d3), exist_ok=True)
                for _ in range(50):
                    if made >= files:
                        break
                    name = "%s_%s%d.%s" % (rng.choice(WORDS), rng.choice(WORDS), made,
                                           rng.choice(EXTS))
                    open(os.path.join(root, d3, name), "w").close()
                    made += 1
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("".join("%s_%d/\n" % ("*", i) for i in range(0, top, 10)))
    return made


def drop_caches():
    subprocess.run(["sync"])
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def cpu_ms(pid):
    """User + system CPU time so far of the server and its live children
    (Codex runs under npm's wrapper)."""
    total = 0.0
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                total += sum(cpu_ms(int(c)) for c in f.read().split())
    except OSError:
        pass
    return total


def measure(peer, tree, runs, cold):
    figures = {}
    if cold:
        drop_caches()
    t = time.monotonic()
    r = peer.call("fuzzyFileSearch", {"query": QUERIES[0], "roots": [tree]}, timeout=300)
    figures["first"] = (time.monotonic() - t) * 1000
    assert "result" in r, r
    for q in QUERIES:
        times = []
        n = 0
        cpu = cpu_ms(peer.proc.pid)
        for _ in range(runs):
            t = time.monotonic()
            r = peer.call("fuzzyFileSearch", {"query": q, "roots": [tree]}, timeout=300)
            times.append((time.monotonic() - t) * 1000)
            n = len(r["result"]["files"])
        times.sort()
        figures[q] = {"cpu_ms": (cpu_ms(peer.proc.pid) - cpu) / runs,
                      "p50": statistics.median(times),
                      "p99": times[min(len(times) - 1, int(round(0.99 * (len(times) - 1))))],
                      "matches": n}
    return figures


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parley")
    ap.add_argument("--files", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--drop-caches", action="store_true")
    ap.add_argument("--codex", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="parley-fuzzy-bench-")
    tree = os.path.join(root, "tree")
    home = os.path.join(root, "home")
    os.makedirs(home)
    made = make_tree(tree, a.files)
    print("tree: %s, %d files" % (tree, made), flush=True)
    servers = [("parley", [os.path.abspath(a.parley), "app-server", "--store=memory", "--home",
                           home, "--cwd", tree, "--log-level=warn"], dict(os.environ))]
    if a.codex:
        env = dict(os.environ, CODEX_HOME=os.path.join(root, "codex-home"),
                   HOME=os.path.join(root, "codex-user"))
        os.makedirs(env["CODEX_HOME"])
        servers.append(("codex", app_server_peer.CODEX + ["app-server"], env))
    report = {"files": made, "runs": a.runs, "cold_cache": a.drop_caches}
    try:
        for name, args, env in servers:
            peer = app_server_peer.StdioPeer(args, env, os.path.join(root, name + ".log"),
                                             client_name="fuzzy-bench")
            figures = measure(peer, tree, a.runs, a.drop_caches)
            figures["peak_rss_kb"] = rss_kb(peer.proc.pid)
            peer.stop()
            report[name] = figures
            print("%s: first query %.1f ms, peak RSS %s kB" % (name, figures["first"],
                                                               figures["peak_rss_kb"]))
            for q in QUERIES:
                f = figures[q]
                print("  %-13r p50 %7.1f ms  p99 %7.1f ms  CPU %6.1f ms/query  (%d matches)"
                      % (q, f["p50"], f["p99"], f["cpu_ms"], f["matches"]))
        print(json.dumps(report))
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
