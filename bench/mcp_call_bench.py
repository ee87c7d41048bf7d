#!/usr/bin/env python3
"""What parley adds to an MCP tool call, and what a connected stdio server
costs parley (issue 30's figures).

1. Overhead: the same `echo` tool of the reference server
   (@modelcontextprotocol/server-everything, installed from npm the way ctest
   `mcp_servers` installs it), called CALLS times one after the other
   - directly: this script is the server's MCP client over its stdio;
   - through parley: `mcpServer/tool/call` to `parley app-server` over stdio,
     parley calling the same server as a child.
   Both clients are the same synchronous loop (write a line, read lines to
   the answer), so the difference is parley's hop: the client's line parsed,
   the thread checked, the hub, the server's actor, its pipes, and back.
2. Memory: parley's own RSS (children not counted) and thread count with 0
   and then N well-behaved fake servers (tests/transport/mcp_fake_server.py
   `good`), all connected; the difference over N is one server's cost.

Usage: mcp_call_bench.py PARLEY [--calls N] [--servers N] [--npm-cache DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "..", "tests", "transport", "mcp_fake_server.py")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "transport"))
from mcp_npm import install_everything  # noqa: E402  (as ctest mcp_servers installs it)


def write_config(path, servers):
    """servers: name -> {key: str | int | list of str}, as TOML tables."""
    with open(path, "w") as f:
        for name, keys in servers.items():
            f.write("[mcp_servers.%s]\n" % name)
            for k, v in keys.items():
                f.write("%s = %s\n" % (k, json.dumps(v)))


class LineClient:
    """A synchronous JSON-RPC client over a child's stdio."""

    def __init__(self, args, stderr, env=None):
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr, text=True, bufsize=1, env=env)
        self.next_id = 0

    def call(self, method, params, jsonrpc=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if jsonrpc:
            msg["jsonrpc"] = "2.0"
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("the process closed stdout")
            m = json.loads(line)
            if m.get("id") == self.next_id and "method" not in m:
                return m

    def notify(self, method, jsonrpc=False):
        msg = {"method": method}
        if jsonrpc:
            msg["jsonrpc"] = "2.0"
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def timed(calls, one):
    one()  # warm
    out = []
    for _ in range(calls):
        t = time.perf_counter()
        one()
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def direct(index, calls, devnull):
    c = LineClient(["node", index, "stdio"], devnull)
    c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "1"}}, jsonrpc=True)
    c.notify("notifications/initialized", jsonrpc=True)
    args = {"name": "echo", "arguments": {"message": "hello"}}
    ms = timed(calls, lambda: c.call("tools/call", args, jsonrpc=True)["result"])
    c.close()
    return ms


def parley_with(parley, root, servers, devnull):
    config = os.path.join(root, "config.toml")
    write_config(config, servers)
    env = dict(os.environ)
    env.pop("CODEX_HOME", None)
    c = LineClient([parley, "app-server", "--store=memory", "--home", os.path.join(root, "home"),
                    "--config", config], devnull, env)
    c.call("initialize", {"clientInfo": {"name": "bench", "version": "1"}})
    c.notify("initialized")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        data = c.call("mcpServerStatus/list", {"detail": "toolsAndAuthOnly"})["result"]["data"]
        if all(s["runtimeStatus"] == "connected" for s in data):
            break
        time.sleep(0.1)
    else:
        raise RuntimeError("servers not connected within 60 s")
    return c


def through_parley(parley, index, calls, devnull):
    root = tempfile.mkdtemp(prefix="parley-mcp-bench-")
    c = parley_with(parley, root, {"everything": {"command": "node", "args": [index, "stdio"],
                                                  "startup_timeout_sec": 30}}, devnull)
    thread = c.call("thread/start", {})["result"]["thread"]["id"]
    params = {"server": "everything", "threadId": thread, "tool": "echo",
              "arguments": {"message": "hello"}}
    ms = timed(calls, lambda: c.call("mcpServer/tool/call", params)["result"])
    c.close()
    return ms


def rss_and_threads(pid):
    rss = threads = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def memory(parley, n, devnull):
    figures = {}
    for count in (0, n):
        root = tempfile.mkdtemp(prefix="parley-mcp-mem-")
        servers = {"s%d" % i: {"command": sys.executable, "args": [FAKE, "good"],
                               "startup_timeout_sec": 60} for i in range(count)}
        c = parley_with(parley, root, servers, devnull)
        time.sleep(1.0)  # settle
        figures[count] = rss_and_threads(c.proc.pid)
        c.close()
    (rss0, th0), (rssn, thn) = figures[0], figures[n]
    return {"servers": n, "rss_kb_none": rss0, "rss_kb_n": rssn,
            "rss_kb_per_server": round((rssn - rss0) / float(n), 1),
            "threads_none": th0, "threads_n": thn,
            "threads_per_server": round((thn - th0) / float(n), 2)}


def summary(ms):
    return {"p50_ms": round(statistics.median(ms), 3), "p99_ms": round(percentile(ms, 99), 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parley")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--servers", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--npm-cache", default=os.path.join(HERE, "..", "build", "release", "tests",
                                                        "mcp-npm"))
    a = ap.parse_args()
    index = install_everything(os.path.abspath(a.npm_cache))
    if index is None:
        print("npm or the registry cannot be had", file=sys.stderr)
        return 77
    with open(os.devnull, "w") as devnull:
        for run in range(a.runs):
            d = summary(direct(index, a.calls, devnull))
            p = summary(through_parley(a.parley, index, a.calls, devnull))
            print(json.dumps({"run": run + 1, "calls": a.calls, "direct": d, "through_parley": p,
                              "overhead_p50_ms": round(p["p50_ms"] - d["p50_ms"], 3),
                              "overhead_p99_ms": round(p["p99_ms"] - d["p99_ms"], 3)}), flush=True)
        print(json.dumps({"memory": memory(a.parley, a.servers, devnull)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
