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
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BINARY = sys.argv[1]
SESSION = "parley-tui-%d" % os.getpid()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_server_peer import CODEX, codex_unavailable  # noqa: E402


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def tmux(*args):
    return subprocess.run(["tmux"] + list(args), capture_output=True, text=True)


def screen():
    return tmux("capture-pane", "-t", SESSION, "-p").stdout


def wait_screen(pattern, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if re.search(pattern, screen()):
            return True
        time.sleep(0.3)
    print("--- screen while waiting for %r ---\n%s" % (pattern, screen()))
    return False


def wait_file(path, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline and not os.path.exists(path):
        time.sleep(0.2)
    return os.path.exists(path)


def composer_holds(text):
    """Whether the TUI's input box (the last prompt line) still holds `text`."""
    lines = screen().splitlines()
    prompts = [i for i, l in enumerate(lines) if l.startswith("\u203a ")]
    if not prompts or not lines[prompts[-1]].rstrip().endswith(text):
        return False
    # Once submitted, the turn's lines (a dialog, its work) follow the prompt.
    after = "\n".join(lines[prompts[-1] + 1:])
    return not re.search(r"Working|Running|Would you like|Ran |Worked|interrupted", after)


def type_line(text):
    """Types a prompt and submits it. Under load the TUI may read fast keys as
    a paste (where Enter is a newline) or take a while to echo: wait for the
    echo and a quiet moment before Enter, and press it again if the text is
    still waiting in the input box."""
    tmux("send-keys", "-t", SESSION, "-l", text)
    deadline = time.time() + 10
    while time.time() < deadline and not composer_holds(text):
        time.sleep(0.1)
    time.sleep(1.0)
    for _ in range(3):
        tmux("send-keys", "-t", SESSION, "Enter")
        time.sleep(1.5)
        if not composer_holds(text):
            return


def start_tui(url, work, codex_home, *extra):
    command = " ".join(CODEX + list(extra) + ["--remote", url])
    tmux("kill-session", "-t", SESSION)
    # The pane stays after the TUI exits (with its last words and exit
    # status), so a failure shows why.
    tmux("new-session", "-d", "-s", SESSION, "-x", "160", "-y", "45", "-c", work,
         "env CODEX_HOME=%s %s; echo \"[the TUI exited: $?]\"; sleep 600" % (codex_home, command))


def thread_ids(url):
    """The stored threads, newest first, through a plain WebSocket client."""
    import asyncio
    import websockets

    async def ask():
        async with websockets.connect(url) as ws:
            await ws.send(json.dumps({"id": 1, "method": "initialize",
                                      "params": {"clientInfo": {"name": "t", "version": "1"}}}))
            await ws.recv()
            await ws.send(json.dumps({"id": 2, "method": "thread/list", "params": {}}))
            while True:
                m = json.loads(await ws.recv())
                if m.get("id") == 2:
                    return [t["id"] for t in m["result"]["data"]]
    return asyncio.run(ask())


def main():
    if shutil.which("tmux") is None:
        skip("tmux is missing")
    why = codex_unavailable()
    if why:
        skip(why)
    home = tempfile.mkdtemp(prefix="parley-tui-")
    work = os.path.join(home, "work")
    codex_home = os.path.join(home, "codex")
    os.makedirs(work)
    os.makedirs(codex_home)
    # A remote TUI cannot name the server's directories: commands run in the
    # server's --cwd.
    def start_server(n):
        log_path = os.path.join(home, "server-%d.log" % n)
        log = open(log_path, "w")  # a pipe nobody drains would stall the server's logging
        proc = subprocess.Popen([BINARY, "app-server", "--home", os.path.join(home, "parley"),
                                 "--cwd", work, "--listen", "ws://127.0.0.1:0"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        found = None
        deadline = time.time() + 30
        while found is None and time.time() < deadline:
            with open(log_path) as f:
                m = re.search(r"listening on (ws://\S+)", f.read())
            found = m.group(1) if m else None
            time.sleep(0.05)
        return proc, found

    server, url = start_server(1)
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL", what, flush=True)
            for name in sorted(os.listdir(home)):
                if name.startswith("server-") and name.endswith(".log"):
                    with open(os.path.join(home, name)) as f:
                        print("--- last lines of %s ---\n%s" % (name, "".join(f.readlines()[-30:])),
                              flush=True)

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
