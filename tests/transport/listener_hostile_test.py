#!/usr/bin/env python3
"""The listener against hostile and careless clients (issue 25).

The real `parley app-server --listen ...`, raw sockets: Unix socket paths
that are never clobbered (a regular file kept, a live socket not stolen, a
stale one replaced, two servers racing for one path, a shutdown after a
takeover); what ws_transport_test.py does not already hold in the suite.

Usage: listener_hostile_test.py PARLEY_BINARY
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BINARY = sys.argv[1]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)
    else:
        print("ok  ", what, flush=True)


class Server:
    """One `parley app-server`; `urls` once it listens (or `code` if it
    stopped at start)."""

    def __init__(self, root, *listen, extra=(), wait=True, preexec=None):
        self.root = root
        self.home = tempfile.mkdtemp(prefix="home-", dir=root)
        args = [BINARY, "app-server", "--store", "memory", "--home", self.home]
        for a in listen:
            args += ["--listen", a]
        args += list(extra)
        self.log_path = os.path.join(self.home, "server.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log, preexec_fn=preexec)
        self.count = len(listen)
        self.urls = []
        if wait:
            self.wait_listening()

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_listening(self, timeout=30):
        """True once every listener is up; False if the server exited."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.urls = re.findall(r"app-server listening on (\S+)", self.log_text())
            if len(self.urls) >= self.count:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.02)
        raise RuntimeError("the server neither listened nor stopped")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self.log.close()
        return code


def unix_initialize(path, timeout=5):
    """A WebSocket handshake and `initialize` over the Unix socket at `path`
    with a minimal client; True when answered."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        return ws_initialize(s)
    except OSError:
        return False
    finally:
        s.close()


def ws_handshake(s, host="localhost"):
    s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
               % host).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            return False
        head += chunk
    return head.startswith(b"HTTP/1.1 101")


def ws_frame(payload, opcode=1, mask=True):
    header = bytes([0x80 | opcode])
    n = len(payload)
    m = 0x80 if mask else 0
    if n < 126:
        header += bytes([m | n])
    elif n < 65536:
        header += bytes([m | 126]) + n.to_bytes(2, "big")
    else:
        header += bytes([m | 127]) + n.to_bytes(8, "big")
    if not mask:
        return header + payload
    key = os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def ws_read_frame(s):
    """(opcode, payload) of the next frame from the server (never masked)."""
    def exact(n):
        data = b""
        while len(data) < n:
            chunk = s.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data
    b0, b1 = exact(2)
    n = b1 & 0x7F
    if n == 126:
        n = int.from_bytes(exact(2), "big")
    elif n == 127:
        n = int.from_bytes(exact(8), "big")
    return b0 & 0x0F, exact(n)


def ws_initialize(s):
    if not ws_handshake(s):
        return False
    s.sendall(ws_frame(b'{"id":1,"method":"initialize","params":{"clientInfo":'
                       b'{"name":"hostile-test","version":"1"}}}'))
    while True:
        op, payload = ws_read_frame(s)
        if op == 1 and b'"id":1' in payload:
            return b'"result"' in payload


def start_fails(root, *listen):
    """Starts a server that must not start; its exit code and log."""
    s = Server(root, *listen, wait=False)
    code = s.proc.wait(timeout=30)
    s.log.close()
    with open(s.log_path) as f:
        return code, f.read()


# -- Unix socket paths --------------------------------------------------------

def test_unix_socket_paths(root):
    d = tempfile.mkdtemp(prefix="sock-", dir=root)
    path = os.path.join(d, "app.sock")

    # A regular file of the user's is refused and kept.
    with open(path, "w") as f:
        f.write("precious\n")
    code, log = start_fails(root, "unix://" + path)
    check(code != 0 and "not a socket" in log, "a regular file at the path is refused: %d %s"
          % (code, log[-300:]))
    with open(path) as f:
        check(f.read() == "precious\n", "the regular file is left untouched")
    os.unlink(path)

    # A live parley is not robbed of its socket.
    a = Server(root, "unix://" + path)
    code, log = start_fails(root, "unix://" + path)
    check(code != 0 and "in use" in log and ("process %d" % a.proc.pid) in log,
          "a second server on a live socket is refused, naming the first's pid: %s" % log[-300:])
    check(unix_initialize(path), "the first server still answers on its socket")
    check(a.stop() == 0, "the first server stops with 0")
    check(not os.path.exists(path), "a server removes its own socket at shutdown")

    # A live socket of another program (no lock file) is not stolen either.
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(path)
    other.listen(4)
    code, log = start_fails(root, "unix://" + path)
    check(code != 0 and "in use" in log and ("process %d" % os.getpid()) in log,
          "a socket another program listens on is refused, naming it: %s" % log[-300:])
    # A stale socket (nobody listens) is replaced.
    other.close()
    check(os.path.exists(path), "the closed listener left its socket file (stale)")
    b = Server(root, "unix://" + path)
    check(b.urls == ["unix://" + path], "a stale socket is replaced")
    check(unix_initialize(path), "the server answers on the replaced path")

    # Shutdown after a takeover: the path is no longer b's socket; b leaves it.
    os.unlink(path)
    thief = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    thief.bind(path)
    thief.listen(1)
    inode = os.stat(path).st_ino
    check(b.stop() == 0, "the server stops with 0 after its path was taken over")
    check(os.path.exists(path) and os.stat(path).st_ino == inode,
          "a server leaves a socket at its path that is not the one it bound")
    thief.close()
    os.unlink(path)

    # Two servers racing for one path: exactly one wins, every time.
    for n in range(5):
        p = os.path.join(d, "race%d.sock" % n)
        one = Server(root, "unix://" + p, wait=False)
        two = Server(root, "unix://" + p, wait=False)
        up = [s for s in (one, two) if s.wait_listening()]
        down = [s for s in (one, two) if s not in up]
        check(len(up) == 1, "round %d: exactly one of two racing servers listens" % n)
        for s in down:
            check(s.proc.returncode != 0 and "in use" in s.log_text(),
                  "round %d: the loser says the path is in use" % n)
        if up:
            check(unix_initialize(p), "round %d: the winner answers" % n)
        for s in (one, two):
            s.stop()
        check(not os.path.exists(p), "round %d: the path is gone after both stopped" % n)


def main():
    root = tempfile.mkdtemp(prefix="parley-hostile-")
    try:
        test_unix_socket_paths(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


main()
print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
