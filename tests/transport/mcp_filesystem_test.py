#!/usr/bin/env python3
"""The reference filesystem server (@modelcontextprotocol/server-filesystem,
npm, pinned in mcp_npm) in a model's turn (issue 30), through the real
`parley app-server` over stdio and the real mock model over loopback HTTP.
The server runs inside parley's sandbox (workspace-write, its cwd the
thread's workspace) and is given three allowed directories: the workspace,
parley's home and a folder outside every writable root, so that what it
cannot do is the sandbox's doing, not its own path checks:

- the model calls list_directory, read_text_file and write_file on the
  workspace (write_file, destructive by its annotations, asked first and
  accepted; the read-only tools unasked): mcpToolCall items start inProgress and complete with the
  results, the file is written, and each function_call_output the model
  gets next is what Codex sends (structuredContent as JSON text when the
  server sent one, else the content array);
- it calls read_text_file on a secret in parley's home and write_file
  outside the roots: both items fail with the tool's isError result (the
  server's own answer: EACCES, EROFS), the secret is nowhere in what the
  client or the model sees, and nothing is written;
- where `parley-sandbox --check` says this host cannot confine, the server
  is cut off saying so (and the turn's part is skipped).
Every line parley prints is checked against the Codex 0.169 schema.

Usage: mcp_filesystem_test.py PARLEY_BINARY MOCK_BINARY SCHEMA_DIR NPM_CACHE_DIR
Exit 77 (skipped) when npm or the registry cannot be had.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import codex_schema  # noqa: E402
import mcp_model_output  # noqa: E402
import mcp_npm  # noqa: E402

PARLEY, MOCK, SCHEMA_DIR, CACHE = sys.argv[1:5]
FAILURES = []
SECRET = "parley's own secret 7f3a"


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def mcp_items(events, phase):
    return [m["params"]["item"] for m in events
            if m.get("method") == phase and m["params"]["item"]["type"] == "mcpToolCall"]


def outputs(request):
    return {i["call_id"]: i["output"] for i in request["body"].get("input", [])
            if i.get("type") == "function_call_output"}


def result_text(item):
    """The text of a completed item's content, joined."""
    content = (item.get("result") or {}).get("content") or []
    return "\n".join(c.get("text", "") for c in content if c.get("type") == "text")


def events_of(p, turn, asked, timeout=60):
    """The turn's events; each approval it asks (an mcpServer/elicitation/
    request with codex_approval_kind mcp_tool_call) is kept in `asked` and
    accepted."""
    events = []
    while True:
        m = p.wait(lambda m: (m.get("params") or {}).get("turnId") == turn
                   or ((m.get("params") or {}).get("turn") or {}).get("id") == turn, timeout)
        if m.get("method") == "mcpServer/elicitation/request" and "id" in m:
            asked.append(m["params"])
            p.write({"id": m["id"], "result": {"action": "accept"}})
            continue
        events.append(m)
        if m.get("method") == "turn/completed":
            return events


def server_status(p, name, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        data = p.call("mcpServerStatus/list", {})["result"]["data"]
        s = {x["name"]: x for x in data}.get(name, {})
        if s.get("runtimeStatus") not in (None, "starting") or time.monotonic() > deadline:
            return s
        time.sleep(0.05)


def test_turn(p, mock, work, home, outside):
    thread = p.start_thread(cwd=work)
    wrote = os.path.join(work, "made-by-the-model.txt")
    secret = os.path.join(home, "secret.txt")
    beyond = os.path.join(outside, "escaped.txt")
    calls = [("list_directory", {"path": work}),
             ("read_text_file", {"path": os.path.join(work, "hello.txt")}),
             ("write_file", {"path": wrote, "content": "written through MCP\n"}),
             ("read_text_file", {"path": secret}),
             ("write_file", {"path": beyond, "content": "should not land\n"})]
    prompt = "\n".join(["mock: tool mcp__filesystem/%s %s" % (tool, json.dumps(args))
                        for tool, args in calls] + ["mock: say files done"])
    asked = []
    events = events_of(p, p.start_turn(thread, prompt), asked)
    reqs = mock.requests()
    offered = {f.get("name") for ns in (reqs[0]["body"].get("tools", []) if reqs else [])
               if ns.get("type") == "namespace" and ns.get("name") == "mcp__filesystem"
               for f in ns.get("tools", [])}
    check({"list_directory", "read_text_file", "write_file"} <= offered,
          "the model is offered the filesystem server's tools in its namespace tool "
          "mcp__filesystem (%d tools)" % len(offered))
    started = mcp_items(events, "item/started")
    done = mcp_items(events, "item/completed")
    check([(i["server"], i["tool"], i["status"], i["arguments"]) for i in started]
          == [("filesystem", tool, "inProgress", args) for tool, args in calls],
          "five mcpToolCall items start inProgress with server, tool and arguments: %s"
          % [(i["tool"], i["status"]) for i in started])
    check([i["status"] for i in done] == ["completed"] * 3 + ["failed"] * 2
          and all(i["error"] is None and i["result"] is not None and isinstance(i["durationMs"], int)
                  for i in done),
          "the three complete, the two the sandbox stops fail with the server's isError result "
          "(as Codex shows them): %s" % [(i["tool"], i["status"], i.get("error")) for i in done])
    check(events[-1]["params"]["turn"]["status"] == "completed", "the turn completes")
    check([(a["serverName"], (a.get("_meta") or {}).get("codex_approval_kind"),
            ((a.get("_meta") or {}).get("tool_params") or {}).get("path")) for a in asked]
          == [("filesystem", "mcp_tool_call", wrote), ("filesystem", "mcp_tool_call", beyond)],
          "the two write_file calls (destructiveHint) are asked first and accepted, the "
          "read-only tools run unasked: %s" % [a.get("message") for a in asked])
    if len(done) != 5:
        return
    listing, hello, write, read_secret, write_out = done
    check("[FILE] hello.txt" in result_text(listing),
          "list_directory lists the workspace: %r" % result_text(listing)[:120])
    check(result_text(hello) == "hello from the workspace\n",
          "read_text_file reads the workspace's file: %r" % result_text(hello)[:120])
    on_disk = open(wrote).read() if os.path.exists(wrote) else None
    check(write["status"] == "completed" and on_disk == "written through MCP\n",
          "write_file writes inside the workspace (%r; on disk %r)" % (result_text(write)[:80], on_disk))
    check(read_secret["status"] == "failed" and "EACCES" in result_text(read_secret)
          and SECRET not in json.dumps(events),
          "parley's home is hidden from the server: read_text_file fails (%r)"
          % result_text(read_secret)[:160])
    check(write_out["status"] == "failed" and "EROFS" in result_text(write_out)
          and not os.path.exists(beyond),
          "and it cannot write outside its writable roots (%r)" % result_text(write_out)[:160])
    outs = outputs(reqs[-1]) if reqs else {}
    check(len(reqs) == 6 and all(i["id"] in outs for i in done),
          "each call's function_call_output goes back under its call id (%d requests)" % len(reqs))
    # As Codex: a wall-time header, then structuredContent as JSON text when
    # the server sent one (read_text_file does), else the content as parts.
    sent = [mcp_model_output.normalised(outs.get(i["id"], "")) for i in done]
    want = [mcp_model_output.expected(i["result"]) for i in done]
    check(sent == want and all(mcp_model_output.has_header(outs.get(i["id"], "")) for i in done),
          "the model gets each result as Codex sends it: %r" % str(outs.get(hello["id"], ""))[:120])
    check(SECRET not in json.dumps(reqs), "the secret never reaches the model")


def main():
    index = mcp_npm.install_filesystem(CACHE)
    if index is None:
        return 77
    launcher = os.path.join(os.path.dirname(os.path.abspath(PARLEY)), "parley-sandbox")
    confines = os.path.exists(launcher) and subprocess.run(
        [launcher, "--check"], capture_output=True, text=True).returncode == 0
    root = tempfile.mkdtemp(prefix="parley-mcp-fs-")
    work, home = os.path.join(root, "work"), os.path.join(root, "home")
    # Outside every writable root of a confined server (its cwd, /tmp): a
    # folder beside the binary under test, which this user may write.
    outside = os.path.join(os.path.dirname(os.path.abspath(PARLEY)), "mcp-fs-outside-%d" % os.getpid())
    for d in (work, home, outside):
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(work, "hello.txt"), "w") as f:
        f.write("hello from the workspace\n")
    with open(os.path.join(home, "secret.txt"), "w") as f:
        f.write(SECRET + "\n")
    with open(os.path.join(root, "config.toml"), "w") as f:
        f.write('[mcp_servers.filesystem]\ncommand = "node"\nargs = %s\ncwd = %s\n'
                'startup_timeout_sec = 30\ntool_timeout_sec = 20\n'
                % (json.dumps([index, work, home, outside]), json.dumps(work)))
    schema = codex_schema.Schema(SCHEMA_DIR, {
        "thread/start": "v2/ThreadStartResponse", "turn/start": "v2/TurnStartResponse",
        "mcpServerStatus/list": "v2/ListMcpServerStatusResponse"})
    mock = app_server_peer.Mock(MOCK)
    env = dict(os.environ, MOCK_KEY="sk-test")
    env.pop("CODEX_HOME", None)
    started = time.monotonic()
    p = None
    try:
        p = app_server_peer.StdioPeer(
            [PARLEY, "app-server", "--home", home, "--cwd", work,
             "--config", os.path.join(root, "config.toml"),
             "-c", "model=mock-model", "-c", "model_provider=mock",
             "-c", "model_providers.mock.base_url=%s/v1" % mock.url,
             "-c", "model_providers.mock.env_key=MOCK_KEY"],
            env, os.path.join(root, "parley.stderr"), client_name="mcp-filesystem-test")
        s = server_status(p, "filesystem")
        if not confines:
            check(s.get("runtimeStatus") == "failed"
                  and "cannot be confined" in (s.get("toolsError") or ""),
                  "this host cannot confine: the server is cut off saying so (%s)" % s.get("toolsError"))
        elif check(s.get("runtimeStatus") == "connected",
                   "the filesystem server connects, confined (%s, %d tools)"
                   % (s.get("runtimeStatus"), len(s.get("tools") or {}))):
            try:
                test_turn(p, mock, work, home, outside)
            except Exception as e:  # a hang fails the test, not the run
                check(False, "raised %s: %s" % (type(e).__name__, e))
        check(p.stop() == 0, "parley exits 0 when stdin closes")
        schema.check(check, p, "mcp_filesystem")
    finally:
        mock.stop()
        shutil.rmtree(outside, ignore_errors=True)
    print("%d failure(s) in %.1f s" % (len(FAILURES), time.monotonic() - started))
    if not FAILURES:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print("kept", root)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
