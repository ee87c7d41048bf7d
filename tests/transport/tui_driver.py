"""Drives the real Codex 0.169.0 TUI in tmux against a parley listener: the
pieces the TUI tests share (the pane, typing, waiting on the screen, a parley
server on ws://127.0.0.1:0 and its log).
"""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_server_peer import CODEX, codex_unavailable  # noqa: E402,F401

SESSION = "parley-tui-%d" % os.getpid()
KEEPER = SESSION + "-keeper"


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def require_tui():
    """Skips the test (exit 77) where tmux or the Codex package cannot be had."""
    if shutil.which("tmux") is None:
        skip("tmux is missing")
    why = codex_unavailable()
    if why:
        skip(why)


def tui_home(prefix):
    """After require_tui: a new HOME with HOME/work (the server's --cwd) and
    HOME/codex (the TUI's CODEX_HOME). Returns the three paths."""
    require_tui()
    home = tempfile.mkdtemp(prefix=prefix)
    work = os.path.join(home, "work")
    codex_home = os.path.join(home, "codex")
    os.makedirs(work)
    os.makedirs(codex_home)
    return home, work, codex_home


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
    # An MCP call shows "Calling ..." and its dialogs (a form's "Field 1/3",
    # an approval's "esc to cancel") none of the words above: an Enter typed
    # into one picks its first choice, accepting what nobody read.
    after = "\n".join(lines[prompts[-1] + 1:])
    return not re.search(r"Working|Running|Would you like|Ran |Worked|interrupted"
                         r"|Calling |Called |Field \d+/|esc to cancel|needs your approval", after)


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


def keep_tmux_server():
    """Starts a session that outlives every TUI of this test: tmux's server
    exits with its last session, and a `new-session` that reaches a server
    on its way out fails ("server exited unexpectedly": 1 in 10 restarts
    here, a TUI that never appeared in CI)."""
    for _ in range(3):
        if tmux("has-session", "-t", "=" + KEEPER).returncode == 0:
            return
        if tmux("new-session", "-d", "-s", KEEPER, "sleep 3600").returncode == 0:
            atexit.register(tmux, "kill-session", "-t", "=" + KEEPER)
            return
        time.sleep(0.5)  # another test's server on its way out


def start_tui(url, work, codex_home, *extra, env=""):
    """`env`: more NAME=VALUE words for the TUI's environment."""
    command = " ".join(CODEX + list(extra) + ["--remote", url])
    keep_tmux_server()
    # "=": the exact name. tmux takes a bare name that matches no session as
    # the prefix of one, so killing a SESSION not started yet killed the
    # keeper (SESSION-keeper), and the server with it.
    tmux("kill-session", "-t", "=" + SESSION)
    # The pane stays after the TUI exits (with its last words and exit
    # status), so a failure shows why.
    for attempt in range(3):
        started = tmux("new-session", "-d", "-s", SESSION, "-x", "160", "-y", "45", "-c", work,
                       "env CODEX_HOME=%s %s %s; echo \"[the TUI exited: $?]\"; sleep 600"
                       % (codex_home, env, command))
        if started.returncode == 0 and tmux("has-session", "-t", "=" + SESSION).returncode == 0:
            return
        print("tmux new-session failed (attempt %d): %s" % (attempt + 1, started.stderr.strip()),
              flush=True)
        time.sleep(0.5)


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



def start_server(binary, home, work, n, *extra):
    """parley on ws://127.0.0.1:0 with its store in HOME/parley and its log in
    HOME/server-N.log (a file: a pipe nobody drains would stall its logging).
    A remote TUI cannot name the server's directories: commands run in the
    server's --cwd. Returns the process and its URL (None if it never listened)."""
    log_path = os.path.join(home, "server-%d.log" % n)
    log = open(log_path, "w")
    proc = subprocess.Popen([binary, "app-server", "--home", os.path.join(home, "parley"),
                             "--cwd", work, "--listen", "ws://127.0.0.1:0"] + list(extra),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    found = None
    deadline = time.time() + 30
    while found is None and time.time() < deadline:
        with open(log_path) as f:
            m = re.search(r"listening on (ws://\S+)", f.read())
        found = m.group(1) if m else None
        time.sleep(0.05)
    return proc, found


class Checks:
    """Collects failures; each one prints the servers' last log lines."""

    def __init__(self, home):
        self.home = home
        self.failures = []

    def __call__(self, cond, what):
        if cond:
            return True
        self.failures.append(what)
        print("FAIL", what, flush=True)
        for name in sorted(os.listdir(self.home)):
            if name.startswith("server-") and name.endswith(".log"):
                with open(os.path.join(self.home, name)) as f:
                    print("--- last lines of %s ---\n%s" % (name, "".join(f.readlines()[-30:])),
                          flush=True)
        return False


def server_log(home, n=1):
    with open(os.path.join(home, "server-%d.log" % n)) as f:
        return f.read()
