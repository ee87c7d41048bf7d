#!/usr/bin/env python3
"""WebSocket and Unix-socket transports against the real binary (issue 12).

Real sockets, the real `parley app-server --listen ...`, a real websockets
client (python3-websockets): the listener's HTTP (health, Origin refused),
framing (binary refused), the approval flow, several clients on one thread
(first answer wins, exactly once; a client that leaves withdraws nothing while
another can answer; a client that comes back is asked again), Unix sockets
created 0600, and a non-loopback address refused without authentication.

Usage: ws_transport_test.py PARLEY_BINARY
"""
import asyncio
import ctypes
import json
import time
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

import websockets

from ws_client import WsClient, sign_jwt

BINARY = sys.argv[1]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)


def wait_for_listeners(log_path, count, timeout=30):
    """The URLs the server says it listens on (it prints them at start)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(log_path) as f:
            urls = re.findall(r"listening on (\S+)", f.read())
        if len(urls) >= count:
            return urls
        time.sleep(0.05)
    raise RuntimeError("the server did not start listening")


class Server:
    def __init__(self, *listen, extra=(), store="memory", root=None):
        # `root`: an earlier server's, to start again on its home.
        self.root = root or tempfile.mkdtemp(prefix="parley-ws-")
        self.home = os.path.join(self.root, "home")
        # Beside the home, not in it: parley's home is out of every command's reach.
        self.work = os.path.join(self.root, "work")
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(self.home, exist_ok=True)
        args = [BINARY, "app-server", "--store", store, "--home", self.home]
        for a in listen:
            args += ["--listen", a.replace("HOME", self.home)]
        args += [e.replace("HOME", self.home) for e in extra]
        # stderr goes to a file: a pipe nobody drains would stall the server's logging.
        # A server started again logs to a file of its own (its listeners' lines are read back).
        self.log_path = os.path.join(self.home, "server-again.log" if root else "server.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True)
        self.urls = wait_for_listeners(self.log_path, len(listen))

    def ws_url(self):
        return next(u for u in self.urls if u.startswith("ws://"))

    def kill(self):
        """SIGKILL: the home stays, for a server started again on it."""
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.log.close()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        stdout = self.proc.stdout.read()
        self.log.close()
        check(stdout == "", "nothing on stdout with listeners: %r" % stdout[:200])
        shutil.rmtree(self.root, ignore_errors=True)
        return code


class Client(WsClient):
    """One connection: requests by id, everything else kept in order."""

    @classmethod
    async def connect(cls, url):
        return await super().connect(url, name="ws-test")


def text(t):
    return [{"type": "text", "text": t}]


def http_status(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


async def test_http_and_framing(server):
    base = server.ws_url().replace("ws://", "http://")
    check(http_status(base + "/readyz") == 200, "readyz answers 200")
    check(http_status(base + "/healthz") == 200, "healthz answers 200")
    check(http_status(base + "/nope") == 404, "other paths 404")
    try:
        await websockets.connect(server.ws_url(), origin="http://evil.example")
        check(False, "a handshake with an Origin is refused")
    except websockets.InvalidStatusCode as e:
        check(e.status_code == 403, "Origin refused with 403, got %s" % e.status_code)
    c = await Client.connect(server.ws_url())
    check(c.ws.response_headers.get("x-codex-websocket-max-unfragmented-message-bytes")
          == str(16 * 1024 * 1024), "the 101 names the message size limit, as Codex's does")
    big = await Client.connect(server.ws_url())
    try:
        # The server may close while the frame is still being written.
        await big.ws.send(json.dumps({"id": 1, "method": "initialize",
                                      "params": {"clientInfo": {"name": "x" * (17 << 20)}}}))
        await asyncio.wait_for(big.ws.recv(), 10)
        check(False, "a message over 16 MiB closes the connection")
    except websockets.ConnectionClosed as e:
        check(e.rcvd is not None and e.rcvd.code == 1009, "oversize message closed with 1009")
    await c.ws.send(b"\x00binary")
    try:
        await asyncio.wait_for(c.ws.recv(), 5)
        check(False, "a binary frame closes the connection")
    except websockets.ConnectionClosed as e:
        check(e.rcvd is not None and e.rcvd.code == 1003, "binary frame closed with 1003")


async def start_turn_with_approval(client, work, name):
    thread = (await client.call("thread/start", {"cwd": work, "approvalPolicy": "on-request"}))
    thread = thread["result"]["thread"]["id"]
    await client.call("turn/start", {"threadId": thread, "input": text("run[escalate]: touch " + name)})
    request = await client.method("item/commandExecution/requestApproval")
    return thread, request


async def command_completed(client):
    done = await client.wait(lambda m: m.get("method") == "item/completed"
                             and m["params"]["item"]["type"] == "commandExecution")
    return done["params"]["item"]["status"]


async def test_one_client_runs_an_accepted_command(server):
    c = await Client.connect(server.ws_url())
    thread, request = await start_turn_with_approval(c, server.work, "one")
    await c.answer(request, "accept")
    check(await command_completed(c) == "completed", "accepted command completed")
    check(os.path.exists(os.path.join(server.work, "one")), "the accepted command ran")
    await c.ws.close()


async def join(client, thread):
    r = await client.call("thread/resume", {"threadId": thread})
    check("result" in r, "thread/resume over a second connection: %s" % r)


async def test_first_answer_wins(server, rounds):
    for n in range(rounds):
        a = await Client.connect(server.ws_url())
        b = await Client.connect(server.ws_url())
        name = "race%d" % n
        thread, request_a = await start_turn_with_approval(a, server.work, name)
        await join(b, thread)
        request_b = await b.method("item/commandExecution/requestApproval")
        check(request_b["params"]["itemId"] == request_a["params"]["itemId"],
              "the second client is asked the same item")
        # Both answer at once; exactly one answer is applied.
        await asyncio.gather(a.answer(request_a, "accept"), b.answer(request_b, "decline"))
        status = await command_completed(a)
        await a.method("turn/completed")
        ran = os.path.exists(os.path.join(server.work, name))
        check((status == "completed") == ran and status in ("completed", "declined"),
              "round %d: item %s, command ran: %s" % (n, status, ran))
        for c, req in ((a, request_a), (b, request_b)):
            resolved = await c.wait(lambda m: m.get("method") == "serverRequest/resolved"
                                    and m["params"]["requestId"] == req["id"])
            check(resolved is not None, "each connection's copy is resolved")
        await a.ws.close()
        await b.ws.close()


async def test_a_client_leaving_withdraws_nothing_while_another_can_answer(server):
    a = await Client.connect(server.ws_url())
    b = await Client.connect(server.ws_url())
    thread, _ = await start_turn_with_approval(a, server.work, "stays")
    await join(b, thread)
    request_b = await b.method("item/commandExecution/requestApproval")
    await a.ws.close()
    await asyncio.sleep(0.2)  # the server notices the close
    await b.answer(request_b, "accept")
    check(await command_completed(b) == "completed", "the remaining client's accept ran it")
    check(os.path.exists(os.path.join(server.work, "stays")), "command ran after one client left")
    await b.ws.close()


async def test_a_client_that_comes_back_is_asked_again(server):
    a = await Client.connect(server.ws_url())
    keeper = await Client.connect(server.ws_url())  # keeps the approval alive
    thread, request = await start_turn_with_approval(a, server.work, "again")
    await join(keeper, thread)
    await keeper.method("item/commandExecution/requestApproval")
    await a.ws.close()
    back = await Client.connect(server.ws_url())
    await join(back, thread)
    again = await back.method("item/commandExecution/requestApproval")
    check(again["params"]["itemId"] == request["params"]["itemId"], "same item asked again")
    await back.answer(again, "accept")
    check(await command_completed(back) == "completed", "the returning client decided")
    await keeper.method("serverRequest/resolved")
    await back.ws.close()
    await keeper.ws.close()


async def ask_then_drop(server, name):
    """A client starts a thread whose turn asks to run a command appending to
    `name`, then drops: no close handshake, the TCP connection just ends.
    Returns the thread and the approval request it was sent."""
    a = await Client.connect(server.ws_url())
    thread = (await a.call("thread/start", {"cwd": server.work, "approvalPolicy": "on-request"}))
    thread = thread["result"]["thread"]["id"]
    await a.call("turn/start", {"threadId": thread, "input": text("run[escalate]: echo x >> " + name)})
    request = await a.method("item/commandExecution/requestApproval")
    a.ws.transport.abort()
    await asyncio.sleep(0.5)  # the server notices
    return thread, request


async def test_the_last_client_dropping_decides_nothing(server):
    """The only client of a thread goes away mid-approval (a network blip, a
    laptop lid): nothing is decided. A new client resumes, is asked again with
    the same itemId, accepts, and the command runs once."""
    thread, request = await ask_then_drop(server, "dropped")
    back = await Client.connect(server.ws_url())
    await join(back, thread)
    again = await back.method("item/commandExecution/requestApproval")
    check(again["params"]["itemId"] == request["params"]["itemId"],
          "the resuming client is asked the same item")
    await back.answer(again, "accept")
    check(await command_completed(back) == "completed", "the resuming client's accept ran it")
    done = await back.method("turn/completed")
    check(done["params"]["turn"]["status"] == "completed", "the turn completed, not interrupted")
    with open(os.path.join(server.work, "dropped")) as f:
        check(f.read() == "x\n", "the command ran exactly once")
    await back.ws.close()


async def test_the_last_client_dropping_then_a_restart():
    """The same across a restart (the local store): the only client drops
    mid-approval, the server is killed (SIGKILL) and started again on its
    home; a new client resumes, is asked the same item, accepts, and the
    command runs once."""
    server = Server("ws://127.0.0.1:0", store="local")
    thread, request = await ask_then_drop(server, "restarted")
    server.kill()
    server = Server("ws://127.0.0.1:0", store="local", root=server.root)
    try:
        back = await Client.connect(server.ws_url())
        await join(back, thread)
        again = await back.method("item/commandExecution/requestApproval")
        check(again["params"]["itemId"] == request["params"]["itemId"],
              "after a restart the resuming client is asked the same item")
        await back.answer(again, "accept")
        done = await back.method("turn/completed")
        check(done["params"]["turn"]["status"] == "completed",
              "after a restart the turn completed, not interrupted")
        with open(os.path.join(server.work, "restarted")) as f:
            check(f.read() == "x\n", "after a restart the command ran exactly once")
        await back.ws.close()
    finally:
        check(server.stop() == 0, "the restarted server stops with 0")


async def test_many_clients(server, count):
    """Many clients at once, each its own session: a thread, a turn, an
    approval declined; every one of them completes."""
    async def one(i):
        async with websockets.connect(server.ws_url()) as ws:
            c = Client(ws)
            await c.call("initialize", {"clientInfo": {"name": "many", "version": "1"}})
            thread = await c.call("thread/start", {"cwd": server.work, "approvalPolicy": "on-request"})
            await c.call("turn/start", {"threadId": thread["result"]["thread"]["id"],
                                        "input": text("run[escalate]: touch many%d" % i)})
            await c.answer(await c.method("item/commandExecution/requestApproval", 120), "decline")
            await c.method("turn/completed", 120)
            return 1
    started = time.time()
    done = await asyncio.gather(*[one(i) for i in range(count)], return_exceptions=True)
    ok = sum(1 for d in done if d == 1)
    print("%d concurrent clients: %d completed in %.1f s" % (count, ok, time.time() - started))
    check(ok == count, "every one of %d concurrent clients completed (%d did)" % (count, ok))
    check(not any(n.startswith("many") for n in os.listdir(server.work)), "no declined command ran")


async def test_a_slow_client_is_cut_off_and_slows_nobody():
    """A client that stops reading is disconnected once its queue passes the
    bound; another client on the same server goes on as if nothing happened."""
    server = Server("ws://127.0.0.1:0", extra=["--ws-max-queue", "200000"])
    slow = await websockets.connect(server.ws_url(), max_queue=1)  # reads one frame at most
    s = Client(slow)
    await s.call("initialize", {"clientInfo": {"name": "slow", "version": "1"}})
    thread = (await s.call("thread/start", {}))["result"]["thread"]["id"]
    flood = "say: " + " ".join("word%d" % i for i in range(30000))
    for _ in range(4):
        await s.send("turn/start", {"threadId": thread, "input": text(flood)})
    # Meanwhile another client works normally.
    other = await Client.connect(server.ws_url())
    t = (await other.call("thread/start", {}))["result"]["thread"]["id"]
    await other.call("turn/start", {"threadId": t, "input": text("say: still fine")})
    done = await other.method("turn/completed", 30)
    check(done["params"]["turn"]["status"] == "completed", "the other client is not slowed")
    deadline = time.time() + 30
    cut = False
    given_up = False
    while time.time() < deadline and not (cut and given_up):
        with open(server.log_path) as f:
            log = f.read()
        cut = "slow_client" in log
        # Given up, not gone: what it sent and was not yet run is dropped.
        given_up = "connection event=client_given_up" in log
        await asyncio.sleep(0.2)
    check(cut, "the slow client was disconnected past its bound")
    check(given_up, "its connection was told it was given up on (not an input's end)")
    await other.ws.close()
    server.stop()


def server_socket_option(pid, peer_port, level, option):
    """getsockopt on the server's own end of the connection whose peer is our
    local `peer_port`: the socket is copied out of the server with
    pidfd_getfd (Linux 5.6; root or ptrace rights). None if it cannot be."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd_getfd = 438  # x86_64 and aarch64
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
    try:
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                if not os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith("socket:"):
                    continue
            except OSError:
                continue
            fd = libc.syscall(pidfd_getfd, pidfd, int(name), 0)
            if fd < 0:
                continue
            sock = socket.socket(fileno=fd)
            try:
                if sock.family == socket.AF_INET and sock.type == socket.SOCK_STREAM:
                    try:
                        if sock.getpeername()[1] == peer_port:
                            return sock.getsockopt(level, option)
                    except OSError:
                        pass  # the listener: no peer
            finally:
                sock.close()
    finally:
        os.close(pidfd)
    return None


async def test_frames_are_not_held_back(server):
    """Nagle's algorithm off on every accepted TCP connection: with it, a
    small frame sent while the previous one was unacknowledged waited for the
    client's delayed ACK, and a client doing one thing at a time paid ~40 ms
    per exchange (87 ms per turn instead of under 1 ms)."""
    c = await Client.connect(server.ws_url())
    local_port = c.ws.transport.get_extra_info("sockname")[1]
    value = server_socket_option(server.proc.pid, local_port, socket.IPPROTO_TCP, socket.TCP_NODELAY)
    if value is None:
        print("SKIP (no pidfd_getfd here): TCP_NODELAY not checked")
    else:
        check(value != 0, "the server's end of a WebSocket connection has TCP_NODELAY set")
    await c.ws.close()


async def test_unix_socket(server):
    path = next(u for u in server.urls if u.startswith("unix://"))[len("unix://"):]
    mode = stat.S_IMODE(os.stat(path).st_mode)
    check(mode == 0o600, "the Unix socket is 0600, got %o" % mode)
    ws = await websockets.unix_connect(path, "ws://localhost/")
    c = Client(ws)
    r = await c.call("initialize", {"clientInfo": {"name": "ws-test", "version": "1"}})
    check("result" in r, "initialize over the Unix socket")
    await ws.close()


async def refused_with(url, token):
    headers = {"Authorization": "Bearer " + token} if token is not None else {}
    try:
        ws = await websockets.connect(url, extra_headers=headers)
        await ws.close()
        return None
    except websockets.InvalidStatusCode as e:
        return e.status_code


async def test_auth():
    """A token or a signed token opens the session; nothing else does."""
    home = tempfile.mkdtemp(prefix="parley-ws-auth-")
    with open(os.path.join(home, "token"), "w") as f:
        f.write("capability-123\n")
    with open(os.path.join(home, "secret"), "w") as f:
        f.write("shared-secret")
    # With authentication, a non-loopback address may be served.
    server = Server("ws://0.0.0.0:0", extra=["--ws-auth", "capability-token", "--ws-token-file",
                                             os.path.join(home, "token")])
    url = server.ws_url().replace("0.0.0.0", "127.0.0.1")
    check(await refused_with(url, None) == 401, "no token: 401")
    check(await refused_with(url, "capability-12") == 401, "wrong token: 401")
    check(await refused_with(url, "capability-123") is None, "the token opens a session")
    check(http_status(url.replace("ws://", "http://") + "/readyz") == 200, "health needs no token")
    server.stop()
    server = Server("ws://127.0.0.1:0", extra=["--ws-auth", "signed-bearer-token",
                                               "--ws-shared-secret-file", os.path.join(home, "secret")])
    url = server.ws_url()
    now = int(time.time())
    check(await refused_with(url, sign_jwt(b"shared-secret", {"exp": now + 600})) is None,
          "a signed token opens a session")
    check(await refused_with(url, sign_jwt(b"shared-secret", {"exp": now - 5})) == 401, "expired: 401")
    check(await refused_with(url, sign_jwt(b"guess", {"exp": now + 600})) == 401, "wrong key: 401")
    server.stop()
    shutil.rmtree(home, ignore_errors=True)


async def main():
    server = Server("ws://127.0.0.1:0", "unix://HOME/sock/app-server.sock")
    try:
        await test_http_and_framing(server)
        await test_one_client_runs_an_accepted_command(server)
        await test_first_answer_wins(server, int(os.environ.get("PARLEY_WS_ROUNDS", "10")))
        await test_a_client_leaving_withdraws_nothing_while_another_can_answer(server)
        await test_a_client_that_comes_back_is_asked_again(server)
        await test_the_last_client_dropping_decides_nothing(server)
        await test_unix_socket(server)
        await test_frames_are_not_held_back(server)
        await test_many_clients(server, int(os.environ.get("PARLEY_WS_CLIENTS", "1000")))
    finally:
        check(server.stop() == 0, "the server stops with 0 on SIGTERM")
    await test_the_last_client_dropping_then_a_restart()
    await test_auth()
    await test_a_slow_client_is_cut_off_and_slows_nobody()
    # A non-loopback address needs authentication.
    refused = subprocess.run([BINARY, "app-server", "--store", "memory", "--listen", "ws://0.0.0.0:0"],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    check(refused.returncode == 1 and "--ws-auth" in refused.stderr,
          "non-loopback listen refused: %d %s" % (refused.returncode, refused.stderr[-200:]))
    bad = subprocess.run([BINARY, "app-server", "--listen", "tcp://x"], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2, "a bad --listen value exits 2")


asyncio.run(main())
print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
