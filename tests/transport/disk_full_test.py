#!/usr/bin/env python3
"""The real thing: `parley app-server --store=local` with its home on a small
tmpfs that the test fills. Threads run turns until the disk is full and
beyond, space is freed and turns go on (without a restart), the disk fills
and is freed again; then the server is killed with SIGKILL and restarted on
the same home. Checks:
  * while the disk is full, no turn is reported completed unless it was
    stored: after the restart every turn the client saw complete reads back
    completed, with its text; every thread the client saw started reads and
    resumes;
  * while the disk is full, thread/start and turn/start are refused with
    -32001 naming the cause, or turns end failed naming the store;
  * once space is freed, turns complete again by themselves;
  * /readyz answers 503 naming the cause while the disk is full, 200 before
    and after; a loaded thread stays readable; an approval stays pending,
    and one accepted while the disk is full runs only once its decision is
    stored (a small record may still fit in a file's last page);
  * every request gets exactly one reply.
Needs to mount a tmpfs (root, as in CI): exits 77 (skipped) with a message
where mounting is not allowed.
  disk_full_test.py --binary PARLEY --work DIR
"""
import argparse
import errno
import http.client
import json
import re
import os
import queue
import signal
import subprocess
import sys
import threading
import time

TIMEOUT = 30.0
SKIP = 77


class Failure(Exception):
    pass


class Server:
    def __init__(self, binary, home, log_path, extra=()):
        self.err = open(log_path, "ab")
        self.proc = subprocess.Popen(
            [binary, "app-server", "--store=local", "--home=" + home,
             "--store-backlog=65536", "--audit=off"] + list(extra),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)
        self.lines = queue.Queue()
        self.next_id = 1
        self.replies = {}  # request id -> how many replies
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            m = json.loads(raw)
            if "method" not in m and "id" in m:
                self.replies[m["id"]] = self.replies.get(m["id"], 0) + 1
            self.lines.put(m)
        self.lines.put(None)

    def send(self, method, params):
        rid = self.next_id
        self.next_id += 1
        msg = {"id": rid, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        return rid

    def next(self, timeout=TIMEOUT):
        try:
            m = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise Failure("no message from the server for %.0f s" % timeout)
        if m is None:
            raise Failure("the server closed its output")
        return m

    def call(self, method, params, on_other=None):
        rid = self.send(method, params)
        while True:
            m = self.next()
            if m.get("id") == rid and "method" not in m:
                return m
            if on_other:
                on_other(m)

    def call_ok(self, method, params, on_other=None):
        m = self.call(method, params, on_other)
        if "error" in m:
            raise Failure("%s failed: %s" % (method, m["error"]))
        return m["result"]

    def initialize(self):
        self.call_ok("initialize", {"clientInfo": {"name": "disk-full-test", "version": "1"}})
        self.proc.stdin.write(b'{"method":"initialized"}\n')
        self.proc.stdin.flush()

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.err.close()

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=60)
        self.err.close()
        if rc != 0:
            raise Failure("the server exited %d after stdin closed" % rc)


def fill(path):
    """Writes `path` until the file system is full (unbuffered: nothing is left
    to flush, and fail, at close)."""
    with open(path, "ab", buffering=0) as f:
        for size in (65536, 4096, 512, 64, 1):
            try:
                while True:
                    f.write(b"x" * size)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise


class Driver:
    """Keeps every thread busy; records what was reported."""

    def __init__(self, server, threads):
        self.server = server
        self.threads = list(threads)
        self.texts = {}      # turn id -> text
        self.started = {}    # request id -> (thread, text)
        self.completed = {}  # thread -> {turn id: text}
        self.failed = 0
        self.refused = 0
        self.busy = set()
        self.n = 0
        self.messages = []   # error messages seen (turn failures, refusals)
        self.completions = 0
        self.last_start = {}  # thread -> when its last turn was asked for
        self.gap = 0.05       # seconds between a thread's turns (the disk fills by the filler)

    def start_turn(self, thread):
        now = time.monotonic()
        if thread in self.busy or now - self.last_start.get(thread, 0) < self.gap:
            return
        self.last_start[thread] = now
        self.busy.add(thread)
        self.n += 1
        text = "say: turn-%d %s" % (self.n, "y" * 500)
        rid = self.server.send("turn/start", {
            "threadId": thread, "input": [{"type": "text", "text": text, "text_elements": []}]})
        self.started[rid] = (thread, text)

    def on_message(self, m):
        if "method" not in m and m.get("id") in self.started:
            thread, text = self.started.pop(m["id"])
            if "error" in m:
                err = m["error"]
                if err.get("code") != -32001:
                    raise Failure("turn/start failed otherwise than overloaded: %s" % err)
                self.refused += 1
                self.messages.append(err["message"])
                self.busy.discard(thread)
                return
            self.texts[m["result"]["turn"]["id"]] = text
        elif m.get("method") == "turn/completed":
            p = m["params"]
            turn = p["turn"]
            self.busy.discard(p["threadId"])
            if turn["status"] == "completed":
                self.completions += 1
                if turn["id"] in self.texts:
                    self.completed.setdefault(p["threadId"], {})[turn["id"]] = self.texts[turn["id"]]
            elif turn["status"] == "failed":
                self.failed += 1
                self.messages.append(turn.get("error", {}).get("message", ""))

    def run_for(self, seconds, keep_going=True):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if keep_going:
                for t in self.threads:
                    self.start_turn(t)
            try:
                m = self.server.lines.get(timeout=0.05)
            except queue.Empty:
                continue
            if m is None:
                raise Failure("the server closed its output")
            self.on_message(m)

    def drain(self, seconds=20):
        """No new turns; waits for those in flight to end."""
        deadline = time.monotonic() + seconds
        while (self.busy or self.started) and time.monotonic() < deadline:
            self.run_for(0.2, keep_going=False)
        if self.busy or self.started:
            raise Failure("turns never ended: %s" % sorted(self.busy))


def decision_stored(home, thread):
    """Whether the thread's rollout holds an accept for its action."""
    for root, _, files in os.walk(os.path.join(home, "sessions")):
        for name in files:
            if thread in name:
                with open(os.path.join(root, name), errors="replace") as f:
                    for line in f:
                        if '"parley_action"' in line and '"decided"' in line and "accept" in line:
                            return True
    return False


def ready_port(log_path):
    """The port of the WebSocket listener, from the server's log."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(log_path, errors="replace") as f:
            found = re.findall(r"listening on ws://127\.0\.0\.1:(\d+)", f.read())
        if found:
            return int(found[-1])
        time.sleep(0.05)
    raise Failure("the WebSocket listener never said where it listens")


def readyz(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/readyz")
    r = conn.getresponse()
    body = r.read().decode()
    conn.close()
    return r.status, body


def start_threads(server, driver, n, cwd):
    threads = []
    for _ in range(n):
        r = server.call("thread/start", {"cwd": cwd}, driver.on_message)
        if "error" in r:
            if r["error"].get("code") != -32001:
                raise Failure("thread/start failed otherwise than overloaded: %s" % r["error"])
            driver.refused += 1
            driver.messages.append(r["error"]["message"])
            continue
        threads.append(r["result"]["thread"]["id"])
    return threads


def run(args):
    work = os.path.abspath(args.work)
    mnt = os.path.join(work, "mnt")
    os.makedirs(mnt, exist_ok=True)
    subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk" % args.size_kib, "tmpfs", mnt],
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        print("skipped: cannot mount a tmpfs here (%s)" % r.stderr.decode().strip())
        return SKIP
    try:
        return scenario(args, work, mnt)
    except Failure:
        # Kept for a look: the tmpfs goes away.
        subprocess.run(["rm", "-rf", os.path.join(work, "home-at-failure")])
        subprocess.run(["cp", "-a", os.path.join(mnt, "home"), os.path.join(work, "home-at-failure")])
        raise
    finally:
        subprocess.run(["umount", "-l", mnt])


def scenario(args, work, mnt):
    home = os.path.join(mnt, "home")
    cwd = os.path.join(work, "cwd")
    os.makedirs(cwd, exist_ok=True)
    filler = os.path.join(mnt, "filler")
    log = os.path.join(work, "server.log")
    server = Server(args.binary, home, log,
                    ["--listen", "stdio://", "--listen", "ws://127.0.0.1:0"])
    server.initialize()
    port = ready_port(log)
    status, body = readyz(port)
    if status != 200:
        raise Failure("/readyz on an empty disk: %d %s" % (status, body))
    driver = Driver(server, [])
    driver.threads = start_threads(server, driver, args.threads, cwd)
    if len(driver.threads) != args.threads:
        raise Failure("threads refused on an empty disk")
    all_threads = list(driver.threads)
    driver.run_for(2)
    before = driver.completions
    if before == 0:
        raise Failure("no turn completed on an empty disk")

    # A turn waits on a person when the disk fills.
    approved = os.path.join(cwd, "approved")
    waiting = server.call_ok("thread/start", {"cwd": cwd}, driver.on_message)["thread"]["id"]
    all_threads.append(waiting)
    server.call_ok("turn/start", {"threadId": waiting, "input": [
        {"type": "text", "text": "run[escalate]: touch %s" % approved, "text_elements": []}]},
        driver.on_message)
    ask = None
    while ask is None:
        m = server.next()
        if m.get("method") == "item/commandExecution/requestApproval" and "id" in m:
            ask = m
        else:
            driver.on_message(m)

    for round_no in range(2):
        fill(filler)
        # New threads are refused once the store has found the disk full,
        # naming the cause; turns meanwhile wait, fail or are refused.
        deadline = time.monotonic() + 15
        while True:
            driver.run_for(0.5)
            r = server.call("thread/start", {"cwd": cwd}, driver.on_message)
            if "error" in r:
                if r["error"].get("code") != -32001 or "no space left" not in r["error"]["message"]:
                    raise Failure("thread/start on a full disk: %s" % r["error"])
                break
            all_threads.append(r["result"]["thread"]["id"])  # stored before the disk filled
            if time.monotonic() > deadline:
                raise Failure("round %d: thread/start still accepted on a full disk" % round_no)
        driver.run_for(2)
        full_refused, full_failed = driver.refused, driver.failed
        # Not ready, saying why; loaded threads stay readable.
        status, body = readyz(port)
        if status != 503 or "no space left on device" not in body:
            raise Failure("/readyz on a full disk: %d %s" % (status, body))
        server.call_ok("thread/read", {"threadId": driver.threads[0]}, driver.on_message)
        if round_no == 0:
            # The approval stayed pending; accepted now, its decision must be
            # stored before the command runs: not while the disk is full.
            server.proc.stdin.write((json.dumps(
                {"id": ask["id"], "result": {"decision": "accept"}}) + "\n").encode())
            server.proc.stdin.flush()
            driver.run_for(1)
            if os.path.exists(approved) and not decision_stored(home, waiting):
                raise Failure("an accepted command ran before its decision was stored")
        os.remove(filler)
        freed = time.monotonic()
        mark = driver.completions
        resumed = None
        deadline = time.monotonic() + 15
        while driver.completions <= mark + len(driver.threads):
            driver.run_for(0.02)
            if resumed is None and driver.completions > mark:
                resumed = time.monotonic() - freed
            if time.monotonic() > deadline:
                raise Failure("round %d: turns did not complete again after space was freed"
                              % round_no)
        status, body = readyz(port)
        if status != 200:
            raise Failure("/readyz after space was freed: %d %s" % (status, body))
        if round_no == 0:
            deadline = time.monotonic() + 10
            while not os.path.exists(approved) and time.monotonic() < deadline:
                driver.run_for(0.1)
            print("the command accepted while the disk was full: %s"
                  % ("ran, its decision stored" if os.path.exists(approved) else "did not run (its turn failed)"))
        r = server.call("thread/start", {"cwd": cwd}, driver.on_message)
        if "error" in r:
            raise Failure("thread/start after space was freed: %s" % r["error"])
        all_threads.append(r["result"]["thread"]["id"])
        print("round %d: %d turns completed, %d failed, %d refused (%d failed, %d refused "
              "while full); the first turn completed %.0f ms after space was freed"
              % (round_no, driver.completions, driver.failed, driver.refused, full_failed,
                 full_refused, resumed * 1000))
    driver.run_for(1)
    server.kill()

    server = Server(args.binary, home, log)
    server.initialize()
    checked = 0
    for thread in all_threads:
        stored = server.call_ok("thread/read", {"threadId": thread, "includeTurns": True})
        by_id = {t["id"]: t for t in stored["thread"]["turns"]}
        for turn_id, text in driver.completed.get(thread, {}).items():
            t = by_id.get(turn_id)
            if t is None:
                raise Failure("thread %s lost completed turn %s" % (thread, turn_id))
            if t["status"] != "completed":
                raise Failure("turn %s reads back %s" % (turn_id, t["status"]))
            said = "".join(c.get("text", "") for c in t["items"][0].get("content", []))
            if said != text:
                raise Failure("turn %s lost its text" % turn_id)
            checked += 1
        server.call_ok("thread/resume", {"threadId": thread})
    server.close()
    dup = [k for k, n in server.replies.items() if n != 1]
    if dup:
        raise Failure("requests answered more than once: %s" % dup)
    print("ok: %d completed turns read back after the restart, %d threads readable"
          % (checked, len(all_threads)))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--size-kib", type=int, default=16384)
    args = ap.parse_args()
    try:
        sys.exit(run(args))
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)


if __name__ == "__main__":
    main()
