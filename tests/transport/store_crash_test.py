#!/usr/bin/env python3
"""Crash test for the local store: many threads run turns on
`parley app-server --store=local`, the server is killed with SIGKILL at a
random moment, restarted on the same home, and so on for several rounds.

After every restart:
  * a turn whose command had started when the server was killed goes on by
    itself (the command is not run again) and is left to finish;
  * every turn the client saw complete (turn/completed) is still there, in
    thread/read includeTurns, completed, with its items (the user's text and
    the answer, or the command and its output);
  * every thread resumes and takes a new turn.
Between some rounds the tail of a rollout is torn (a partial line appended,
as a crash mid-write leaves it); the checks above must hold all the same.

The seed fixes every choice (texts, kill delays, which file is torn); when
the kill lands depends on timing, as it would. Exit 0 when every check held.
  store_crash_test.py --binary PARLEY --work DIR [--seed N] [--rounds N] [--threads N]
"""
import argparse
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

TIMEOUT = 30.0  # seconds for any single expected message


class Failure(Exception):
    pass


class Server:
    """One `parley app-server` process and the lines it prints."""

    def __init__(self, binary, home, log_path):
        self.err = open(log_path, "ab")
        self.proc = subprocess.Popen(
            [binary, "app-server", "--store=local", "--home=" + home],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)
        self.lines = queue.Queue()
        self.next_id = 1
        self.pending = {}  # messages read while waiting for something else
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            if not raw.endswith(b"\n"):
                # kill -9 in the middle of a line (stdout is written a pipe's
                # atomic size at a time): only the last line can be torn.
                break
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def send(self, method, params=None, notify=False):
        msg = {"method": method}
        if params is not None:
            msg["params"] = params
        rid = None
        if not notify:
            rid = self.next_id
            self.next_id += 1
            msg["id"] = rid
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
        deadline = time.monotonic() + TIMEOUT
        while True:
            m = self.next(max(0.1, deadline - time.monotonic()))
            if m.get("id") == rid and "method" not in m:
                if "error" in m:
                    raise Failure("%s failed: %s" % (method, m["error"]))
                return m["result"]
            if on_other:
                on_other(m)

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


def turn_text(rng, round_no, n):
    if rng.random() < 0.25:
        return "run: echo out-%d-%d" % (round_no, n)
    return "say: answer-%d-%d" % (round_no, n)


def check_items(turn, text):
    items = turn.get("items", [])
    types = [i.get("type") for i in items]
    if not items or types[0] != "userMessage":
        raise Failure("turn %s lost its user message: %s" % (turn["id"], types))
    said = "".join(c.get("text", "") for c in items[0].get("content", []))
    if said != text:
        raise Failure("turn %s says %r, expected %r" % (turn["id"], said, text))
    if text.startswith("say: "):
        answers = [i.get("text") for i in items if i.get("type") == "agentMessage"]
        if text[5:] not in answers:
            raise Failure("turn %s lost its answer: %s" % (turn["id"], items))
    else:
        outs = [i.get("aggregatedOutput") for i in items if i.get("type") == "commandExecution"]
        if text[5:].split(" ", 1)[1] + "\n" not in outs:
            raise Failure("turn %s lost its command output: %s" % (turn["id"], items))


def verify(server, completed):
    """Every turn seen completed is stored completed with its items."""
    checked = 0
    for thread, turns in completed.items():
        stored = server.call("thread/read", {"threadId": thread, "includeTurns": True})
        by_id = {t["id"]: t for t in stored["thread"]["turns"]}
        for turn_id, text in turns.items():
            t = by_id.get(turn_id)
            if t is None:
                raise Failure("thread %s lost completed turn %s" % (thread, turn_id))
            if t["status"] != "completed":
                raise Failure("turn %s is %s after restart" % (turn_id, t["status"]))
            check_items(t, text)
            checked += 1
    return checked


class Driver:
    """Keeps every thread busy: each completed turn starts the next one."""

    def __init__(self, server, rng, round_no, completed):
        self.server, self.rng, self.round_no, self.completed = server, rng, round_no, completed
        self.texts = {}  # turn id -> text, for turns started this round
        self.started = {}  # request id -> (thread, text)
        self.n = 0
        self.keep_going = True
        self.ended = {}  # thread -> status of its last turn/completed
        # Threads with a turn in flight: one this driver started, or one the
        # restart carries on (a command that had started when the server was
        # killed ends failed, and its turn goes on by itself).
        self.busy = set()
        self.current = {}  # thread -> the turn this driver started on it, until it ends

    def start_turn(self, thread):
        if thread in self.busy:
            return
        self.busy.add(thread)
        self.n += 1
        text = turn_text(self.rng, self.round_no, self.n)
        rid = self.server.send("turn/start", {
            "threadId": thread,
            "input": [{"type": "text", "text": text, "text_elements": []}]})
        self.started[rid] = (thread, text)

    def on_message(self, m):
        if "method" not in m and m.get("id") in self.started:
            thread, text = self.started.pop(m["id"])
            if "error" in m:
                raise Failure("turn/start on %s failed: %s" % (thread, m["error"]))
            self.texts[m["result"]["turn"]["id"]] = text
            self.current[thread] = m["result"]["turn"]["id"]
        elif m.get("method") == "turn/completed":
            p = m["params"]
            turn = p["turn"]
            thread = p["threadId"]
            if turn["status"] == "completed" and turn["id"] in self.texts:
                self.completed.setdefault(thread, {})[turn["id"]] = self.texts[turn["id"]]
            # The end of an earlier turn (one carried on after the restart,
            # whose end a thread/resume reply already showed) is not the end of
            # the one this driver started since.
            starting = any(t == thread for t, _ in self.started.values())
            mine = self.current.get(thread)
            if starting or (mine is not None and mine != turn["id"]):
                return
            self.current.pop(thread, None)
            self.ended[thread] = turn["status"]
            self.busy.discard(thread)
            if self.keep_going:
                self.start_turn(thread)

    def run_for(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                m = self.server.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if m is None:
                raise Failure("the server closed its output")
            self.on_message(m)


def tear_a_tail(rng, home):
    files = []
    for root, _, names in os.walk(os.path.join(home, "sessions")):
        files += [os.path.join(root, n) for n in names if n.endswith(".jsonl")]
    if not files:
        return
    path = rng.choice(sorted(files))
    with open(path, "ab") as f:
        f.write(b'{"timestamp":"2026-11-21T08:00:00.000Z","type":"event_msg","payload":{"ty')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--threads", type=int, default=8)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shutil.rmtree(args.work, ignore_errors=True)
    home = os.path.join(args.work, "home")
    os.makedirs(home)
    log = os.path.join(args.work, "server.log")
    completed = {}  # thread -> {turn id -> text}
    threads = []
    checked = torn = 0
    for round_no in range(args.rounds + 1):
        server = Server(args.binary, home, log)
        server.call("initialize", {"clientInfo": {"name": "crash-test", "version": "1"}})
        server.send("initialized", notify=True)
        checked += verify(server, completed)
        driver = Driver(server, rng, round_no, completed)
        if not threads:
            for _ in range(args.threads):
                r = server.call("thread/start", {"approvalPolicy": "never", "cwd": args.work},
                                driver.on_message)
                threads.append(r["thread"]["id"])
        else:
            for t in threads:
                r = server.call("thread/resume", {"threadId": t, "approvalPolicy": "never"},
                                driver.on_message)
                turns = r["thread"]["turns"]
                if turns and turns[-1]["status"] == "inProgress":
                    driver.busy.add(t)  # carried on after the restart
        for t in threads:
            driver.start_turn(t)
        if round_no < args.rounds:
            driver.run_for(rng.uniform(0.3, 1.5))
            server.kill()
            if round_no % 2 == 1:
                tear_a_tail(rng, home)
                torn += 1
        else:  # the last round: every thread's new turn completes, clean exit
            driver.keep_going = False
            while len(driver.ended) < len(threads):
                driver.on_message(server.next())
            bad = {t: s for t, s in driver.ended.items() if s != "completed"}
            if bad:
                raise Failure("turns after the restarts did not complete: %s" % bad)
            server.close()
    server = Server(args.binary, home, log)
    server.call("initialize", {"clientInfo": {"name": "crash-test", "version": "1"}})
    checked += verify(server, completed)
    server.close()
    turns = sum(len(t) for t in completed.values())
    print("store crash test: seed %d, %d rounds (kill -9), %d threads, %d torn tails, "
          "%d completed turns kept, %d turn checks" % (args.seed, args.rounds, len(threads), torn,
                                                        turns, checked))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print("FAIL:", e, file=sys.stderr)
        sys.exit(1)
