#!/usr/bin/env python3
"""The real Codex 0.169.0 TUI answers parley's MCP questions (issue 30), in
tmux, against `parley app-server --listen ws://127.0.0.1:0` with the mock
model and config.toml's MCP servers: mcp_annotated_server.py (which logs
each call it runs and each answer it gets) and, when the npm cache has it,
server-everything.

- the model calls a destructive tool: the TUI shows its MCP approval dialog
  (Allow, for the session, always, Cancel); Allow runs the call once;
- Esc (the dialog's Cancel: it has no "deny") never runs it, the item fails
  "user cancelled MCP tool call" and the model is told so;
- "Always allow": config.toml gains the tool's approval_mode = "approve" and
  its next call runs without a dialog;
- the server's form (a required text field, an enum, a boolean) shows field
  by field; what is typed and chosen reaches the server as the content;
- url mode (server-everything's trigger-url-elicitation): what the TUI
  shows, and that its answer reaches the server.

The screen is read with `tmux capture-pane`. Exits 77 (skipped) when tmux
or the Codex package cannot be had.

Usage: tui_mcp_test.py PARLEY_BINARY MOCK_BINARY NPM_CACHE_DIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

BINARY, MOCK, CACHE = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import app_server_peer  # noqa: E402
import mcp_npm  # noqa: E402
from tui_driver import (tui_home, SESSION, Checks, screen, server_log,  # noqa: E402
                        start_server, start_tui, tmux, type_line, wait_screen)

SERVER = os.path.join(HERE, "mcp_annotated_server.py")


def keys(*k):
    tmux("send-keys", "-t", SESSION, *k)


def runs(log, tool):
    """The calls the annotated server ran of `tool`, as their arguments."""
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [json.loads(line.split(" ", 2)[2]) for line in f.read().splitlines()
                if line.startswith("call %s " % tool)]


def answers(log):
    """What the annotated server's `profile` got back, in order."""
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [json.loads(line.split(" ", 1)[1]) for line in f.read().splitlines()
                if line.startswith("answer ")]


def wait_until(cond, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.2)
    return cond()


def wait_after(prompt, pattern, timeout=60):
    """Waits until what the screen shows below the prompt `prompt` (its
    turn) matches `pattern`; earlier turns may have scrolled away."""
    deadline = time.time() + timeout
    while True:
        s = screen()
        at = s.rfind(prompt)
        if at >= 0 and re.search(pattern, s[at + len(prompt):]):
            return True
        if time.time() > deadline:
            print("--- screen while waiting for %r after %r ---\n%s" % (pattern, prompt, s))
            return False
        time.sleep(0.3)


def said_to_model(mock, text):
    """Whether a function_call_output the model was sent holds `text`."""
    return any(text in str(i.get("output")) for r in mock.requests()
               for i in r["body"].get("input", []) if i.get("type") == "function_call_output")


def ask_dialog(tool):
    return r'Allow the annot MCP server to run tool "%s"\?' % tool


def approve_once(check, log):
    prompt = 'mock: tool mcp__annot/delete_file {"path": "/tmp/once"}'
    type_line(prompt)
    check(wait_after(prompt, ask_dialog("delete_file")), "a destructive tool's call shows the dialog")
    s = screen()
    check(re.search(r"path: /tmp/once", s) and re.search(r"1\. Allow", s)
          and re.search(r"Allow for this session", s) and re.search(r"Always allow", s)
          and re.search(r"Cancel", s),
          "it shows the call's arguments and offers once, the session, always and cancel:\n" + s)
    check(runs(log, "delete_file") == [], "nothing ran while asked")
    keys("Enter")  # the highlighted first choice: Allow
    check(wait_after(prompt, r"Called annot\.delete_file(.*\n)*.*delete_file done"),
          "Allow: the TUI shows the call's result")
    check(wait_after(prompt, r"Worked for"), "the turn ends")
    check(runs(log, "delete_file") == [{"path": "/tmp/once"}], "it ran once at the server")


def cancel(check, log, mock):
    prompt = 'mock: tool mcp__annot/delete_file {"path": "/tmp/never"}'
    type_line(prompt)
    check(wait_after(prompt, ask_dialog("delete_file") + r"(.*\n)*.*path: /tmp/never"),
          "asked again")
    keys("Escape")
    check(wait_after(prompt, r"Failed annot\.delete_file(.*\n)*.*user cancelled MCP tool call"),
          "Esc cancels: the item fails as Codex says")
    check(wait_until(lambda: said_to_model(mock, "user cancelled MCP tool call")),
          "the model is told the user cancelled it")
    check(wait_after(prompt, r"Worked for"), "and the turn goes on to its end")
    check({"path": "/tmp/never"} not in runs(log, "delete_file"), "a cancelled call never runs")


def always(check, home, log, config):
    with open(config) as f:
        before = f.read()
    prompt = 'mock: tool mcp__annot/shred {"n": 1}'
    type_line(prompt)
    check(wait_after(prompt, ask_dialog("shred") + r"(.*\n)*.*Always allow"),
          "shred asks, offering always")
    for _ in range(2):
        keys("Down")
    check(wait_screen(r"\u203a 3\. Always allow"), "always is highlighted")
    keys("Enter")
    check(wait_after(prompt, r"Called annot\.shred(.*\n)*.*Worked for"), "always: the call runs")
    check(wait_until(lambda: open(config).read() != before),
          "config.toml is written")
    with open(config) as f:
        after = f.read()
    check(after == before + '[mcp_servers.annot.tools.shred]\napproval_mode = "approve"\n',
          "config.toml gained the tool's approval_mode = \"approve\", the rest kept:\n" + after)
    asked = server_log(home).count("event=mcp_approval_asked")
    prompt = 'mock: tool mcp__annot/shred {"n": 2}'
    type_line(prompt)
    check(wait_after(prompt, r"Called annot\.shred(.*\n)*.*Worked for"), "the next call runs")
    check(runs(log, "shred") == [{"n": 1}, {"n": 2}], "at the server: %s" % runs(log, "shred"))
    check(server_log(home).count("event=mcp_approval_asked") == asked,
          "unasked: parley asked nobody, the TUI showed no dialog")


def form(check, log):
    prompt = "mock: tool mcp__annot/profile {}"
    type_line(prompt)
    check(wait_after(prompt, r"Field 1/3(.*\n)*.*Who are you\?(.*\n)*.*Colour(.*\n)*.*3\. Blue"),
          "the server's form shows its first field (an enum) with its choices")
    keys("Down")
    check(wait_screen(r"\u203a 2\. Green"), "Green is highlighted")
    keys("Enter")
    check(wait_screen(r"Field 2/3(.*\n)*.*Your name(.*\n)*.*Type your answer"),
          "then the text field")
    tmux("send-keys", "-t", SESSION, "-l", "Ada Lovelace")
    check(wait_screen(r"Ada Lovelace"), "the answer is typed")
    keys("Enter")
    check(wait_screen(r"Field 3/3(.*\n)*.*Send me news(.*\n)*.*1\. True"), "then the boolean")
    keys("Enter")
    check(wait_after(prompt, r"Called annot\.profile(.*\n)*.*asked: accept(.*\n)*.*Worked for"),
          "the call ends accepted, and the turn")
    check(wait_until(lambda: answers(log)),
          "the server got an answer")
    got = answers(log)
    check(got == [{"action": "accept", "content": {"colour": "green", "name": "Ada Lovelace",
                                                   "subscribe": True}}],
          "what was typed and chosen in the TUI reached the server: %s" % got)


def url_mode(check, mock):
    # No browser here: BROWSER=true (the TUI's environment) stands for one
    # that opened the link.
    prompt = ('mock: tool mcp__everything/trigger_url_elicitation '
              '{"url": "https://example.com/login/el-7", "elicitationId": "el-7"}')
    type_line(prompt)
    check(wait_after(prompt, r"Action required(.*\n)*.*Server: everything(.*\n)*"
                     r".*Please open the link(.*\n)*.*https://example\.com/login/el-7"
                     r"(.*\n)*.*1\. Open link"),
          "url mode: the TUI shows the server's message and the URL whole, offering to open it")
    keys("Enter")
    check(wait_after(prompt, r"1\. I finished"), "Open link: it waits for the user to finish")
    keys("Enter")
    check(wait_after(prompt, r"Called everything\.trigger-url-elicitation(.*\n)*.*Worked for"),
          "I finished: the call ends")
    check(wait_until(lambda: said_to_model(mock, "User completed the URL elicitation flow")
                     and said_to_model(mock, "el-7")),
          "the server heard accept for el-7 (its result, as the model was sent it)")


def main():
    home, work, codex_home = tui_home("parley-tui-mcp-")
    log = os.path.join(home, "calls.log")
    config = os.path.join(home, "config.toml")
    everything = mcp_npm.install_everything(CACHE)
    with open(config, "w") as f:
        f.write("# the TUI test's servers\n[mcp_servers.annot]\ncommand = %s\nargs = [%s, %s]\n"
                % (json.dumps(sys.executable), json.dumps(SERVER), json.dumps(log)))
        if everything:
            f.write('[mcp_servers.everything]\ncommand = "node"\nargs = [%s, "stdio"]\n'
                    "startup_timeout_sec = 30\n"
                    "[mcp_servers.everything.tools.trigger-url-elicitation]\n"
                    'approval_mode = "approve"\n' % json.dumps(everything))
    mock = app_server_peer.Mock(MOCK)
    os.environ["MOCK_KEY"] = "sk-test"
    started = time.monotonic()
    server, url = start_server(BINARY, home, work, 1, "--config", config,
                               "-c", "model=mock-model", "-c", "model_provider=mock",
                               "-c", "model_providers.mock.base_url=%s/v1" % mock.url,
                               "-c", "model_providers.mock.env_key=MOCK_KEY")
    check = Checks(home)
    try:
        if check(url is not None, "parley listens"):
            names = ["annot"] + (["everything"] if everything else [])
            check(wait_until(lambda: all("mcp event=connected server=%s " % n in server_log(home)
                                         for n in names)),
                  "the servers are connected: %s" % names)
            start_tui(url, work, codex_home, env="BROWSER=true")
            check(wait_screen(r"Ask Codex to do anything"), "the TUI starts against parley")
            for step in (lambda: approve_once(check, log),
                         lambda: cancel(check, log, mock),
                         lambda: always(check, home, log, config),
                         lambda: form(check, log)):
                step()
            if everything:
                url_mode(check, mock)
            else:
                print("note: no server-everything (npm): url mode not tried")
            check("method not found" not in screen() and "TUI exited" not in screen(),
                  "no error banner, the TUI still runs:\n" + screen())
    finally:
        tmux("kill-session", "-t", "=" + SESSION)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            check.failures.append("the server did not stop on SIGTERM")
        mock.stop()
        if not check.failures:
            shutil.rmtree(home, ignore_errors=True)
        else:
            print("kept", home)
    print("%d failure(s) in %.1f s" % (len(check.failures), time.monotonic() - started))
    sys.exit(1 if check.failures else 0)


main()
