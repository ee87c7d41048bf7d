#!/usr/bin/env python3
"""The listener against hostile and careless clients (issue 25).

The real `parley app-server --listen ...`, raw sockets: Unix socket paths
that are never clobbered (a regular file kept, a live socket not stolen, a
stale one replaced, two servers racing for one path, a shutdown after a
takeover); half-open requests past the open-files limit while another
address is served; each connection cap pushed past; deadlines on a mute, a
trickling and a silent client; what held before (a 2^62-byte frame header,
invalid UTF-8, an unmasked frame, a ping flood, running out of descriptors);
TLS (the right CA, cleartext on the TLS port, an expired and a wrong-host
certificate, a reload on SIGHUP with a session kept across it). Oversized
and binary frames and the slow reader are in ws_transport_test.py.

Deadlines in this test are short (--ws-handshake-timeout 1s) so it stays
quick; the defaults are in transport/README.md.

Usage: listener_hostile_test.py PARLEY_BINARY
"""
import os
import re
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from process_stats import cpu_seconds, rss_kib  # noqa: E402

BINARY = sys.argv[1]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)
    else:
        print("ok  ", what, flush=True)


STARTED = []  # every server, so that none outlives a test that failed midway


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
        STARTED.append(self.proc)
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


# -- deadlines and caps ----------------------------------------------------------

def tcp_port(server):
    url = next(u for u in server.urls if u.startswith("ws://"))
    return int(url.rsplit(":", 1)[1])


def connect_from(source, port, timeout=5):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_within(s, seconds):
    """Seconds until the server closed `s` (EOF or reset; any bytes it sent
    first are read and dropped), or None if it stayed open."""
    started = time.time()
    s.settimeout(0.1)
    while time.time() - started < seconds:
        try:
            if s.recv(65536) == b"":
                return time.time() - started
        except socket.timeout:
            continue
        except OSError:
            return time.time() - started
    return None


def answer_of(s, timeout=3):
    """What the server sent before closing (a refusal's 503), up to 4 KiB."""
    s.settimeout(timeout)
    data = b""
    try:
        while len(data) < 4096:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data


def request(s, line_id, method, params="{}"):
    s.sendall(ws_frame(('{"id":%d,"method":"%s","params":%s}' % (line_id, method, params)).encode()))
    while True:
        op, payload = ws_read_frame(s)
        if op == 9:  # a ping: answer it, as every client must
            s.sendall(ws_frame(payload, opcode=10))
            continue
        if op == 1 and (b'"id":%d' % line_id) in payload:
            return payload


def keep_alive(s, seconds):
    """Reads for `seconds`, answering every ping with its pong."""
    started = time.time()
    while time.time() - started < seconds:
        s.settimeout(0.2)
        try:
            op, payload = ws_read_frame(s)
        except socket.timeout:
            continue
        if op == 9:
            s.sendall(ws_frame(payload, opcode=10))


def set_open_files(n):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


def test_half_open_past_the_open_files_limit(root):
    """300 half-sent requests from one address against a server whose
    open-files limit is 256: the address's cap holds, a client from
    127.0.0.2 is served meanwhile, and every held one is let go of at the
    deadline; refusals are 503 with Retry-After, logged once per burst."""
    server = Server(root, "ws://127.0.0.1:0", extra=["--ws-handshake-timeout", "1s"],
                    preexec=set_open_files(256))
    port = tcp_port(server)
    established = connect_from("127.0.0.1", port)
    check(ws_initialize(established), "a client connected before the flood is served")
    held = []
    for _ in range(300):
        s = connect_from("127.0.0.1", port)
        s.sendall(b"GET / HTTP/1.1\r\nHost: parley\r\nUpgrade: webs")
        held.append(s)
    started = time.time()
    good = connect_from("127.0.0.2", port)
    check(ws_initialize(good), "a client from another address is served during the flood")
    check(b"result" in request(established, 2, "thread/start"),
          "the client connected before the flood is unharmed")
    answers = [answer_of(s, 1) for s in held[-50:]]
    refused = [a for a in answers if a.startswith(b"HTTP/1.1 503")]
    check(len(refused) >= 40, "connections past the address's cap are refused at once "
          "(%d of the last 50 answered 503)" % len(refused))
    check(all(b"Retry-After: " in a for a in refused), "a refusal says when to retry")
    check(all(a.endswith(b"\r\n\r\ntoo many connections\n") for a in refused),
          "and why, its whole body as its Content-Length says")
    times = [closed_within(s, 6) for s in held[:20]]
    check(all(t is not None for t in times), "the held half-open requests are let go of")
    check(time.time() - started < 6, "within the deadline (1 s) and a margin: %.1f s"
          % (time.time() - started))
    log = server.log_text()
    check(log.count("event=connection_refused") == 1,
          "the burst of refusals is logged once, not once per connection (%d lines)"
          % log.count("event=connection_refused"))
    check("cap=pending_per_address" in log, "the log names the cap that refused")
    # After the burst, the listener is whole again: a new client is served.
    later = connect_from("127.0.0.1", port)
    check(ws_initialize(later), "after the flood a client from the same address is served")
    for s in held + [established, good, later]:
        s.close()
    check(server.stop() == 0, "the server stops with 0")


def test_each_cap(root):
    """Each cap pushed past: the refusal is seen, clients already connected
    are unharmed."""
    server = Server(root, "ws://127.0.0.1:0",
                    extra=["--ws-handshake-timeout", "10s", "--ws-max-connections", "12",
                           "--ws-max-pending", "6", "--ws-max-pending-per-address", "3"])
    port = tcp_port(server)
    sessions = [connect_from("127.0.0.1", port) for _ in range(3)]
    check(all(ws_initialize(s) for s in sessions), "three sessions open")
    # Per address: 127.0.0.3 may hold 3 half-open connections, not 4.
    mine = [connect_from("127.0.0.3", port) for _ in range(3)]
    time.sleep(0.2)
    extra = connect_from("127.0.0.3", port)
    check(answer_of(extra, 2).startswith(b"HTTP/1.1 503"), "the per-address cap refuses with 503")
    other = connect_from("127.0.0.4", port)
    check(ws_initialize(other), "another address is served while one holds its cap")
    # Pending in all: 6 half-open from 127.0.0.3 and 127.0.0.5, the 7th refused.
    theirs = [connect_from("127.0.0.5", port) for _ in range(3)]
    time.sleep(0.2)
    seventh = connect_from("127.0.0.6", port)
    check(answer_of(seventh, 2).startswith(b"HTTP/1.1 503"), "the pending cap refuses with 503")
    for s in mine + theirs:
        s.close()
    # In all: 4 sessions open; 8 more fill the cap of 12, the 13th is refused.
    # (The first waits until the server has seen the half-open ones go.)
    more = []
    deadline = time.time() + 10
    while True:
        first = connect_from("127.0.0.10", port)
        try:
            served = ws_initialize(first)
        except OSError:
            served = False
        if served or time.time() > deadline:
            break
        first.close()
        time.sleep(0.1)
    more.append(first)
    for i in range(1, 8):
        more.append(connect_from("127.0.0.%d" % (10 + i), port))
        check(ws_initialize(more[-1]), "session %d of 12 is served" % (5 + i))
    thirteenth = connect_from("127.0.0.30", port)
    check(answer_of(thirteenth, 2).startswith(b"HTTP/1.1 503"), "the total cap refuses with 503")
    for i, s in enumerate(sessions + [other] + more):
        check(b"result" in request(s, 5, "thread/start"), "session %d unharmed" % i)
    for s in sessions + [other] + more + [extra, seventh, thirteenth]:
        s.close()
    check(server.stop() == 0, "the server stops with 0")


def test_deadlines_and_silence(root):
    """Nothing sent, a request trickled byte by byte, a health check never
    finished: each closed at the deadline. An established peer that goes
    silent is pinged and closed; one that answers pings stays."""
    server = Server(root, "ws://127.0.0.1:0",
                    extra=["--ws-handshake-timeout", "1s", "--ws-idle-timeout", "2s"])
    port = tcp_port(server)
    mute = connect_from("127.0.0.1", port)
    t = closed_within(mute, 6)
    check(t is not None and 0.8 < t < 5, "a connection that sends nothing is closed at the "
          "deadline (%s s)" % t)
    trickle = connect_from("127.0.0.1", port)
    started = time.time()
    closed = False
    for b in b"GET /healthz HTTP/1.1\r\nHost: parley\r\nX-Slow: " + b"a" * 100:
        try:
            trickle.send(bytes([b]))
        except OSError:
            closed = True
            break
        if closed_within(trickle, 0.2) is not None:
            closed = True
            break
    took = time.time() - started
    check(closed and took < 5, "a request trickled byte by byte is cut at the deadline "
          "(%.1f s)" % took)
    health = connect_from("127.0.0.1", port)
    health.sendall(b"GET /healthz HTTP/1.1\r\nHost: parley\r\n\r\n")
    check(answer_of(health, 3).startswith(b"HTTP/1.1 200"), "a health check is answered")
    silent = connect_from("127.0.0.1", port)
    check(ws_initialize(silent), "a session opens")
    lively = connect_from("127.0.0.1", port)
    check(ws_initialize(lively), "a second session opens")
    # The lively one answers its pings meanwhile (and for longer than the
    # idle timeout), and stays.
    lively_thread = threading.Thread(target=keep_alive, args=(lively, 4))
    lively_thread.start()
    # The silent one reads but never answers: pinged, then closed.
    silent.settimeout(8)
    started = time.time()
    pinged = False
    gone = None
    try:
        while time.time() - started < 8:
            op, _ = ws_read_frame(silent)
            if op == 9:
                pinged = True
            if op == 8:
                gone = time.time() - started
                break
    except (ConnectionError, OSError):
        gone = time.time() - started
    check(pinged, "a silent peer is pinged")
    check(gone is not None and gone < 6, "a silent peer is closed once no pong came (%s s)" % gone)
    lively_thread.join()
    check(b"result" in request(lively, 3, "thread/start"), "a peer that answers pings stays")
    silent.close()
    lively.close()
    check(server.stop() == 0, "the server stops with 0")


# -- what held before issue 25, kept held ----------------------------------------

def close_code(s, timeout=5):
    """The code of the close frame the server sends next (other frames are
    skipped), or None if the connection ends without one."""
    s.settimeout(timeout)
    try:
        while True:
            op, payload = ws_read_frame(s)
            if op == 8:
                return int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
    except (ConnectionError, OSError):
        return None


def session(port):
    s = connect_from("127.0.0.1", port)
    check(ws_initialize(s), "a session opens")
    return s


def test_frames_that_held_before(root):
    """Oversized and binary frames and the slow reader are in
    ws_transport_test.py; here the rest of what an attacker tried first."""
    server = Server(root, "ws://127.0.0.1:0")
    port = tcp_port(server)
    pid = server.proc.pid
    before = rss_kib(pid)
    s = session(port)
    # A frame header declaring 2^62 bytes: refused (1009), nothing allocated.
    s.sendall(bytes([0x81, 0x80 | 127]) + (1 << 62).to_bytes(8, "big") + os.urandom(4) + b"xx")
    check(close_code(s) == 1009, "a frame declaring 2^62 bytes is closed with 1009")
    s.close()
    check(rss_kib(pid) - before < 50 * 1024, "and nothing was allocated for it")
    s = session(port)
    s.sendall(ws_frame(b"\xff\xfe\xfd not utf-8"))
    check(close_code(s) == 1007, "invalid UTF-8 in a text frame is closed with 1007")
    s.close()
    s = session(port)
    s.sendall(ws_frame(b'{"id":9,"method":"thread/start","params":{}}', mask=False))
    check(close_code(s) == 1002, "an unmasked client frame is closed with 1002")
    s.close()
    # 20,000 pings in one burst from a client that does not read yet.
    flood = session(port)
    flood.sendall(b"".join(ws_frame(b"p%d" % i, opcode=9) for i in range(20000)))
    other = session(port)
    check(b"result" in request(other, 2, "thread/start"), "the server answers others during a "
          "ping flood")
    check(rss_kib(pid) - before < 50 * 1024, "a ping flood costs no memory worth naming "
          "(RSS +%d KiB)" % (rss_kib(pid) - before))
    flood.close()
    other.close()
    check(server.stop() == 0, "the server stops with 0")


def test_out_of_descriptors(root):
    """With the caps above the open-files limit, the acceptor runs out of
    descriptors: it does not spin, and serves again once some are free."""
    server = Server(root, "ws://127.0.0.1:0",
                    extra=["--ws-handshake-timeout", "2s", "--ws-max-connections", "1000",
                           "--ws-max-pending", "1000", "--ws-max-pending-per-address", "1000"],
                    preexec=set_open_files(128))
    port = tcp_port(server)
    pid = server.proc.pid
    held = []
    for _ in range(150):
        s = connect_from("127.0.0.1", port)
        s.sendall(b"GET / HTTP/1.1\r\n")
        held.append(s)
    time.sleep(0.3)
    cpu = cpu_seconds(pid)
    time.sleep(1)
    spent = cpu_seconds(pid) - cpu
    check(spent < 0.5, "out of descriptors, the acceptor does not spin (%.2f s of CPU in 1 s)"
          % spent)
    check("accept_failed" in server.log_text(), "running out of descriptors is logged")
    for s in held:
        s.close()
    time.sleep(0.5)
    later = connect_from("127.0.0.1", port)
    check(ws_initialize(later), "once descriptors are free again a client is served")
    later.close()
    check(server.stop() == 0, "the server stops with 0")


# -- TLS -------------------------------------------------------------------------

def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out",
            name + ".pem", "-days", "2", "-subj", "/CN=parley-test-" + name, cwd=d)


def make_cert(d, ca, name, hosts="DNS:localhost,IP:127.0.0.1", days="2"):
    """A server certificate signed by `ca`; days "-1" makes it expired."""
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out",
            name + ".csr", "-subj", "/CN=" + name, cwd=d)
    with open(os.path.join(d, name + ".ext"), "w") as f:
        f.write("subjectAltName=%s\n" % hosts)
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
            "-CAcreateserial", "-out", name + ".pem", "-days", days, "-extfile", name + ".ext",
            cwd=d)
    return os.path.join(d, name + ".pem"), os.path.join(d, name + ".key")


def tls_connect(port, cafile, max_version=None):
    ctx = ssl.create_default_context(cafile=cafile)
    if max_version:
        ctx.maximum_version = max_version
    raw = connect_from("127.0.0.1", port)
    return ctx.wrap_socket(raw, server_hostname="localhost")


def tls_refusal(port, cafile):
    """The client's reason to refuse the server's certificate, or None."""
    try:
        tls_connect(port, cafile).close()
        return None
    except ssl.SSLCertVerificationError as e:
        return e.verify_message


def wss_server(root, cert, key):
    return Server(root, "wss://127.0.0.1:0",
                  extra=["--tls-cert", cert, "--tls-key", key, "--ws-handshake-timeout", "1s"])


def test_tls(root):
    d = tempfile.mkdtemp(prefix="tls-", dir=root)
    make_ca(d, "ca")
    make_ca(d, "ca2")
    cert, key = make_cert(d, "ca", "good")
    server = wss_server(root, cert, key)
    check(server.urls[0].startswith("wss://127.0.0.1:"), "the listener says wss://")
    port = int(server.urls[0].rsplit(":", 1)[1])
    ca = os.path.join(d, "ca.pem")
    kept = tls_connect(port, ca)
    check(ws_initialize(kept), "a client that trusts the CA opens a session over TLS")
    check(kept.version() in ("TLSv1.2", "TLSv1.3"), "TLS 1.2 or later: %s" % kept.version())
    t12 = tls_connect(port, ca, max_version=ssl.TLSVersion.TLSv1_2)
    check(t12.version() == "TLSv1.2" and ws_initialize(t12), "a TLS 1.2 client is served")
    t12.close()
    check(tls_refusal(port, os.path.join(d, "ca2.pem")) is not None,
          "a client that trusts another CA refuses the certificate")
    clear = connect_from("127.0.0.1", port)
    clear.sendall(b"GET /healthz HTTP/1.1\r\nHost: parley\r\n\r\n")
    check(not answer_of(clear, 3).startswith(b"HTTP/"), "a cleartext client gets no HTTP answer")
    clear.close()
    mute = connect_from("127.0.0.1", port)
    t = closed_within(mute, 6)
    check(t is not None and t < 5, "a TLS handshake never begun is cut at the deadline (%s s)" % t)
    # SIGHUP: a new certificate (of another CA) for new connections; the
    # session open keeps going.
    cert2, key2 = make_cert(d, "ca2", "next")
    shutil.copy(cert2, cert)
    shutil.copy(key2, key)
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while "tls_reloaded" not in server.log_text() and time.time() < deadline:
        time.sleep(0.05)
    check("tls_reloaded" in server.log_text(), "SIGHUP reads the certificate again")
    check(server.proc.poll() is None, "SIGHUP does not stop a server with a wss:// listener")
    fresh = tls_connect(port, os.path.join(d, "ca2.pem"))
    check(ws_initialize(fresh), "a new connection gets the new certificate")
    fresh.close()
    check(tls_refusal(port, ca) is not None, "the old certificate is no longer offered")
    check(b"result" in request(kept, 2, "thread/start"),
          "the session open before SIGHUP is kept across it")
    kept.close()
    # A reload that cannot be used keeps the certificate in use.
    with open(key, "w") as f:
        f.write("not a key\n")
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while "tls_reload_failed" not in server.log_text() and time.time() < deadline:
        time.sleep(0.05)
    check("tls_reload_failed" in server.log_text(), "an unusable key on SIGHUP is logged")
    still = tls_connect(port, os.path.join(d, "ca2.pem"))
    check(ws_initialize(still), "and the certificate in use stays")
    still.close()
    check(server.stop() == 0, "the server stops with 0 on SIGTERM")

    expired, expired_key = make_cert(d, "ca", "expired", days="-1")
    server = wss_server(root, expired, expired_key)
    port = int(server.urls[0].rsplit(":", 1)[1])
    why = tls_refusal(port, ca)
    check(why is not None and "expired" in why, "an expired certificate is refused: %s" % why)
    server.stop()
    wrong, wrong_key = make_cert(d, "ca", "wrong", hosts="DNS:wrong.example")
    server = wss_server(root, wrong, wrong_key)
    port = int(server.urls[0].rsplit(":", 1)[1])
    why = tls_refusal(port, ca)
    check(why is not None and ("mismatch" in why or "match" in why),
          "a certificate for another host is refused: %s" % why)
    server.stop()
    code, log = start_fails(root, "wss://127.0.0.1:0")
    check(code != 0 and "--tls-cert" in log, "wss:// without a certificate does not start")


def test_cleartext_beyond_loopback_warns(root):
    token = os.path.join(root, "token")
    with open(token, "w") as f:
        f.write("capability-123\n")
    server = Server(root, "ws://0.0.0.0:0",
                    extra=["--ws-auth", "capability-token", "--ws-token-file", token])
    check("event=cleartext_listener" in server.log_text(),
          "a non-loopback ws:// listener warns that tokens travel in clear text")
    check(server.stop() == 0, "the server stops with 0")


def main():
    root = tempfile.mkdtemp(prefix="parley-hostile-")
    try:
        test_unix_socket_paths(root)
        test_half_open_past_the_open_files_limit(root)
        test_each_cap(root)
        test_deadlines_and_silence(root)
        test_frames_that_held_before(root)
        test_out_of_descriptors(root)
        test_tls(root)  # the openssl CLI is one of .ci/install-deps' packages
        test_cleartext_beyond_loopback_warns(root)
    finally:
        for proc in STARTED:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(root, ignore_errors=True)


main()
print("%d failure(s)" % len(FAILURES))
sys.exit(1 if FAILURES else 0)
