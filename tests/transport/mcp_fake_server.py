#!/usr/bin/env python3
"""A stdio MCP server for the mcp_servers test, well-behaved or hostile by
its first argument:

  good       the handshake, one tool `shout` (its message in capitals)
  malformed  answers initialize with a line that is not JSON
  oversized  answers initialize with a 20 MiB line
  silent     reads everything, answers nothing
  slow       the handshake and a tool `wait` whose answer comes 2 s late
  flood      the handshake and a tool `flood` that first writes 500,000 small
             valid notifications (progress for no request, and a few
             thousand log messages) as fast as the pipe takes them, then
             answers
  counter    (mcp_turns; its second argument a log file) tools `slow`,
             answered 2 s later while the server goes on reading, and
             `crash`, which ends the process; every call and every
             notifications/cancelled is appended to the log, a line each
  elicit     (mcp_elicitation) the handshake, then asks parley's user:
             on notifications/initialized an elicitation/create with no call
             in flight; tools `ask` (one form; the call's result is the
             answer it got, as JSON), `malformed` (a schema with an object
             field), `flood` (20 at once; the result lists every answer),
             `others` (sampling/createMessage and roots/list) and `report`
             (what the one asked with no call in flight got)
  urlneeded  the handshake, tools `sign_in` (read-only) answered with
             JSON-RPC error -32042, URL elicitation required (MCP
             2025-11-25), its data the elicitation the user must open, and
             `broken` answered with error -32000 (no data)
"""
import json
import os
import sys
import threading
import time
from mcp_stdio_server import send

MODE = sys.argv[1]


def answer(i, result):
    send_locked({"jsonrpc": "2.0", "id": i, "result": result})


TOOLS = {
    "good": [{"name": "shout", "description": "The message in capitals",
              "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}],
    "slow": [{"name": "wait", "inputSchema": {"type": "object"}}],
    "flood": [{"name": "flood", "inputSchema": {"type": "object"}}],
    "counter": [{"name": "slow", "description": "Answers after 2 s",
                 "inputSchema": {"type": "object"}},
                {"name": "crash", "description": "Ends the server mid-call",
                 "inputSchema": {"type": "object"}}],
}
LOCK = threading.Lock()


def log(line):
    with open(sys.argv[2], "a") as f:
        f.write(line + "\n")


def send_locked(obj):
    with LOCK:
        send(obj)


def answer_later(i, seconds):
    time.sleep(seconds)
    send_locked({"jsonrpc": "2.0", "id": i,
                 "result": {"content": [{"type": "text", "text": "slow done"}]}})

FLOOD = ('{"jsonrpc":"2.0","method":"notifications/progress","params":'
         '{"progressToken":"nobody","progress":1}}\n' * 99
         + '{"jsonrpc":"2.0","method":"notifications/message","params":'
         '{"level":"info","data":"flooding"}}\n') * 5000

ASKED = {}  # our request id -> what to do with its answer
REPORT = {}
NEXT = [0]


def ask_parley(method, params, then):
    NEXT[0] += 1
    rid = "fake-%d" % NEXT[0]
    ASKED[rid] = then
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def form(message, properties):
    return {"message": message, "requestedSchema": {"type": "object", "properties": properties}}


def elicit_call(i, name, args):
    """A tools/call of the `elicit` mode: answered once what it asked is."""
    done = lambda result: answer(i, {"content": [{"type": "text", "text": json.dumps(result)}]})  # noqa
    if name == "ask":
        ask_parley("elicitation/create",
                   form(args.get("message", "Your name?"), {"name": {"type": "string", "title": "Name"}}),
                   done)
    elif name == "malformed":
        ask_parley("elicitation/create", form("Bad form", {"x": {"type": "object"}}), done)
    elif name == "flood":
        got = []

        def one(result):
            got.append(result)
            if len(got) == 20:
                done(got)
        for n in range(20):
            ask_parley("elicitation/create", form("Flood %d" % n, {"n": {"type": "integer"}}), one)
    elif name == "others":
        got = {}

        def keep(key):
            def store(result):
                got[key] = result
                if len(got) == 2:
                    done(got)
            return store
        ask_parley("sampling/createMessage", {"messages": [], "maxTokens": 10}, keep("sampling"))
        ask_parley("roots/list", {}, keep("roots"))
    else:
        done(REPORT)


URL_NEEDED = {"elicitations": [{"mode": "url", "elicitationId": "sign-in-1",
                                "url": "https://example.com/sign-in?state=1",
                                "message": "Sign in to the example service"}]}
TOOLS["urlneeded"] = [{"name": n, "inputSchema": {"type": "object"},
                       "annotations": {"readOnlyHint": True}} for n in ("sign_in", "broken")]

TOOLS["elicit"] = [{"name": n, "inputSchema": {"type": "object"}}
                   for n in ("ask", "malformed", "flood", "others", "report")]

for line in sys.stdin:
    m = json.loads(line)
    method, i = m.get("method"), m.get("id")
    if method is None and i in ASKED:
        ASKED.pop(i)(m.get("result") if "result" in m else {"error": m.get("error")})
        continue
    if MODE == "elicit" and method == "notifications/initialized":
        ask_parley("elicitation/create", form("Nobody called", {"a": {"type": "string"}}),
                   lambda result: REPORT.update(nocall=result))
        continue
    if MODE == "silent":
        continue
    if MODE == "counter":
        if method == "notifications/cancelled":
            log("cancelled %s" % m["params"].get("requestId"))
            continue
        if method == "tools/call":
            name = m["params"]["name"]
            log("call %s %s" % (name, i))
            if name == "crash":
                os._exit(3)
            threading.Thread(target=answer_later, args=(i, 2), daemon=True).start()
            continue
    if method == "initialize":
        if MODE == "malformed":
            sys.stdout.write("this is not JSON-RPC\n")
            sys.stdout.flush()
            continue
        if MODE == "oversized":
            sys.stdout.write('{"jsonrpc":"2.0","id":%d,"result":"' % i)
            chunk = "x" * (1 << 20)
            for _ in range(20):
                sys.stdout.write(chunk)
            sys.stdout.write('"}\n')
            sys.stdout.flush()
            continue
        answer(i, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "fake-" + MODE, "version": "1.0"}})
    elif method == "tools/list":
        answer(i, {"tools": TOOLS[MODE]})
    elif method == "tools/call":
        args = m["params"].get("arguments") or {}
        if MODE == "flood":
            sys.stdout.write(FLOOD)
            sys.stdout.flush()
            answer(i, {"content": [{"type": "text", "text": "flooded"}]})
            continue
        if MODE == "elicit":
            elicit_call(i, m["params"]["name"], args)
            continue
        if MODE == "urlneeded":
            if m["params"]["name"] == "sign_in":
                send({"jsonrpc": "2.0", "id": i, "error": {
                    "code": -32042, "message": "This request requires more information.",
                    "data": URL_NEEDED}})
            else:
                send({"jsonrpc": "2.0", "id": i, "error": {"code": -32000, "message": "it broke"}})
            continue
        if MODE == "slow":
            time.sleep(2)
            answer(i, {"content": [{"type": "text", "text": "too late"}]})
        else:
            answer(i, {"content": [{"type": "text", "text": args.get("message", "").upper()}]})
    elif i is not None:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no " + method}})
