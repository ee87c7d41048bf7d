#!/usr/bin/env python3
"""Tenants through real sockets (issue 22).

The real `parley app-server` on ws:// with signed bearer tokens (HS256, made
here with hmac) for two tenants and an operator, and on a Unix socket (the
local operator, one tenant). Each tenant tries every method that takes a
threadId on the other's thread: the answer must be byte for byte the answer
for a thread nobody has (the id put in its place), and the other's thread
must be untouched afterwards. Lists show only a tenant's threads, approvals
go only to the thread's tenant, the operator sees and decides for both (and
the audit log names the tenant, the subject and the operator), and all of it
holds after a restart (the tenant is stored with the thread; a fork inherits
it).

Usage: tenants_test.py PARLEY_BINARY
"""
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import websockets

from ws_client import WsClient, signed_token

BINARY = sys.argv[1]
FAILURES = []
SECRET = "tenant-test-secret"


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)


def token(claims):
    return signed_token(SECRET, claims)


ALICE = token({"sub": "alice", "tenant": "acme"})
BOB = token({"sub": "bob", "tenant": "globex"})
ROOT = token({"sub": "root", "tenant": "ops", "scope": "openid parley:operator"})


class Server:
    def __init__(self, root=None):
        self.root = root or tempfile.mkdtemp(prefix="parley-tenants-")
        self.home = os.path.join(self.root, "home")
        self.work = os.path.join(self.root, "work")
        os.makedirs(self.home, exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        secret = os.path.join(self.root, "secret")
        with open(secret, "w") as f:
            f.write(SECRET + "\n")
        self.sock = os.path.join(self.root, "sock", "app-server.sock")
        args = [BINARY, "app-server", "--store", "local", "--home", self.home,
                "--listen", "ws://127.0.0.1:0", "--listen", "unix://" + self.sock,
                "--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", secret,
                "--local-tenant", "acme"]
        self.log_path = os.path.join(self.root, "server-%d.log" % time.time_ns())
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            with open(self.log_path) as f:
                urls = re.findall(r"listening on (\S+)", f.read())
            if len(urls) >= 2:
                break
            time.sleep(0.05)
        self.url = next(u for u in urls if u.startswith("ws://"))

    def stop(self, remove=True):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)
        self.log.close()
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)
        return code


class Client(WsClient):
    @classmethod
    async def connect(cls, url, bearer=None, unix=None):
        return await super().connect(url, bearer, unix, name="tenants-test",
                                     capabilities={"experimentalApi": True})


def text(t):
    return [{"type": "text", "text": t}]


async def start_thread(client, work):
    r = await client.call("thread/start", {"cwd": work, "approvalPolicy": "on-request"})
    return r["result"]["thread"]["id"]


async def run_turn(client, thread, say):
    await client.call("turn/start", {"threadId": thread, "input": text("say: " + say)})
    await client.wait(lambda m: m.get("method") == "turn/completed"
                      and m["params"]["threadId"] == thread)


def list_ids(answer):
    return [t["id"] for t in answer["result"]["data"]]


# Every method that names a thread, with params that would act on it.
def attempts(thread, turn):
    return [
        ("thread/read", {"threadId": thread, "includeTurns": True}),
        ("thread/turns/list", {"threadId": thread}),
        ("thread/items/list", {"threadId": thread}),
        ("thread/resume", {"threadId": thread}),
        ("thread/fork", {"threadId": thread}),
        ("thread/name/set", {"threadId": thread, "name": "stolen"}),
        ("thread/goal/get", {"threadId": thread}),
        ("thread/goal/set", {"threadId": thread, "objective": "stolen"}),
        ("thread/goal/clear", {"threadId": thread}),
        ("thread/metadata/update", {"threadId": thread, "gitInfo": {"branch": "stolen"}}),
        ("thread/unsubscribe", {"threadId": thread}),
        ("turn/start", {"threadId": thread, "input": text("say: stolen")}),
        ("turn/steer", {"threadId": thread, "input": text("stolen"), "expectedTurnId": turn}),
        ("turn/interrupt", {"threadId": thread, "turnId": turn}),
        ("thread/shellCommand", {"threadId": thread, "command": "touch stolen"}),
        ("thread/compact/start", {"threadId": thread}),
        ("review/start", {"threadId": thread, "target": {"type": "uncommittedChanges"}}),
        ("thread/inject_items", {"threadId": thread, "items": []}),
        ("thread/revert", {"threadId": thread, "turnId": turn}),
        ("thread/archive", {"threadId": thread}),
        ("thread/unarchive", {"threadId": thread}),
        ("thread/delete", {"threadId": thread}),
    ]


async def same_as_unknown(intruder, victim_thread, victim_turn, who):
    """Every method on another tenant's thread answers as on a thread nobody has."""
    for (method, params), (_, unknown_params) in zip(
            attempts(victim_thread, victim_turn), attempts(None, victim_turn)):
        unknown = str(uuid.uuid4())
        unknown_params = dict(unknown_params, threadId=unknown)
        line, answer = await intruder.raw_call(method, params)
        line_u, _ = await intruder.raw_call(method, unknown_params)
        # The same bytes once each id is the same placeholder (and the
        # request ids, which differ by one, are too).
        a = re.sub(r'"id":\s*\d+', '"id":N', line.replace(victim_thread, "THREAD"))
        b = re.sub(r'"id":\s*\d+', '"id":N', line_u.replace(unknown, "THREAD"))
        check(a == b, "%s: %s on another tenant's thread answers as an unknown thread:\n  %s\n  %s"
              % (who, method, a[:300], b[:300]))
        if method != "thread/unsubscribe":  # that one says notSubscribed
            check("error" in answer, "%s: %s on another tenant's thread is refused: %s"
                  % (who, method, line[:200]))


async def test_isolation(server):
    alice = await Client.connect(server.url, ALICE)
    bob = await Client.connect(server.url, BOB)
    root = await Client.connect(server.url, ROOT)
    t_alice = await start_thread(alice, server.work)
    await run_turn(alice, t_alice, "alice's secret")
    t_bob = await start_thread(bob, server.work)
    await run_turn(bob, t_bob, "bob's secret")
    read = await alice.call("thread/read", {"threadId": t_alice, "includeTurns": True})
    turn_alice = read["result"]["thread"]["turns"][-1]["id"]
    read = await bob.call("thread/read", {"threadId": t_bob, "includeTurns": True})
    turn_bob = read["result"]["thread"]["turns"][-1]["id"]

    # Lists: each tenant its own; the operator both.
    la = list_ids(await alice.call("thread/list", {}))
    lb = list_ids(await bob.call("thread/list", {}))
    lr = list_ids(await root.call("thread/list", {}))
    check(t_alice in la and t_bob not in la, "alice lists hers only: %s" % la)
    check(t_bob in lb and t_alice not in lb, "bob lists his only: %s" % lb)
    check(t_alice in lr and t_bob in lr, "the operator lists both: %s" % lr)
    la = (await alice.call("thread/loaded/list", {}))["result"]["data"]
    lb = (await bob.call("thread/loaded/list", {}))["result"]["data"]
    lr = (await root.call("thread/loaded/list", {}))["result"]["data"]
    check(t_alice in la and t_bob not in la, "alice's loaded list: %s" % la)
    check(t_bob in lb and t_alice not in lb, "bob's loaded list: %s" % lb)
    check(t_alice in lr and t_bob in lr, "the operator's loaded list: %s" % lr)

    # An approval of alice's thread reaches alice (and the operator who
    # resumes it), never bob.
    await alice.call("turn/start", {"threadId": t_alice,
                                    "input": text("run[escalate]: touch approved-by-root")})
    asked = await alice.wait(lambda m: m.get("method") == "item/commandExecution/requestApproval")
    check(asked["params"]["threadId"] == t_alice, "alice is asked about her thread")
    active_turn = asked["params"]["turnId"]

    # Bob tries everything on alice's thread (and alice on bob's) while it waits.
    await same_as_unknown(bob, t_alice, active_turn, "bob")
    await same_as_unknown(alice, t_bob, turn_bob, "alice")
    await bob.drain()
    leaked = [m for m in bob.inbox if t_alice in json.dumps(m)]
    check(not leaked, "nothing of alice's thread reaches bob: %s" % json.dumps(leaked)[:300])

    # The operator resumes alice's thread, is asked too, and decides.
    resumed = await root.call("thread/resume", {"threadId": t_alice})
    check("result" in resumed, "the operator resumes alice's thread: %s" % json.dumps(resumed)[:200])
    asked_root = await root.wait(
        lambda m: m.get("method") == "item/commandExecution/requestApproval")
    await root.ws.send(json.dumps({"id": asked_root["id"], "result": {"decision": "accept"}}))
    await alice.wait(lambda m: m.get("method") == "turn/completed"
                     and m["params"]["threadId"] == t_alice)
    check(os.path.exists(os.path.join(server.work, "approved-by-root")),
          "the operator's accept ran the command")

    # Alice's thread is whole after bob's attempts: not archived, not
    # deleted, not renamed, its turns all there.
    read = await alice.call("thread/read", {"threadId": t_alice, "includeTurns": True})
    check("result" in read, "alice still reads her thread: %s" % json.dumps(read)[:200])
    if "result" in read:
        th = read["result"]["thread"]
        check(th.get("name") != "stolen", "bob did not rename alice's thread")
        check(len(th["turns"]) == 2, "alice's thread has its two turns: %d" % len(th["turns"]))
        check(not os.path.exists(os.path.join(server.work, "stolen")), "bob's command never ran")
    check(t_alice in list_ids(await alice.call("thread/list", {})), "alice's thread is not archived")

    # A fork inherits its thread's tenant: the operator's fork of alice's
    # thread is alice's, not the operator's.
    fork = await root.call("thread/fork", {"threadId": t_alice})
    t_fork = fork["result"]["thread"]["id"]
    check(t_fork in list_ids(await alice.call("thread/list", {})), "the fork is alice's")
    check(t_fork not in list_ids(await bob.call("thread/list", {})), "bob does not see the fork")

    # An archived thread of alice's is as unknown to bob as a live one.
    t_archived = await start_thread(alice, server.work)
    await run_turn(alice, t_archived, "to be archived")
    await alice.call("thread/unsubscribe", {"threadId": t_archived})
    archived = await alice.call("thread/archive", {"threadId": t_archived})
    check("result" in archived, "alice archives her thread: %s" % json.dumps(archived)[:200])
    for method in ("thread/unarchive", "thread/read", "thread/delete"):
        unknown = str(uuid.uuid4())
        line, _ = await bob.raw_call(method, {"threadId": t_archived})
        line_u, _ = await bob.raw_call(method, {"threadId": unknown})
        a = re.sub(r'"id":\s*\d+', '"id":N', line.replace(t_archived, "THREAD"))
        b = re.sub(r'"id":\s*\d+', '"id":N', line_u.replace(unknown, "THREAD"))
        check(a == b, "bob: %s of alice's archived thread answers as an unknown thread:\n  %s\n  %s"
              % (method, a[:300], b[:300]))
    listed = list_ids(await alice.call("thread/list", {"archived": True}))
    check(t_archived in listed, "alice's archived thread is still archived: %s" % listed)

    # The Unix socket is the local operator: --local-tenant acme, whichever
    # (valid) token it sends: bob's here.
    local = await Client.connect(None, BOB, unix=server.sock)
    ll = list_ids(await local.call("thread/list", {}))
    check(t_alice in ll and t_bob not in ll, "the local operator is acme: %s" % ll)
    await local.close()
    for c in (alice, bob, root):
        await c.close()
    return t_alice, t_bob


def test_audit(server, t_alice):
    path = os.path.join(server.home, "audit.jsonl")
    lines = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
    decided = [l for l in lines if l.get("event") == "decided" and l.get("thread") == t_alice]
    check(decided, "the audit log has the decision on alice's thread: %s" % lines[-3:])
    if decided:
        d = decided[-1]
        check(d.get("tenant") == "acme", "the audit line names the thread's tenant: %s" % d)
        check(d.get("subject") == "root", "the audit line names the subject who decided: %s" % d)
        check(d.get("operator") is True and d.get("operatorTenant") == "ops",
              "the audit line says an operator decided: %s" % d)
    asked = [l for l in lines if l.get("event") == "requested" and l.get("thread") == t_alice]
    check(asked and all(l.get("tenant") == "acme" for l in asked),
          "requests name their tenant: %s" % asked[-1:])


async def test_after_restart(root_dir, t_alice, t_bob):
    """The tenant is stored with the thread: a restart keeps them apart."""
    server = Server(root_dir)
    try:
        alice = await Client.connect(server.url, ALICE)
        bob = await Client.connect(server.url, BOB)
        la = list_ids(await alice.call("thread/list", {}))
        check(t_alice in la and t_bob not in la, "after a restart alice lists hers: %s" % la)
        line, _ = await bob.raw_call("thread/resume", {"threadId": t_alice})
        unknown = str(uuid.uuid4())
        line_u, _ = await bob.raw_call("thread/resume", {"threadId": unknown})
        check(re.sub(r'"id":\s*\d+', "", line.replace(t_alice, "T"))
              == re.sub(r'"id":\s*\d+', "", line_u.replace(unknown, "T")),
              "after a restart alice's thread is unknown to bob: %s / %s" % (line, line_u))
        r = await alice.call("thread/resume", {"threadId": t_alice})
        check("result" in r, "alice resumes her thread after a restart")
        await alice.close()
        await bob.close()
    finally:
        check(server.stop() == 0, "the restarted server stops with 0")


def test_stdio_input_closing(root_dir, t_alice, t_bob):
    """stdio's input closing right after requests that wait on the tenant gate
    (whose is a stored, unloaded thread?): each is still answered, once,
    before the server exits (the rpc fuzzer once found them unanswered)."""
    home = os.path.join(root_dir, "home")
    proc = subprocess.Popen([BINARY, "app-server", "--store", "local", "--home", home,
                             "--local-tenant", "acme"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    ids = [t_alice, t_bob, str(uuid.uuid4())] * 4
    lines = [json.dumps({"id": 0, "method": "initialize",
                         "params": {"clientInfo": {"name": "tenants-test", "version": "1"}}})]
    for n, t in enumerate(ids, start=1):
        lines.append(json.dumps({"id": n, "method": "thread/read",
                                 "params": {"threadId": t, "includeTurns": False}}))
    out, _ = proc.communicate("\n".join(lines) + "\n", timeout=60)
    replies = {}
    for line in out.splitlines():
        m = json.loads(line)
        if "id" in m and "method" not in m:
            replies[m["id"]] = replies.get(m["id"], 0) + 1
    check(replies == {n: 1 for n in range(len(ids) + 1)},
          "stdio: every request before the input's end is answered once: %s" % replies)
    check(proc.returncode == 0, "stdio: the server exits 0 after its input ends")


async def test_refusals(server):
    for bad in [token({"sub": "x", "tenant": 7}), "not-a-token"]:
        try:
            await websockets.connect(server.url, extra_headers={"Authorization": "Bearer " + bad})
            check(False, "a bad token is refused")
        except websockets.InvalidStatusCode as e:
            check(e.status_code == 401, "a bad token gets 401: %s" % e.status_code)


async def main():
    server = Server()
    try:
        await test_refusals(server)
        t_alice, t_bob = await test_isolation(server)
    finally:
        code = server.stop(remove=False)
        check(code == 0, "the server stops with 0")
    test_audit(server, t_alice)
    await test_after_restart(server.root, t_alice, t_bob)
    test_stdio_input_closing(server.root, t_alice, t_bob)


asyncio.run(main())
print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
