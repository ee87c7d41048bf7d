#!/usr/bin/env python3
"""Crash test of work in flight (issue 19): many threads whose turns each ask
to run a command that appends a line to a file of its own; the client
answers each ask as planned for that action (accept, decline, late: accept
after a pause, or never), the server is killed (SIGKILL, or SIGTERM with
--signal=TERM) at a random moment, started again on the same home, every
thread resumed and what is asked again answered again, for several rounds.
A last round answers everything until no turn is left in progress.

At the end, for every action (its file names it):
  * it ran at most once (the file has at most one line);
  * a declined or never-answered action never ran; no action ran without an
    accept;
  * an action whose item completed ran exactly once, one whose item was
    declined never ran;
and every turn has ended, no thread waits on an approval, and a restart with
nothing to do runs nothing again. With --mock (turns talk to parley-mock-model
over HTTP), every request the model received answers each of its calls
exactly once.

  durable_crash_test.py --binary PARLEY --work DIR [--seed N] [--rounds N]
                        [--threads N] [--signal KILL|TERM] [--mock PARLEY_MOCK_MODEL]
                        [--store local|postgres]
"""
import argparse
import contextlib
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
import app_server_peer  # noqa: E402
import pg_cluster  # noqa: E402

PLANS = ("accept", "decline", "late", "never")
APPROVAL_TIMEOUT_S = 2


class Failure(Exception):
    pass


class Crash:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.home = os.path.join(args.work, "home")
        self.runs = os.path.join(args.work, "runs")
        os.makedirs(self.home)
        os.makedirs(self.runs)
        self.starts = 0
        self.threads = []
        self.plan = {}  # action name -> plan
        self.turns = {}  # thread -> number of turns started
        self.asked = 0  # asks answered or left, over all rounds
        self.answers = 0
        # With --mock, every turn talks to parley-mock-model over loopback:
        # its `exec_command` call is asked, and after a restart its outcome
        # goes back to the model under the same call id.
        self.mock = app_server_peer.Mock(args.mock) if args.mock else None

    def server(self):
        self.starts += 1
        store = (["--store=postgres", "--store-url=" + self.args.store_url]
                 if self.args.store_url else ["--store=local"])
        args = [self.args.binary, "app-server"] + store + ["--home=" + self.home,
                "--cwd=" + self.runs, "--approval-timeout=%ds" % APPROVAL_TIMEOUT_S,
                "--log-level=warn"]
        env = dict(os.environ)
        if self.mock:
            args += ["-c", "model=mock-model", "-c", "model_provider=mock",
                     "-c", "model_providers.mock.base_url=%s/v1" % self.mock.url,
                     "-c", "model_providers.mock.env_key=MOCK_KEY"]
            env["MOCK_KEY"] = "sk-test"
        return app_server_peer.StdioPeer(args, env,
                                         os.path.join(self.args.work, "server.log"),
                                         client_name="durable-crash")

    # -- one round -------------------------------------------------------------

    def start_turn(self, p, thread, busy):
        if thread in busy:
            return
        n = self.turns.get(thread, 0) + 1
        self.turns[thread] = n
        name = "%s-%d" % (thread[-12:], n)
        self.plan[name] = self.rng.choice(PLANS)
        busy.add(thread)
        text = ("mock: run echo x >> %s" % name if self.mock
                else "run[escalate]: echo x >> %s\nsay: done %d" % (name, n))
        p.send("turn/start", {"threadId": thread, "input": [{"type": "text", "text": text}]})

    def answer(self, p, ask, decision):
        self.answers += 1
        p.write({"id": ask["id"], "result": {"decision": decision}})

    def drive(self, p, seconds, keep_going, busy, until_idle=False):
        """Answers asks as planned and keeps every thread busy; returns when
        time is up (or, with until_idle, when no thread has a turn left)."""
        late = []  # (when, ask)
        deadline = time.monotonic() + seconds
        while True:
            now = time.monotonic()
            if now >= deadline or (until_idle and not busy and not late):
                return
            for when, ask in [x for x in late if x[0] <= now]:
                late.remove((when, ask))
                self.answer(p, ask, "accept")
            wait = min([deadline - now] + [w - now for w, _ in late] + [0.2])
            if p.kept:
                m = p.kept.pop(0)
            else:
                try:
                    m = p.inbox.get(timeout=max(0.01, wait))
                except queue.Empty:
                    continue
            if m is None:
                raise Failure("the server closed its output")
            method = m.get("method", "")
            if method == "item/commandExecution/requestApproval" and "id" in m:
                self.asked += 1
                found = re.search(r">> ([\w-]+)", str(m["params"].get("command") or ""))
                plan = self.plan.get(found.group(1)) if found else None
                if plan is None:
                    raise Failure("asked about an action nobody planned: %s" % m["params"])
                if plan in ("accept", "decline"):
                    self.answer(p, m, plan)
                elif plan == "late":
                    late.append((now + self.rng.uniform(0.1, 1.0), m))
            elif method == "turn/completed":
                thread = m["params"]["threadId"]
                busy.discard(thread)
                if keep_going:
                    self.start_turn(p, thread, busy)

    def resume_all(self, p, busy):
        for t in self.threads:
            r = p.call("thread/resume", {"threadId": t}, timeout=60)
            if "result" not in r:
                raise Failure("thread/resume %s: %s" % (t, r))
            turns = r["result"]["thread"]["turns"]
            if turns and turns[-1]["status"] == "inProgress":
                busy.add(t)  # it goes on from where the restart found it

    def round(self, last):
        p = self.server()
        busy = set()
        if not self.threads:
            for _ in range(self.args.threads):
                r = p.call("thread/start", {"approvalPolicy": "on-request", "cwd": self.runs})
                self.threads.append(r["result"]["thread"]["id"])
        else:
            self.resume_all(p, busy)
        if not last:
            for t in self.threads:
                self.start_turn(p, t, busy)
            self.drive(p, self.rng.uniform(0.3, 1.5), True, busy)
            sig = signal.SIGTERM if self.args.signal == "TERM" else signal.SIGKILL
            p.proc.send_signal(sig)
            code = p.proc.wait(timeout=60)
            p.stderr.close()
            if sig == signal.SIGTERM and code != 0:
                raise Failure("SIGTERM: the server exited %d" % code)
            return
        # The last round: what is asked again is answered; the rest times out.
        self.drive(p, 120, False, busy, until_idle=True)
        if busy:
            raise Failure("turns still running at the end: %s" % sorted(busy))
        if p.stop() != 0:
            raise Failure("the server did not stop cleanly")

    # -- the checks --------------------------------------------------------------

    def ran(self, name):
        path = os.path.join(self.runs, name)
        if not os.path.exists(path):
            return 0
        with open(path) as f:
            return len(f.read().splitlines())

    def verify(self):
        p = self.server()
        time.sleep(0.3)  # anything a restart would wrongly redo, it does at once
        checked = 0
        listed = p.call("thread/list", {"limit": 1000})["result"]["data"]
        waiting = [t["id"] for t in listed if t["status"].get("type") != "notLoaded"]
        if waiting:
            for t in waiting:
                thread = p.call("thread/read", {"threadId": t, "includeTurns": True})["result"]["thread"]
                print("still active: %s turns %s" % (t, [(x["id"], x["status"], [i.get("status") for i in x["items"]]) for x in thread["turns"][-2:]]), file=sys.stderr)
            raise Failure("threads still active after everything ended: %s" % waiting)
        items = {}
        for t in self.threads:
            thread = p.call("thread/read", {"threadId": t, "includeTurns": True})["result"]["thread"]
            for turn in thread["turns"]:
                if turn["status"] == "inProgress":
                    raise Failure("turn %s is still in progress" % turn["id"])
                for item in turn["items"]:
                    if item["type"] != "commandExecution":
                        continue
                    found = re.search(r">> ([\w-]+)", item.get("command") or "")
                    if found:
                        items[found.group(1)] = item["status"]
        for name, plan in self.plan.items():
            n = self.ran(name)
            status = items.get(name)
            checked += 1
            if n > 1:
                raise Failure("%s (%s) ran %d times" % (name, plan, n))
            if n and plan in ("decline", "never"):
                raise Failure("%s ran without an accept (%s)" % (name, plan))
            if status == "completed" and n != 1:
                raise Failure("%s completed but ran %d times" % (name, n))
            if status == "declined" and n:
                raise Failure("%s was declined but ran" % name)
        for name in os.listdir(self.runs):
            if name not in self.plan:
                raise Failure("an action nobody planned ran: %s" % name)
        if p.stop() != 0:
            raise Failure("the server did not stop cleanly")
        if self.mock:
            # Every model request holds each call's outcome once, right after
            # the call (a restart never answers one twice, nor leaves one out).
            for q in self.mock.requests():
                items = q["body"].get("input", [])
                calls = [i.get("call_id") for i in items if i.get("type") == "function_call"]
                outs = [i.get("call_id") for i in items if i.get("type") == "function_call_output"]
                if len(outs) != len(set(outs)) or sorted(outs) != sorted(calls):
                    raise Failure("a model request answers calls %s with outputs %s" % (calls, outs))
                checked += len(calls)
        ran = sum(1 for name in self.plan if self.ran(name))
        return checked, ran


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--signal", choices=("KILL", "TERM"), default="KILL")
    ap.add_argument("--mock", default="", help="parley-mock-model: turns talk to it")
    ap.add_argument("--store", choices=("local", "postgres"), default="local",
                    help="postgres: on a private PostgreSQL cluster (tests/support/pg_cluster.py)")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    args.store_url = ""
    with contextlib.ExitStack() as stack:
        if args.store == "postgres":
            if not pg_cluster.available():
                print("PostgreSQL 15 is not installed" + (" (required in CI)" if pg_cluster.must_run() else ": skipped"))
                return 1 if pg_cluster.must_run() else 77
            cluster = stack.enter_context(pg_cluster.started())
            args.store_url = cluster.create_database("crash")
            subprocess.run([args.binary, "store", "migrate", "--store-url=" + args.store_url],
                           check=True, capture_output=True)
        c = Crash(args)
        try:
            for r in range(args.rounds + 1):
                c.round(last=(r == args.rounds))
            checked, ran = c.verify()
        finally:
            if c.mock:
                c.mock.stop()
    print("durable crash test%s%s: seed %d, %d rounds (SIG%s), %d threads, %d actions checked "
          "(%d ran, each once), %d asks, %d answers" % (" (HTTP model)" if args.mock else "",
                                                        " on " + args.store,
                                                        args.seed, args.rounds, args.signal,
                                                        len(c.threads), checked, ran, c.asked,
                                                        c.answers))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (Failure, TimeoutError, EOFError) as e:
        print("FAIL:", e, file=sys.stderr)
        sys.exit(1)
