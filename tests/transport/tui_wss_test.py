#!/usr/bin/env python3
"""The real Codex 0.169.0 TUI (npm, in tmux) over `wss://` (issue 25).

parley listens on wss://127.0.0.1:0 with a certificate for localhost and
127.0.0.1 signed by a test CA made here with the openssl CLI. The TUI's
WebSocket client (rustls) trusts the roots SSL_CERT_FILE names (not
CODEX_CA_CERTIFICATE, which only its HTTP client reads): without it the TUI
refuses the certificate (UnknownIssuer); with the test CA there it connects,
asks an approval, and `y` runs the command.

Usage: tui_wss_test.py PARLEY_BINARY (exit 77 where tmux or Codex is missing)
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

BINARY = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tui_driver import (tui_home, SESSION, Checks, start_tui, tmux,  # noqa: E402
                        type_line, wait_file, wait_screen)


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def main():
    home, work, codex_home = tui_home("parley-tui-wss-")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=parley-tui-test-ca", cwd=home)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=localhost", cwd=home)
    with open(os.path.join(home, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext",
            cwd=home)
    log_path = os.path.join(home, "server-1.log")
    log = open(log_path, "w")
    server = subprocess.Popen(
        [BINARY, "app-server", "--home", os.path.join(home, "parley"), "--cwd", work,
         "--listen", "wss://127.0.0.1:0", "--tls-cert", os.path.join(home, "server.pem"),
         "--tls-key", os.path.join(home, "server.key")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    check = Checks(home)
    url = None
    deadline = time.time() + 30
    while url is None and time.time() < deadline:
        with open(log_path) as f:
            m = re.search(r"listening on wss://127\.0\.0\.1:(\d+)", f.read())
        url = "wss://localhost:%s" % m.group(1) if m else None
        time.sleep(0.05)
    try:
        check(url is not None, "parley listens on wss://")
        start_tui(url, work, codex_home)
        check(wait_screen(r"invalid peer certificate: UnknownIssuer"),
              "without the test CA the TUI refuses the certificate")
        start_tui(url, work, codex_home, env="SSL_CERT_FILE=" + os.path.join(home, "ca.pem"))
        check(wait_screen(r"Ask Codex to do anything"), "with it the TUI starts over wss://")
        type_line("run[escalate]: touch approved_over_wss")
        check(wait_screen(r"Would you like to run the following command"), "the approval dialog")
        tmux("send-keys", "-t", SESSION, "y")
        check(wait_file(os.path.join(work, "approved_over_wss")), "y runs the command")
        check(wait_screen(r"Ran touch approved_over_wss"), "the TUI shows the command ran")
    finally:
        tmux("kill-session", "-t", SESSION)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            check.failures.append("the server did not stop on SIGTERM")
        log.close()
        shutil.rmtree(home, ignore_errors=True)
    print("%d failure(s)" % len(check.failures))
    sys.exit(1 if check.failures else 0)


main()
