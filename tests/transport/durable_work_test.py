#!/usr/bin/env python3
"""Work in flight survives a restart (issue 19), through real parts: the real
`parley app-server` on the local store over real pipes, killed with SIGKILL
or SIGTERM, started again on the same home. Every command the scripted model
runs appends a line to a file of its own, so the files say how often each
action ran.

Covered: approvals pending at a kill -9 are listed as waiting, asked again
(same itemId, after the resume's reply) and applied exactly once, and the
turn goes on; a decision stored but not acted on runs once at the next
start, with nobody connected; a started action is never run again (its
item fails, saying why); a deadline keeps running while the server is down;
SIGTERM keeps what is pending, while the stdio client closing its input
cancels it (Codex's meaning); a turn waiting with nobody subscribed unloads
(nothing of it stays in memory) and goes on when resumed or at its deadline.

The same tests run on the PostgreSQL store with PARLEY_TEST_STORE=postgres
(ctest durable_work_postgres): a private cluster for the run
(tests/support/pg_cluster.py), a database per test, `parley store migrate`
first; what a test writes into a rollout by hand it writes into the
database's lines instead.

Usage: durable_work_test.py PARLEY_BINARY [TEST_NAME...]
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import app_server_peer  # noqa: E402
import pg_cluster  # noqa: E402

PARLEY = sys.argv[1]
ONLY = set(sys.argv[2:])
FAILURES = []
STORE = os.environ.get("PARLEY_TEST_STORE", "local")
CLUSTER = None  # the run's PostgreSQL cluster (PARLEY_TEST_STORE=postgres)


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)
    return cond


class Home:
    """A parley home and a work folder for the commands' files."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="parley-durable-")
        self.home = os.path.join(self.dir, "home")
        self.work = os.path.join(self.dir, "work")
        os.makedirs(self.work)
        self.starts = 0
        self.store = ["--store=local"]
        if STORE == "postgres":
            self.db = os.path.basename(self.dir).replace("-", "_").lower()
            self.url = CLUSTER.create_database(self.db)
            migrate = subprocess.run([PARLEY, "store", "migrate", "--store-url=" + self.url],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if migrate.returncode != 0:
                raise RuntimeError("store migrate failed: " + migrate.stdout)
            self.store = ["--store=postgres", "--store-url=" + self.url]

    def server(self, *flags):
        self.starts += 1
        args = [PARLEY, "app-server", *self.store, "--home=" + self.home, "--cwd=" + self.work,
                "--log-level=info", *flags]
        return app_server_peer.StdioPeer(args, dict(os.environ),
                                         os.path.join(self.dir, "server-%d.log" % self.starts),
                                         client_name="durable-test")

    def runs(self, name):
        """How many times the action writing `name` ran."""
        path = os.path.join(self.work, name)
        if not os.path.exists(path):
            return 0
        with open(path) as f:
            return len(f.read().splitlines())

    def rollout_of(self, thread):
        for root, _, files in os.walk(os.path.join(self.home, "sessions")):
            for f in files:
                if thread in f:
                    return os.path.join(root, f)
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # KEEP=1 keeps the homes and the servers' logs to look at.
        if os.environ.get("KEEP"):
            print("kept", self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def kill(p, sig=signal.SIGKILL):
    p.proc.send_signal(sig)
    code = p.proc.wait(timeout=60)
    p.stderr.close()
    return code


def is_ask(m, thread=None):
    return (m.get("method") == "item/commandExecution/requestApproval" and "id" in m
            and (thread is None or m["params"]["threadId"] == thread))


def answer(p, ask, decision):
    p.write({"id": ask["id"], "result": {"decision": decision}})


def turn_done(p, thread, timeout=30):
    return p.wait(lambda m: m.get("method") == "turn/completed"
                  and m["params"]["threadId"] == thread, timeout)


def start_asking(p, home, name, say="after"):
    """A thread whose turn asks to run a command appending to `name`, then
    says something; returns (thread, turn, the ask)."""
    t = p.start_thread()
    turn = p.start_turn(t, "run[escalate]: echo x >> %s\nsay: %s" % (name, say))
    ask = p.wait(lambda m: is_ask(m, t))
    return t, turn, ask


def read(p, thread):
    return p.call("thread/read", {"threadId": thread, "includeTurns": True})["result"]["thread"]


def wait_turn_over(p, thread, timeout=20):
    """Polls thread/read until the thread's last turn is no longer in progress."""
    deadline = time.monotonic() + timeout
    while True:
        t = read(p, thread)
        if t["turns"] and t["turns"][-1]["status"] != "inProgress":
            return t
        if time.monotonic() > deadline:
            return t
        time.sleep(0.05)


def command_item(turn):
    return next((i for i in turn["items"] if i["type"] == "commandExecution"), None)


def listed(p):
    r = p.call("thread/list", {"limit": 100})["result"]["data"]
    return {t["id"]: t["status"] for t in r}


# -- 1. pending approvals at a kill -9 --------------------------------------------------------

def test_pending_approvals_survive_kill_9():
    with Home() as h:
        p = h.server()
        threads = []
        for i in range(6):
            t, turn, ask = start_asking(p, h, "ran-%d" % i)
            threads.append((t, turn, ask))
        # Two are answered before the kill: they run (or not) once, and stay so.
        answer(p, threads[0][2], "accept")
        answer(p, threads[1][2], "decline")
        check(turn_done(p, threads[0][0])["params"]["turn"]["status"] == "completed", "0 completes")
        check(turn_done(p, threads[1][0])["params"]["turn"]["status"] == "completed", "1 completes")
        check(kill(p) == -9, "killed")
        check(h.runs("ran-0") == 1 and h.runs("ran-1") == 0, "before the restart: 0 ran once, 1 never")

        p = h.server()
        status = listed(p)
        for i, (t, _, _) in enumerate(threads):
            want_waiting = i >= 2
            s = status.get(t, {})
            check((s.get("type") == "active" and "waitingOnApproval" in s.get("activeFlags", []))
                  == want_waiting, "thread/list after the restart: thread %d %s" % (i, s))
        decisions = {2: "accept", 3: "decline", 4: "acceptForSession", 5: "cancel"}
        for i, decision in decisions.items():
            t, turn, old = threads[i]
            rid = p.send("thread/resume", {"threadId": t})
            seen = []
            ask = p.wait(lambda m: seen.append(m) or is_ask(m, t))
            # Rule 7: the resume's reply comes before the approval is asked again.
            check(any(m.get("id") == rid and "method" not in m for m in seen[:-1]),
                  "thread %d: the resume's reply comes before the ask again" % i)
            check(ask["params"]["itemId"] == old["params"]["itemId"] and ask["params"]["turnId"] == turn
                  and ask["params"]["command"] == old["params"]["command"],
                  "thread %d: same item, turn and command: %s" % (i, ask["params"]))
            answer(p, ask, decision)
            done = turn_done(p, t)
            want = "interrupted" if decision == "cancel" else "completed"
            check(done["params"]["turn"]["status"] == want,
                  "thread %d: the turn goes on to %s: %s" % (i, want, done["params"]["turn"]))
        check(h.runs("ran-2") == 1 and h.runs("ran-4") == 1, "accepted after the restart: ran once")
        check(h.runs("ran-3") == 0 and h.runs("ran-5") == 0, "declined, cancelled: never ran")
        for i in (2, 4):
            t = read(p, threads[i][0])
            last = t["turns"][-1]
            cmd = command_item(last)
            check(cmd is not None and cmd["status"] == "completed" and cmd["exitCode"] == 0,
                  "thread %d: the command item completed: %s" % (i, cmd))
            check(any(it["type"] == "agentMessage" and it["text"] == "after" for it in last["items"]),
                  "thread %d: the turn's next step ran after the answer" % i)
        check(kill(p) == -9, "killed again")
        # Nothing is pending any more, and nothing runs again.
        p = h.server()
        status = listed(p)
        check(all(s.get("type") == "notLoaded" for s in status.values()),
              "nothing waits after the second restart: %s" % status)
        time.sleep(0.5)
        check([h.runs("ran-%d" % i) for i in range(6)] == [1, 0, 1, 0, 1, 0],
              "every action ran as decided, once: %s" % [h.runs("ran-%d" % i) for i in range(6)])
        check(p.stop() == 0, "stops cleanly")


# -- 2. decided and started, as a crash leaves them -------------------------------------------

def append_phase(path, phase, extra):
    """Appends the next phase of the last action of a rollout, as the server
    would have written it just before a crash."""
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    asked = [r for r in lines if r.get("type") == "parley_action"][-1]
    payload = dict(asked["payload"], phase=phase, **extra)
    with open(path, "a") as f:
        f.write(json.dumps({"timestamp": asked["timestamp"], "type": "parley_action",
                            "payload": payload}) + "\n")


def append_phase_pg(h, thread, phase, extra):
    """The same in the database: the line after the thread's last, and its
    row's pending phase, in one transaction (as the store writes them)."""
    last = CLUSTER.psql("SELECT line::text FROM thread_lines WHERE thread_id = $t$%s$t$"
                        " AND kind = 'parley_action' ORDER BY seq DESC LIMIT 1" % thread, h.db)
    asked = json.loads(last)
    payload = dict(asked["payload"], phase=phase, **extra)
    line = json.dumps({"timestamp": asked["timestamp"], "type": "parley_action", "payload": payload})
    pending = {"asked": 1, "decided": 2, "started": 3}[phase]
    CLUSTER.psql("BEGIN; INSERT INTO thread_lines (thread_id, seq, kind, turn_id, line)"
                 " SELECT $t$%s$t$, max(seq) + 1, 'parley_action', $u$%s$u$, $j$%s$j$::jsonb"
                 " FROM thread_lines WHERE thread_id = $t$%s$t$;"
                 " UPDATE threads SET pending = %d WHERE id = $t$%s$t$; COMMIT"
                 % (thread, payload.get("turn_id", ""), line, thread, pending, thread), h.db)


def add_phase(h, thread, phase, extra):
    if STORE == "postgres":
        append_phase_pg(h, thread, phase, extra)
    else:
        append_phase(h.rollout_of(thread), phase, extra)


def test_decided_runs_once_and_started_never_again():
    with Home() as h:
        p = h.server()
        accepted, _, _ = start_asking(p, h, "decided-accept")
        declined, _, _ = start_asking(p, h, "decided-decline")
        started, _, _ = start_asking(p, h, "started")
        check(kill(p) == -9, "killed")
        accept = {"outcome": "decided", "decision": "accept", "stage": "client"}
        add_phase(h, accepted, "decided", accept)
        add_phase(h, declined, "decided",
                  {"outcome": "decided", "decision": "decline", "stage": "client"})
        add_phase(h, started, "decided", accept)
        add_phase(h, started, "started", accept)
        # Nobody connects for them: the start alone carries each on.
        p = h.server()
        for t, name in ((accepted, "decided-accept"), (declined, "decided-decline"),
                        (started, "started")):
            thread = wait_turn_over(p, t)
            check(thread["turns"][-1]["status"] == "completed",
                  "%s: the turn goes on by itself: %s" % (name, thread["turns"][-1]["status"]))
        check(h.runs("decided-accept") == 1, "a stored accept runs once at the next start")
        check(h.runs("decided-decline") == 0, "a stored decline never runs")
        check(h.runs("started") == 0, "a started action is never started again")
        cmd = command_item(read(p, started)["turns"][-1])
        check(cmd is not None and cmd["status"] == "failed"
              and "parley stopped while this ran" in (cmd.get("aggregatedOutput") or ""),
              "the started action's item fails, saying why: %s" % cmd)
        cmd = command_item(read(p, declined)["turns"][-1])
        check(cmd is not None and cmd["status"] == "declined", "the declined item: %s" % cmd)
        check(kill(p) == -9, "killed again")
        p = h.server()
        time.sleep(0.5)
        check((h.runs("decided-accept"), h.runs("started")) == (1, 0), "and never again after that")
        check(p.stop() == 0, "stops cleanly")


# -- 3. the deadline keeps running while the server is down -----------------------------------

def test_a_retry_outside_the_sandbox_is_asked_again_after_kill_9():
    """The ask to run a refused command again outside is stored as any ask:
    a restart asks it again, and only the accept then runs it, once."""
    with Home() as h:
        p = h.server()
        policy = {"granular": {"sandbox_approval": True, "rules": True, "mcp_elicitations": True}}
        t = p.start_thread(sandbox="read-only", approvalPolicy=policy)
        turn = p.start_turn(t, "run: echo x >> retried\nsay: after")
        old = p.wait(lambda m: is_ask(m, t))
        check("sandbox refused" in (old["params"].get("reason") or ""),
              "the refused command asks to run again outside: %s" % old["params"])
        check(kill(p) == -9, "killed")
        check(h.runs("retried") == 0, "the refused run wrote nothing")
        p = h.server()
        p.send("thread/resume", {"threadId": t})
        ask = p.wait(lambda m: is_ask(m, t))
        check(ask["params"]["itemId"] == old["params"]["itemId"] and ask["params"]["turnId"] == turn
              and ask["params"].get("reason") == old["params"].get("reason"),
              "asked again after the restart, the same item and reason: %s" % ask["params"])
        answer(p, ask, "accept")
        done = turn_done(p, t)
        check(done["params"]["turn"]["status"] == "completed", "the turn goes on")
        check(h.runs("retried") == 1, "the accepted retry ran once, outside the sandbox")
        check(kill(p) == -9, "killed again")
        p = h.server()
        time.sleep(0.5)
        check(h.runs("retried") == 1, "and never again")
        check(p.stop() == 0, "stops cleanly")


def test_deadline_runs_across_the_restart():
    with Home() as h:
        p = h.server("--approval-timeout=2s")
        t, turn, _ = start_asking(p, h, "late")
        check(kill(p) == -9, "killed")
        time.sleep(2.5)  # the deadline passes while nothing runs
        p = h.server("--approval-timeout=2s")
        thread = wait_turn_over(p, t)
        last = thread["turns"][-1]
        check(last["status"] == "completed", "the turn goes on: %s" % last["status"])
        cmd = command_item(last)
        check(cmd is not None and cmd["status"] == "declined",
              "the expired approval is declined (fail closed): %s" % cmd)
        check(h.runs("late") == 0, "and never ran")
        check(p.stop() == 0, "stops cleanly")
        # One that still has time waits for it, unloaded, and then fails closed
        # (time enough for a slow start, under a sanitizer too).
        p = h.server("--approval-timeout=6s")
        t2, _, _ = start_asking(p, h, "later")
        check(kill(p) == -9, "killed")
        p = h.server("--approval-timeout=6s")
        check(listed(p).get(t2, {}).get("type") == "active", "still waiting after the restart")
        thread = wait_turn_over(p, t2, timeout=30)
        check(thread["turns"][-1]["status"] == "completed"
              and command_item(thread["turns"][-1])["status"] == "declined",
              "times out with the time it had left: %s" % thread["turns"][-1]["status"])
        check(h.runs("later") == 0, "never ran")
        check(p.stop() == 0, "stops cleanly")


# -- 4. SIGTERM keeps what is pending; the input closing cancels it ----------------------------

def test_sigterm_keeps_pending_and_input_closing_cancels():
    with Home() as h:
        p = h.server()
        kept, _, ask = start_asking(p, h, "kept")
        code = kill(p, signal.SIGTERM)
        check(code == 0, "SIGTERM stops the server cleanly: %s" % code)
        p = h.server()
        check("waitingOnApproval" in listed(p).get(kept, {}).get("activeFlags", []),
              "after SIGTERM the approval is still pending")
        p.call("thread/resume", {"threadId": kept})
        again = p.wait(lambda m: is_ask(m, kept))
        check(again["params"]["itemId"] == ask["params"]["itemId"], "asked again")
        answer(p, again, "accept")
        check(turn_done(p, kept)["params"]["turn"]["status"] == "completed", "and goes on")
        check(h.runs("kept") == 1, "ran once")
        # The stdio client leaving is an answer: cancelled, as in Codex.
        cancelled, _, _ = start_asking(p, h, "cancelled")
        check(p.stop() == 0, "input closed: stops cleanly")
        p = h.server()
        status = listed(p).get(cancelled, {})
        check(status.get("type") == "notLoaded", "nothing pending after the input closed: %s" % status)
        thread = read(p, cancelled)
        check(thread["turns"][-1]["status"] == "interrupted", "the turn was interrupted")
        check(h.runs("cancelled") == 0, "never ran")
        check(p.stop() == 0, "stops cleanly")


# -- 5. waiting costs no memory: a waiting turn unloads -------------------------------------

def loaded(p):
    return p.call("thread/loaded/list", {})["result"]["data"]


def counts(p):
    return p.call("parley/debug/counts", {})["result"]


def test_a_waiting_turn_unloads_and_goes_on_when_resumed():
    with Home() as h:
        p = h.server("--idle-unload=500ms", "--approval-timeout=1h")
        threads = []
        for i in range(20):
            t, turn, ask = start_asking(p, h, "parked-%d" % i)
            threads.append((t, turn, ask))
            p.call("thread/unsubscribe", {"threadId": t})
        deadline = time.monotonic() + 20
        while loaded(p) and time.monotonic() < deadline:
            time.sleep(0.1)
        check(loaded(p) == [], "every waiting thread unloaded: %s" % loaded(p))
        c = counts(p)
        check(c["conversations"] == 0 and c["turns"] == 0 and c["approvals"] == 0,
              "nothing of them is in memory: %s" % c)
        status = listed(p)
        check(all("waitingOnApproval" in status.get(t, {}).get("activeFlags", [])
                  for t, _, _ in threads), "all still listed as waiting")
        for i, (t, turn, old) in enumerate(threads):
            p.call("thread/resume", {"threadId": t})
            ask = p.wait(lambda m: is_ask(m, t))
            check(ask["params"]["itemId"] == old["params"]["itemId"], "%d: asked again" % i)
            answer(p, ask, "accept" if i % 2 == 0 else "decline")
            check(turn_done(p, t)["params"]["turn"]["status"] == "completed", "%d goes on" % i)
        ran = [h.runs("parked-%d" % i) for i in range(20)]
        check(ran == [1 if i % 2 == 0 else 0 for i in range(20)], "each ran as decided, once: %s" % ran)
        check(p.stop() == 0, "stops cleanly")


def test_a_parked_approval_times_out_by_its_deadline():
    with Home() as h:
        p = h.server("--idle-unload=300ms", "--approval-timeout=2s")
        t, _, _ = start_asking(p, h, "parked-late")
        p.call("thread/unsubscribe", {"threadId": t})
        deadline = time.monotonic() + 10
        while loaded(p) and time.monotonic() < deadline:
            time.sleep(0.05)
        check(loaded(p) == [], "the waiting thread unloaded")
        thread = wait_turn_over(p, t, timeout=15)
        check(thread["turns"][-1]["status"] == "completed"
              and command_item(thread["turns"][-1])["status"] == "declined",
              "its deadline loads it back and it fails closed: %s" % thread["turns"][-1]["status"])
        check(h.runs("parked-late") == 0, "never ran")
        check(p.stop() == 0, "stops cleanly")


def main():
    global CLUSTER
    if STORE == "postgres":
        if not pg_cluster.available():
            print("PostgreSQL 15 is not installed" + (" (required in CI)" if pg_cluster.must_run() else ": skipped"))
            return 1 if pg_cluster.must_run() else 77
        with pg_cluster.started() as CLUSTER:
            return run_tests()
    return run_tests()


def run_tests():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    for t in tests:
        if ONLY and t.__name__ not in ONLY:
            continue
        print("==", t.__name__, flush=True)
        try:
            t()
        except Exception as e:  # noqa: BLE001
            check(False, "%s raised %r" % (t.__name__, e))
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
