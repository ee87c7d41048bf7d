#!/usr/bin/env python3
"""Limits per tenant and per connection (issue 22) through the real binary.

The real `parley app-server` with `-c parley.limits.*`: over ws:// with two
(three) tenants' signed tokens, and over stdio. Each limit is pushed past:
the request gets -32001 with a message naming the limit (an approval past
its limit is asked of nobody and its command declined, the limit named in
the item); usage drops back when the thing ends (a thread unloaded, a turn
interrupted, an approval decided, a connection closed) so a later request
succeeds; one tenant at its cap does not stop another; parley/stats shows a
tenant only its own usage, the operator every tenant's; GET /metrics counts
the refusals by reason.

Usage: limits_test.py PARLEY_BINARY
"""
import asyncio
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from ws_client import WsClient, signed_token

BINARY = sys.argv[1]
FAILURES = []
SECRET = "limits-test-secret"


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)


def token(claims):
    return signed_token(SECRET, claims)


ALICE = token({"sub": "alice", "tenant": "acme"})
BOB = token({"sub": "bob", "tenant": "globex"})
CAROL = token({"sub": "carol", "tenant": "initech"})
ROOT = token({"sub": "root", "tenant": "ops", "scope": "parley:operator"})

LIMITS = ["tenant_loaded_threads=3", "connection_loaded_threads=2",
          "tenant_running_turns=2", "connection_running_turns=1",
          "tenant_pending_approvals=1", "connection_pending_approvals=0"]


# Over stdio (one connection): its approvals and threads only.
STDIO_LIMITS = ["tenant_pending_approvals=1", "connection_loaded_threads=2",
                "tenant_running_turns=0", "connection_running_turns=0"]


def limit_args(limits=LIMITS):
    args = []
    for l in limits:
        args += ["-c", "parley.limits." + l]
    return args


class Server:
    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="parley-limits-")
        self.home = os.path.join(self.root, "home")
        self.work = os.path.join(self.root, "work")
        os.makedirs(self.home)
        os.makedirs(self.work)
        secret = os.path.join(self.root, "secret")
        with open(secret, "w") as f:
            f.write(SECRET + "\n")
        args = [BINARY, "app-server", "--home", self.home, "--listen", "ws://127.0.0.1:0",
                "--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", secret,
                "--idle-unload", "200ms"] + limit_args()
        self.log_path = os.path.join(self.root, "server.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True)
        deadline = time.time() + 30
        urls = []
        while time.time() < deadline and not urls:
            with open(self.log_path) as f:
                urls = re.findall(r"listening on (ws://\S+)", f.read())
            time.sleep(0.05)
        self.url = urls[0]

    def metrics(self):
        with urllib.request.urlopen(self.url.replace("ws://", "http://") + "/metrics") as r:
            return r.read().decode()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)
        self.log.close()
        return code


class Client(WsClient):
    @classmethod
    async def connect(cls, url, bearer=None, unix=None):
        return await super().connect(url, bearer, unix, name="limits-test",
                                     capabilities={"experimentalApi": True})


def text(t):
    return [{"type": "text", "text": t}]


def overloaded(answer, message, what):
    err = answer.get("error", {})
    check(err.get("code") == -32001 and err.get("message") == message,
          "%s: -32001 %r, got %s" % (what, message, json.dumps(answer)[:300]))


async def start(client, work, **extra):
    return await client.call("thread/start", dict({"cwd": work}, **extra))


async def usage(client, tenant, kind):
    stats = (await client.call("parley/stats", {}))["result"]["limits"]
    return stats["tenants"].get(tenant, {}).get(kind, {}).get("used")


async def until_usage(client, tenant, kind, want, what):
    deadline = time.time() + 15
    got = None
    while time.time() < deadline:
        got = await usage(client, tenant, kind)
        if got == want:
            return
        await asyncio.sleep(0.05)
    check(False, "%s: %s %s drops to %s (is %s)" % (what, tenant, kind, want, got))


async def test_threads(server):
    a1 = await Client.connect(server.url, ALICE)
    a2 = await Client.connect(server.url, ALICE)
    bob = await Client.connect(server.url, BOB)
    root = await Client.connect(server.url, ROOT)
    t1 = (await start(a1, server.work))["result"]["thread"]["id"]
    await start(a1, server.work)
    overloaded(await start(a1, server.work),
               "Server overloaded: this connection has 2 loaded threads (limit 2); retry later.",
               "a connection past its loaded threads")
    check("result" in await start(a2, server.work), "another connection of the tenant loads one")
    overloaded(await start(a2, server.work),
               "Server overloaded: tenant acme has 3 loaded threads (limit 3); retry later.",
               "a tenant past its loaded threads")
    check("result" in await start(bob, server.work), "another tenant is not stopped by acme's cap")

    # parley/stats: a tenant sees only its own; the operator every tenant.
    mine = (await a1.call("parley/stats", {}))["result"]["limits"]
    check(list(mine["tenants"]) == ["acme"], "alice sees only acme: %s" % list(mine["tenants"]))
    check(mine["tenants"]["acme"]["loadedThreads"] == {"used": 3, "limit": 3},
          "acme's loaded threads: %s" % mine["tenants"]["acme"])
    check(mine["connection"]["loadedThreads"] == {"used": 2, "limit": 2},
          "alice's connection: %s" % mine["connection"])
    theirs = (await bob.call("parley/stats", {}))["result"]["limits"]
    check("acme" not in json.dumps(theirs), "bob does not learn of acme: %s" % theirs)
    everyone = (await root.call("parley/stats", {}))["result"]["limits"]["tenants"]
    check({"acme", "globex"} <= set(everyone), "the operator sees every tenant: %s" % everyone)

    # A thread unloaded gives its unit back: then one more loads.
    await a1.call("thread/unsubscribe", {"threadId": t1})
    await until_usage(a1, "acme", "loadedThreads", 2, "a thread unloaded")
    check("result" in await start(a2, server.work), "a thread loads once another unloaded")
    # A connection closing: its threads unload, their units come back.
    await a2.close()
    await until_usage(a1, "acme", "loadedThreads", 1, "a connection closed")
    for c in (a1, bob, root):
        await c.close()


async def test_turns(server):
    """Turns held running by a long command (no sandbox, no approval)."""
    c1 = await Client.connect(server.url, CAROL)
    c2 = await Client.connect(server.url, CAROL)
    bob = await Client.connect(server.url, BOB)
    free = {"approvalPolicy": "never", "sandbox": "danger-full-access"}
    t1 = (await start(c1, server.work, **free))["result"]["thread"]["id"]
    t2 = (await start(c1, server.work, **free))["result"]["thread"]["id"]
    t3 = (await start(c2, server.work, **free))["result"]["thread"]["id"]
    long_turn = text("run: sleep 30")
    r = await c1.call("turn/start", {"threadId": t1, "input": long_turn})
    turn1 = r["result"]["turn"]["id"]
    overloaded(await c1.call("turn/start", {"threadId": t2, "input": long_turn}),
               "Server overloaded: this connection has 1 running turns (limit 1); retry later.",
               "a connection past its running turns")
    overloaded(await c1.call("thread/shellCommand", {"threadId": t2, "command": "true"}),
               "Server overloaded: this connection has 1 running turns (limit 1); retry later.",
               "thread/shellCommand past the connection's running turns")
    check("result" in await c2.call("turn/start", {"threadId": t3, "input": long_turn}),
          "the tenant's other connection starts a turn")
    overloaded(await c2.call("review/start", {"threadId": t2,
                                              "target": {"type": "uncommittedChanges"}}),
               "Server overloaded: tenant initech has 2 running turns (limit 2); retry later.",
               "a tenant past its running turns")
    tb = (await start(bob, server.work, **free))["result"]["thread"]["id"]
    r = await bob.call("turn/start", {"threadId": tb, "input": text("say: hi")})
    check("result" in r, "another tenant's turn starts while initech is at its cap: %s" % r)
    stats = (await c1.call("parley/stats", {}))["result"]["limits"]
    check(stats["tenants"]["initech"]["runningTurns"] == {"used": 2, "limit": 2},
          "initech's running turns: %s" % stats["tenants"]["initech"])
    # The turn interrupted gives its unit back: then the connection starts one.
    await c1.call("turn/interrupt", {"threadId": t1, "turnId": turn1})
    await c1.wait(lambda m: m.get("method") == "turn/completed"
                  and m["params"]["threadId"] == t1)
    await until_usage(c1, "initech", "runningTurns", 1, "a turn interrupted")
    r = await c1.call("turn/start", {"threadId": t2, "input": text("say: now")})
    check("result" in r, "a turn starts once another ended: %s" % r)
    await c1.wait(lambda m: m.get("method") == "turn/completed"
                  and m["params"]["threadId"] == t2)
    # A turn outlives its connection (it goes on, as Codex's do) and counts
    # until it ends: interrupted from the tenant's other connection.
    await c2.close()
    await asyncio.sleep(0.3)
    check(await usage(c1, "initech", "runningTurns") == 1,
          "a turn whose connection closed still counts while it runs")
    read = await c1.call("thread/read", {"threadId": t3, "includeTurns": True})
    turn3 = read["result"]["thread"]["turns"][-1]["id"]
    await c1.call("turn/interrupt", {"threadId": t3, "turnId": turn3})
    await until_usage(c1, "initech", "runningTurns", 0, "the orphaned turn interrupted")
    for c in (c1, bob):
        await c.close()


def test_metrics(server):
    text_ = server.metrics()
    for reason in ("tenant_threads", "connection_threads", "tenant_turns", "connection_turns"):
        m = re.search(r'parley_limit_refusals_total\{reason="%s"\} (\d+)' % reason, text_)
        check(m and int(m.group(1)) >= 1, "/metrics counts %s refusals" % reason)


class Stdio:
    """The app-server over stdio, the default tenant's local operator."""

    def __init__(self, root, limits=STDIO_LIMITS, home="stdio-home"):
        self.home = os.path.join(root, home)
        self.work = os.path.join(root, "work")
        self.proc = subprocess.Popen([BINARY, "app-server", "--home", self.home]
                                     + limit_args(limits),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(os.path.join(root, "stdio.log"), "w"), text=True)
        self.next_id = 0
        self.inbox = []
        self.pending = b""
        self.call("initialize", {"clientInfo": {"name": "limits-test", "version": "1"}})

    def send(self, m):
        self.proc.stdin.write(json.dumps(m) + "\n")
        self.proc.stdin.flush()

    def read(self):
        """One line, from the raw pipe (a buffered reader would hide lines
        from select)."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], 20)
            if not ready:
                raise TimeoutError("nothing from the server for 20 s: %s" % self.inbox[-3:])
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("the server's output ended")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def call(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            m = self.read()
            if m.get("id") == self.next_id and "method" not in m:
                return m
            self.inbox.append(m)

    def wait(self, pred):
        for m in self.inbox:
            if pred(m):
                self.inbox.remove(m)
                return m
        while True:
            m = self.read()
            if pred(m):
                return m
            self.inbox.append(m)

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)


def is_approval(m):
    return m.get("method") == "item/commandExecution/requestApproval"


def test_stdio_approvals(root, limits=STDIO_LIMITS, scope="tenant default", home="stdio-home"):
    """`scope`: the cap the second approval meets (the tenant's or the connection's)."""
    s = Stdio(root, limits, home)
    try:
        ta = s.call("thread/start", {"cwd": s.work})["result"]["thread"]["id"]
        tb = s.call("thread/start", {"cwd": s.work})["result"]["thread"]["id"]
        overloaded(s.call("thread/start", {"cwd": s.work}),
                   "Server overloaded: this connection has 2 loaded threads (limit 2); "
                   "retry later.", "stdio: past the connection's loaded threads")
        r = s.call("turn/start", {"threadId": ta, "input": text("run[escalate]: touch first")})
        check("result" in r, "stdio: the first turn starts: %s" % r)
        asked = s.wait(is_approval)
        check(asked["params"]["threadId"] == ta, "stdio: the first approval is asked")
        stats = s.call("parley/stats", {})["result"]["limits"]
        held = (stats["tenants"]["default"] if scope.startswith("tenant")
                else stats["connection"])["pendingApprovals"]
        check(held == {"used": 1, "limit": 1}, "stdio: one approval pending: %s" % stats)
        # Past the limit: asked of nobody, the command declined and never run.
        r = s.call("turn/start", {"threadId": tb, "input": text("run[escalate]: touch second")})
        check("result" in r, "stdio: the second turn starts: %s" % r)
        done = s.wait(lambda m: m.get("method") == "item/completed"
                      and m["params"]["threadId"] == tb
                      and m["params"]["item"]["type"] == "commandExecution")
        item = done["params"]["item"]
        check(item["status"] == "declined", "stdio: the approval past its limit declines: %s"
              % item)
        check("Server overloaded: %s has 1 pending approvals (limit 1)" % scope
              in (item.get("aggregatedOutput") or ""),
              "stdio: the declined item names the limit: %s" % item)
        s.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["threadId"] == tb)
        check(not any(is_approval(m) and m["params"]["threadId"] == tb for m in s.inbox),
              "stdio: nobody is asked past the limit")
        check(not os.path.exists(os.path.join(s.work, "second")), "stdio: it never ran")
        # The first decided: its unit comes back, the next approval is asked.
        s.send({"id": asked["id"], "result": {"decision": "decline"}})
        s.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["threadId"] == ta)
        s.call("turn/start", {"threadId": tb, "input": text("run[escalate]: touch third")})
        again = s.wait(is_approval)
        check(again["params"]["threadId"] == tb, "stdio: an approval is asked once one is decided")
        s.send({"id": again["id"], "result": {"decision": "decline"}})
        s.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["threadId"] == tb)
        stats = s.call("parley/stats", {})["result"]["limits"]["tenants"]["default"]
        check(stats["pendingApprovals"]["used"] == 0 and stats["runningTurns"]["used"] == 0,
              "stdio: nothing held once the turns ended: %s" % stats)
    finally:
        check(s.close() == 0, "stdio: the server exits 0 when its input ends")


def test_bad_config(root):
    for bad, says in [("parley.limits.tenant_turns=3", "unknown limit"),
                      ("parley.limits.tenant_running_turns=-1", "must not be negative"),
                      ("parley.limits.tenant_running_turns=\"many\"", "expected a non-negative")]:
        r = subprocess.run([BINARY, "app-server", "--home", os.path.join(root, "bad"), "-c", bad],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and says in r.stderr,
              "-c %s: a clear startup error (%d): %s" % (bad, r.returncode, r.stderr[-300:]))


async def main():
    server = Server()
    try:
        await test_threads(server)
        print("threads done", flush=True)
        await test_turns(server)
        print("turns done", flush=True)
        test_metrics(server)
    finally:
        check(server.stop() == 0, "the server stops with 0")
    print("ws server stopped", flush=True)
    test_stdio_approvals(server.root)
    # The same cap on the connection instead of the tenant.
    test_stdio_approvals(server.root, ["connection_pending_approvals=1", "tenant_pending_approvals=0",
                                       "connection_loaded_threads=2"],
                         "this connection", "stdio-home-connection")
    print("stdio done", flush=True)
    test_bad_config(server.root)
    if FAILURES:
        print(open(server.log_path).read()[-3000:])
    shutil.rmtree(server.root, ignore_errors=True)


asyncio.run(main())
print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
