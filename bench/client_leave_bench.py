#!/usr/bin/python3
"""What a WebSocket client leaving costs the server while many threads are loaded.

One client starts --threads threads over WebSocket and stays (they stay loaded); then
--leavers clients, --at-once at a time, each connect, initialize and leave. The figure is
the server's CPU (user + system, from /proc) from the first leaver's connect until the
server is idle again, per leaving client, and that phase's wall time. A leaving client
that touched no thread should cost the same whatever is loaded.

  client_leave_bench.py --binary PARLEY [--binary OTHER ...] [--threads 20000]
                        [--leavers 200] [--at-once 10] [--rounds 3]

Several binaries are run in turn, round by round (A, B, A, B, ...).
"""
import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import websockets

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def wait_idle(pid, quiet=1.0, step=0.2):
    """Waits until the server's CPU stops moving for `quiet` seconds."""
    last, still = cpu_seconds(pid), 0.0
    while still < quiet:
        time.sleep(step)
        now = cpu_seconds(pid)
        still = still + step if now == last else 0.0
        last = now


async def call(ws, rid, method, params):
    await ws.send(json.dumps({"id": rid, "method": method, "params": params}))
    while True:
        m = json.loads(await ws.recv())
        if m.get("id") == rid and "method" not in m:
            if "error" in m:
                raise RuntimeError(f"{method}: {m['error']}")
            return m["result"]


async def start_threads(url, threads):
    ws = await websockets.connect(url, max_size=None)
    await call(ws, 0, "initialize", {"clientInfo": {"name": "holder", "version": "1"}})
    sent, answered, rid = 0, 0, 0
    window = 512
    while answered < threads:
        while sent < threads and sent - answered < window:
            sent += 1
            await ws.send(json.dumps({"id": sent, "method": "thread/start",
                                      "params": {"cwd": "/tmp"}}))
        m = json.loads(await ws.recv())
        if "id" in m and "method" not in m:
            if "error" in m:
                raise RuntimeError(f"thread/start: {m['error']}")
            answered += 1
    return ws


async def leave(url):
    async with websockets.connect(url, max_size=None) as ws:
        await call(ws, 0, "initialize", {"clientInfo": {"name": "leaver", "version": "1"}})


async def leavers(url, count, at_once):
    for first in range(0, count, at_once):
        await asyncio.gather(*(leave(url) for _ in range(min(at_once, count - first))))


def run_once(binary, args):
    root = tempfile.mkdtemp(prefix="parley-leave-")
    log_path = os.path.join(root, "server.log")
    log = open(log_path, "w")
    proc = subprocess.Popen([binary, "app-server", "--store", "memory", "--home", root,
                             "--listen", "ws://127.0.0.1:0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        url = None
        for _ in range(300):
            with open(log_path) as f:
                found = re.findall(r"listening on (ws://\S+)", f.read())
            if found:
                url = found[0]
                break
            time.sleep(0.1)
        if not url:
            raise SystemExit(f"{binary}: did not start listening")
        loop = asyncio.new_event_loop()
        holder = loop.run_until_complete(start_threads(url, args.threads))
        wait_idle(proc.pid)
        before, began = cpu_seconds(proc.pid), time.monotonic()
        loop.run_until_complete(leavers(url, args.leavers, args.at_once))
        ended = time.monotonic()
        wait_idle(proc.pid)
        cpu = cpu_seconds(proc.pid) - before
        loop.run_until_complete(holder.close())
        loop.close()
        return cpu / args.leavers * 1e6, ended - began
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", action="append", required=True)
    p.add_argument("--threads", type=int, default=20000)
    p.add_argument("--leavers", type=int, default=200)
    p.add_argument("--at-once", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    cpu = {b: [] for b in args.binary}
    wall = {b: [] for b in args.binary}
    for r in range(args.rounds):
        for b in args.binary:
            c, w = run_once(b, args)
            cpu[b].append(c)
            wall[b].append(w)
            print(f"round {r + 1}: {b}: {c:.0f} us CPU per leaving client, {w:.2f} s",
                  file=sys.stderr, flush=True)
    print(f"| {args.threads} loaded threads, {args.leavers} clients leave "
          f"| server CPU per leaving client, median [range] | leavers' wall |")
    print("|---|---|---|")
    for b in args.binary:
        print(f"| {b} | {statistics.median(cpu[b]):.0f} us [{min(cpu[b]):.0f}-{max(cpu[b]):.0f}]"
              f" | {statistics.median(wall[b]):.2f} s |")


if __name__ == "__main__":
    main()
