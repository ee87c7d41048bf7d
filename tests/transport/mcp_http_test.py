#!/usr/bin/env python3
"""Streamable-HTTP MCP servers (`url`) through the real `parley app-server`
over stdio (issue 30):

- the reference server (@modelcontextprotocol/server-everything, its
  `streamableHttp` mode, from npm as ctest mcp_servers installs it):
  connected with its tools, `echo` answers; stopped, the next call fails
  naming why and its status says failed; started again on the same port,
  parley reconnects by itself and `echo` answers again;
- a small HTTP server of this test's that records what it is sent: the
  bearer token from `bearer_token_env_var`, `http_headers` and
  `env_http_headers`; `Mcp-Session-Id` and `MCP-Protocol-Version` on every
  POST after initialize; an answer as an event stream (with a progress
  notification before it); an HTTP 500 fails that call only; a 404 for an
  ended session makes parley initialize a new session and carry on;
- its GET stream, opened once parley has initialized (the session, the
  protocol version, the headers, Accept: text/event-stream): a
  tools/list_changed on it makes parley list the tools again, a ping on it
  is answered by a POST; broken by the server, it is opened again with
  Last-Event-ID naming the last event; a second recorder answers its GET
  405 and is never asked again, its calls unaffected.
Every line parley prints is checked against the Codex 0.169 schema (the
startup updates and the replies to the MCP methods).

Usage: mcp_http_test.py PARLEY_BINARY SCHEMA_DIR NPM_CACHE_DIR
Exit 77 (skipped) when npm, the registry or the schema cannot be had.
"""
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import app_server_peer  # noqa: E402
from mcp_npm import install_everything  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_everything(index, port, log):
    env = dict(os.environ, PORT=str(port))
    p = subprocess.Popen(["node", index, "streamableHttp"], stdout=log, stderr=log, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("server-everything did not listen on %d" % port)


# -- a recording streamable-HTTP server ---------------------------------------------

class Recorder(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, offers_stream=True):
        super().__init__(("127.0.0.1", 0), Handler)
        self.posts = []  # (headers dict lower-cased, message)
        self.gets = []  # headers dict lower-cased, of each GET
        self.sessions = 0
        self.live = None  # the session that is valid
        self.offers_stream = offers_stream
        self.pushed = False  # a tool added, announced on the GET stream
        self.closing = False

    def answered(self, request_id):
        return any(m.get("id") == request_id and "method" not in m for _, m in self.posts)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        srv = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        m = json.loads(body)
        headers = {k.lower(): v for k, v in self.headers.items()}
        srv.posts.append((headers, m))
        method = m.get("method")
        if method == "initialize":
            srv.sessions += 1
            srv.live = "session-%d" % srv.sessions
            out = {"jsonrpc": "2.0", "id": m["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "recorder", "version": "1"}}}
            return self.reply(200, json.dumps(out).encode(),
                              [("Content-Type", "application/json"), ("Mcp-Session-Id", srv.live)])
        if headers.get("mcp-session-id") != srv.live:
            return self.reply(404, b"no such session")
        if "id" not in m or method is None:
            return self.reply(202)
        if method == "tools/list":
            names = ("plain", "sse", "fail", "expire") + (("pushed",) if srv.pushed else ())
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in names]
            return self.reply(200, json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": tools}}).encode(),
                              [("Content-Type", "application/json")])
        if method != "tools/call":
            return self.reply(200, json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {
                "code": -32601, "message": "no"}}).encode(), [("Content-Type", "application/json")])
        tool = m["params"]["name"]
        result = {"content": [{"type": "text", "text": "%s from %s" % (tool, srv.live)}]}
        if tool == "fail":
            return self.reply(500, b"boom")
        if tool == "expire":
            srv.live = None
        if tool == "sse":
            events = [{"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": "working"}},
                      {"jsonrpc": "2.0", "id": m["id"], "result": result}]
            # The answer's JSON spread over two data lines, as SSE allows.
            text = "".join("event: message\ndata: %s\n\n" % json.dumps(e, indent=1).replace("\n", "\ndata: ")
                           for e in events)
            return self.reply(200, text.encode(), [("Content-Type", "text/event-stream")])
        return self.reply(200, json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}).encode(),
                          [("Content-Type", "application/json")])

    def do_GET(self):
        """The GET stream. The first one of a session announces a new tool
        (id ev-1), sends a ping (id ev-2) and breaks once it is answered;
        the next ones stay open until the session ends or the test does."""
        srv = self.server
        headers = {k.lower(): v for k, v in self.headers.items()}
        srv.gets.append(headers)
        if not srv.offers_stream:
            return self.reply(405, b"", [("Allow", "POST")])
        session = headers.get("mcp-session-id")
        if session != srv.live:
            return self.reply(404, b"no such session")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(eid, message):
            self.wfile.write(("retry: 200\nid: %s\ndata: %s\n\n" % (eid, json.dumps(message))).encode())
            self.wfile.flush()

        try:
            if len([g for g in srv.gets if g.get("mcp-session-id") == session]) == 1:
                srv.pushed = True
                event("ev-1", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                event("ev-2", {"jsonrpc": "2.0", "id": "srv-ping-1", "method": "ping"})
                deadline = time.monotonic() + 10
                while not srv.answered("srv-ping-1") and time.monotonic() < deadline:
                    time.sleep(0.02)
                return  # the break: the connection closes mid-session
            self.wfile.write(b": open\n\n")
            self.wfile.flush()
            while srv.live == session and not srv.closing:
                time.sleep(0.05)
        except OSError:
            pass


# -- the test ---------------------------------------------------------------------------

def main():
    parley, schema_dir, cache = sys.argv[1:4]
    import jsonschema
    schema_file = os.path.join(schema_dir, "v2", "McpServerStatusUpdatedNotification.json")
    if not os.path.exists(schema_file):
        print("SKIPPED: no Codex schema at", schema_dir)
        return 77
    index = install_everything(os.path.abspath(cache))
    if index is None:
        print("SKIPPED: npm, node or the registry cannot be had")
        return 77
    validators = {}
    for method, name in (("mcpServer/startupStatus/updated", "v2/McpServerStatusUpdatedNotification"),
                         ("mcpServerStatus/list", "v2/ListMcpServerStatusResponse"),
                         ("mcpServer/tool/call", "v2/McpServerToolCallResponse")):
        with open(os.path.join(schema_dir, name + ".json")) as f:
            validators[method] = jsonschema.Draft7Validator(json.load(f))

    root = tempfile.mkdtemp(prefix="parley-mcp-http-")
    everything_log = open(os.path.join(root, "everything.log"), "w")
    port = free_port()
    everything = start_everything(index, port, everything_log)
    recorder = Recorder()
    threading.Thread(target=recorder.serve_forever, daemon=True).start()
    quiet = Recorder(offers_stream=False)
    threading.Thread(target=quiet.serve_forever, daemon=True).start()
    config = os.path.join(root, "config.toml")
    with open(config, "w") as f:
        f.write('[mcp_servers.web]\nurl = "http://127.0.0.1:%d/mcp"\nstartup_timeout_sec = 20\n' % port)
        f.write('[mcp_servers.rec]\nurl = "http://127.0.0.1:%d/mcp"\n' % recorder.server_address[1])
        f.write('bearer_token_env_var = "PARLEY_TEST_TOKEN"\n')
        f.write('http_headers = { "X-Team" = "infra" }\n')
        f.write('env_http_headers = { "X-Key" = "PARLEY_TEST_KEY" }\n')
        f.write('[mcp_servers.quiet]\nurl = "http://127.0.0.1:%d/mcp"\n' % quiet.server_address[1])
    env = dict(os.environ, PARLEY_TEST_TOKEN="tok-123", PARLEY_TEST_KEY="key-456")
    env.pop("CODEX_HOME", None)
    peer = app_server_peer.StdioPeer([parley, "app-server", "--store=memory", "--home",
                                      os.path.join(root, "home"), "--config", config], env,
                                     os.path.join(root, "parley.stderr"), client_name="mcp-http")

    def status(name, pred, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            data = peer.call("mcpServerStatus/list", {})["result"]["data"]
            s = {x["name"]: x for x in data}[name]
            if pred(s) or time.monotonic() > deadline:
                return s
            time.sleep(0.05)

    def call(server, tool, **arguments):
        return peer.call("mcpServer/tool/call", {"server": server, "threadId": thread, "tool": tool,
                                                 "arguments": arguments}, timeout=30)

    def text(r):
        if "error" in r:
            return "error: " + r["error"]["message"]
        return r["result"]["content"][0]["text"]

    code = None
    try:
        thread = peer.start_thread()
        # -- the reference server -----------------------------------------------------
        s = status("web", lambda s: s["runtimeStatus"] == "connected")
        check(s["runtimeStatus"] == "connected" and "echo" in s["tools"]
              and s["httpOrigin"] == "http://127.0.0.1:%d" % port,
              "server-everything over HTTP: connected, its tools listed (%d), its origin (%s)"
              % (len(s["tools"]), s.get("httpOrigin")))
        said = text(call("web", "echo", message="over http"))
        check(said == "Echo: over http", "its echo answers (%s)" % said)
        r = call("web", "get-sum", a=2, b=40)
        check("42" in text(r), "get-sum answers (%s)" % text(r))
        everything.kill()
        everything.wait()
        said = text(call("web", "echo", message="nobody there"))
        check(said.startswith("error:") and "cannot reach" in said,
              "stopped: the call fails naming why (%s)" % said)
        s = status("web", lambda s: s["runtimeStatus"] == "failed")
        check(s["runtimeStatus"] == "failed", "its status says failed (%s)" % s.get("toolsError"))
        everything = start_everything(index, port, everything_log)
        s = status("web", lambda s: s["runtimeStatus"] == "connected", timeout=40)
        check(s["runtimeStatus"] == "connected", "started again: parley reconnects by itself")
        said = text(call("web", "echo", message="back"))
        check(said == "Echo: back", "and echo answers again (%s)" % said)

        # -- the recorder ---------------------------------------------------------------
        s = status("rec", lambda s: s["runtimeStatus"] == "connected")
        check(s["runtimeStatus"] == "connected" and s["authStatus"] == "bearerToken",
              "the recording server: connected, authStatus bearerToken (%s)" % s["authStatus"])
        # -- its GET stream ---------------------------------------------------------------
        s = status("rec", lambda s: "pushed" in s["tools"], timeout=10)
        check("pushed" in s["tools"],
              "a tools/list_changed on the GET stream: parley lists the tools again (%s)"
              % sorted(s["tools"]))
        deadline = time.monotonic() + 10
        while not recorder.answered("srv-ping-1") and time.monotonic() < deadline:
            time.sleep(0.05)
        pong = [m for _, m in recorder.posts if m.get("id") == "srv-ping-1" and "method" not in m]
        check(pong and pong[0].get("result") == {},
              "a ping on the GET stream is answered by a POST (%s)" % pong)
        deadline = time.monotonic() + 10
        while len(recorder.gets) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        gets = recorder.gets
        check(len(gets) >= 2 and "last-event-id" not in gets[0]
              and gets[1].get("last-event-id") == "ev-2",
              "broken by the server, the GET stream is opened again with Last-Event-ID ev-2 (%s)"
              % [g.get("last-event-id") for g in gets])
        check(gets and all(g.get("mcp-session-id") == "session-1" and g.get("mcp-protocol-version")
                           == "2025-06-18" and g.get("authorization") == "Bearer tok-123"
                           and g.get("x-team") == "infra" and g.get("accept") == "text/event-stream"
                           for g in gets[:2]),
              "each GET names the session and the version, carries the headers, accepts an event stream")
        s = status("quiet", lambda s: s["runtimeStatus"] == "connected")
        qs = peer.call("mcpServer/tool/call", {"server": "quiet", "threadId": thread, "tool": "plain",
                                               "arguments": {}}, timeout=30)
        check(s["runtimeStatus"] == "connected" and text(qs) == "plain from session-1",
              "a server that answers its GET 405: connected, its calls answered (%s)" % text(qs))

        said = text(call("rec", "plain"))
        check(said == "plain from session-1", "a JSON answer (%s)" % said)
        said = text(call("rec", "sse"))
        check(said == "sse from session-1", "an answer in an event stream, over two data lines (%s)" % said)
        said = text(call("rec", "fail"))
        check(said.startswith("error:") and "HTTP 500: boom" in said,
              "HTTP 500 fails that call, naming it (%s)" % said)
        said = text(call("rec", "plain"))
        check(said == "plain from session-1", "and the server stays (%s)" % said)
        said = text(call("rec", "expire"))
        check(said == "expire from session-1", "the server ends its session (%s)" % said)
        r = call("rec", "plain")  # 404: a new session, this call failed or retried by the client
        s = status("rec", lambda s: s["runtimeStatus"] == "connected" and recorder.sessions == 2,
                   timeout=20)
        check(recorder.sessions == 2 and s["runtimeStatus"] == "connected",
              "a 404 for its session: parley initializes a new one (%d sessions; first call: %s)"
              % (recorder.sessions, text(r)))
        said = text(call("rec", "plain"))
        check(said == "plain from session-2", "and carries on in it (%s)" % said)

        posts = recorder.posts
        check(all(h.get("authorization") == "Bearer tok-123" and h.get("x-team") == "infra"
                  and h.get("x-key") == "key-456" for h, _ in posts),
              "every POST carries the bearer token and both configured headers (%d POSTs)" % len(posts))
        later = [(h, m) for h, m in posts if m.get("method") != "initialize"]
        check(later and all(h.get("mcp-session-id", "").startswith("session-")
                            and h.get("mcp-protocol-version") == "2025-06-18" for h, _ in later),
              "every POST after initialize names the session and the protocol version")
        check(all("text/event-stream" in h.get("accept", "") and "application/json" in h.get("accept", "")
                  for h, _ in posts), "every POST accepts JSON and event streams")
        log = peer.log_text()
        check("tok-123" not in log and "key-456" not in log, "the secrets are not in the log")
        check(len(quiet.gets) == 1 and "get_stream_not_offered server=quiet" in log,
              "the server that answered 405 was asked for a GET stream once, never again (%d GETs)"
              % len(quiet.gets))
    finally:
        code = peer.stop()
        everything.kill()
        recorder.closing = quiet.closing = True
        recorder.shutdown()
        quiet.shutdown()
    check(code == 0, "parley exits 0 (%s)" % code)

    bad = []
    for line in peer.lines:
        m = json.loads(line)
        if m.get("method") == "mcpServer/startupStatus/updated":
            bad += [e.message for e in validators[m["method"]].iter_errors(m["params"])]
        elif "id" in m and "result" in m:
            method = peer.methods.get(m["id"])
            if method in validators:
                bad += [e.message for e in validators[method].iter_errors(m["result"])]
    check(not bad, "what parley printed is valid against the schema (%s)" % bad[:2])
    if failures:
        print("logs kept in", root)
        return 1
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
