#!/usr/bin/env python3
"""Commands run inside the sandbox their thread was given (issue 27), through
the real `parley app-server` on stdio with the real `parley-sandbox` beside
it and real commands: writes outside the writable roots, `.git`, read-only
threads, the network, parley's own home, timeouts, a fork bomb, and
escalations (asked under on-request, accepted ones run outside, declined
under never). Every refused case also runs under danger-full-access, where
it succeeds, so each check can fail. Exits 77 (skipped) when this host
cannot confine commands (`parley-sandbox --check` says why).

Usage: sandbox_commands_test.py PARLEY_BINARY
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_server_peer import StdioPeer  # noqa: E402

BINARY = os.path.abspath(sys.argv[1])
LAUNCHER = os.path.join(os.path.dirname(BINARY), "parley-sandbox")

failures = []
PROCESS_CAP = True  # whether this host lets parley-sandbox cap processes (--check)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def command_item(events):
    for m in events:
        if m.get("method") == "item/completed" and m["params"]["item"]["type"] == "commandExecution":
            return m["params"]["item"]
    return None


class Server:
    def __init__(self, root, *flags, binary=BINARY):
        self.home = os.path.join(root, "home")
        self.peer = StdioPeer([binary, "app-server", "--home", self.home, *flags],
                              dict(os.environ), os.path.join(root, "server.log"))

    def run(self, text, sandbox="workspace-write", policy="never", cwd=None, decisions=(),
            sandbox_policy=None):
        params = {"sandbox": sandbox, "approvalPolicy": policy}
        if cwd:
            params["cwd"] = cwd
        thread = self.peer.call("thread/start", params)["result"]["thread"]["id"]
        if sandbox_policy is not None:
            turn = self.peer.call("turn/start", {
                "threadId": thread, "input": [{"type": "text", "text": text}],
                "sandboxPolicy": sandbox_policy})["result"]["turn"]["id"]
            events = []
            while True:
                m = self.peer.wait(lambda m: (m.get("params") or {}).get("turnId") == turn
                                   or ((m.get("params") or {}).get("turn") or {}).get("id") == turn,
                                   60)
                events.append(m)
                if m.get("method") == "turn/completed":
                    break
        else:
            _, events = self.peer.run_turn(thread, text, decisions=decisions, timeout=60)
        return events

    def item(self, text, **kw):
        return command_item(self.run(text, **kw)) or {}


def listener():
    """A loopback TCP listener that counts the connections it accepts."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    accepted = []

    def serve():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            accepted.append(1)
            c.close()
    threading.Thread(target=serve, daemon=True).start()
    return s, accepted


def main():
    if not os.access(LAUNCHER, os.X_OK):
        print("SKIP: no parley-sandbox beside", BINARY)
        sys.exit(77)
    probe = subprocess.run([LAUNCHER, "--check"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("SKIP: this host cannot confine commands:", probe.stdout, probe.stderr)
        sys.exit(77)
    global PROCESS_CAP
    PROCESS_CAP = '"processes":true' in probe.stdout
    root = tempfile.mkdtemp(prefix="parley-sandbox-")
    # Outside every writable root: not under the cwd, not under /tmp.
    outside = tempfile.mkdtemp(prefix="parley-sandbox-outside-", dir="/var/tmp")
    work = os.path.join(root, "work")
    os.makedirs(os.path.join(work, ".git"))
    server = Server(root, "--cwd", work, "--command-max-processes", "64")
    try:
        # Writes: the cwd yes, elsewhere no (by absolute path and by `..`), .git no.
        item = server.item("run: touch inside && echo done")
        check(item.get("exitCode") == 0 and os.path.exists(os.path.join(work, "inside")),
              "workspace-write: a file in the cwd is written")
        target = os.path.join(outside, "ws")
        item = server.item("run: touch %s" % target)
        check(item.get("exitCode") != 0 and not os.path.exists(target),
              "workspace-write: a file outside the writable roots is refused (%s)"
              % (item.get("aggregatedOutput") or "").strip())
        rel = os.path.relpath(os.path.join(outside, "dotdot"), work)
        item = server.item("run: touch %s" % rel)
        check(item.get("exitCode") != 0 and not os.path.exists(os.path.join(outside, "dotdot")),
              "workspace-write: `..` out of the cwd is refused")
        item = server.item("run: touch .git/probe")
        check(item.get("exitCode") != 0 and not os.path.exists(os.path.join(work, ".git", "probe")),
              "workspace-write: .git under the cwd stays read-only")
        item = server.item("run: touch %s" % target, sandbox="danger-full-access")
        check(item.get("exitCode") == 0 and os.path.exists(target),
              "danger-full-access: the same write outside succeeds")
        os.remove(target)

        # read-only: nothing but /dev/null.
        item = server.item("run: touch ro_probe", sandbox="read-only")
        check(item.get("exitCode") != 0 and not os.path.exists(os.path.join(work, "ro_probe")),
              "read-only: a file in the cwd is refused")
        item = server.item("run: echo x > /dev/null && echo fine", sandbox="read-only")
        check(item.get("exitCode") == 0, "read-only: /dev/null takes writes")

        # The network: off unless the policy says on.
        sock, accepted = listener()
        port = sock.getsockname()[1]
        connect = ("run: python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", %d), 5)'"
                   % port)
        item = server.item(connect)
        check(item.get("exitCode") != 0 and not accepted,
              "workspace-write: a TCP connection to loopback is refused")
        item = server.item(connect, sandbox="danger-full-access")
        check(item.get("exitCode") == 0 and len(accepted) == 1,
              "danger-full-access: the same connection is made")
        events = server.run(connect, sandbox_policy={"type": "workspaceWrite", "networkAccess": True})
        item = command_item(events) or {}
        check(len(accepted) == 2 and item.get("exitCode") == 0,
              "workspace-write with networkAccess: the connection is made")
        sock.close()

        # parley's home is out of reach, even to reads.
        item = server.item("run: ls %s" % server.home)
        check(item.get("exitCode") != 0 or (item.get("aggregatedOutput") or "").strip() == "",
              "parley's home cannot be listed from a confined command")
        item = server.item("run: cat %s/parley-index.sqlite | wc -c" % server.home)
        check((item.get("aggregatedOutput") or "").strip().splitlines()[-1:] == ["0"],
              "parley's thread index cannot be read from a confined command")
        item = server.item("run: ls %s" % server.home, sandbox="danger-full-access")
        check(item.get("exitCode") == 0 and "sessions" in (item.get("aggregatedOutput") or ""),
              "danger-full-access: the home is listed")

        # Limits: a timeout named by the call, then a fork bomb.
        item = server.item("run[timeout_ms=1000]: sleep 30")
        out = item.get("aggregatedOutput") or ""
        check("timed out after 1000 ms" in out and item.get("exitCode") != 0
              and item.get("durationMs", 99999) < 20000,
              "a command past its timeout_ms is killed and says so (%s)" % out.strip())
        if PROCESS_CAP:
            item = server.item("run[timeout_ms=20000]: i=0; while [ $i -lt 200 ]; do sleep 5 & "
                               "i=$((i+1)); done 2>&1 | tail -n 1; echo started")
            out = item.get("aggregatedOutput") or ""
            check("started" in out and "hit its process limit (64" in out,
                  "a fork bomb stops at --command-max-processes and the item says so (%s)"
                  % out.strip()[-200:])
        else:
            print("skipped: the process cap (parley-sandbox --check: no pids cgroup here)")

        # on-request asks only to leave the sandbox: a confined command runs
        # unasked and stays confined (its cwd yes, elsewhere no).
        esc = os.path.join(outside, "escalated")
        events = server.run("run: touch asked_nobody\nrun: touch %s" % esc, policy="on-request")
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        ran = [m["params"]["item"] for m in events if m.get("method") == "item/completed"
               and m["params"]["item"]["type"] == "commandExecution"]
        check(not asks, "on-request: a confined command runs without an approval request")
        check(len(ran) == 2 and ran[0].get("exitCode") == 0
              and os.path.exists(os.path.join(work, "asked_nobody")),
              "on-request: the unasked command writes its cwd")
        check(len(ran) == 2 and ran[1].get("exitCode") != 0 and not os.path.exists(esc),
              "on-request: the unasked command stays confined (nothing outside is written)")
        # An escalation is asked once; only an accept runs it, outside.
        events = server.run("run[escalate]: touch %s" % esc, policy="on-request",
                            decisions=["decline"])
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        check(len(asks) == 1 and asks[0]["params"].get("reason"),
              "an escalation is asked, with its reason")
        check(not os.path.exists(esc), "a declined escalation does not run")
        events = server.run("run[escalate]: touch %s" % esc, policy="on-request",
                            decisions=["accept"])
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        check(len(asks) == 1, "on-request: the escalation is asked once")
        check(os.path.exists(esc), "an accepted escalation runs outside the sandbox")
        os.remove(esc)
        events = server.run("run[escalate]: touch %s" % esc, policy={"granular": {
            "sandbox_approval": False, "rules": True, "mcp_elicitations": True}})
        item = command_item(events) or {}
        check(not os.path.exists(esc) and item.get("status") == "declined"
              and not any(m.get("method", "").endswith("requestApproval") for m in events),
              "granular without sandbox_approval: an escalation is declined, asking nobody")
        events = server.run("run[escalate]: touch %s" % esc, policy="never")
        item = command_item(events) or {}
        check(not os.path.exists(esc) and item.get("status") == "declined",
              "under never an escalation is declined, asking nobody")
        events = server.run("run: touch %s" % esc, policy="never")
        check(not os.path.exists(esc), "a command that ran without an approval stays confined")
        events = server.run("run: touch %s" % esc, policy="untrusted", decisions=["accept"])
        check(os.path.exists(esc), "an accepted command runs as approved, outside the sandbox "
              "(as Codex runs every approved command)")
        os.remove(esc)

        # A confined command the sandbox refused is offered to run again
        # outside (Codex's retry after a denial) under granular with
        # sandbox_approval and untrusted; on-request did not ask (above).
        with_retry = {"granular": {"sandbox_approval": True, "rules": True,
                                   "mcp_elicitations": True}}
        events = server.run("run: touch %s" % esc, policy=with_retry, decisions=["decline"])
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        item = command_item(events) or {}
        check(len(asks) == 1 and "sandbox refused" in (asks[0]["params"].get("reason") or ""),
              "granular with sandbox_approval: a refused command asks to run again outside")
        check(not os.path.exists(esc) and item.get("status") == "declined"
              and "Read-only file system" in (item.get("aggregatedOutput") or ""),
              "a declined retry does not run; the item keeps the refused run's output (%s)"
              % (item.get("aggregatedOutput") or "").strip()[-120:])
        events = server.run("run: touch %s" % esc, policy=with_retry, decisions=["accept"])
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        item = command_item(events) or {}
        check(len(asks) == 1 and os.path.exists(esc) and item.get("status") == "completed"
              and item.get("exitCode") == 0,
              "an accepted retry runs once more, outside the sandbox, in the same item")
        os.remove(esc)
        events = server.run("run: ls %s" % server.home, policy="untrusted", decisions=["decline"])
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        item = command_item(events) or {}
        check(len(asks) == 1 and item.get("status") == "declined",
              "untrusted: a known-safe command runs confined, and asks only once refused")
        events = server.run("run: touch refused_nowhere_%s" % os.getpid(), policy=with_retry)
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        check(not asks, "a command the sandbox let run asks nothing")
        events = server.run("run: false", policy=with_retry)
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        check(not asks, "a command failing for its own reasons is not offered a retry")

        # Another workspace is readable by default, not with --sandbox-isolate-reads.
        secret = os.path.join(outside, "secret")
        with open(secret, "w") as f:
            f.write("another tenant's\n")
        item = server.item("run: cat %s" % secret)
        check("another tenant's" in (item.get("aggregatedOutput") or ""),
              "by default a confined command reads other folders")
    finally:
        code = server.peer.stop()
        check(code == 0, "the server exits 0 when its input closes")
        if failures:
            print(server.peer.log_text()[-4000:])
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)
    isolated_root = tempfile.mkdtemp(prefix="parley-sandbox-isolated-")
    outside = tempfile.mkdtemp(prefix="parley-sandbox-outside-", dir="/var/tmp")
    secret = os.path.join(outside, "secret")
    with open(secret, "w") as f:
        f.write("another tenant's\n")
    isolated_work = os.path.join(isolated_root, "work")
    os.makedirs(isolated_work)
    with open(os.path.join(isolated_work, "mine"), "w") as f:
        f.write("my own\n")
    server = Server(isolated_root, "--cwd", isolated_work, "--sandbox-isolate-reads",
                    "--command-max-memory", str(256 << 20), "--command-max-cpu", "1")
    try:
        # The memory and CPU caps, each named on the item it stopped.
        item = server.item("run: python3 -c 'x = bytearray(1 << 30); print(len(x))'")
        out = item.get("aggregatedOutput") or ""
        check(item.get("exitCode") != 0 and "hit its memory limit" in out,
              "a memory hog fails at --command-max-memory and the item says so (%s)"
              % out.strip()[-160:])
        item = server.item("run: python3 -c 'x = bytearray(1 << 20); print(len(x))'")
        check(item.get("exitCode") == 0 and "limit" not in (item.get("aggregatedOutput") or ""),
              "a command within the memory cap runs and names no limit")
        item = server.item("run[timeout_ms=30000]: python3 -c 'while True: pass'")
        out = item.get("aggregatedOutput") or ""
        check(item.get("exitCode") == 152 and "hit its CPU time limit (1 s" in out,
              "a CPU hog is killed at --command-max-cpu and the item says so (%s, exit %s)"
              % (out.strip()[-160:], item.get("exitCode")))
        item = server.item("run: cat %s" % secret)
        check("another tenant's" not in (item.get("aggregatedOutput") or "")
              and item.get("exitCode") != 0,
              "--sandbox-isolate-reads: another workspace cannot be read")
        item = server.item("run: cat mine && ls /usr/bin | head -n 1")
        check(item.get("exitCode") == 0 and "my own" in (item.get("aggregatedOutput") or ""),
              "--sandbox-isolate-reads: its own cwd and the system's folders are read")
        item = server.item("run: cat %s" % secret, sandbox="danger-full-access")
        check("another tenant's" in (item.get("aggregatedOutput") or ""),
              "--sandbox-isolate-reads: danger-full-access still reads it")
    finally:
        server.peer.stop()
        shutil.rmtree(isolated_root, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)
    # A parley without its launcher cannot confine: it refuses, unless the
    # operator accepted running unconfined, and then every approval says so.
    lone_root = tempfile.mkdtemp(prefix="parley-sandbox-lone-")
    lone = os.path.join(lone_root, "bin", "parley")
    os.makedirs(os.path.dirname(lone))
    shutil.copy2(BINARY, lone)
    lone_work = os.path.join(lone_root, "work")
    os.makedirs(lone_work)
    try:
        server = Server(lone_root, "--cwd", lone_work, binary=lone)
        item = server.item("run: touch refused")
        check(item.get("status") == "failed" and "cannot be enforced" in (item.get("aggregatedOutput") or "")
              and not os.path.exists(os.path.join(lone_work, "refused")),
              "without a launcher a confined command does not run, and says why")
        item = server.item("run: touch full", sandbox="danger-full-access")
        check(os.path.exists(os.path.join(lone_work, "full")),
              "without a launcher danger-full-access still runs")
        server.peer.stop()
        server = Server(lone_root, "--cwd", lone_work, "--sandbox-unconfined", binary=lone)
        events = server.run("run: touch unconfined", policy="on-request", decisions=["accept"])
        asks = [m for m in events if m.get("method") == "item/commandExecution/requestApproval"]
        check(len(asks) == 1 and "unconfined" in (asks[0]["params"].get("reason") or ""),
              "--sandbox-unconfined: the approval says the command would run unconfined")
        check(os.path.exists(os.path.join(lone_work, "unconfined")),
              "--sandbox-unconfined: the accepted command runs")
        # Fail closed: what cannot be confined leaves the sandbox, so nobody
        # asked means it does not run; with full access there is none to leave.
        events = server.run("run: touch unasked", policy="never")
        item = command_item(events) or {}
        check(item.get("status") == "declined"
              and not os.path.exists(os.path.join(lone_work, "unasked")),
              "--sandbox-unconfined: under never an unconfinable command is declined")
        events = server.run("run: touch full_unasked", policy="on-request",
                            sandbox="danger-full-access")
        check(not any(m.get("method", "").endswith("requestApproval") for m in events)
              and os.path.exists(os.path.join(lone_work, "full_unasked")),
              "--sandbox-unconfined: danger-full-access under on-request runs unasked")
    finally:
        server.peer.stop()
        shutil.rmtree(lone_root, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


main()
