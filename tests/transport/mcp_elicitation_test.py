#!/usr/bin/env python3
"""MCP elicitations through the real `parley app-server` (issue 30).

parley declares form- and url-mode elicitation to its MCP servers (as Codex
0.169 does), so the reference `@modelcontextprotocol/server-everything`
(installed from npm by mcp_servers_test.py's recipe, into the same cache)
lists both its elicitation tools. Through `mcpServer/tool/call` with a threadId, over stdio and a
WebSocket client subscribed to the same thread:

- accepted with content: both clients are asked (mcpServer/elicitation/
  request, turnId null), the stdio one answers, the tool's result shows the
  content, the WebSocket one gets serverRequest/resolved;
- declined; timed out (--approval-timeout: declines, the tool says so);
- url mode (trigger-url-elicitation): Codex's params (url, elicitationId,
  `_meta` null), accepted (the server hears accept, without the content a
  client sent), declined by the other client, timed out;
- raced: the WebSocket client answers first and wins (its `_meta` passed on
  to the server, as Codex does), the stdio answer that follows is refused
  and logged;
- a client that disconnects is no answer: the other one still decides;
- the tool call ends first (its tool_timeout_sec): the question is withdrawn
  (serverRequest/resolved), the call fails naming the timeout;
- a hostile fake server (mcp_fake_server.py elicit): one asked with no call
  in flight is declined, a malformed schema gets -32602, a flood of 20 has 8
  asked and 12 declined at once, sampling/createMessage and roots/list get
  "method not found".
Every line parley prints is checked against the Codex 0.169 schema.

Usage: mcp_elicitation_test.py PARLEY_BINARY SCHEMA_DIR NPM_CACHE_DIR
Exit 77 (skipped) when npm or the registry cannot be had.
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
import client_requests_test as creq  # noqa: E402  (its WebSocket client)
import mcp_servers_test as mcps  # noqa: E402  (npm install, config writer)

PARLEY, SCHEMA_DIR, CACHE = sys.argv[1:4]
FAILURES = mcps.FAILURES
check = mcps.check
ASK = "mcpServer/elicitation/request"


class Schema:
    """Every line a client read: notifications, server requests and the
    MCP replies against the Codex schema."""

    RESPONSES = {"mcpServerStatus/list": "v2/ListMcpServerStatusResponse",
                 "mcpServer/tool/call": "v2/McpServerToolCallResponse",
                 "thread/start": "v2/ThreadStartResponse",
                 "thread/resume": "v2/ThreadResumeResponse"}

    def __init__(self):
        path = os.path.join(SCHEMA_DIR, "codex_app_server_protocol.schemas.json")
        self.bundle = None
        if os.path.exists(path):
            import jsonschema
            with open(path) as f:
                self.bundle = json.load(f)
            self.v = lambda name: jsonschema.Draft7Validator(
                {"$ref": "#/definitions/" + name, "definitions": self.bundle["definitions"]})
        else:
            print("note: no Codex schema at %s; shapes not validated" % SCHEMA_DIR)

    def validate(self, lines, methods, who):
        if self.bundle is None:
            return
        notes, reqs = self.v("ServerNotification"), self.v("ServerRequest")
        bad, asks = [], 0
        for raw in lines:
            m = json.loads(raw)
            if "method" in m and "id" in m:
                asks += m["method"] == ASK
                errs = list(reqs.iter_errors(m))
            elif "method" in m:
                errs = list(notes.iter_errors({"method": m["method"], "params": m.get("params")}))
            elif "result" in m and methods.get(m.get("id")) in self.RESPONSES:
                errs = list(self.v(self.RESPONSES[methods[m["id"]]]).iter_errors(m["result"]))
            else:
                errs = []
            bad += ["%s: %s" % (e.message[:200], raw[:300]) for e in errs[:1]]
        check(not bad and asks > 0, "%s: %d lines valid against the Codex schema (%d elicitations) %s"
              % (who, len(lines), asks, bad[:3]))


def is_ask(m):
    return m.get("method") == ASK and "id" in m


def resolved_for(rid):
    return lambda m: m.get("method") == "serverRequest/resolved" and m["params"]["requestId"] == rid


def text_of(reply):
    if "error" in reply:
        return "error: " + mcps.error_text(reply)
    return "\n".join(c.get("text", "") for c in reply["result"].get("content", []))


def fake_result(reply):
    """What the fake server's tool saw, parsed from its text."""
    try:
        return json.loads(text_of(reply))
    except ValueError:
        return None


def main():
    index = mcps.install_everything()
    if index is None:
        return 77
    schema = Schema()
    root = tempfile.mkdtemp(prefix="parley-elicit-")
    config = os.path.join(root, "config.toml")
    fake = lambda mode, **more: dict({"command": sys.executable, "args": [mcps.FAKE, mode]}, **more)  # noqa
    mcps.write_config(config, {
        "everything": {"command": "node", "args": [index, "stdio"], "startup_timeout_sec": 20,
                       "tool_timeout_sec": 20},
        "asker": fake("elicit", tool_timeout_sec=20),
        "short": fake("elicit", tool_timeout_sec=1),
    })
    env = dict(os.environ)
    env.pop("CODEX_HOME", None)
    started = time.monotonic()
    stdio = app_server_peer.StdioPeer(
        [PARLEY, "app-server", "--store=memory", "--home", os.path.join(root, "home"),
         "--config", config, "--approval-timeout", "2s",
         "--listen", "stdio://", "--listen", "ws://127.0.0.1:0"],
        env, os.path.join(root, "parley.stderr"), client_name="elicit-test")
    url = None
    deadline = time.monotonic() + 20
    while url is None and time.monotonic() < deadline:
        found = re.findall(r"listening on (ws://\S+)", stdio.log_text())
        url = found[0] if found else None
        time.sleep(0.05)
    thread = stdio.start_thread()
    ws = creq.WsPeer(url)
    ws.call("thread/resume", {"threadId": thread})
    for name in ("everything", "asker", "short"):
        mcps.wait_status(stdio, name, lambda s: s.get("runtimeStatus") == "connected", timeout=20)
    s = mcps.statuses(stdio)["everything"]
    tools = sorted(s.get("tools", {}))
    check("trigger-elicitation-request" in tools,
          "form-mode elicitation declared: server-everything lists trigger-elicitation-request "
          "(%d tools)" % len(tools))
    check("trigger-url-elicitation" in tools,
          "url mode declared: server-everything lists trigger-url-elicitation (15 tools as to "
          "Codex: %d)" % len(tools))

    def call(server, tool, arguments=None):
        return stdio.send("mcpServer/tool/call", {"server": server, "threadId": thread, "tool": tool,
                                                  "arguments": arguments or {}})

    # -- accepted with content: both clients asked, stdio answers -----------------
    i = call("everything", "trigger-elicitation-request")
    a = stdio.wait(is_ask)
    w = ws.wait(is_ask)
    p = a["params"]
    check(p["threadId"] == thread and p["turnId"] is None and p["serverName"] == "everything"
          and p["mode"] == "form" and "name" in p["requestedSchema"]["properties"]
          and "_meta" in p and p["_meta"] is None and w["params"] == p,
          "both clients are asked, turnId null, `_meta` null as Codex sends it, the server's "
          "form (%s)" % p.get("message"))
    stdio.write({"id": a["id"], "result": {"action": "accept",
                                           "content": {"name": "Ada Lovelace", "check": True}}})
    text = text_of(stdio.reply_to(i))
    check("Name: Ada Lovelace" in text and "Agreed to terms: true" in text,
          "accepted: the tool's result shows the content (%s)" % text[:80].replace("\n", " | "))
    ws.wait(resolved_for(w["id"]))
    check(True, "the other client's prompt is resolved")

    # -- declined ----------------------------------------------------------------------
    i = call("everything", "trigger-elicitation-request")
    a = stdio.wait(is_ask)
    w = ws.wait(is_ask)
    stdio.write({"id": a["id"], "result": {"action": "decline"}})
    text = text_of(stdio.reply_to(i))
    check("declined" in text, "declined: the tool says so (%s)" % text[:60])
    ws.wait(resolved_for(w["id"]))

    # -- timed out: declines -------------------------------------------------------------
    t0 = time.monotonic()
    i = call("everything", "trigger-elicitation-request")
    a = stdio.wait(is_ask)
    w = ws.wait(is_ask)
    text = text_of(stdio.reply_to(i, timeout=15))
    stdio.wait(resolved_for(a["id"]))
    ws.wait(resolved_for(w["id"]))
    check("declined" in text and time.monotonic() - t0 >= 1.9,
          "timed out after --approval-timeout: declined, both prompts resolved (%.1f s)"
          % (time.monotonic() - t0))

    # -- url mode: accepted, declined, timed out ----------------------------------------
    url_args = {"url": "https://example.com/login?x=1", "elicitationId": "el-1"}
    i = call("everything", "trigger-url-elicitation", url_args)
    a = stdio.wait(is_ask)
    w = ws.wait(is_ask)
    p = a["params"]
    want = {"threadId": thread, "turnId": None, "serverName": "everything", "mode": "url",
            "_meta": None, "message": "Please open the link to complete this action.",
            "url": url_args["url"], "elicitationId": "el-1"}
    check(p == want and w["params"] == p,
          "url mode: both clients are asked with Codex's params (%s)" % json.dumps(p)[:300])
    # A client's content is form mode's: the server is not sent it in url mode.
    stdio.write({"id": a["id"], "result": {"action": "accept", "content": {"x": "y"}}})
    text = text_of(stdio.reply_to(i))
    check("completed the URL elicitation flow" in text and "el-1" in text
          and '"action": "accept"' in text and '"content"' not in text,
          "url mode accepted: the server hears accept without content (%s)"
          % text[:120].replace("\n", " | "))
    ws.wait(resolved_for(w["id"]))

    i = call("everything", "trigger-url-elicitation", url_args)
    a = stdio.wait(is_ask)
    w = ws.wait(is_ask)
    ws.write({"id": w["id"], "result": {"action": "decline"}})
    text = text_of(stdio.reply_to(i))
    check("declined to open the URL" in text, "url mode declined: the tool says so (%s)" % text[:70])
    stdio.wait(resolved_for(a["id"]))

    t0 = time.monotonic()
    i = call("everything", "trigger-url-elicitation", url_args)
    a = stdio.wait(is_ask)
    w = ws.wait(is_ask)
    text = text_of(stdio.reply_to(i, timeout=15))
    stdio.wait(resolved_for(a["id"]))
    ws.wait(resolved_for(w["id"]))
    check("declined to open the URL" in text and time.monotonic() - t0 >= 1.9,
          "url mode timed out after --approval-timeout: declined, both prompts resolved (%.1f s)"
          % (time.monotonic() - t0))

    # -- raced: the WebSocket client first, the stdio answer refused ----------------------
    i = call("asker", "ask", {"message": "Race?"})
    a = stdio.wait(is_ask)
    w = ws.wait(is_ask)
    ws.write({"id": w["id"], "result": {"action": "accept", "content": {"name": "ws"},
                                        "_meta": {"persist": "session"}}})
    got = fake_result(stdio.reply_to(i))
    stdio.write({"id": a["id"], "result": {"action": "decline"}})
    check(got == {"action": "accept", "content": {"name": "ws"}, "_meta": {"persist": "session"}},
          "raced: the first answer wins, sent to the server as MCP's ElicitResult with the "
          "client's _meta (%s)" % got)
    stdio.wait(resolved_for(a["id"]))
    time.sleep(0.3)
    log = stdio.log_text()
    check("event=late_answer" in log or "event=unknown_response" in log,
          "the losing answer is refused and logged")

    # -- a client that disconnects is no answer -------------------------------------------
    i = call("asker", "ask", {"message": "Still there?"})
    a = stdio.wait(is_ask)
    ws.wait(is_ask)
    ws.close()
    time.sleep(0.3)
    stdio.write({"id": a["id"], "result": {"action": "accept", "content": {"name": "stdio"}}})
    got = fake_result(stdio.reply_to(i))
    check(got == {"action": "accept", "content": {"name": "stdio"}},
          "a client leaving is no answer: the one left decides (%s)" % got)

    # -- the call ends first: withdrawn -----------------------------------------------------
    i = call("short", "ask", {"message": "Too slow"})
    a = stdio.wait(is_ask)
    r = stdio.reply_to(i, timeout=10)
    stdio.wait(resolved_for(a["id"]))
    check("tool_timeout_sec" in mcps.error_text(r),
          "the tool call timed out first: it fails naming the timeout, the prompt is withdrawn "
          "(%s)" % mcps.error_text(r))

    # -- a hostile server -------------------------------------------------------------------
    got = fake_result(stdio.reply_to(call("asker", "report")))
    check(got == {"nocall": {"action": "decline"}},
          "asked with no call in flight: declined, nobody asked (%s)" % got)
    got = fake_result(stdio.reply_to(call("asker", "malformed")))
    check(got and got.get("error", {}).get("code") == -32602
          and "properties.x" in got["error"].get("message", ""),
          "a malformed schema: -32602 naming the field (%s)" % got)
    i = call("asker", "flood")
    asked = []
    while len(asked) < 8:
        asked.append(stdio.wait(is_ask))
    for a in asked:
        stdio.write({"id": a["id"], "result": {"action": "cancel"}})
    got = fake_result(stdio.reply_to(i)) or []
    actions = sorted(r.get("action", "?") for r in got)
    check(actions == ["cancel"] * 8 + ["decline"] * 12,
          "a flood of 20: 8 asked (the bound per server), 12 declined at once (%s)" % actions)
    more = []
    try:
        more.append(stdio.wait(is_ask, timeout=0.3))
    except TimeoutError:
        pass
    check(not more, "nothing more asked")
    got = fake_result(stdio.reply_to(call("asker", "others")))
    codes = {k: (v.get("error") or {}).get("code") for k, v in (got or {}).items()}
    check(codes == {"sampling": -32601, "roots": -32601},
          "sampling/createMessage and roots/list: method not found (%s)" % codes)

    code = stdio.stop()
    check(code == 0, "parley exits 0 when its input ends (%s)" % code)
    log = stdio.log_text()
    check("mcp event=elicitation_declined server=asker" in log
          and "mcp event=elicitation_malformed server=asker" in log
          and "mcp event=elicitation_withdrawn server=short" in log,
          "declines, malformed requests and withdrawals are logged")
    odd = [line for line in log.splitlines()
           if "event=unexpected_message" in line or "event=exception" in line
           or "event=server_actor_died" in line or "event=crashed" in line]
    check(not odd, "no unexpected message or crash in the log %s" % odd[:3])
    schema.validate(stdio.lines, stdio.methods, "stdio")
    schema.validate(ws.lines, ws.methods, "websocket")
    print("%.1f s, %d failures" % (time.monotonic() - started, len(FAILURES)))
    if not FAILURES:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
