#!/usr/bin/env python3
"""The real Codex 0.169.0 TUI, connected to one node of a three-node cluster
(issue 21), approves a command of a thread that lives on another node: the
thread is started and leased on n2 through n2's own stdio client, then
`codex resume --remote ws://<n1>` resumes it through n1; the prompt's command
is asked in the TUI's dialog (the approval actor is on n2, its request
crosses the middleman), `y` runs it once, on n2, and the thread stays n2's.
Exits 77 (skipped) when tmux, the Codex package or PostgreSQL cannot be had.

Usage: cluster_tui_test.py PARLEY_BINARY
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import cluster_test  # noqa: E402  (reads the binary from argv[1])
import pg_cluster  # noqa: E402
from tui_driver import (require_tui, SESSION, screen, skip, start_tui, tmux,  # noqa: E402
                        type_line, wait_file, wait_screen)

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)
        print(screen(), flush=True)
    return cond


def listening_url(log_path, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(log_path) as f:
            m = re.search(r"listening on (ws://\S+)", f.read())
        if m:
            return m.group(1)
        time.sleep(0.05)
    return None


def main():
    require_tui()
    if not pg_cluster.available():
        skip("PostgreSQL is not installed")
    with pg_cluster.started() as pg:
        cluster_test.PG = pg
        with cluster_test.Cluster() as c:
            # n1 serves its stdio client and a WebSocket listener for the TUI.
            c.extra["n1"] = ["--listen=stdio", "--listen=ws://127.0.0.1:0"]
            c.start_all()
            url = listening_url(c.peers["n1"].stderr_path)
            if not check(url is not None, "n1 listens for the TUI"):
                return
            p2 = c.peers["n2"]
            thread = None
            for _ in range(30):
                t = p2.start_thread()
                if c.leases().get(t) == "n2":
                    thread = t
                    break
            if not check(thread is not None, "a thread placed on n2"):
                return
            p2.run_turn(thread, "say: hello from n2")
            codex_home = os.path.join(c.dir, "codex")
            os.makedirs(codex_home)
            try:
                start_tui(url, c.work, codex_home, "resume", thread)
                check(wait_screen(r"hello from n2", timeout=90),
                      "the TUI on n1 resumes the thread of n2 and shows its history")
                type_line("run[escalate]: touch approved_across_nodes")
                check(wait_screen(r"Would you like to run the following command", timeout=60),
                      "the TUI on n1 shows n2's approval dialog")
                tmux("send-keys", "-t", SESSION, "y")
                ran = os.path.join(c.work, "approved_across_nodes")
                check(wait_file(ran), "y (answered through n1) runs the command on n2")
                check(wait_screen(r"Ran touch approved_across_nodes"), "the TUI shows it ran")
                time.sleep(1)
                with open(ran) as f:
                    check(f.read() == "", "it ran once")
                check(c.leases().get(thread) == "n2", "the thread stayed n2's")
            finally:
                tmux("kill-session", "-t", SESSION)
    print("%d failure(s)" % len(FAILURES))
    sys.exit(1 if FAILURES else 0)


main()
