#!/usr/bin/env python3
"""MCP tools in a model's turns (issue 30), through the real `parley
app-server` over stdio, the real mock model over loopback HTTP, the
reference server `@modelcontextprotocol/server-everything` (npm, cached as
mcp_servers caches it) and the fake server's `counter` and `urlneeded` modes:

- the model is offered each connected server as a namespace tool
  mcp__SERVER holding its tools as functions with their input schemas, as
  Codex 0.169 offers them (the mock calls them so: "namespace" beside the
  function's name);
- a call whose server asks the user (an elicitation) names the turn, the
  thread waits on user input, and the answer reaches the result and the model;
- it calls `echo`, `get-sum` and the progress-reporting
  `trigger-long-running-operation`: mcpToolCall items (inProgress with server,
  tool and arguments; completed with the result), item/mcpToolCall/progress
  under the call's item, and the function_call_output the model gets next
  (Codex's "Wall time" header, then the content as input_text parts);
- a server that dies mid-call: the item fails naming it, the model is told,
  the turn completes;
- turn/interrupt during a call: the item fails, the turn is interrupted, the
  server gets notifications/cancelled, and its late answer is dropped (logged);
- a server's JSON-RPC error (the fake's `urlneeded`: -32042 URL
  elicitation required, and -32000): mcpServer/tool/call answers it as the
  server gave it, data included; a model's call fails its item and the model
  is told the code, message and data, as Codex 0.169 tells them;
- parley killed (kill -9) during a call and started again: the call is not
  made a second time (the fake server counts), its item fails as cut short,
  the model is told so and the turn completes.
Every line parley prints is checked against the Codex 0.169 schema.

Usage: mcp_turns_test.py PARLEY_BINARY MOCK_BINARY SCHEMA_DIR NPM_CACHE_DIR
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
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "mcp_fake_server.py")
FAILURES = []
ALL_LINES = []


def install_everything():
    return mcp_npm.install_everything(CACHE)


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def text(*lines):
    return "\n".join(lines)


class Parley(app_server_peer.StdioPeer):
    def __init__(self, root, mock):
        home = os.path.join(root, "home")
        os.makedirs(home, exist_ok=True)
        env = dict(os.environ)
        env.pop("CODEX_HOME", None)
        env["MOCK_KEY"] = "sk-test"
        self.stderr_file = os.path.join(root, "parley-%d.stderr" % len(ALL_LINES))
        super().__init__([PARLEY, "app-server", "--home", home, "--cwd", root,
                          "--config", os.path.join(root, "config.toml"),
                          "-c", "model=mock-model", "-c", "model_provider=mock",
                          "-c", "model_providers.mock.base_url=%s/v1" % mock.url,
                          "-c", "model_providers.mock.env_key=MOCK_KEY"],
                         env, self.stderr_file, client_name="mcp-turns-test")
        ALL_LINES.append((self.lines, self.methods))

    def wait_connected(self, names, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            r = self.call("mcpServerStatus/list", {})
            up = {s["name"] for s in r["result"]["data"] if s["runtimeStatus"] == "connected"}
            if set(names) <= up or time.monotonic() > deadline:
                return up
            time.sleep(0.05)

    def events_of(self, turn, timeout=20):
        """Every event of `turn` up to its turn/completed."""
        events = []
        while True:
            m = self.wait(lambda m: (m.get("params") or {}).get("turnId") == turn
                          or ((m.get("params") or {}).get("turn") or {}).get("id") == turn, timeout)
            events.append(m)
            if m.get("method") == "turn/completed":
                return events


def mcp_items(events, phase):
    return [m["params"]["item"] for m in events
            if m.get("method") == phase and m["params"]["item"]["type"] == "mcpToolCall"]


def outputs(request):
    return {i["call_id"]: i["output"] for i in request["body"].get("input", [])
            if i.get("type") == "function_call_output"}


def calls_logged(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split() for line in f.read().splitlines()]


def test_tools_and_calls(p, mock, thread):
    events = p.events_of(p.start_turn(thread, text(
        'mock: tool mcp__everything/echo {"message": "hello mcp"}',
        'mock: tool mcp__everything/get_sum {"a": 2, "b": 3}',
        'mock: tool mcp__everything/trigger_long_running_operation {"duration": 0.6, "steps": 3}',
        "mock: say all three done")))
    reqs = mock.requests()
    tools = {t.get("name"): t for t in reqs[0]["body"].get("tools", [])} if reqs else {}
    everything = tools.get("mcp__everything", {})
    inner = {t.get("name"): t for t in everything.get("tools", [])}
    echo = inner.get("echo", {})
    check(everything.get("type") == "namespace" and echo.get("type") == "function"
          and echo.get("parameters", {}).get("properties", {}).get("message", {}).get("type") == "string"
          and {"get_sum", "trigger_long_running_operation"} <= set(inner)
          and tools.get("mcp__counter", {}).get("type") == "namespace"
          and {t.get("name") for t in tools["mcp__counter"].get("tools", [])} >= {"slow", "crash"}
          and not any(n.startswith("mcp__everything__") for n in tools) and "exec_command" in tools,
          "the model is offered each server as a namespace tool of its tools with their schemas, "
          "beside its own (%s)" % sorted(tools))
    started = mcp_items(events, "item/started")
    done = mcp_items(events, "item/completed")
    check([(i["server"], i["tool"], i["status"]) for i in started]
          == [("everything", "echo", "inProgress"), ("everything", "get-sum", "inProgress"),
              ("everything", "trigger-long-running-operation", "inProgress")]
          and started[0]["arguments"] == {"message": "hello mcp"},
          "three mcpToolCall items start inProgress with server, tool and arguments: %s"
          % [(i["tool"], i["arguments"]) for i in started])
    check(len(done) == 3 and all(i["status"] == "completed" and i["error"] is None for i in done)
          and "hello mcp" in json.dumps(done[0]["result"]["content"])
          and "5" in json.dumps(done[1]["result"]) and isinstance(done[0]["durationMs"], int),
          "and complete with their results: %s" % [(i["tool"], i["status"], i.get("result"))
                                                  for i in done][:2])
    progress = [m["params"] for m in events if m.get("method") == "item/mcpToolCall/progress"]
    check(len(progress) >= 2 and len(done) == 3
          and {p_["itemId"] for p_ in progress} == {done[2]["id"]}
          and progress[-1]["message"] == "3/3",
          "the long-running tool's progress arrives as item/mcpToolCall/progress: %s"
          % [p_["message"] for p_ in progress])
    check(events[-1]["params"]["turn"]["status"] == "completed", "the turn completes")
    outs = outputs(reqs[-1]) if reqs else {}
    if len(done) == 3:
        check(len(reqs) == 4 and all(i["id"] in outs for i in done),
              "each call's function_call_output goes back under its call id (%d requests)" % len(reqs))
        echoed = outs.get(done[0]["id"])
        check(mcp_model_output.has_header(echoed)
              and mcp_model_output.normalised(echoed) == mcp_model_output.expected(done[0]["result"])
              and echoed[1] == {"type": "input_text", "text": "Echo: hello mcp"},
              "the model gets Codex's wall-time header, then the content as input_text parts: %r"
              % echoed)
        check(all(mcp_model_output.normalised(outs.get(i["id"])) == mcp_model_output.expected(i["result"])
                  for i in done) and "5" in mcp_model_output.text_of(outs.get(done[1]["id"])),
              "and so for get-sum's answer and the long operation's: %r" % outs.get(done[1]["id"]))
        check([i.get("readOnlyHint") for i in done] == [True, True, True]
              and all(i.get(k, "absent") is None for i in started + done
                      for k in ("pluginId", "appContext", "mcpAppUi"))
              and all(i["result"]["structuredContent"] is None and "_meta" in i["result"] for i in done),
              "the items carry the tool's readOnlyHint and null pluginId, appContext, mcpAppUi, "
              "structuredContent and _meta, as Codex's do: %s"
              % {k: done[0].get(k, "absent") for k in ("readOnlyHint", "pluginId", "appContext")})


def test_server_dies_mid_call(p, mock, thread):
    before = len(mock.requests())
    events = p.events_of(p.start_turn(thread, text("mock: tool mcp__counter/crash",
                                                   "mock: say the server died")))
    done = mcp_items(events, "item/completed")
    check(len(done) == 1 and done[0]["status"] == "failed" and done[0]["result"] is None
          and "counter" in (done[0]["error"] or {}).get("message", ""),
          "a server that dies mid-call fails the item, naming it: %s" % done)
    check(events[-1]["params"]["turn"]["status"] == "completed", "the turn goes on and completes")
    reqs = mock.requests()[before:]
    out = mcp_model_output.text_of(outputs(reqs[-1]).get(done[0]["id"], "")) if reqs and done else ""
    check("counter" in out and "isError" not in out and out.startswith("Wall time: "),
          "the model is told why: %r" % out[:200])


def test_interrupt_mid_call(p, mock, thread, log):
    p.wait_connected(["counter"])  # back after the crash
    turn = p.start_turn(thread, text("mock: tool mcp__counter/slow", "mock: say never"))
    p.wait(lambda m: m.get("method") == "item/started"
           and m["params"]["item"]["type"] == "mcpToolCall" and m["params"]["turnId"] == turn)
    deadline = time.monotonic() + 5
    while not any(c[:2] == ["call", "slow"] for c in calls_logged(log)) and time.monotonic() < deadline:
        time.sleep(0.02)
    r = p.call("turn/interrupt", {"threadId": thread, "turnId": turn})
    check("result" in r, "turn/interrupt is accepted: %s" % r)
    events = p.events_of(turn)
    done = mcp_items(events, "item/completed")
    check(len(done) == 1 and done[0]["status"] == "failed",
          "the call in flight fails with the interrupt: %s" % done)
    check(events[-1]["params"]["turn"]["status"] == "interrupted", "the turn is interrupted")
    deadline = time.monotonic() + 5
    while not any(c[0] == "cancelled" for c in calls_logged(log)) and time.monotonic() < deadline:
        time.sleep(0.02)
    calls = [c for c in calls_logged(log) if c[:2] == ["call", "slow"]]
    cancels = [c for c in calls_logged(log) if c[0] == "cancelled"]
    check(calls and cancels and cancels[-1][1] == calls[-1][2],
          "the server is sent notifications/cancelled for that request: %s" % calls_logged(log))
    deadline = time.monotonic() + 5
    while "its call was cancelled; dropped" not in p.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    check("its call was cancelled; dropped" in p.log_text(),
          "the server's late answer to it is logged and dropped")


def test_elicitation_in_a_turn(p, mock, thread):
    """A model's call whose server asks the user (server-everything's
    trigger-elicitation-request): the question names the turn, the thread
    waits on user input, the answer reaches the tool's result and the model."""
    before = len(mock.requests())
    turn = p.start_turn(thread, text("mock: tool mcp__everything/trigger_elicitation_request {}",
                                     "mock: say answered"))
    ask = p.wait(lambda m: m.get("method") == "mcpServer/elicitation/request" and "id" in m)
    a = ask["params"]
    check(a["threadId"] == thread and a["turnId"] == turn and a["serverName"] == "everything",
          "the server's question during a model's call names the thread and the turn (%s)"
          % {k: a.get(k) for k in ("threadId", "turnId", "serverName", "mode")})
    waiting = [m for m in p.kept if m.get("method") == "thread/status/changed"
               and m["params"]["status"].get("activeFlags")]
    p.write({"id": ask["id"], "result": {"action": "accept",
                                         "content": {"name": "Grace Hopper", "check": True}}})
    events = p.events_of(turn)
    done = mcp_items(events, "item/completed")
    said = json.dumps(done[0]["result"]) if done and done[0].get("result") else ""
    check(len(done) == 1 and done[0]["status"] == "completed" and "Grace Hopper" in said,
          "the answer reaches the tool's result (%s)" % said[:120])
    sent = outputs(mock.requests()[before:][-1]) if mock.requests()[before:] else {}
    check(done and "Grace Hopper" in mcp_model_output.text_of(sent.get(done[0]["id"], "")),
          "and the model's function_call_output")
    check(any("waitingOnUserInput" in json.dumps(m["params"]) for m in waiting)
          or any(m.get("method") == "thread/status/changed" and "waitingOnUserInput"
                 in json.dumps(m["params"]) for m in events + p.kept),
          "the thread shows it waits on user input")


URL_NEEDED = {"elicitations": [{"mode": "url", "elicitationId": "sign-in-1",
                                "url": "https://example.com/sign-in?state=1",
                                "message": "Sign in to the example service"}]}


def test_server_errors_pass_through(p, mock, thread):
    """A server's JSON-RPC error to tools/call (mcp_fake_server.py
    urlneeded): a client's mcpServer/tool/call gets it as the server gave it
    (-32042 URL elicitation required with its data, -32000 without), as
    Codex 0.169 passes it; a model's call fails its item, and the item and
    the model are told the code, the message and the data, in Codex's words."""
    r = p.call("mcpServer/tool/call", {"server": "urlneeded", "threadId": thread,
                                       "tool": "sign_in", "arguments": {}})
    check(r.get("error") == {"code": -32042, "message": "This request requires more information.",
                             "data": URL_NEEDED} and "result" not in r,
          "mcpServer/tool/call: the server's -32042 and its elicitations pass through: %s"
          % r.get("error"))
    r = p.call("mcpServer/tool/call", {"server": "urlneeded", "threadId": thread,
                                       "tool": "broken", "arguments": {}})
    check(r.get("error") == {"code": -32000, "message": "it broke"},
          "and any other error of the server's as it gave it, no data added: %s" % r.get("error"))
    before = len(mock.requests())
    events = p.events_of(p.start_turn(thread, text("mock: tool mcp__urlneeded/sign_in {}",
                                                   "mock: tool mcp__urlneeded/broken {}",
                                                   "mock: say told")))
    done = mcp_items(events, "item/completed")
    said = ('tool call error: tool call failed for `urlneeded/sign_in`\n\nCaused by:\n'
            '    Mcp error: -32042: This request requires more information.(%s)'
            % json.dumps(URL_NEEDED, separators=(",", ":")))
    broke = ('tool call error: tool call failed for `urlneeded/broken`\n\nCaused by:\n'
             '    Mcp error: -32000: it broke')
    check([(i["tool"], i["status"], i["result"], (i["error"] or {}).get("message")) for i in done]
          == [("sign_in", "failed", None, said), ("broken", "failed", None, broke)],
          "a model's call: the item fails with the code, the message and the data (the URL "
          "to open, in the server's key order): %s" % [i.get("error") for i in done])
    sent = outputs(mock.requests()[before:][-1]) if mock.requests()[before:] else {}
    check(len(done) == 2 and [mcp_model_output.normalised(sent.get(i["id"])) for i in done]
          == [[{"type": "input_text", "text": mcp_model_output.WALL_TIME},
               {"type": "input_text", "text": t}] for t in (said, broke)],
          "and the model is told the same after the wall-time header: %r"
          % [sent.get(i["id"]) for i in done])
    check(events[-1]["params"]["turn"]["status"] == "completed", "the turn goes on and completes")


def test_kill_9_mid_call(root, mock, log):
    p = Parley(root, mock)
    p.wait_connected(["counter"])
    thread = p.start_thread()
    turn = p.start_turn(thread, text("mock: tool mcp__counter/slow", "mock: say after the restart"))
    item = p.wait(lambda m: m.get("method") == "item/started"
                  and m["params"]["item"]["type"] == "mcpToolCall")["params"]["item"]
    deadline = time.monotonic() + 5
    while len([c for c in calls_logged(log) if c[:2] == ["call", "slow"]]) < 2 \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    p.proc.kill()
    p.proc.wait(timeout=30)
    p.stderr.close()
    before = len(mock.requests())
    p = Parley(root, mock)
    r = p.call("thread/resume", {"threadId": thread})
    check("result" in r, "thread/resume after kill -9: %s" % str(r)[:200])
    deadline = time.monotonic() + 15
    status, items = None, []
    while time.monotonic() < deadline:
        t = p.call("thread/read", {"threadId": thread, "includeTurns": True})["result"]["thread"]
        turns = [x for x in t["turns"] if x["id"] == turn]
        status = turns[0]["status"] if turns else None
        items = [i for i in (turns[0]["items"] if turns else []) if i["type"] == "mcpToolCall"]
        if status == "completed":
            break
        time.sleep(0.1)
    check(status == "completed", "the turn goes on after the restart and completes (%s)" % status)
    check(len(items) == 1 and items[0]["id"] == item["id"] and items[0]["status"] == "failed"
          and "not called again" in (items[0]["error"] or {}).get("message", ""),
          "the call's item fails as cut short: %s" % items)
    time.sleep(2.5)  # long enough for a second call to have come and been answered
    calls = [c for c in calls_logged(log) if c[:2] == ["call", "slow"]]
    check(len(calls) == 2, "the call was made once, not again after the restart "
          "(slow calls in this run: %d, one of them the interrupt test's)" % len(calls))
    sent = mock.requests()[before:]
    out = mcp_model_output.text_of(outputs(sent[-1]).get(item["id"], "")) if sent else ""
    check("not called again" in out, "the model is told it was cut short: %r" % out[:200])
    check(p.stop() == 0, "parley exits 0 when stdin closes")


def validate_schema():
    schema = codex_schema.Schema(SCHEMA_DIR, {
        "thread/start": "v2/ThreadStartResponse",
        "turn/start": "v2/TurnStartResponse",
        "turn/interrupt": "v2/TurnInterruptResponse",
        "thread/resume": "v2/ThreadResumeResponse",
        "thread/read": "v2/ThreadReadResponse",
        "mcpServerStatus/list": "v2/ListMcpServerStatusResponse"})
    for i, (lines, ids) in enumerate(ALL_LINES):
        schema.check(check, None, "parley run %d" % i, lines=lines, methods=ids)
    seen = {json.loads(raw).get("method") for lines, _ in ALL_LINES for raw in lines}
    check("item/mcpToolCall/progress" in seen, "progress notifications were among the lines checked")


def main():
    index = install_everything()
    if index is None:
        return 77
    root = tempfile.mkdtemp(prefix="parley-mcp-turns-")
    log = os.path.join(root, "counter.log")
    with open(os.path.join(root, "config.toml"), "w") as f:
        f.write('[mcp_servers.everything]\ncommand = "node"\nargs = [%s, "stdio"]\n'
                'startup_timeout_sec = 20\ntool_timeout_sec = 15\n\n'
                '[mcp_servers.counter]\ncommand = %s\nargs = [%s, "counter", %s]\n'
                'tool_timeout_sec = 10\n'
                # Its tools have no annotations, so each call would ask first
                # (mcp_approvals tests that); this suite is about the calls.
                '[mcp_servers.counter.tools.slow]\napproval_mode = "approve"\n'
                '[mcp_servers.counter.tools.crash]\napproval_mode = "approve"\n'
                '[mcp_servers.urlneeded]\ncommand = %s\nargs = [%s, "urlneeded"]\n'
                % (json.dumps(index), json.dumps(sys.executable), json.dumps(FAKE), json.dumps(log),
                   json.dumps(sys.executable), json.dumps(FAKE)))
    mock = app_server_peer.Mock(MOCK)
    started = time.monotonic()
    try:
        p = Parley(root, mock)
        up = p.wait_connected(["everything", "counter", "urlneeded"])
        check(up >= {"everything", "counter", "urlneeded"}, "the servers connect (%s)" % sorted(up))
        thread = p.start_thread()
        for test in (lambda: test_tools_and_calls(p, mock, thread),
                     lambda: test_server_dies_mid_call(p, mock, thread),
                     lambda: test_interrupt_mid_call(p, mock, thread, log),
                     lambda: test_elicitation_in_a_turn(p, mock, thread),
                     lambda: test_server_errors_pass_through(p, mock, thread)):
            try:
                test()
            except Exception as e:  # a hang is a failure of this test, not of the run
                check(False, "raised %s: %s" % (type(e).__name__, e))
        check(p.stop() == 0, "parley exits 0 when stdin closes")
        try:
            test_kill_9_mid_call(root, mock, log)
        except Exception as e:
            check(False, "kill -9: raised %s: %s" % (type(e).__name__, e))
        validate_schema()
    finally:
        mock.stop()
    print("%d failure(s) in %.1f s" % (len(FAILURES), time.monotonic() - started))
    if not FAILURES:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print("kept", root)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
