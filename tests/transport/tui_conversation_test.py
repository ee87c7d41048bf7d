#!/usr/bin/env python3
"""The real Codex 0.169.0 TUI uses what a conversation offers beyond approvals
(issue 29), against `parley app-server --listen ws://127.0.0.1:0` with the
scripted model, in tmux:

- text typed while a turn runs steers it (`turn/steer`): the server logs the
  steer into that turn, and the model's answer to the steered text shows in it;
- `!echo ...` runs the user's own command (`thread/shellCommand`) and the TUI
  shows its output;
- an `@` mention finds a file of the workspace (`fuzzyFileSearch`), and Tab
  puts its path into the prompt;
- `/compact` compacts the thread (`thread/compact/start`);
- the model's question (`item/tool/requestUserInput`, the scripted `ask:`)
  is answered in the TUI: the audit log has it asked and decided once, and the
  turn goes on to its end.

The screen is read with `tmux capture-pane`. Exits 77 (skipped) when tmux or
the Codex package cannot be had (no npm registry).

Usage: tui_conversation_test.py PARLEY_BINARY
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

BINARY = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tui_driver import (tui_home, SESSION, Checks, screen, server_log,  # noqa: E402
                        start_server, start_tui, tmux, type_line, wait_screen)


def steering(check, home):
    # The command runs long enough for the steer to be typed while it does;
    # the steered text joins the turn at the model's next request.
    type_line("run: sleep 12")
    check(wait_screen(r"Running sleep 12|Working"), "the turn runs its command")
    type_line("say: steered_in_tui")
    check(wait_screen(r"\n\s*. steered_in_tui", timeout=90), "the steered text is answered")
    log = server_log(home)
    steers = re.findall(r"event=steer turn=(\S+)", log)
    check(len(steers) == 1, "the server steered the typed text into the running turn:\n"
          + "\n".join(l for l in log.splitlines() if "steer" in l))
    check("steer failed" not in screen() and "method not found" not in screen(),
          "no error banner:\n" + screen())
    check(wait_screen(r"Worked for"), "the turn ends")


def user_shell(check):
    type_line("!echo shell_in_tui_$((6*7))")
    check(wait_screen(r"You ran echo shell_in_tui"), "the TUI shows the user's command")
    check(wait_screen(r"shell_in_tui_42"), "and its output, from the shell")
    check("failed in TUI" not in screen(), "the TUI does not exit:\n" + screen())


def mention(check, work):
    os.makedirs(os.path.join(work, "src"))
    with open(os.path.join(work, "src", "needle_in_tui.txt"), "w") as f:
        f.write("found\n")
    tmux("send-keys", "-t", SESSION, "-l", "say: mentioned @needle_in")
    check(wait_screen(r"needle_in_tui\.txt"), "the @ mention lists the file")
    tmux("send-keys", "-t", SESSION, "Tab")
    check(wait_screen(r"say: mentioned src/needle_in_tui\.txt"), "Tab inserts its path")
    tmux("send-keys", "-t", SESSION, "Enter")
    check(wait_screen(r"\n\s*. mentioned src/needle_in_tui\.txt"), "the model got the path")


def compact(check, home):
    type_line("/compact")
    check(wait_screen(r"Context compacted"), "/compact compacts the thread")
    rollouts = glob.glob(os.path.join(home, "parley", "sessions", "**", "*.jsonl"),
                         recursive=True)
    stored = "".join(open(r).read() for r in rollouts)
    check('"type":"compacted"' in stored, "the compaction is stored in the thread's rollout")


def question(check, home):
    # One Enter only (not type_line, which presses it again while the text
    # still shows): a second one would submit the question's empty answer.
    tmux("send-keys", "-t", SESSION, "-l", "ask: Which colour in the TUI?")
    time.sleep(1.5)
    tmux("send-keys", "-t", SESSION, "Enter")
    check(wait_screen(r"Which colour in the TUI\?(.*\n)*.*Type your answer"),
          "the model's question shows in the TUI")
    tmux("send-keys", "-t", SESSION, "-l", "turquoise")
    time.sleep(1.0)
    tmux("send-keys", "-t", SESSION, "Enter")
    check(wait_screen(r"answer: turquoise"), "the answer is taken")
    check(wait_screen(r"Questions 1/1 answered(.*\n)*.*Worked for"), "and the turn ends")
    with open(os.path.join(home, "parley", "audit.jsonl")) as f:
        audit = [json.loads(line) for line in f]
    asked = [a for a in audit if a.get("type") == "userInput"]
    events = [a.get("event") for a in asked]
    check(events.count("requested") == 1 and events.count("decided") == 1,
          "the question was asked once and decided once: %s" % events)


def main():
    home, work, codex_home = tui_home("parley-tui-conv-")
    server, url = start_server(BINARY, home, work, 1)
    check = Checks(home)
    try:
        if check(url is not None, "parley listens"):
            start_tui(url, work, codex_home)
            check(wait_screen(r"Ask Codex to do anything"), "the TUI starts against parley")
            steering(check, home)
            user_shell(check)
            mention(check, work)
            question(check, home)
            compact(check, home)
    finally:
        tmux("kill-session", "-t", SESSION)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            check.failures.append("the server did not stop on SIGTERM")
        shutil.rmtree(home, ignore_errors=True)
    print("%d failure(s)" % len(check.failures))
    sys.exit(1 if check.failures else 0)


main()
