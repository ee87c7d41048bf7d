#!/usr/bin/env python3
"""The listener under a half-open flood, and TLS handshakes (issue 25).

1. A well-behaved client's `initialize` (a new connection: TCP connect,
   WebSocket upgrade, initialize answered), p50/p99 over --samples, against an
   idle server and then while --half-open connections from other addresses
   each hold half an HTTP request (--ws-handshake-timeout 30s so that they
   are held for the whole measurement); the server's RSS before and while
   they are held gives the memory per held connection.
2. TLS handshakes on one core: --tls-handshakes full handshakes (no session
   resumption) against a wss:// listener from 4 client threads; the server's
   CPU time per handshake, and handshakes per second of one core from it.

  listener_bench.py --binary PARLEY [--half-open 1000] [--samples 300]
"""
import argparse
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
from process_stats import cpu_seconds, rss_kib  # noqa: E402


def frame(payload, opcode=1):
    key = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    head += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


INIT = frame(b'{"id":1,"method":"initialize","params":{"clientInfo":{"name":"bench","version":"1"}}}')
UPGRADE = (b"GET / HTTP/1.1\r\nHost: parley\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def initialize(s):
    s.sendall(UPGRADE)
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
    assert data.startswith(b"HTTP/1.1 101"), data[:100]
    data = data.split(b"\r\n\r\n", 1)[1]
    s.sendall(INIT)
    while b'"id":1' not in data:
        chunk = s.recv(65536)
        assert chunk, "closed"
        data += chunk


def start(binary, home, *args):
    log = open(os.path.join(home, "server.log"), "w")
    proc = subprocess.Popen([binary, "app-server", "--store", "memory", "--home", home,
                             "--log-level", "warn", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(os.path.join(home, "server.log")) as f:
            m = re.search(r"listening on \S+:(\d+)", f.read())
        if m:
            return proc, int(m.group(1))
        time.sleep(0.05)
    raise RuntimeError("no listener")


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def initialize_latency(port, samples):
    times = []
    for _ in range(samples):
        t = time.perf_counter()
        s = socket.create_connection(("127.0.0.1", port))
        initialize(s)
        times.append((time.perf_counter() - t) * 1000)
        s.close()
    return percentile(times, 0.5), percentile(times, 0.99)


def half_open(binary, home, count, samples):
    proc, port = start(binary, home, "--listen", "ws://127.0.0.1:0",
                       "--ws-handshake-timeout", "30s")
    initialize_latency(port, 20)  # warm up
    idle = initialize_latency(port, samples)
    before = rss_kib(proc.pid)
    held = []
    for i in range(count):
        s = socket.socket()
        s.bind(("127.0.%d.%d" % (1 + i // 250, 2 + i % 250), 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET / HTTP/1.1\r\nHost: parley\r\nUpgrade: webs")
        held.append(s)
    time.sleep(1)
    during = rss_kib(proc.pid)
    loaded = initialize_latency(port, samples)
    print("initialize (new connection) idle:     p50 %.2f ms  p99 %.2f ms" % idle)
    print("initialize with %d half-open held: p50 %.2f ms  p99 %.2f ms" % ((count,) + loaded))
    print("RSS %d KiB idle, %d KiB with %d held: %.1f KiB per held connection"
          % (before, during, count, (during - before) / count))
    for s in held:
        s.close()
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


def tls_handshakes(binary, home, total):
    d = os.path.join(home, "tls")
    os.makedirs(d)
    run = lambda *a: subprocess.run(["openssl", *a], cwd=d, check=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=localhost",
        "-addext", "subjectAltName=DNS:localhost")
    results = {}
    for kind, keyargs in (("ECDSA P-256", None), ("RSA 2048", ["rsa:2048"])):
        if keyargs:
            run("req", "-x509", "-newkey", keyargs[0], "-nodes", "-keyout", "key.pem", "-out",
                "cert.pem", "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost")
        proc, port = start(binary, home, "--listen", "wss://127.0.0.1:0",
                           "--tls-cert", os.path.join(d, "cert.pem"),
                           "--tls-key", os.path.join(d, "key.pem"))
        ctx = ssl.create_default_context(cafile=os.path.join(d, "cert.pem"))
        per_thread = total // 4

        def client():
            for _ in range(per_thread):
                raw = socket.create_connection(("127.0.0.1", port))
                s = ctx.wrap_socket(raw, server_hostname="localhost")  # a full handshake each
                s.close()
        cpu = cpu_seconds(proc.pid)
        t = time.perf_counter()
        threads = [threading.Thread(target=client) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - t
        spent = cpu_seconds(proc.pid) - cpu
        n = per_thread * 4
        print("TLS %s: %d handshakes in %.1f s (client on the same 2 cores); server CPU %.0f us "
              "per handshake = %.0f handshakes/s on one core"
              % (kind, n, wall, spent / n * 1e6, n / spent if spent else float("inf")))
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        results[kind] = n / spent if spent else 0
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--half-open", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--tls-handshakes", type=int, default=2000)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="parley-listener-bench-")
    try:
        half_open(args.binary, home, args.half_open, args.samples)
        tls_handshakes(args.binary, home, args.tls_handshakes)
    finally:
        shutil.rmtree(home, ignore_errors=True)


main()
