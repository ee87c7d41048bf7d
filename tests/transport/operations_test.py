#!/usr/bin/env python3
"""Operations (issue 22) against the real binary: GET /metrics, /readyz while
draining, the drain on SIGTERM, --log-format=json.

Real sockets, the real `parley app-server --listen ws://... --metrics-listen
...`, a real websockets client:
  * /metrics on both listeners parses as the Prometheus text format (HELP and
    TYPE before each family, `parley_` names, counters end in _total,
    histogram buckets cumulative with +Inf == _count), and its counters move
    as approvals are accepted, declined and left pending;
  * every stderr line is one JSON object with time, level and message, and
    each key=value of the message is a field of it;
  * SIGTERM: /readyz answers 503, no new connection is accepted, turn/start
    is refused with -32001, a running turn finishes, the server exits 0 within
    --drain-timeout; the approval left pending is asked again after a restart;
  * a second SIGTERM during a drain ends it at once.

Usage: operations_test.py PARLEY_BINARY
"""
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import websockets

from ws_client import WsClient

BINARY = sys.argv[1]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)


def log_lines(path):
    with open(path) as f:
        return [line for line in f.read().splitlines() if line.strip()]


class Server:
    """--log-format=json: its URLs come from its `event=listening` lines."""

    def __init__(self, root=None, drain="20s"):
        self.root = root or tempfile.mkdtemp(prefix="parley-ops-")
        self.home = os.path.join(self.root, "home")
        self.work = os.path.join(self.root, "work")
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(self.home, exist_ok=True)
        args = [BINARY, "app-server", "--store", "local", "--home", self.home,
                "--listen", "ws://127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                "--log-format=json", "--drain-timeout", drain]
        self.log_path = os.path.join(self.root, "server-%d.log" % time.time_ns())
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True)
        deadline = time.time() + 30
        self.ws_url = self.metrics_url = None
        while time.time() < deadline and not (self.ws_url and self.metrics_url):
            for line in log_lines(self.log_path):
                try:
                    j = json.loads(line)
                except ValueError:
                    continue
                if j.get("event") == "listening":
                    if j.get("what") == "listening on":
                        self.ws_url = j["url"]
                    elif j.get("what") == "metrics on":
                        self.metrics_url = j["url"]
            time.sleep(0.05)
        if not (self.ws_url and self.metrics_url):
            raise RuntimeError("the server did not start listening")
        self.http_url = self.ws_url.replace("ws://", "http://")

    def wait(self, timeout):
        code = self.proc.wait(timeout=timeout)
        self.log.close()
        return code


class Client(WsClient):
    @classmethod
    async def connect(cls, url):
        return await super().connect(url, name="ops-test")

    async def thread(self, work, policy="on-request"):
        r = await self.call("thread/start", {"cwd": work, "approvalPolicy": policy})
        return r["result"]["thread"]["id"]

    async def turn(self, thread, prompt):
        return await self.call("turn/start", {"threadId": thread,
                                              "input": [{"type": "text", "text": prompt}]})


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_exposition(text):
    """{family: {"type", "help", "samples": {(name, labels): value}}}, checking
    the format as it goes."""
    families = {}
    current = None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, help_text = line[7:].split(" ", 1)
            check(name not in families, "family %s described once" % name)
            current = families[name] = {"help": help_text, "type": None, "samples": {}}
        elif line.startswith("# TYPE "):
            name, kind = line[7:].split(" ")
            check(current is families.get(name), "TYPE %s follows its HELP" % name)
            check(kind in ("counter", "gauge", "histogram"), "known type for %s" % name)
            current["type"] = kind
        else:
            m = SAMPLE.match(line)
            check(m is not None, "a sample line: %r" % line)
            if not m:
                continue
            name, labels = m.group(1), tuple(LABEL.findall(m.group(3) or ""))
            family = re.sub(r"_(bucket|sum|count)$", "", name) \
                if current and current["type"] == "histogram" else name
            check(current is families.get(family), "%s follows its family's TYPE" % name)
            current["samples"][(name, labels)] = float(m.group(4))
    for name, f in families.items():
        check(name.startswith("parley_"), "%s has the parley_ prefix" % name)
        if f["type"] == "counter":
            check(name.endswith("_total"), "counter %s ends in _total" % name)
        if f["type"] == "histogram":
            check(name.endswith("_seconds"), "histogram %s is in seconds" % name)
            buckets = [(v, dict(l)["le"]) for (n, l), v in f["samples"].items()
                       if n.endswith("_bucket")]
            values = [v for v, _ in buckets]
            check(values == sorted(values), "%s buckets are cumulative" % name)
            check(buckets and buckets[-1][1] == "+Inf", "%s ends with +Inf" % name)
            check(buckets[-1][0] == f["samples"][(name + "_count", ())],
                  "%s +Inf bucket equals _count" % name)
        for (n, labels), _ in f["samples"].items():
            for k, _ in labels:
                check(k not in ("thread", "threadId", "turn", "peer", "client"),
                      "%s has no unbounded label %s" % (n, k))
    return families


def value(families, name, **labels):
    family = re.sub(r"_(bucket|sum|count)$", "", name)
    f = families.get(family) or families.get(name)
    if not f:
        return None
    return f["samples"].get((name, tuple(sorted(labels.items()))))


def scrape(url):
    status, kind, body = http_get(url + "/metrics")
    check(status == 200, "/metrics answers 200 at %s" % url)
    check(kind.startswith("text/plain; version=0.0.4"), "/metrics content type: %s" % kind)
    return parse_exposition(body)


async def approvals_and_metrics(server):
    before = scrape(server.metrics_url)
    for name in ("parley_approvals_total", "parley_approval_decision_seconds",
                 "parley_approvals_pending", "parley_threads_loaded", "parley_turns_running",
                 "parley_connections", "parley_queued_bytes", "parley_limit_refusals_total",
                 "parley_store_writable", "parley_store_writes_total",
                 "parley_store_write_seconds", "parley_model_requests_total",
                 "parley_model_retries_total", "parley_model_requests_waiting",
                 "parley_model_requests_in_flight", "parley_model_queue_wait_seconds",
                 "parley_model_first_byte_seconds", "parley_model_response_seconds"):
        check(name in before, "/metrics has %s" % name)
    check(before["parley_approvals_total"]["type"] == "counter", "approvals_total is a counter")
    check(before["parley_approvals_pending"]["type"] == "gauge", "approvals_pending is a gauge")
    check(value(before, "parley_approvals_total", outcome="allowed") == 0, "no approval yet")
    c = await Client.connect(server.ws_url)
    thread = await c.thread(server.work)
    for decision, name in (("accept", "yes"), ("decline", "no")):
        await c.turn(thread, "run[escalate]: touch " + name)
        await c.answer(await c.method("item/commandExecution/requestApproval"), decision)
        await c.method("turn/completed")
    after = scrape(server.metrics_url)
    check(value(after, "parley_approvals_total", outcome="allowed") == 1, "one allowed")
    check(value(after, "parley_approvals_total", outcome="denied") == 1, "one denied")
    check(value(after, "parley_approvals_requested_total") == 2, "two requested")
    check(value(after, "parley_approval_decisions_total", stage="client") == 2,
          "two decided by the client")
    check(value(after, "parley_approval_decision_seconds_count") == 2, "two latencies")
    check(value(after, "parley_approval_decision_seconds_sum") > 0, "latency sum moved")
    check(value(after, "parley_threads_loaded") >= 1, "a thread loaded")
    check(value(after, "parley_sessions") == 1, "one session open")
    # Each turn's end was written durably (synced) before it was reported.
    stored = value(after, "parley_store_writes_total", result="stored")
    check((stored or 0) >= 2 and value(after, "parley_store_write_seconds_count") == stored,
          "durable store writes counted with their latencies (%s)" % stored)
    check(value(after, "parley_store_writes_total", result="failed") == 0, "no write failed")
    # The same figures on the WebSocket listener, without a token.
    on_ws = scrape(server.http_url)
    check(value(on_ws, "parley_approvals_total", outcome="allowed") == 1, "/metrics on --listen")
    # The metrics listener takes no session.
    try:
        await websockets.connect(server.metrics_url.replace("http://", "ws://"))
        check(False, "the metrics listener refuses a WebSocket upgrade")
    except websockets.InvalidStatusCode as e:
        check(e.status_code == 404, "upgrade on the metrics listener: 404, got %s" % e.status_code)
    return c, thread


async def test_metrics_and_drain():
    server = Server()
    c, thread = await approvals_and_metrics(server)
    # A pending approval, and a turn that runs a while without one.
    pending = await c.thread(server.work)
    await c.turn(pending, "run[escalate]: touch pending")
    request = await c.method("item/commandExecution/requestApproval")
    other = await Client.connect(server.ws_url)
    busy = await other.thread(server.work, policy="never")
    await other.turn(busy, "run: sleep 2 && touch slept")
    await asyncio.sleep(0.3)
    m = scrape(server.metrics_url)
    check(value(m, "parley_approvals_pending") == 1, "one approval pending")
    check(value(m, "parley_turns_running") == 2, "two turns running")
    check(http_get(server.metrics_url + "/readyz")[0] == 200, "ready before the signal")
    started = time.time()
    server.proc.send_signal(signal.SIGTERM)
    await asyncio.sleep(0.3)
    status, _, body = http_get(server.metrics_url + "/readyz")
    check(status == 503 and "shutting down" in body, "readyz 503 while draining: %s %r"
          % (status, body))
    host, port = server.ws_url[len("ws://"):].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        check(False, "no new connection while draining")
    except OSError:
        pass
    refused = await c.turn(thread, "say: more")
    check(refused.get("error", {}).get("code") == -32001
          and "shutting down" in refused["error"]["message"],
          "turn/start refused while draining: %s" % refused)
    done = await other.method("turn/completed")
    check(done["params"]["turn"]["status"] == "completed", "the running turn finished")
    code = server.wait(30)
    elapsed = time.time() - started
    check(code == 0, "exit 0 after the drain, got %s" % code)
    check(elapsed < 20, "the drain ended within its bound (%.1fs)" % elapsed)
    check(os.path.exists(os.path.join(server.work, "slept")), "the running turn's command ran")
    lines = log_lines(server.log_path)
    check_json_log(lines)
    ends = [json.loads(l) for l in lines if '"drain_end"' in l]
    check(ends and ends[0].get("how") == "drained", "the drain ended drained: %s" % ends)
    # The pending approval survived on disk: asked again after a restart.
    again_server = Server(root=server.root)
    try:
        back = await Client.connect(again_server.ws_url)
        r = await back.call("thread/resume", {"threadId": pending})
        check("result" in r, "the thread resumes after the restart: %s" % r)
        again = await back.method("item/commandExecution/requestApproval")
        check(again["params"]["itemId"] == request["params"]["itemId"],
              "the pending approval is asked again after the restart")
        await back.answer(again, "accept")
        await back.method("turn/completed")
        await back.ws.close()
    finally:
        again_server.proc.send_signal(signal.SIGTERM)
        check(again_server.wait(30) == 0, "the restarted server exits 0")
    shutil.rmtree(server.root, ignore_errors=True)


async def test_second_signal_ends_the_drain():
    server = Server(drain="60s")
    c = await Client.connect(server.ws_url)
    t = await c.thread(server.work, policy="never")
    await c.turn(t, "run: sleep 30")
    await asyncio.sleep(0.5)
    started = time.time()
    server.proc.send_signal(signal.SIGTERM)
    await asyncio.sleep(0.5)
    check(server.proc.poll() is None, "the first signal drains (the turn still runs)")
    server.proc.send_signal(signal.SIGTERM)
    code = server.wait(20)
    check(time.time() - started < 10, "a second signal ends the drain at once")
    check(code == 0, "exit 0 after a second signal, got %s" % code)
    ends = [json.loads(l) for l in log_lines(server.log_path) if '"drain_end"' in l]
    check(ends and ends[0].get("how") == "second_signal", "drain ended by the second signal")
    shutil.rmtree(server.root, ignore_errors=True)


def check_json_log(lines):
    check(len(lines) > 5, "the server logged")
    pair = re.compile(r'(?:^| )([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|\S*)')
    for line in lines:
        try:
            j = json.loads(line)
        except ValueError:
            check(False, "a stderr line that is not JSON: %r" % line[:200])
            continue
        for key in ("time", "level", "message"):
            check(key in j, "a log line has %s: %r" % (key, line[:200]))
        check(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", j.get("time", "")),
              "time is UTC ISO 8601: %s" % j.get("time"))
        for key, raw in pair.findall(j.get("message", "")):
            name = key if key not in ("time", "level", "message", "component") else key + "_field"
            want = raw[1:-1].replace('\\"', '"') if raw.startswith('"') else raw
            check(str(j.get(name)) == want, "field %s=%r of %r" % (name, want, line[:200]))
    connected = [json.loads(l) for l in lines if '"event":"connected"' in l]
    check(connected and "client" in connected[0], "a connection's line names its client")


async def main():
    await test_metrics_and_drain()
    await test_second_signal_ends_the_drain()


asyncio.run(main())
if FAILURES:
    print("%d failure(s)" % len(FAILURES))
    sys.exit(1)
print("operations: all passed")
