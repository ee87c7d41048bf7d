#!/usr/bin/env python3
"""What waiting costs (issue 19): N threads whose turns wait on an approval,
with nobody subscribed, unload at --idle-unload (parked); the server's RSS
then is compared with N threads whose turns completed and that unloaded the
same way (idle). Then every parked thread is resumed, asked again and
answered accept; each command must run exactly once (its own file, one line).

  parked_memory_bench.py --binary PARLEY [--threads 10000] [--work DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Server:
    def __init__(self, binary, home, work):
        self.proc = subprocess.Popen(
            [binary, "app-server", "--store=local", "--home=" + home, "--cwd=" + work,
             "--idle-unload=1s", "--approval-timeout=1h", "--log-level=warn"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.call("initialize", {"clientInfo": {"name": "bench", "version": "1"}})
        self.send({"method": "initialized"})

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        return json.loads(line)

    def call(self, method, params):
        rid = self.request(method, params)
        while True:
            m = self.read()
            if m.get("id") == rid and "method" not in m:
                return m.get("result")

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def wait_unloaded(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.call("thread/loaded/list", {"limit": 10})["data"]:
                return True
            time.sleep(0.2)
        return False

    def stop(self):
        self.proc.stdin.close()
        for _ in self.proc.stdout:  # drained, or its writer would wait on the pipe
            pass
        return self.proc.wait(timeout=120)


def run(binary, base, n, parked):
    home, work = os.path.join(base, "home"), os.path.join(base, "work")
    os.makedirs(work)
    s = Server(binary, home, work)
    text = "run[escalate]: echo x >> ran-%d" if parked else "say: hello %d"
    started = {}
    for i in range(n):
        started[s.request("thread/start", {"approvalPolicy": "on-request"})] = i
    threads, waiting = {}, 0
    while waiting < n:
        m = s.read()
        if m.get("id") in started and "method" not in m:
            i = started.pop(m["id"])
            t = m["result"]["thread"]["id"]
            threads[t] = i
            s.request("turn/start", {"threadId": t, "input": [{"type": "text", "text": text % i}]})
        elif parked and m.get("method") == "item/commandExecution/requestApproval":
            waiting += 1
        elif not parked and m.get("method") == "turn/completed":
            waiting += 1
    for t in threads:
        s.request("thread/unsubscribe", {"threadId": t})
    if not s.wait_unloaded():
        raise RuntimeError("threads stayed loaded")
    # The allocator gives freed pages back after its decay time (jemalloc:
    # 10 s by default); measured after it, what is left is what is kept.
    time.sleep(15)
    rss = s.rss_kb()
    counts = s.call("parley/debug/counts", {})
    ran = None
    if parked:
        for t in threads:
            s.request("thread/resume", {"threadId": t})
        answered = done = 0
        while done < n:
            m = s.read()
            if m.get("method") == "item/commandExecution/requestApproval" and "id" in m:
                s.send({"id": m["id"], "result": {"decision": "accept"}})
                answered += 1
            elif m.get("method") == "turn/completed":
                done += 1
        # Every turn is over now: unloaded again, the threads hold nothing of
        # a turn. What RSS is left then is the process's, not the waiting's.
        for t in threads:
            s.request("thread/unsubscribe", {"threadId": t})
        s.wait_unloaded()
        time.sleep(15)
        counts["rssAfterAllEndedKb"] = s.rss_kb()
        ran = [0] * n
        for i in range(n):
            path = os.path.join(work, "ran-%d" % i)
            if os.path.exists(path):
                with open(path) as f:
                    ran[i] = len(f.read().splitlines())
    s.stop()
    return rss, counts, ran


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--threads", type=int, default=10000)
    ap.add_argument("--work", default="")
    args = ap.parse_args()
    base = args.work or tempfile.mkdtemp(prefix="parley-parked-bench-")
    idle_rss, idle_counts, _ = run(args.binary, os.path.join(base, "idle"), args.threads, False)
    print("idle:   %d threads unloaded after a completed turn: RSS %.1f MB (%s)"
          % (args.threads, idle_rss / 1024.0, idle_counts), flush=True)
    park_rss, park_counts, ran = run(args.binary, os.path.join(base, "parked"), args.threads, True)
    print("parked: %d threads unloaded while their turn waits on an approval: RSS %.1f MB (%s)"
          % (args.threads, park_rss / 1024.0, park_counts))
    ok = all(r == 1 for r in ran)
    print("answered after a resume: %d of %d commands ran exactly once%s"
          % (sum(1 for r in ran if r == 1), len(ran), "" if ok else " (FAIL)"))
    print("parked / idle RSS: %.2fx; the parked run's server once every turn ended and "
          "unloaded again: %.1f MB" % (park_rss / float(idle_rss),
                                       park_counts["rssAfterAllEndedKb"] / 1024.0))
    if not args.work:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
