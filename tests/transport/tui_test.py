#!/usr/bin/env python3
"""The real Codex 0.169.0 TUI drives parley over WebSocket (issue 12), in tmux.

`codex --remote ws://...` (from npm, as `npx -y @openai/codex@0.169.0`) against
`parley app-server --listen ws://127.0.0.1:0` with the scripted model: a
prompt's command is asked in the TUI's approval dialog, `y` runs it; `p` runs
one and adds its rule, so the same command then runs without a dialog; one
cancelled with Esc (the TUI's only "no") never runs and the turn ends
interrupted; `codex resume
--remote ... <id>` shows the thread again. The screen is read with
`tmux capture-pane`. Exits 77 (skipped) when tmux or the Codex package cannot
be had (no npm registry).

Usage: tui_test.py PARLEY_BINARY
"""
import os
import shutil
import signal
import subprocess
import sys
import time

BINARY = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tui_driver import (tui_home, SESSION, Checks, screen,  # noqa: E402
                        start_server as start_parley, start_tui, tmux, type_line, wait_file,
                        thread_ids, wait_screen)


def main():
    home, work, codex_home = tui_home("parley-tui-")
    def start_server(n):
        return start_parley(BINARY, home, work, n)

    server, url = start_server(1)
    check = Checks(home)
    failures = check.failures

    try:
        start_tui(url, work, codex_home)
        check(wait_screen(r"Ask Codex to do anything"), "the TUI starts against parley")
        type_line("run[escalate]: touch approved_by_tui")
        check(wait_screen(r"Would you like to run the following command"), "the approval dialog")
        tmux("send-keys", "-t", SESSION, "y")
        check(wait_file(os.path.join(work, "approved_by_tui")), "y runs the command")
        check(wait_screen(r"Ran touch approved_by_tui"), "the TUI shows the command ran")
        # p: accept, and the rule (acceptWithExecpolicyAmendment) spares the next ask.
        type_line("run[escalate]: touch amended_by_p")
        check(wait_screen(r"touch amended_by_p\s*\n(.*\n)*.*\(p\)"), "the dialog offers p")
        tmux("send-keys", "-t", SESSION, "p")
        amended = os.path.join(work, "amended_by_p")
        check(wait_file(amended), "p runs the command")
        check(wait_screen(r"Ran touch amended_by_p"), "the TUI shows it ran")
        os.remove(amended)
        type_line("run[escalate]: touch amended_by_p")
        check(wait_file(amended), "the same command again runs without asking")
        check(screen().count("Would you like to run") == 0, "and no dialog was shown for it")
        type_line("run[escalate]: touch cancelled_in_tui")
        check(wait_screen(r"touch cancelled_in_tui\s*\n.*\n*.*Yes, proceed|Would you like to run"),
              "asked again")
        time.sleep(0.5)
        tmux("send-keys", "-t", SESSION, "Escape")
        check(wait_screen(r"interrupted"), "Esc cancels and the turn is interrupted")
        time.sleep(1)
        check(not os.path.exists(os.path.join(work, "cancelled_in_tui")), "a cancelled command never runs")
        check("error" not in screen().lower(), "no error banner:\n" + screen())
        ids = thread_ids(url)
        check(len(ids) >= 1, "the TUI's thread is stored")
        if ids:
            start_tui(url, work, codex_home, "resume", ids[0])
            check(wait_screen(r"approved_by_tui"), "codex resume --remote shows the thread")
            # Work in flight survives a restart (issue 19): parley is killed
            # while the TUI shows an approval; started again, the resumed
            # thread asks it again, and the TUI's answer runs it once.
            check(wait_screen(r"Ask Codex to do anything|\u203a"), "the resumed TUI takes input")
            type_line("run[escalate]: touch after_restart")
            check(wait_screen(r"Would you like to run the following command"),
                  "asked before the restart")
            server.kill()
            server.wait(timeout=30)
            server, url = start_server(2)
            check(url is not None, "parley starts again after kill -9")
            start_tui(url, work, codex_home, "resume", ids[0])
            check(wait_screen(r"Would you like to run the following command(.*\n)*.*after_restart",
                              timeout=90),
                  "after parley's restart the resumed TUI is asked the same approval again")
            tmux("send-keys", "-t", SESSION, "y")
            after = os.path.join(work, "after_restart")
            check(wait_file(after), "y runs the command asked before the restart")
            check(wait_screen(r"Ran touch after_restart"), "the TUI shows it ran")
            time.sleep(1)
            with open(after) as f:
                check(f.read() == "", "it ran once")
    finally:
        tmux("kill-session", "-t", SESSION)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            failures.append("the server did not stop on SIGTERM")
        shutil.rmtree(home, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


main()
