#!/usr/bin/env python3
"""thread/shellCommand (issue 29: `!echo hi` in the Codex TUI) through the
real `parley app-server` on stdio, with the real `parley-sandbox` beside it
and real commands. Codex 0.169 (run offline) answers `{}` at once, then runs
the command as a turn of its own: turn/started, a commandExecution item with
`source: "userShell"`, its output streamed as deltas (stdout and stderr),
the item completed, turn/completed; the rollout keeps the item and a user
message `<user_shell_command>` for the model. parley does the same, but runs
the command in the thread's sandbox with its limits (Codex runs it with full
access).

Checked here: the events and their order; the file written in the cwd; a
write outside the writable roots refused (and allowed under
danger-full-access, so the check can fail); a timeout that kills the whole
process group (a background child included); an output flood cut at the
cap; turn/interrupt; a command while a turn runs refused; an unknown
thread; thread/read and, after a restart, thread/resume show the item; the
rollout's user message; every line against Codex's schema. Exits 77
(skipped) when this host cannot confine commands.

Usage: shell_command_test.py PARLEY_BINARY SCHEMA_DIR
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_server_peer import StdioPeer  # noqa: E402

BINARY = os.path.abspath(sys.argv[1])
SCHEMA_DIR = sys.argv[2] if len(sys.argv) > 2 else ""
LAUNCHER = os.path.join(os.path.dirname(BINARY), "parley-sandbox")

failures = []
all_lines = []  # (lines, request id -> method) of every server


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


class Server:
    def __init__(self, root, home, work, *flags):
        self.peer = StdioPeer([BINARY, "app-server", "--home", home, "--cwd", work, *flags],
                              dict(os.environ), os.path.join(root, "server-%d.log" % len(all_lines)))
        all_lines.append((self.peer.lines, self.peer.methods))

    def thread(self, sandbox="workspace-write", policy="never"):
        return self.peer.call("thread/start", {"sandbox": sandbox, "approvalPolicy": policy})[
            "result"]["thread"]["id"]

    def shell(self, thread, command, timeout_ms=None, wait=60):
        """Runs `command`; returns the reply and every event of its turn."""
        params = {"threadId": thread, "command": command}
        if timeout_ms is not None:
            params["timeoutMs"] = timeout_ms
        reply = self.peer.call("thread/shellCommand", params)
        if "error" in reply:
            return reply, []
        events = []
        while True:
            m = self.peer.wait(lambda m: (m.get("params") or {}).get("threadId") == thread
                               and m.get("method") in (
                                   "turn/started", "turn/completed", "item/started", "item/completed",
                                   "item/commandExecution/outputDelta"), wait)
            events.append(m)
            if m["method"] == "turn/completed":
                return reply, events


def item_of(events, method="item/completed"):
    for m in events:
        if m["method"] == method and m["params"]["item"]["type"] == "commandExecution":
            return m["params"]["item"]
    return {}


def deltas(events):
    return "".join(m["params"]["delta"] for m in events
                   if m["method"] == "item/commandExecution/outputDelta")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_runs_streams_and_stores(server, work, outside):
    t = server.thread()
    reply, events = server.shell(t, "echo hi; echo err >&2; touch made-here; printf 'x%.0s' 1 2 3")
    check(reply.get("result") == {}, "the reply is {} (%s)" % reply)
    methods = [m["method"] for m in events]
    order = [x for x in methods if x != "item/commandExecution/outputDelta"]
    check(order == ["turn/started", "item/started", "item/completed", "turn/completed"],
          "a turn of its own: turn/started, item/started, item/completed, turn/completed (%s)" % order)
    started, done = item_of(events, "item/started"), item_of(events)
    check(started.get("source") == "userShell" and done.get("source") == "userShell",
          "the item's source is userShell")
    check(started.get("status") == "inProgress" and done.get("status") == "completed"
          and done.get("exitCode") == 0, "it completed with exit code 0 (%s)" % done.get("status"))
    check(done.get("commandActions") == [{"type": "unknown", "command":
                                          "echo hi; echo err >&2; touch made-here; printf 'x%.0s' 1 2 3"}],
          "its command is one unknown action, as Codex shows it (%s)" % done.get("commandActions"))
    check(done.get("cwd") == work, "it ran in the thread's cwd")
    out = done.get("aggregatedOutput") or ""
    check("hi\n" in out and "err\n" in out and "xxx" in out, "stdout and stderr are kept (%r)" % out)
    check(deltas(events) == out, "the deltas streamed are the output (%r)" % deltas(events))
    check(os.path.exists(os.path.join(work, "made-here")), "a file in the cwd is written")
    ended = [m for m in events if m["method"] == "turn/completed"][0]["params"]["turn"]
    check(ended["status"] == "completed", "the turn completed")
    # Failing command: the item fails, the turn completes.
    _, events = server.shell(t, "echo no; exit 3")
    done = item_of(events)
    check(done.get("status") == "failed" and done.get("exitCode") == 3,
          "a command that exits 3 ends failed with exit code 3")
    # Confined: outside the writable roots nothing is written ...
    target = os.path.join(outside, "escaped")
    _, events = server.shell(t, "touch %s" % target)
    check(item_of(events).get("exitCode") != 0 and not os.path.exists(target),
          "workspace-write: a write outside the writable roots is refused (%s)"
          % (item_of(events).get("aggregatedOutput") or "").strip())
    # ... in a read-only thread not even the cwd ...
    ro = server.thread(sandbox="read-only")
    _, events = server.shell(ro, "touch ro-file")
    check(item_of(events).get("exitCode") != 0 and not os.path.exists(os.path.join(work, "ro-file")),
          "read-only: even the cwd is refused")
    # ... and with full access the same write succeeds (so the check can fail).
    full = server.thread(sandbox="danger-full-access")
    _, events = server.shell(full, "touch %s" % target)
    check(item_of(events).get("exitCode") == 0 and os.path.exists(target),
          "danger-full-access: the same write succeeds")
    # What a reader sees: the items, with their source.
    read = server.peer.call("thread/read", {"threadId": t, "includeTurns": True})["result"]["thread"]
    items = [i for turn in read["turns"] for i in turn["items"]]
    check(len(read["turns"]) == 3 and [i.get("source") for i in items] == ["userShell"] * 3,
          "thread/read shows three turns, each with its userShell item (%d turns)" % len(read["turns"]))
    return t


def test_timeout_kills_the_group(server, root):
    t = server.thread()
    pidfile = os.path.join(root, "bg.pid")
    # A background child in the same group, which outlives the shell unless killed.
    began = time.monotonic()
    _, events = server.shell(t, "sleep 60.123 & echo $! > %s; echo started; wait" % pidfile,
                             timeout_ms=700)
    took = time.monotonic() - began
    done = item_of(events)
    out = done.get("aggregatedOutput") or ""
    check(took < 10 and "timed out after 700 ms" in out,
          "timeoutMs 700: ended in %.1f s, saying so (%r)" % (took, out[-120:]))
    check(done.get("status") == "failed", "a timed out command ends failed")
    # The pid is the sandbox's own (a pid namespace): find the host's sleep.
    gone = True
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        procs = subprocess.run(["pgrep", "-f", "^sleep 60.123$"], capture_output=True, text=True).stdout.split()
        gone = not any(alive(int(p)) for p in procs)
        if gone:
            break
        time.sleep(0.1)
    check(gone, "the background child was killed with its group")
    # timeoutMs 0: an immediate timeout, not an unlimited run.
    began = time.monotonic()
    _, events = server.shell(t, "sleep 30", timeout_ms=0)
    check(time.monotonic() - began < 10 and "timed out" in (item_of(events).get("aggregatedOutput") or ""),
          "timeoutMs 0 times out at once")
    reply = server.peer.call("thread/shellCommand", {"threadId": t, "command": "true", "timeoutMs": -1})
    check("error" in reply and "non-negative" in reply["error"]["message"],
          "a negative timeoutMs is refused (%s)" % reply.get("error"))


def test_flood_is_capped(server):
    t = server.thread()
    _, events = server.shell(t, "head -c 5000000 /dev/zero | tr '\\0' y")
    done = item_of(events)
    out = done.get("aggregatedOutput") or ""
    check(len(out) < 200000 and "output truncated" in out,
          "5 MB of output: kept to the cap (%d bytes kept) and says so" % len(out))
    check(len(deltas(events)) < 200000, "what streams is bounded too (%d bytes)" % len(deltas(events)))


def test_interrupt_and_busy(server, root):
    t = server.thread(policy="on-request")
    pidfile = os.path.join(root, "int.pid")
    reply = server.peer.call("thread/shellCommand",
                             {"threadId": t, "command": "echo $$ > %s; echo go; sleep 60.456" % pidfile})
    check(reply.get("result") == {}, "a long command starts")
    started = server.peer.wait(lambda m: m.get("method") == "turn/started"
                               and m["params"]["threadId"] == t)
    turn = started["params"]["turn"]["id"]
    server.peer.wait(lambda m: m.get("method") == "item/commandExecution/outputDelta"
                     and m["params"]["turnId"] == turn)
    # Another one while it runs: refused, the running one untouched.
    busy = server.peer.call("thread/shellCommand", {"threadId": t, "command": "echo second"})
    check("error" in busy and "turn is running" in busy["error"]["message"],
          "a second command while one runs is refused (%s)" % busy.get("error"))
    r = server.peer.call("turn/interrupt", {"threadId": t, "turnId": turn})
    check(r.get("result") == {}, "turn/interrupt is answered")
    done = server.peer.wait(lambda m: m.get("method") == "item/completed"
                            and m["params"]["turnId"] == turn)["params"]["item"]
    ended = server.peer.wait(lambda m: m.get("method") == "turn/completed"
                             and m["params"]["turn"]["id"] == turn)["params"]["turn"]
    check(done["status"] == "failed" and ended["status"] == "interrupted",
          "interrupted: the item failed, the turn interrupted")
    deadline = time.monotonic() + 5
    procs = []
    while time.monotonic() < deadline:
        procs = [p for p in subprocess.run(["pgrep", "-f", "^sleep 60.456$"], capture_output=True,
                                           text=True).stdout.split() if alive(int(p))]
        if not procs:
            break
        time.sleep(0.1)
    check(not procs, "its processes are gone")
    # A turn waiting on an approval: the user's command waits for its end.
    turn = server.peer.start_turn(t, "run[escalate]: echo asked")
    server.peer.wait(lambda m: m.get("method") == "item/commandExecution/requestApproval")
    busy = server.peer.call("thread/shellCommand", {"threadId": t, "command": "echo while-asking"})
    check("error" in busy, "refused while a model's turn waits on an approval")
    server.peer.call("turn/interrupt", {"threadId": t, "turnId": turn})
    server.peer.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == turn)
    missing = server.peer.call("thread/shellCommand",
                               {"threadId": "00000000-0000-7000-8000-00000000dead", "command": "true"})
    check("error" in missing and "thread not found" in missing["error"]["message"],
          "an unknown thread: thread not found (%s)" % missing.get("error"))
    counts = server.peer.call("parley/debug/counts", None)
    print("counts", counts.get("result"))


def test_resume_after_restart(root, home, work, thread):
    files = glob.glob(os.path.join(home, "sessions", "**", "*%s.jsonl" % thread), recursive=True)
    check(len(files) == 1, "the thread has its rollout")
    text = open(files[0]).read() if files else ""
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    told = [r for r in records if r.get("type") == "response_item"
            and r["payload"].get("role") == "user"
            and "<user_shell_command>" in json.dumps(r["payload"])]
    check(len(told) == 3, "the rollout tells the model of each command, as Codex does (%d)" % len(told))
    if told:
        body = told[0]["payload"]["content"][0]["text"]
        check(body.startswith("<user_shell_command>\n<command>\necho hi;")
              and "\nExit code: 0\n" in body and "\nOutput:\nhi\n" in body,
              "its wording is Codex's (%r)" % body[:160])
    shells = [r for r in records if r.get("type") == "event_msg"
              and r["payload"].get("type") == "item_completed"
              and r["payload"]["item"].get("source") == "user_shell"]
    check(len(shells) == 3, "the items are stored with source user_shell, as Codex stores them")
    server = Server(root, home, work)
    try:
        r = server.peer.call("thread/resume", {"threadId": thread})["result"]["thread"]
        items = [i for turn in r["turns"] for i in turn["items"]]
        check(len(items) == 3 and all(i["source"] == "userShell" for i in items)
              and "hi\n" in items[0]["aggregatedOutput"],
              "after a restart, thread/resume shows the commands and their output")
    finally:
        server.peer.stop()


def validate_schema():
    bundle_path = os.path.join(SCHEMA_DIR, "codex_app_server_protocol.schemas.json")
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if not SCHEMA_DIR or not os.path.exists(bundle_path) or jsonschema is None:
        print("NOTE: schema validation skipped (no schema at %r or no python3-jsonschema)" % SCHEMA_DIR)
        return
    with open(bundle_path) as f:
        bundle = json.load(f)

    def validator(name):
        return jsonschema.Draft7Validator({"$ref": "#/definitions/" + name,
                                           "definitions": bundle["definitions"]})

    notification_v = validator("ServerNotification")
    responses = {"thread/shellCommand": validator("v2/ThreadShellCommandResponse"),
                 "thread/start": validator("v2/ThreadStartResponse"),
                 "thread/resume": validator("v2/ThreadResumeResponse"),
                 "thread/read": validator("v2/ThreadReadResponse")}
    checked, seen = 0, set()
    for lines, ids in all_lines:
        for raw in lines:
            m = json.loads(raw)
            if "method" in m and "id" not in m:
                errors = list(notification_v.iter_errors({"method": m["method"], "params": m["params"]}))
                kind = m["method"]
            elif "result" in m and ids.get(m.get("id")) in responses:
                kind = ids[m["id"]]
                errors = list(responses[kind].iter_errors(m["result"]))
            else:
                continue
            checked += 1
            seen.add(kind)
            if errors:
                check(False, "schema: %s: %s\n  %s" % (kind, errors[0].message[:200], raw[:300]))
    print("schema: validated %d lines (%s)" % (checked, ", ".join(sorted(seen))))
    check("thread/shellCommand" in seen and "item/commandExecution/outputDelta" in seen,
          "schema: the run had shellCommand replies and output deltas to validate")


def main():
    if not os.access(LAUNCHER, os.X_OK):
        print("SKIP: no parley-sandbox beside", BINARY)
        sys.exit(77)
    probe = subprocess.run([LAUNCHER, "--check"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("SKIP: this host cannot confine commands:", probe.stdout, probe.stderr)
        sys.exit(77)
    root = tempfile.mkdtemp(prefix="parley-shell-")
    outside = tempfile.mkdtemp(prefix="parley-shell-outside-", dir="/var/tmp")
    home, work = os.path.join(root, "home"), os.path.join(root, "work")
    os.makedirs(work)
    server = Server(root, home, work, "--output-cap", "65536")
    try:
        thread = test_runs_streams_and_stores(server, work, outside)
        test_timeout_kills_the_group(server, root)
        test_flood_is_capped(server)
        test_interrupt_and_busy(server, root)
    finally:
        server.peer.stop()
    test_resume_after_restart(root, home, work, thread)
    validate_schema()
    print("%d failed" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
