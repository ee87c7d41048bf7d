#!/usr/bin/env python3
"""Server requests that hold a turn on a client (issue 29), through the real
`parley app-server` over real pipes (and a real WebSocket for two clients),
driven by the scripted model's `ask:` directive:

item/tool/requestUserInput
- answered: the params as Codex 0.169's schema has them (isBlocking, the
  questions normalised), waitingOnUserInput while it waits, one
  serverRequest/resolved, the turn goes on and completes;
- timed out (--approval-timeout): fails closed, the prompt is resolved, the
  turn goes on (the model is told it was not answered);
- a malformed answer and a JSON-RPC error answer: no answer, fail closed;
- turn/interrupt while it waits: serverRequest/resolved, the turn ends
  interrupted;
- thread/archive (the thread closes) while it waits: the same;
- two clients (stdio + WebSocket) racing: both are asked, one answer is
  applied, the other refused (counted and logged);
- a model's question that is malformed is never asked.

item/tool/call (thread/start `dynamicTools`, experimentalApi only)
- the gate and a malformed declaration answer -32600;
- a call shows a dynamicToolCall item (inProgress, then completed or failed
  with the client's contentItems and success) around the request;
- timed out, answered with success false, interrupted: the item fails, the
  model is told; an undeclared tool is never asked.
Every line parley prints is validated against the Codex schema.

The HTTP model (parley-mock-model, when given): request_user_input is offered
only with `features.default_mode_request_user_input` (as in Codex); the
model's call asks the client, and the next request carries the answers (or
why there are none) as the call's function_call_output.

Usage: client_requests_test.py PARLEY_BINARY SCHEMA_DIR [MOCK_BINARY]
"""
import base64
import json
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import codex_schema  # noqa: E402

PARLEY, SCHEMA_DIR = sys.argv[1:3]
MOCK = sys.argv[3] if len(sys.argv) > 3 else ""
FAILURES = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


# The replies whose results are checked against their Codex definitions.
SCHEMA = codex_schema.Schema(SCHEMA_DIR, {
    "thread/start": "v2/ThreadStartResponse",
    "turn/start": "v2/TurnStartResponse",
    "thread/resume": "v2/ThreadResumeResponse",
})


class ExperimentalPeer(app_server_peer.StdioPeer):
    """A stdio client that opts in to the experimental API at initialize."""

    def call(self, method, params, timeout=20):
        if method == "initialize":
            params = dict(params, capabilities={"experimentalApi": True})
        return super().call(method, params, timeout)


class Server:
    """One parley on stdio (the first client), optionally also listening on
    a WebSocket for a second one."""

    def __init__(self, extra=(), ws=False, experimental=False, root=None):
        # root: the home of a server killed before (a restart on it).
        self.root = root or tempfile.mkdtemp(prefix="parley-clientreq-")
        self.home, self.work = os.path.join(self.root, "home"), os.path.join(self.root, "work")
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(self.home, exist_ok=True)
        env = dict(os.environ)
        env.pop("CODEX_HOME", None)
        args = [PARLEY, "app-server", "--home", self.home, "--cwd", self.work, *extra]
        self.runs = len([f for f in os.listdir(self.root) if f.startswith("parley")])
        if ws:
            args += ["--listen", "stdio://", "--listen", "ws://127.0.0.1:0"]
        peer = ExperimentalPeer if experimental else app_server_peer.StdioPeer
        self.peer = peer(args, env, os.path.join(self.root, "parley%d.stderr" % self.runs))
        self.ws_url = None
        if ws:
            deadline = time.monotonic() + 20
            while self.ws_url is None and time.monotonic() < deadline:
                found = re.findall(r"listening on (ws://\S+)", self.peer.log_text())
                self.ws_url = found[0] if found else None
                time.sleep(0.05)

    def kill9(self, who):
        """SIGKILL, the home kept for the next start."""
        self.peer.proc.send_signal(signal.SIGKILL)
        code = self.peer.proc.wait(timeout=30)
        check(code == -9, "%s: killed with SIGKILL" % who)
        self.peer.stderr.close()
        SCHEMA.check(check, self.peer, who)

    def rollout(self, thread):
        """The records of a thread's rollout, parsed."""
        for root, _, files in os.walk(os.path.join(self.home, "sessions")):
            for f in files:
                if thread in f:
                    with open(os.path.join(root, f)) as lines:
                        return [json.loads(line) for line in lines if line.strip()]
        return []

    def stop(self, who):
        code = self.peer.stop()
        check(code == 0, "%s: parley exits 0" % who)
        SCHEMA.check(check, self.peer, who)
        log = self.peer.log_text()
        if FAILURES:  # kept, logs and rollouts, for whoever reads the failure
            print("kept for inspection: %s" % self.root, flush=True)
        else:
            shutil.rmtree(self.root, ignore_errors=True)
        return log


class WsPeer:
    """A minimal WebSocket client (text frames, masked as RFC 6455 wants),
    so the test needs no WebSocket package."""

    def __init__(self, url):
        host, port = url[len("ws://"):].split("/")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=20)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET / HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" % (host, port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("no upgrade: %r" % head[:200])
        self.buf = b""
        self.kept, self.lines, self.methods, self.next_id = [], [], {}, 0
        self.call("initialize", {"clientInfo": {"name": "clientreq-ws", "version": "1"}})
        self.write({"method": "initialized"})

    def write(self, obj):
        data = json.dumps(obj).encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536 else
                                bytes([0x80 | 127]) + n.to_bytes(8, "big"))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the server closed the WebSocket")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _frame(self):
        b0, b1 = self._need(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(self._need(2), "big")
        elif n == 127:
            n = int.from_bytes(self._need(8), "big")
        payload = self._need(n)
        return b0 & 0x0F, payload

    def wait(self, pred, timeout=20):
        for m in self.kept:
            if pred(m):
                self.kept.remove(m)
                return m
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("nothing matched within %s s" % timeout)
            self.sock.settimeout(left)
            op, payload = self._frame()
            if op != 1:
                continue
            line = payload.decode()
            self.lines.append(line)
            m = json.loads(line)
            if pred(m):
                return m
            self.kept.append(m)

    def call(self, method, params):
        self.next_id += 1
        i = self.next_id
        self.methods[i] = method
        self.write({"id": i, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == i and "method" not in m)

    def close(self):
        self.sock.close()


ASK = "item/tool/requestUserInput"


def is_ask(m):
    return m.get("method") == ASK and "id" in m


def resolved_for(rid):
    return lambda m: m.get("method") == "serverRequest/resolved" and m["params"]["requestId"] == rid


def until_completed(peer, turn, timeout=30):
    events = []
    while True:
        m = peer.wait(lambda m: True, timeout)
        events.append(m)
        if m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == turn:
            return events


def said(events):
    return [m["params"]["item"]["text"] for m in events if m.get("method") == "item/completed"
            and m["params"]["item"]["type"] == "agentMessage"]


def counts(peer):
    return peer.call("parley/debug/counts", {})["result"]


def test_answered():
    s = Server()
    p = s.peer
    thread = p.start_thread()
    turn = p.start_turn(thread, "ask: Which colour?\nsay: thanks")
    ask = p.wait(is_ask)
    params = ask["params"]
    check(params["threadId"] == thread and params["turnId"] == turn and params["itemId"]
          and params["isBlocking"] is True, "the request names the thread, turn and call: %s" % params)
    check(params["questions"] == [{"id": "q1", "header": "Question", "question": "Which colour?",
                                   "isOther": False, "isSecret": False, "options": None}],
          "the question as the schema has it: %s" % params["questions"])
    status = p.wait(lambda m: m.get("method") == "thread/status/changed"
                    and "waitingOnUserInput" in m["params"]["status"].get("activeFlags", []))
    check(status["params"]["status"]["activeFlags"] == ["waitingOnUserInput"],
          "the thread waits on user input (not on an approval)")
    p.write({"id": ask["id"], "result": {"answers": {"q1": {"answers": ["blue"]}}}})
    p.wait(resolved_for(ask["id"]))
    events = until_completed(p, turn)
    check(events[-1]["params"]["turn"]["status"] == "completed", "the turn completes")
    check(said(events) == ["thanks"], "the turn went on after the answer: %s" % said(events))
    again = [m for m in events if is_ask(m) or m.get("method") == "serverRequest/resolved"]
    check(not again, "asked once, resolved once")
    stats = p.call("parley/stats", {})["result"]["approvals"]
    check(stats["requested"] == 1 and stats["decided"] == 1, "one request, one answer: %s" % stats)
    n = counts(p)
    check(n["approvals"] == 0 and n["pendingRequests"] == 0 and n["pendingAsks"] == 0,
          "nothing left pending: %s" % n)
    audit = [json.loads(line) for line in open(os.path.join(s.home, "audit.jsonl"))]
    kinds = [(a.get("event"), a.get("type")) for a in audit]
    check(any(a.get("type") == "userInput" for a in audit)
          and not any("blue" in json.dumps(a) for a in audit),
          "the audit log records the question, not the answer: %s" % kinds)
    s.stop("answered")


def test_options_and_secret():
    s = Server()
    p = s.peer
    thread = p.start_thread()
    args = {"questions": [{"id": "mode", "header": "Mode", "question": "Pick one",
                           "options": [{"label": "fast", "description": "quick"},
                                       {"label": "safe", "description": "careful"}]},
                          {"id": "token", "header": "Token", "question": "Your token?",
                           "isSecret": True}]}
    turn = p.start_turn(thread, "ask: " + json.dumps(args) + "\nsay: ok")
    ask = p.wait(is_ask)
    qs = ask["params"]["questions"]
    check([q["id"] for q in qs] == ["mode", "token"] and qs[0]["options"][1]["label"] == "safe"
          and qs[1]["isSecret"] is True, "options and isSecret reach the client: %s" % qs)
    # An answer naming a question that was not asked is malformed: fails closed.
    p.write({"id": ask["id"], "result": {"answers": {"other": {"answers": ["x"]}}}})
    p.wait(resolved_for(ask["id"]))
    events = until_completed(p, turn)
    check(events[-1]["params"]["turn"]["status"] == "completed" and said(events) == ["ok"],
          "a malformed answer counts as none; the turn goes on")
    check("event=malformed_decision" in p.log_text(), "the malformed answer is logged")
    stats = p.call("parley/stats", {})["result"]["approvals"]
    check(stats["failed"] == 1 and stats["decided"] == 0,
          "counted as failed, not decided: %s" % stats)
    s.stop("options")


def test_malformed_question_never_asked():
    s = Server()
    p = s.peer
    thread = p.start_thread()
    turn = p.start_turn(thread, 'ask: {"questions": []}\nsay: after')
    events = until_completed(p, turn)
    check(not [m for m in events if is_ask(m)], "an empty question list asks nobody")
    check(said(events) == ["after"], "the model is told and goes on")
    s.stop("malformed question")


def test_error_reply():
    s = Server()
    p = s.peer
    thread = p.start_thread()
    turn = p.start_turn(thread, "ask: Still there?\nsay: next")
    ask = p.wait(is_ask)
    p.write({"id": ask["id"], "error": {"code": -32000, "message": "the user closed the dialog"}})
    p.wait(resolved_for(ask["id"]))
    events = until_completed(p, turn)
    check(events[-1]["params"]["turn"]["status"] == "completed" and said(events) == ["next"],
          "an error answer is no answer; the turn goes on")
    s.stop("error reply")


def test_timeout():
    s = Server(extra=["--approval-timeout", "700ms"])
    p = s.peer
    thread = p.start_thread()
    started = time.monotonic()
    turn = p.start_turn(thread, "ask: Anyone?\nsay: moving on")
    ask = p.wait(is_ask)
    p.wait(resolved_for(ask["id"]), timeout=10)
    waited = time.monotonic() - started
    events = until_completed(p, turn)
    check(0.5 < waited < 5, "resolved at the deadline (%.2f s)" % waited)
    check(events[-1]["params"]["turn"]["status"] == "completed" and said(events) == ["moving on"],
          "timed out: fails closed, the turn goes on")
    # An answer after the deadline is refused.
    p.write({"id": ask["id"], "result": {"answers": {"q1": {"answers": ["late"]}}}})
    time.sleep(0.3)
    check("event=unknown_response" in p.log_text(), "the late answer is refused and logged")
    stats = p.call("parley/stats", {})["result"]["approvals"]
    check(stats["timedOut"] == 1 and stats["refusedReplies"] == 1,
          "counted as timed out, the late answer refused: %s" % stats)
    s.stop("timeout")


def test_interrupt():
    s = Server()
    p = s.peer
    thread = p.start_thread()
    turn = p.start_turn(thread, "ask: Wait for me?\nsay: never said")
    ask = p.wait(is_ask)
    r = p.call("turn/interrupt", {"threadId": thread, "turnId": turn})
    check("result" in r, "turn/interrupt answers: %s" % r)
    p.wait(resolved_for(ask["id"]))
    events = until_completed(p, turn)
    check(events[-1]["params"]["turn"]["status"] == "interrupted", "the turn ends interrupted")
    check(said(events) == [], "nothing more is said")
    n = counts(p)
    check(n["approvals"] == 0 and n["pendingRequests"] == 0, "nothing left pending: %s" % n)
    s.stop("interrupt")


def test_archive_while_waiting():
    s = Server()
    p = s.peer
    thread = p.start_thread()
    turn = p.start_turn(thread, "ask: Before you go?")
    ask = p.wait(is_ask)
    r = p.call("thread/archive", {"threadId": thread})
    check("result" in r, "thread/archive answers: %s" % r)
    p.wait(resolved_for(ask["id"]))
    done = p.wait(lambda m: m.get("method") == "turn/completed")
    check(done["params"]["turn"]["status"] == "interrupted", "the waiting turn ends interrupted")
    p.wait(lambda m: m.get("method") == "thread/closed")
    p.write({"id": ask["id"], "result": {"answers": {"q1": {"answers": ["too late"]}}}})
    n = counts(p)
    check(n["approvals"] == 0 and n["pendingRequests"] == 0 and n["conversations"] == 0,
          "nothing left: %s" % n)
    s.stop("archive")


def test_two_clients_race():
    s = Server(ws=True)
    if not check(s.ws_url is not None, "the server listens on a WebSocket too"):
        s.stop("race")
        return
    p = s.peer
    thread = p.start_thread()
    other = WsPeer(s.ws_url)
    r = other.call("thread/resume", {"threadId": thread})
    check("result" in r, "a second client resumes the thread: %s" % r.get("error"))
    turn = p.start_turn(thread, "ask: Who answers first?\nsay: decided")
    ask_a = p.wait(is_ask)
    ask_b = other.wait(is_ask)
    check(ask_a["params"] == ask_b["params"], "both clients are asked the same question")
    # Both answer at once: one answer is applied, the other refused.
    t = threading.Thread(target=lambda: other.write(
        {"id": ask_b["id"], "result": {"answers": {"q1": {"answers": ["from ws"]}}}}))
    t.start()
    p.write({"id": ask_a["id"], "result": {"answers": {"q1": {"answers": ["from stdio"]}}}})
    t.join()
    p.wait(resolved_for(ask_a["id"]))
    other.wait(resolved_for(ask_b["id"]))
    events = until_completed(p, turn)
    check(events[-1]["params"]["turn"]["status"] == "completed" and said(events) == ["decided"],
          "one answer applied, the turn goes on once")
    stats = p.call("parley/stats", {})["result"]["approvals"]
    check(stats["decided"] == 1 and stats["refusedReplies"] == 1,
          "decided once, the other answer refused: %s" % stats)
    time.sleep(0.2)
    log = p.log_text()
    check("event=late_answer" in log or "event=unknown_response" in log,
          "the losing answer is refused and logged")
    other.close()
    SCHEMA.check(check, other, "race (ws client)")
    s.stop("race")


TOOLS = [{"type": "function", "name": "lookup", "description": "Looks a key up.",
          "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}}},
         {"type": "namespace", "name": "kv", "description": "A store.",
          "tools": [{"type": "function", "name": "get", "description": "Gets a key.",
                     "inputSchema": {"type": "object"}}]}]
CALL = "item/tool/call"


def is_call(m):
    return m.get("method") == CALL and "id" in m


def tool_items(events, method="item/completed"):
    return [m["params"]["item"] for m in events
            if m.get("method") == method and m["params"]["item"]["type"] == "dynamicToolCall"]


def test_dynamic_tools_gate():
    s = Server()
    p = s.peer
    r = p.call("thread/start", {"dynamicTools": TOOLS})
    check(r.get("error", {}).get("code") == -32600 and r["error"]["message"]
          == "thread/start.dynamicTools requires experimentalApi capability",
          "dynamicTools needs experimentalApi, as in Codex: %s" % r.get("error"))
    s.stop("dynamic gate")
    s = Server(experimental=True)
    p = s.peer
    r = p.call("thread/start", {"dynamicTools": [{"type": "function", "name": "x"}]})
    check(r.get("error", {}).get("code") == -32600 and "description" in r["error"]["message"],
          "a malformed declaration is refused: %s" % r.get("error"))
    s.stop("dynamic malformed")


def test_dynamic_tool_call():
    s = Server(experimental=True, extra=["--approval-timeout", "800ms"])
    p = s.peer
    thread = p.start_thread(dynamicTools=TOOLS)
    turn = p.start_turn(thread, 'call[lookup]: {"key": "a"}\ncall[kv__get]: {}\nsay: ok')
    call = p.wait(is_call)
    started = [m for m in p.kept if m.get("method") == "item/started"
               and m["params"]["item"]["type"] == "dynamicToolCall"]
    params = call["params"]
    check(started and started[0]["params"]["item"]["id"] == params["callId"]
          and started[0]["params"]["item"]["status"] == "inProgress"
          and started[0]["params"]["item"]["arguments"] == {"key": "a"},
          "the item starts before the request: %s" % started)
    check(params["tool"] == "lookup" and params["arguments"] == {"key": "a"}
          and params["namespace"] is None and params["threadId"] == thread and params["turnId"] == turn,
          "the request names the tool and its arguments: %s" % params)
    p.write({"id": call["id"], "result": {"contentItems": [{"type": "inputText", "text": "42"}],
                                          "success": True}})
    p.wait(resolved_for(call["id"]))
    second = p.wait(is_call)
    check(second["params"]["tool"] == "get" and second["params"]["namespace"] == "kv",
          "a namespaced tool is called with its namespace: %s" % second["params"])
    p.write({"id": second["id"], "result": {"contentItems": [], "success": False}})
    events = until_completed(p, turn)
    done = tool_items(p.kept + events)
    check([(d["status"], d["success"]) for d in done] == [("completed", True), ("failed", False)],
          "completed with success, failed without: %s" % done)
    check(done and done[0]["contentItems"] == [{"type": "inputText", "text": "42"}]
          and isinstance(done[0]["durationMs"], int), "the item shows the client's answer")
    check(said(events) == ["ok"] and events[-1]["params"]["turn"]["status"] == "completed",
          "the turn goes on")
    p.kept.clear()

    # Timed out: the item fails, the turn goes on.
    turn = p.start_turn(thread, 'call[lookup]: {"key": "slow"}\nsay: after')
    call = p.wait(is_call)
    p.wait(resolved_for(call["id"]), timeout=10)
    events = until_completed(p, turn)
    done = tool_items(events)
    check([(d["status"], d["success"]) for d in done] == [("failed", False)] and said(events) == ["after"],
          "timed out: the item fails, the turn goes on: %s" % done)

    # Not declared: nobody is asked.
    turn = p.start_turn(thread, 'call[nope]: {}\nsay: fine')
    events = until_completed(p, turn)
    check(not [m for m in events if is_call(m)] and said(events) == ["fine"],
          "an undeclared tool is never called")

    # Interrupted while it waits.
    turn = p.start_turn(thread, 'call[lookup]: {"key": "x"}\nsay: never')
    call = p.wait(is_call)
    p.call("turn/interrupt", {"threadId": thread, "turnId": turn})
    p.wait(resolved_for(call["id"]))
    events = until_completed(p, turn)
    done = tool_items(events)
    check(events[-1]["params"]["turn"]["status"] == "interrupted"
          and [d["status"] for d in done] == ["failed"] and said(events) == [],
          "interrupted: resolved, the item fails, the turn ends interrupted")
    n = counts(p)
    check(n["approvals"] == 0 and n["pendingRequests"] == 0, "nothing left pending: %s" % n)
    s.stop("dynamic tools")


def http_server_flags(mock, *flags):
    return ["-c", "model=mock-model", "-c", "model_provider=mock",
            "-c", "model_providers.mock.base_url=%s/v1" % mock.url,
            "-c", "model_providers.mock.env_key=MOCK_KEY", *flags]


def http_server(mock, *flags, experimental=False):
    return Server(experimental=experimental, extra=http_server_flags(mock, *flags))


def tool_names(request):
    return [t.get("name") for t in request["body"].get("tools", [])]


def call_outputs(request):
    return [i for i in request["body"]["input"] if i.get("type") == "function_call_output"]


QUESTION = json.dumps({"questions": [{"id": "lang", "header": "Language", "question": "Which one?",
                                      "options": [{"label": "C++", "description": "fast"}]}]})


def test_http_model():
    if not MOCK:
        print("note: no mock model given; the HTTP model's part is left out")
        return
    os.environ["MOCK_KEY"] = "sk-test"
    mock = app_server_peer.Mock(MOCK)
    try:
        # Not offered by default (Codex offers it only in plan mode or with the feature).
        s = http_server(mock)
        p = s.peer
        thread = p.start_thread()
        turn = p.start_turn(thread, "mock: say hello")
        until_completed(p, turn)
        check("request_user_input" not in tool_names(mock.requests()[0]),
              "request_user_input is not offered by default")
        s.stop("http default")
        mock.forget()

        s = http_server(mock, "-c", "features.default_mode_request_user_input=true")
        p = s.peer
        thread = p.start_thread()
        turn = p.start_turn(thread, "mock: tool request_user_input %s\nmock: say got it" % QUESTION)
        ask = p.wait(is_ask)
        check(ask["params"]["questions"][0]["id"] == "lang"
              and ask["params"]["questions"][0]["options"][0]["label"] == "C++",
              "the model's question reaches the client: %s" % ask["params"]["questions"])
        p.write({"id": ask["id"], "result": {"answers": {"lang": {"answers": ["C++"]}}}})
        events = until_completed(p, turn)
        check(events[-1]["params"]["turn"]["status"] == "completed" and said(events) == ["got it"],
              "the turn goes on to the model's answer: %s" % said(events))
        reqs = mock.requests()
        check("request_user_input" in tool_names(reqs[0]), "offered with the feature")
        outs = call_outputs(reqs[-1])
        told = json.loads(outs[-1]["output"]) if outs else None
        check(told == {"answers": {"lang": {"answers": ["C++"]}}}
              and outs[-1]["call_id"] == ask["params"]["itemId"],
              "the model is told the answers under its call id: %s" % outs)
        mock.forget()

        # An error answer: the model is told it was not answered.
        turn = p.start_turn(thread, "mock: tool request_user_input %s\nmock: say fine" % QUESTION)
        ask = p.wait(is_ask)
        p.write({"id": ask["id"], "error": {"code": -32000, "message": "dismissed"}})
        events = until_completed(p, turn)
        outs = call_outputs(mock.requests()[-1])
        check(outs and "was not answered" in outs[-1]["output"] and "dismissed" in outs[-1]["output"],
              "an error answer: the model is told it was not answered: %s" % outs[-1:])
        s.stop("http feature")
        mock.forget()

        # A client's tool: offered to the model, its call asks the client,
        # the answer's content goes back as the call's output.
        s = http_server(mock, experimental=True)
        p = s.peer
        thread = p.start_thread(dynamicTools=TOOLS)
        turn = p.start_turn(thread, 'mock: tool lookup {"key": "b"}\nmock: say used it')
        call = p.wait(is_call)
        check(call["params"]["arguments"] == {"key": "b"}, "the model's arguments reach the client")
        p.write({"id": call["id"], "result": {"contentItems": [{"type": "inputText", "text": "B!"}],
                                              "success": True}})
        events = until_completed(p, turn)
        reqs = mock.requests()
        offered = [t for t in reqs[0]["body"]["tools"] if t.get("name") in ("lookup", "kv__get")]
        check(len(offered) == 2 and offered[0]["parameters"] == TOOLS[0]["inputSchema"],
              "the client's tools are offered with their schemas: %s" % offered)
        outs = call_outputs(reqs[-1])
        check(outs and outs[-1]["output"] == [{"type": "input_text", "text": "B!"}]
              and outs[-1]["call_id"] == call["params"]["callId"],
              "the model gets the content as the call's output: %s" % outs[-1:])
        check(said(events) == ["used it"], "the turn goes on")
        s.stop("http client tool")
    finally:
        mock.stop()


# -- durable: asked again after kill -9, answered once -------------------------

def actions_of(server, thread):
    return [r["payload"] for r in server.rollout(thread) if r.get("type") == "parley_action"]


def is_call_for(thread):
    return lambda m: is_call(m) and m["params"]["threadId"] == thread


def is_ask_for(thread):
    return lambda m: is_ask(m) and m["params"]["threadId"] == thread


def resume_then(peer, thread, pred):
    """thread/resume; the request asked again must come after its reply."""
    rid = peer.send("thread/resume", {"threadId": thread})
    seen = []
    m = peer.wait(lambda m: seen.append(m) or pred(m))
    replied = any(x.get("id") == rid and "method" not in x for x in seen[:-1])
    return m, replied


def listed_status(peer):
    return {t["id"]: t["status"] for t in peer.call("thread/list", {"limit": 100})["result"]["data"]}


def test_durable_requests():
    """A question and a client tool's call waiting at a kill -9 are asked
    again after the restart (same ids, after the resume's reply), answered
    once, and the turn goes on; one answered before the kill is never asked
    again; the client's tools and the tool call's item are in the rollout."""
    s = Server(experimental=True)
    p = s.peer
    answered = p.start_thread()
    turn = p.start_turn(answered, "ask: Answered already?\nsay: fine")
    ask = p.wait(is_ask_for(answered))
    p.write({"id": ask["id"], "result": {"answers": {"q1": {"answers": ["yes"]}}}})
    until_completed(p, turn)
    asking = p.start_thread()
    q_turn = p.start_turn(asking, "ask: Which colour?\nsay: thanks")
    q_old = p.wait(is_ask_for(asking))
    calling = p.start_thread(dynamicTools=TOOLS)
    c_turn = p.start_turn(calling, 'call[lookup]: {"key": "a"}\nsay: ok')
    c_old = p.wait(is_call_for(calling))
    s.kill9("durable requests, first run")
    asked = actions_of(s, asking)
    check(asked and asked[-1]["phase"] == "asked" and asked[-1]["kind"] == "userInput"
          and asked[-1]["request"]["questions"] == q_old["params"]["questions"]
          and asked[-1]["item_id"] == q_old["params"]["itemId"],
          "the question is stored before it is asked: %s" % asked[-1:])
    asked = actions_of(s, calling)
    check(asked and asked[-1]["phase"] == "asked" and asked[-1]["kind"] == "dynamicToolCall"
          and asked[-1]["request"]["arguments"] == {"key": "a"}, "so is the tool call: %s" % asked[-1:])
    meta = s.rollout(calling)[0]["payload"]
    check(meta.get("dynamic_tools") == TOOLS,
          "the client's tools are kept with the thread (session_meta, as Codex): %s" % meta.get("dynamic_tools"))
    check([a["phase"] for a in actions_of(s, answered)] == ["asked", "decided", "done"],
          "the answered question: asked, decided, done: %s" % actions_of(s, answered))
    check(actions_of(s, answered)[1].get("answer") == {"answers": {"q1": {"answers": ["yes"]}}},
          "its answer is stored with its decision")

    s = Server(experimental=True, root=s.root)
    p = s.peer
    # Lists never wait for the index: killed early, the first run may not
    # have created it, and this start rebuilds it behind the lists.
    p.wait_index_ready()
    status = listed_status(p)
    check(status.get(asking) == {"type": "active", "activeFlags": ["waitingOnUserInput"]},
          "thread/list after the restart: the question's thread waits on user input: %s"
          % status.get(asking))
    check(status.get(calling) == {"type": "active", "activeFlags": []},
          "the tool call's thread is active, waiting on no person: %s" % status.get(calling))
    check(status.get(answered) == {"type": "notLoaded"}, "the answered one waits on nothing")
    ask, replied = resume_then(p, asking, is_ask_for(asking))
    check(replied, "the question is asked again after the resume's reply")
    check(ask["params"]["itemId"] == q_old["params"]["itemId"] and ask["params"]["turnId"] == q_turn
          and ask["params"]["questions"] == q_old["params"]["questions"],
          "asked again: the same call, turn and questions: %s" % ask["params"])
    p.write({"id": ask["id"], "result": {"answers": {"q1": {"answers": ["green"]}}}})
    events = until_completed(p, q_turn)
    check(events[-1]["params"]["turn"]["status"] == "completed" and said(events) == ["thanks"],
          "the question's turn goes on after the answer: %s" % said(events))
    call, replied = resume_then(p, calling, is_call_for(calling))
    check(replied, "the tool call is asked again after the resume's reply")
    check(call["params"]["callId"] == c_old["params"]["callId"] and call["params"]["turnId"] == c_turn
          and call["params"]["tool"] == "lookup" and call["params"]["arguments"] == {"key": "a"},
          "called again: the same call id, tool and arguments: %s" % call["params"])
    shown = [m for m in p.kept if m.get("method") == "item/started"
             and m["params"]["item"]["type"] == "dynamicToolCall"]
    check(shown and shown[-1]["params"]["item"]["id"] == c_old["params"]["callId"],
          "its item is shown again before the call: %s" % [
              (m.get("method"), m.get("id")) for m in map(json.loads, p.lines)
              if calling in json.dumps(m.get("params", {})) or "result" in m][-12:])
    p.write({"id": call["id"], "result": {"contentItems": [{"type": "inputText", "text": "A!"}],
                                          "success": True}})
    events = until_completed(p, c_turn)
    check(events[-1]["params"]["turn"]["status"] == "completed" and said(events) == ["ok"],
          "the tool call's turn goes on after the answer: %s" % said(events))
    check(not [m for m in p.kept + events if is_ask_for(answered)(m)],
          "the question answered before the kill is never asked again")
    s.kill9("durable requests, second run")
    check([a["phase"] for a in actions_of(s, asking)] == ["asked", "decided", "done"],
          "the question after the restart: decided, done: %s" % [a["phase"] for a in actions_of(s, asking)])

    s = Server(experimental=True, root=s.root)
    p = s.peer
    # Lists never wait for the index: killed early, the first run may not
    # have created it, and this start rebuilds it behind the lists.
    p.wait_index_ready()
    status = listed_status(p)
    check(all(v == {"type": "notLoaded"} for v in status.values()),
          "nothing waits after the second restart: %s" % status)
    items = p.call("thread/read", {"threadId": calling, "includeTurns": True})["result"]["thread"]["turns"][-1]["items"]
    tools = [i for i in items if i["type"] == "dynamicToolCall"]
    check(len(tools) == 1 and tools[0]["status"] == "completed" and tools[0]["success"] is True
          and tools[0]["contentItems"] == [{"type": "inputText", "text": "A!"}]
          and tools[0]["tool"] == "lookup" and tools[0]["arguments"] == {"key": "a"},
          "the dynamicToolCall item is read back from the rollout: %s" % tools)
    time.sleep(0.3)
    check(not [m for m in p.kept if is_ask(m) or is_call(m)], "nothing is asked again")
    s.stop("durable requests")


def outputs_for(requests, call_id):
    """Every function_call_output the model was sent for `call_id` in its
    last request (its whole history)."""
    return [o for o in call_outputs(requests[-1]) if o["call_id"] == call_id] if requests else []


def append_phase(server, thread, phase, extra):
    """The next phase of a rollout's last action, as the server would have
    written it just before a crash."""
    rollout = None
    for root, _, files in os.walk(os.path.join(server.home, "sessions")):
        rollout = next((os.path.join(root, f) for f in files if thread in f), rollout)
    with open(rollout) as f:
        asked = [json.loads(line) for line in f if '"parley_action"' in line][-1]
    with open(rollout, "a") as f:
        f.write(json.dumps({"timestamp": asked["timestamp"], "type": "parley_action",
                            "payload": dict(asked["payload"], phase=phase, **extra)}) + "\n")


def test_http_durable():
    """The HTTP model across kill -9: a question and a client tool's call
    asked again after the restart, the answer given after it reaches the
    model once (one function_call_output under the call's id); a stored
    answer the model had not heard goes to it at the next start, once; the
    client's tools are still offered to the resumed thread's model."""
    if not MOCK:
        print("note: no mock model given; the HTTP model's durable part is left out")
        return
    os.environ["MOCK_KEY"] = "sk-test"
    mock = app_server_peer.Mock(MOCK)
    flags = ["-c", "features.default_mode_request_user_input=true"]
    try:
        s = http_server(mock, *flags, experimental=True)
        p = s.peer
        thread = p.start_thread(dynamicTools=TOOLS)
        turn = p.start_turn(thread, "mock: tool request_user_input %s\nmock: say got it" % QUESTION)
        old = p.wait(is_ask)
        s.kill9("http durable, question")
        mock.forget()
        s = Server(experimental=True, root=s.root, extra=http_server_flags(mock, *flags))
        p = s.peer
        ask, replied = resume_then(p, thread, is_ask_for(thread))
        check(replied and ask["params"]["itemId"] == old["params"]["itemId"]
              and ask["params"]["turnId"] == turn, "the model's question is asked again after the restart")
        p.write({"id": ask["id"], "result": {"answers": {"lang": {"answers": ["C++"]}}}})
        events = until_completed(p, turn)
        check(events[-1]["params"]["turn"]["status"] == "completed" and said(events) == ["got it"],
              "the turn goes on to the model's answer: %s" % said(events))
        outs = outputs_for(mock.requests(), old["params"]["itemId"])
        check(len(outs) == 1 and json.loads(outs[0]["output"]) == {"answers": {"lang": {"answers": ["C++"]}}},
              "the model gets the answer given after the restart, once: %s" % outs)
        check("lookup" in tool_names(mock.requests()[-1]),
              "the client's tools are still offered after the restart: %s" % tool_names(mock.requests()[-1]))

        # A client tool's call waiting at the kill: called again, answered once.
        turn = p.start_turn(thread, 'mock: tool lookup {"key": "b"}\nmock: say used it')
        old = p.wait(is_call)
        s.kill9("http durable, tool call")
        mock.forget()
        s = Server(experimental=True, root=s.root, extra=http_server_flags(mock, *flags))
        p = s.peer
        call, replied = resume_then(p, thread, is_call_for(thread))
        check(replied and call["params"]["callId"] == old["params"]["callId"]
              and call["params"]["arguments"] == {"key": "b"}, "the tool call is made again after the restart")
        p.write({"id": call["id"], "result": {"contentItems": [{"type": "inputText", "text": "B!"}],
                                              "success": True}})
        events = until_completed(p, turn)
        check(said(events) == ["used it"], "the turn goes on: %s" % said(events))
        outs = outputs_for(mock.requests(), old["params"]["callId"])
        check(len(outs) == 1 and outs[0]["output"] == [{"type": "input_text", "text": "B!"}],
              "the model gets the tool's answer once: %s" % outs)

        # Answered and stored, the server gone before the model heard it: the
        # next start hands it over by itself, once, and asks nobody.
        turn = p.start_turn(thread, "mock: tool request_user_input %s\nmock: say noted" % QUESTION)
        old = p.wait(is_ask)
        s.kill9("http durable, stored answer")
        answer = {"answers": {"lang": {"answers": ["C++"]}}}
        append_phase(s, thread, "decided", {"outcome": "decided", "decision": "accept",
                                            "stage": "client", "answer": answer})
        mock.forget()
        s = Server(experimental=True, root=s.root, extra=http_server_flags(mock, *flags))
        p = s.peer
        deadline = time.monotonic() + 30
        while True:
            last = p.call("thread/read", {"threadId": thread, "includeTurns": True})["result"]["thread"]["turns"][-1]
            if last["status"] != "inProgress" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        check(last["id"] == turn and last["status"] == "completed"
              and [i["text"] for i in last["items"] if i["type"] == "agentMessage"] == ["noted"],
              "the stored answer carries the turn on at the next start: %s" % last["status"])
        outs = outputs_for(mock.requests(), old["params"]["itemId"])
        check(len(outs) == 1 and json.loads(outs[0]["output"]) == answer,
              "the model gets the stored answer once: %s" % outs)
        check(not [m for m in p.kept if is_ask(m)], "nobody is asked again")
        s.stop("http durable")
    finally:
        mock.stop()


def main():
    for test in (test_answered, test_options_and_secret, test_malformed_question_never_asked,
                 test_error_reply, test_timeout, test_interrupt, test_archive_while_waiting,
                 test_two_clients_race, test_dynamic_tools_gate, test_dynamic_tool_call,
                 test_durable_requests, test_http_model, test_http_durable):
        print("--", test.__name__, flush=True)
        try:
            test()
        except Exception as e:  # a hang or a crash is a failure of that test, not of the run
            check(False, "%s raised %r" % (test.__name__, e))
    print("%d failed" % len(FAILURES))
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
