#!/usr/bin/env python3
"""Approvals of a model's MCP tool calls (issue 30), through the real
`parley app-server` (stdio and a WebSocket client on the same thread), the
real mock model over loopback HTTP and a stdio MCP server whose tools carry
annotations (mcp_annotated_server.py, which logs every call it runs):

- a tool without annotations (`auto`) asks first (fails closed, as Codex
  0.169 asks); a destructive one in `approve` mode runs unasked;
- approval `never` with a workspace-write sandbox: the unannotated and the
  destructive tool are refused unasked, the item fails and the model is told
  "MCP tool call requires approval, but approval policy is never"; with
  danger-full-access both run unasked;
- a destructive tool asks first: mcpServer/elicitation/request with
  `_meta.codex_approval_kind = "mcp_tool_call"`, `persist: ["session",
  "always"]`, the tool's name and annotations and the call's params, after
  the item started; accepted on stdio it runs once, the WebSocket client's
  prompt is resolved;
- raced: the WebSocket client declines first, the stdio accept after it is
  refused: the call does not run, the item fails "user rejected MCP tool
  call" and the model is told so;
- nobody answers: --approval-timeout declines (fail closed), nothing runs;
- a client that disconnects is no answer: the one left decides;
- `prompt` mode asks even for a read-only tool and offers no session scope;
- accepted for the session: the next call of the tool runs unasked, under
  `never` too;
- accepted "always": config.toml gets `[mcp_servers.annot.tools.shred]
  approval_mode = "approve"` (appended, the file's comments kept), and the
  tool runs unasked in the same turn, in a new thread and after a restart;
- turn/interrupt while asked: nothing runs, the turn is interrupted;
- a granular policy with mcp_elicitations false: a tool call that needs
  approval is still asked, the server's own elicitation is declined without
  asking anyone (logged);
- kill -9 while asked, started again: asked again on thread/resume,
  accepted, run exactly once.
Every line parley prints is checked against the Codex 0.169 schema.

Usage: mcp_approvals_test.py PARLEY_BINARY MOCK_BINARY SCHEMA_DIR
"""
import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import codex_schema  # noqa: E402
import mcp_model_output  # noqa: E402
import client_requests_test as creq  # noqa: E402  (its WebSocket client)

PARLEY, MOCK, SCHEMA_DIR = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "mcp_annotated_server.py")
ASK = "mcpServer/elicitation/request"
REJECTED = "user rejected MCP tool call"
REFUSED = "MCP tool call requires approval, but approval policy is never"
FAILURES = []
ALL_LINES = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def text(*lines):
    return "\n".join(lines)


def is_ask(m):
    return m.get("method") == ASK and "id" in m


def resolved_for(rid):
    return lambda m: m.get("method") == "serverRequest/resolved" and m["params"]["requestId"] == rid


class Parley(app_server_peer.StdioPeer):
    def __init__(self, root, mock):
        env = dict(os.environ)
        env.pop("CODEX_HOME", None)
        env["MOCK_KEY"] = "sk-test"
        super().__init__([PARLEY, "app-server", "--home", os.path.join(root, "home"),
                          "--cwd", root, "--config", os.path.join(root, "config.toml"),
                          "--approval-timeout", "2s",
                          "--listen", "stdio://", "--listen", "ws://127.0.0.1:0",
                          "-c", "model=mock-model", "-c", "model_provider=mock",
                          "-c", "model_providers.mock.base_url=%s/v1" % mock.url,
                          "-c", "model_providers.mock.env_key=MOCK_KEY"],
                         env, os.path.join(root, "parley-%d.stderr" % len(ALL_LINES)),
                         client_name="mcp-approvals-test")
        ALL_LINES.append(self)
        deadline = time.monotonic() + 20
        while True:
            r = self.call("mcpServerStatus/list", {})
            up = {s["name"] for s in r["result"]["data"] if s["runtimeStatus"] == "connected"}
            if "annot" in up or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        found = re.findall(r"listening on (ws://\S+)", self.log_text())
        self.ws_url = found[0] if found else None

    def events_of(self, turn, timeout=20):
        events = []
        while True:
            m = self.wait(lambda m: (m.get("params") or {}).get("turnId") == turn
                          or ((m.get("params") or {}).get("turn") or {}).get("id") == turn, timeout)
            events.append(m)
            if m.get("method") == "turn/completed":
                return events


def mcp_done(events):
    return [m["params"]["item"] for m in events if m.get("method") == "item/completed"
            and m["params"]["item"]["type"] == "mcpToolCall"]


def runs(log, tool):
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [json.loads(line.split(" ", 2)[2]) for line in f.read().splitlines()
                if line.split(" ")[1] == tool]


def raw_output(mock, before, call_id):
    for r in reversed(mock.requests()[before:]):
        for i in r["body"].get("input", []):
            if i.get("type") == "function_call_output" and i.get("call_id") == call_id:
                return i["output"]
    return ""


def last_output(mock, before, call_id):
    return mcp_model_output.text_of(raw_output(mock, before, call_id))


def test_unannotated(p, ws, mock, thread, log):
    """A tool with no annotations may change the world: asked (fails
    closed), as Codex 0.169 asks; a destructive one in `approve` mode runs
    unasked."""
    turn = p.start_turn(thread, text(
        "mock: tool mcp__annot__plain {}", 'mock: tool mcp__annot__wipe {"all": true}',
        "mock: say both ran"))
    a = p.wait(is_ask)
    w = ws.wait(is_ask)
    meta = a["params"].get("_meta") or {}
    check(meta.get("tool_name") == "plain" and "tool_annotations" not in meta
          and meta.get("persist") == ["session", "always"] and runs(log, "plain") == [],
          "a tool without annotations (auto) asks first, offering the session and always, "
          "nothing ran yet (%s)" % meta)
    p.write({"id": a["id"], "result": {"action": "accept"}})
    ws.wait(resolved_for(w["id"]))
    events = p.events_of(turn)
    done = mcp_done(events)
    check([(i["tool"], i["status"]) for i in done] == [("plain", "completed"), ("wipe", "completed")]
          and [m["params"]["_meta"]["tool_name"] for m in events + p.kept if is_ask(m)] == [],
          "accepted, it runs; the destructive tool in `approve` mode runs unasked: %s"
          % [(i["tool"], i["status"]) for i in done])
    check(len(runs(log, "plain")) == 1 and runs(log, "wipe") == [{"all": True}],
          "both ran once at the server")


def test_never(p, mock, log):
    """Under `never` (not full access) a call that needs approval is refused
    unasked, with Codex's sentence; one that needs none runs."""
    thread = p.start_thread(approvalPolicy="never", sandbox="workspace-write")
    before = len(mock.requests())
    n = len(runs(log, "plain"))
    events = p.events_of(p.start_turn(thread, text(
        "mock: tool mcp__annot__plain {}", 'mock: tool mcp__annot__delete_file {"path": "/tmp/n"}',
        'mock: tool mcp__annot__wipe {"all": false}', "mock: say refused")))
    done = mcp_done(events)
    check([(i["tool"], i["status"], (i["error"] or {}).get("message")) for i in done]
          == [("plain", "failed", REFUSED), ("delete_file", "failed", REFUSED),
              ("wipe", "completed", None)]
          and all(i["result"] is None for i in done[:2]),
          "approval `never`: the unannotated and the destructive tool fail as Codex says, "
          "the one in `approve` mode runs: %s" % [(i["tool"], i["status"], i["error"]) for i in done])
    check(not [m for m in events + p.kept if is_ask(m) and m["params"]["threadId"] == thread]
          and len(runs(log, "plain")) == n and {"path": "/tmp/n"} not in runs(log, "delete_file")
          and runs(log, "wipe")[-1] == {"all": False},
          "nobody was asked, and neither refused call reached the server")
    out = mcp_model_output.normalised(raw_output(mock, before, done[0]["id"])) if done else ""
    check(out == [{"type": "input_text", "text": mcp_model_output.WALL_TIME},
                  {"type": "input_text", "text": REFUSED}],
          "the model is told Codex's sentence after the wall-time header, as Codex tells it: %r"
          % out)
    check(events[-1]["params"]["turn"]["status"] == "completed", "the turn goes on and completes")


def test_full_access(p, log):
    """Approval `never` with danger-full-access: nothing asks, all runs."""
    thread = p.start_thread(approvalPolicy="never", sandbox="danger-full-access")
    n = len(runs(log, "plain"))
    events = p.events_of(p.start_turn(thread, text(
        "mock: tool mcp__annot__plain {}", 'mock: tool mcp__annot__delete_file {"path": "/tmp/fa"}',
        "mock: say ran")))
    check([(i["tool"], i["status"]) for i in mcp_done(events)]
          == [("plain", "completed"), ("delete_file", "completed")]
          and not [m for m in events + p.kept if is_ask(m) and m["params"]["threadId"] == thread]
          and len(runs(log, "plain")) == n + 1 and runs(log, "delete_file")[-1] == {"path": "/tmp/fa"},
          "full access: the unannotated and the destructive tool run unasked")


def test_accepted(p, ws, mock, thread, log):
    turn = p.start_turn(thread, text('mock: tool mcp__annot__delete_file {"path": "/tmp/a"}',
                                     "mock: say deleted"))
    started = p.wait(lambda m: m.get("method") == "item/started"
                     and m["params"]["item"]["type"] == "mcpToolCall")
    a = p.wait(is_ask)
    w = ws.wait(is_ask)
    prm = a["params"]
    meta = prm.get("_meta") or {}
    check(prm["threadId"] == thread and prm["turnId"] == turn and prm["serverName"] == "annot"
          and prm["mode"] == "form" and prm["requestedSchema"] == {"type": "object", "properties": {}}
          and prm["message"] == 'Allow the annot MCP server to run tool "delete_file"?'
          and w["params"] == prm,
          "a destructive tool asks both clients first, as a form elicitation (%s)" % prm["message"])
    check(meta.get("codex_approval_kind") == "mcp_tool_call"
          and meta.get("persist") == ["session", "always"]
          and meta.get("tool_name") == "delete_file"
          and meta.get("tool_annotations") == {"destructiveHint": True}
          and meta.get("tool_params") == {"path": "/tmp/a"}
          and meta.get("tool_params_display") == [{"name": "path", "value": "/tmp/a",
                                                   "display_name": "path"}],
          "its _meta is Codex's: the approval kind, the scopes offered, the tool, the call's "
          "params (%s)" % meta)
    check(started["_at"] <= a["_at"] and runs(log, "delete_file") == [],
          "the item started before the question, and nothing ran yet")
    # Codex 0.169's id for it on the wire is a number too (its
    # `mcp_tool_call_approval_<callId>` names the question inside Codex
    # only): a reply under that string is a foreign one, refused and logged.
    p.write({"id": "mcp_tool_call_approval_" + started["params"]["item"]["id"],
             "result": {"action": "accept"}})
    time.sleep(0.3)
    check(runs(log, "delete_file") == [] and 'event=unknown_response id=mcp_tool_call_approval_'
          in p.log_text(), "a reply under Codex's internal question id is foreign: refused, logged")
    p.write({"id": a["id"], "result": {"action": "accept"}})
    ws.wait(resolved_for(w["id"]))
    done = mcp_done(p.events_of(turn))
    check(len(done) == 1 and done[0]["status"] == "completed"
          and runs(log, "delete_file") == [{"path": "/tmp/a"}],
          "accepted: it runs once, the other client's prompt is resolved (%s)"
          % [(i["status"], i.get("error")) for i in done])


def test_raced_decline(p, ws, mock, thread, log):
    before = len(mock.requests())
    turn = p.start_turn(thread, text('mock: tool mcp__annot__delete_file {"path": "/tmp/b"}',
                                     "mock: say not deleted"))
    a = p.wait(is_ask)
    w = ws.wait(is_ask)
    ws.write({"id": w["id"], "result": {"action": "decline"}})
    p.wait(resolved_for(a["id"]))
    p.write({"id": a["id"], "result": {"action": "accept"}})  # too late
    events = p.events_of(turn)
    done = mcp_done(events)
    check(len(done) == 1 and done[0]["status"] == "failed"
          and (done[0]["error"] or {}).get("message") == REJECTED and done[0]["result"] is None,
          "raced: the WebSocket client's decline wins; the item fails as Codex says (%s)"
          % [i.get("error") for i in done])
    check(runs(log, "delete_file") == [{"path": "/tmp/a"}],
          "the stdio accept after it is refused: the call did not run")
    out = last_output(mock, before, done[0]["id"]) if done else ""
    check(REJECTED in out, "the model is told the user rejected it: %r" % out[:120])
    check(events[-1]["params"]["turn"]["status"] == "completed", "the turn goes on and completes")


def test_timeout(p, ws, mock, thread, log):
    t0 = time.monotonic()
    turn = p.start_turn(thread, text('mock: tool mcp__annot__delete_file {"path": "/tmp/c"}',
                                     "mock: say timed out"))
    a = p.wait(is_ask)
    w = ws.wait(is_ask)
    p.wait(resolved_for(a["id"]), timeout=10)
    ws.wait(resolved_for(w["id"]), timeout=10)
    done = mcp_done(p.events_of(turn))
    check(len(done) == 1 and done[0]["status"] == "failed"
          and (done[0]["error"] or {}).get("message") == REJECTED
          and time.monotonic() - t0 >= 1.9 and len(runs(log, "delete_file")) == 1,
          "nobody answers: --approval-timeout declines it, nothing runs (%.1f s)"
          % (time.monotonic() - t0))


def test_client_leaves(p, ws, mock, thread, log):
    turn = p.start_turn(thread, text('mock: tool mcp__annot__delete_file {"path": "/tmp/d"}',
                                     "mock: say deleted"))
    a = p.wait(is_ask)
    ws.wait(is_ask)
    ws.close()
    time.sleep(0.3)
    check(not [m for m in p.kept if m.get("method") == "serverRequest/resolved"
               and m["params"]["requestId"] == a["id"]],
          "a client that disconnects is no answer: the question stays open")
    p.write({"id": a["id"], "result": {"action": "accept"}})
    done = mcp_done(p.events_of(turn))
    check(len(done) == 1 and done[0]["status"] == "completed"
          and runs(log, "delete_file")[-1] == {"path": "/tmp/d"},
          "the client left decides: accepted, it runs")


def test_prompt_mode(p, thread, log):
    turn = p.start_turn(thread, text("mock: tool mcp__annot__read_file {}",
                                     "mock: tool mcp__annot__read_file {}", "mock: say read twice"))
    asks = []
    for _ in range(2):
        a = p.wait(is_ask)
        asks.append(a)
        p.write({"id": a["id"], "result": {"action": "accept", "_meta": {"persist": "session"}}})
    done = mcp_done(p.events_of(turn))
    check(all("persist" not in (a["params"].get("_meta") or {}) for a in asks)
          and [i["status"] for i in done] == ["completed", "completed"]
          and len(runs(log, "read_file")) == 2,
          "`prompt` mode asks even for a read-only tool, every call, with no session scope")


def test_session(p, thread, log):
    turn = p.start_turn(thread, text('mock: tool mcp__annot__delete_file {"path": "/tmp/e"}',
                                     'mock: tool mcp__annot__delete_file {"path": "/tmp/f"}',
                                     "mock: say both"))
    a = p.wait(is_ask)
    p.write({"id": a["id"], "result": {"action": "accept", "_meta": {"persist": "session"}}})
    events = p.events_of(turn)
    asked = [m for m in events + p.kept if is_ask(m)]
    done = mcp_done(events)
    check([i["status"] for i in done] == ["completed", "completed"] and not asked
          and runs(log, "delete_file")[-2:] == [{"path": "/tmp/e"}, {"path": "/tmp/f"}],
          "accepted for the session: the tool's next call runs unasked")


def test_session_under_never(p, thread, log):
    """A tool accepted for the session earlier (test_session) still runs when
    the thread's policy turns to `never`, as Codex lets a remembered approval
    stand; one accepted only once is refused; the turn asks nobody."""
    r = p.call("turn/start", {"threadId": thread, "approvalPolicy": "never", "input": [
        {"type": "text", "text": text('mock: tool mcp__annot__delete_file {"path": "/tmp/sn"}',
                                      "mock: tool mcp__annot__plain {}", "mock: say remembered")}]})
    events = p.events_of(r["result"]["turn"]["id"])
    done = mcp_done(events)
    # plain was accepted once, not for the session: `never` refuses it.
    check([(i["tool"], i["status"]) for i in done] == [("delete_file", "completed"), ("plain", "failed")]
          and not [m for m in events + p.kept if is_ask(m) and m["params"]["threadId"] == thread]
          and runs(log, "delete_file")[-1] == {"path": "/tmp/sn"},
          "under `never`, a tool accepted for the session runs unasked: %s"
          % [(i["tool"], i["status"], i["error"]) for i in done])


def test_always(p, root, log):
    """Accepted "always": written into config.toml, asked never again."""
    config = os.path.join(root, "config.toml")
    with open(config) as f:
        before = f.read()
    t3 = p.start_thread()
    turn = p.start_turn(t3, text('mock: tool mcp__annot__shred {"n": 1}',
                                 'mock: tool mcp__annot__shred {"n": 2}', "mock: say shredded"))
    a = p.wait(is_ask)
    check((a["params"].get("_meta") or {}).get("persist") == ["session", "always"],
          "a tool in `auto` mode is offered \"always\"")
    p.write({"id": a["id"], "result": {"action": "accept", "_meta": {"persist": "always"}}})
    events = p.events_of(turn)
    with open(config) as f:
        after = f.read()
    check(after == before + '[mcp_servers.annot.tools.shred]\napproval_mode = "approve"\n',
          "accepted always: config.toml gets the tool's approval_mode = \"approve\", appended, "
          "the rest of the file (its comment too) as it was")
    check([i["status"] for i in mcp_done(events)] == ["completed", "completed"]
          and not [m for m in events if is_ask(m)]
          and runs(log, "shred") == [{"n": 1}, {"n": 2}],
          "the call runs, and the tool's next call in the turn runs unasked")
    left = [f for f in os.listdir(root) if f.startswith("config.toml.")]
    check(not left, "no temporary file is left beside config.toml %s" % left)
    t4 = p.start_thread()
    events = p.events_of(p.start_turn(t4, text('mock: tool mcp__annot__shred {"n": 3}',
                                               "mock: say again")))
    check([i["status"] for i in mcp_done(events)] == ["completed"]
          and not [m for m in events + p.kept if is_ask(m) and m["params"]["threadId"] == t4]
          and runs(log, "shred")[-1] == {"n": 3},
          "a new thread's call of it runs unasked")
    check("mcp event=approval_persisted server=annot tool=shred" in p.log_text(),
          "the log says where it was written")


def test_always_after_restart(root, mock, log):
    p = Parley(root, mock)
    thread = p.start_thread()
    events = p.events_of(p.start_turn(thread, text('mock: tool mcp__annot__shred {"n": 4}',
                                                   "mock: say after the restart")))
    check([i["status"] for i in mcp_done(events)] == ["completed"]
          and not [m for m in events + p.kept if is_ask(m)]
          and runs(log, "shred")[-1] == {"n": 4},
          "after a restart too, the tool accepted always runs unasked")
    check(p.stop() == 0, "parley exits 0 when stdin closes")


def test_interrupt(p, thread, log):
    # A thread of its own: the other one remembers delete_file for the session.
    t2 = p.start_thread()
    n = len(runs(log, "delete_file"))
    turn = p.start_turn(t2, text('mock: tool mcp__annot__delete_file {"path": "/tmp/g"}',
                                 "mock: say never"))
    a = p.wait(is_ask)
    p.call("turn/interrupt", {"threadId": t2, "turnId": turn})
    p.wait(resolved_for(a["id"]))
    events = p.events_of(turn)
    done = mcp_done(events)
    check(len(done) == 1 and done[0]["status"] == "failed"
          and events[-1]["params"]["turn"]["status"] == "interrupted"
          and len(runs(log, "delete_file")) == n,
          "turn/interrupt while asked: the prompt is resolved, nothing runs, the turn is interrupted")


def test_granular(p, log):
    thread = p.start_thread(approvalPolicy={"granular": {
        "sandbox_approval": True, "rules": True, "mcp_elicitations": False}})
    turn = p.start_turn(thread, text("mock: tool mcp__annot__plain {}",
                                     "mock: tool mcp__annot__ask {}", "mock: say asked"))
    # The tool's approval is no elicitation of the server's: still asked.
    a = p.wait(is_ask)
    check(a["params"]["threadId"] == thread
          and (a["params"].get("_meta") or {}).get("tool_name") == "plain",
          "granular mcp_elicitations=false: a tool call that needs approval is still asked, "
          "as Codex asks it")
    p.write({"id": a["id"], "result": {"action": "accept"}})
    events = p.events_of(turn)
    done = mcp_done(events)
    said = json.dumps(done[1].get("result")) if len(done) == 2 else ""
    check([i["status"] for i in done] == ["completed", "completed"] and "asked: decline" in said
          and not [m for m in events + p.kept if is_ask(m)],
          "and the server's own elicitation is declined, nobody asked (%s)" % said[:80])
    check("event=elicitation_declined_by_policy" in p.log_text(), "and the log says why")


def test_kill_9_while_asked(root, mock, log):
    p = Parley(root, mock)
    thread = p.start_thread()
    turn = p.start_turn(thread, text('mock: tool mcp__annot__delete_file {"path": "/tmp/k"}',
                                     "mock: say after the restart"))
    first = p.wait(is_ask)["params"]
    p.proc.kill()
    p.proc.wait(timeout=30)
    p.stderr.close()
    p = Parley(root, mock)
    r = p.call("thread/resume", {"threadId": thread})
    check("result" in r, "thread/resume after kill -9: %s" % str(r)[:200])
    a = p.wait(is_ask, timeout=15)
    check(a["params"] == first and runs(log, "delete_file")[-1] != {"path": "/tmp/k"},
          "asked again after the restart, the same question; nothing ran")
    p.write({"id": a["id"], "result": {"action": "accept"}})
    done = mcp_done(p.events_of(turn))
    check(len(done) == 1 and done[0]["status"] == "completed",
          "accepted: the call completes (%s)" % [i.get("error") for i in done])
    check([x for x in runs(log, "delete_file") if x == {"path": "/tmp/k"}] == [{"path": "/tmp/k"}],
          "it ran exactly once")
    check(p.stop() == 0, "parley exits 0 when stdin closes")


def validate_schema():
    schema = codex_schema.Schema(SCHEMA_DIR, {
        "thread/start": "v2/ThreadStartResponse",
        "turn/start": "v2/TurnStartResponse",
        "turn/interrupt": "v2/TurnInterruptResponse",
        "thread/resume": "v2/ThreadResumeResponse",
        "mcpServerStatus/list": "v2/ListMcpServerStatusResponse"})
    for i, peer in enumerate(ALL_LINES):
        schema.check(check, peer, "parley client %d" % i)
    asks = sum(ASK in raw and json.loads(raw).get("method") == ASK and "id" in json.loads(raw)
               for peer in ALL_LINES for raw in peer.lines)
    check(asks > 0, "approvals were asked (%d), so the shapes above include them" % asks)


def main():
    root = tempfile.mkdtemp(prefix="parley-mcp-approvals-")
    log = os.path.join(root, "calls.log")
    with open(os.path.join(root, "config.toml"), "w") as f:
        f.write('# the approval tests\' server\n'
                '[mcp_servers.annot]\ncommand = %s\nargs = [%s, %s]\n\n'
                '[mcp_servers.annot.tools.wipe]\napproval_mode = "approve"\n\n'
                '[mcp_servers.annot.tools.read_file]\napproval_mode = "prompt"\n'
                % (json.dumps(sys.executable), json.dumps(SERVER), json.dumps(log)))
    mock = app_server_peer.Mock(MOCK)
    started = time.monotonic()
    try:
        p = Parley(root, mock)
        thread = p.start_thread()
        ws = creq.WsPeer(p.ws_url)
        ws.call("thread/resume", {"threadId": thread})
        ALL_LINES.append(ws)  # its own lines and request ids
        for test in (lambda: test_unannotated(p, ws, mock, thread, log),
                     lambda: test_accepted(p, ws, mock, thread, log),
                     lambda: test_raced_decline(p, ws, mock, thread, log),
                     lambda: test_timeout(p, ws, mock, thread, log),
                     lambda: test_client_leaves(p, ws, mock, thread, log),
                     lambda: test_prompt_mode(p, thread, log),
                     lambda: test_session(p, thread, log),
                     lambda: test_always(p, root, log),
                     lambda: test_interrupt(p, thread, log),
                     lambda: test_granular(p, log),
                     # `thread`'s policy is `never` from here on.
                     lambda: test_session_under_never(p, thread, log),
                     # Last: the tests above count delete_file's runs.
                     lambda: test_never(p, mock, log),
                     lambda: test_full_access(p, log)):
            try:
                test()
            except Exception as e:  # a hang is a failure of this test, not of the run
                check(False, "raised %s: %s" % (type(e).__name__, e))
        check(p.stop() == 0, "parley exits 0 when stdin closes")
        try:
            test_always_after_restart(root, mock, log)
        except Exception as e:
            check(False, "always after a restart: raised %s: %s" % (type(e).__name__, e))
        try:
            test_kill_9_while_asked(root, mock, log)
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
