#!/usr/bin/python3
"""Structure-aware fuzzer for `parley app-server` over stdio (issue 9).

Builds lines from every client method's valid shape, mutates them (dropped
keys, swapped JSON types, extreme numbers, odd Unicode, NUL, deep nesting,
1 MB strings), answers the server's own approval requests (valid, malformed,
error, duplicate, late, foreign ids), mixes in junk lines, and checks:

  * the process stays up while the input is open;
  * every stdout line is exactly one JSON object;
  * every request-shaped line (an object with a string `method` and a string
    or integer `id`) is answered exactly once, and nothing else is answered;
  * closing stdin makes the server exit 0 within a bounded time.

A run is reproduced by its --seed (timing still varies: the server is real).
Exit status 0 when every invariant held, 1 otherwise (the violations and the
seed are printed), 2 for usage errors. Standard library only.
"""

import argparse
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
# Lines nested deeper than this may be refused without a reply being owed
# (another part of the server bounds the depth of incoming messages).
SAFE_DEPTH = 100

ODD_STRINGS = [
    "", " ", "\u0000", "a\u0000b", "\u202e\u0645\u0631\u062d\u0628\u0627", "\ufeff", "\u2028\u2029",
    "e\u0301\u0301\u0301", "\U0001f600\U0001f469\u200d\U0001f4bb", "\uffff", "\U0010ffff",
    "\\", "\"", "\t\r\n", "%s%n", "../../etc/passwd", "\x7f", "\u00a0",
    "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80", "00000000-0000-0000-0000-000000000000",
]
EXTREME_NUMBERS = [0, -1, 1, INT64_MAX, INT64_MIN, 2 ** 64, -(2 ** 64), 2 ** 100, 1e308, -1e308,
                   0.5, -0.0, 4294967295, 4294967296, 1e-300]
# Lone surrogates are valid in Python's JSON but not in the server's: a line
# holding one may go unanswered.
LONE_SURROGATES = ["\ud800", "a\udfffb"]

SCRIPTS = [
    "say: hello from the fuzzer",
    "run: true",
    "run: echo fuzz",
    "run: false",
    "run: sleep 0.2",
    "run: cat does-not-exist",
    "say: one\nrun: echo two\nsay: three",
    "patch:\n*** Begin Patch\n*** Add File: fuzz-{n}.txt\n+hello\n*** End Patch",
    "patch:\n*** Begin Patch\n*** Update File: fuzz-missing.txt\n@@\n-a\n+b\n*** End Patch",
    "patch:\n*** Begin Patch\n*** Delete File: fuzz-{n}.txt\n*** End Patch",
    "just text without a script",
    "",
]
POLICIES = ["untrusted", "on-request", "never", "on-failure"]
SANDBOXES = ["read-only", "workspace-write", "danger-full-access"]
DECISIONS = ["accept", "acceptForSession", "decline", "cancel"]


class Ids:
    """Unique request ids (strings and integers), so replies can be counted."""

    def __init__(self, rng):
        self.rng = rng
        self.n = 0

    def next(self):
        self.n += 1
        return self.n if self.rng.random() < 0.5 else "f-%d" % self.n


class Server:
    """The real binary; a reader thread drains stdout so it never blocks."""

    def __init__(self, argv, cwd, log_path, trace_path=None):
        self.log = open(log_path, "wb")
        self.trace = open(trace_path, "wb") if trace_path else None
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log)
        self.inbox = queue.Queue()
        self.bad_lines = []
        self.replies = {}  # id (as JSON text) -> count
        self.lines = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            self.lines += 1
            try:
                msg = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                self.bad_lines.append("not JSON (%s): %r" % (e, raw[:200]))
                continue
            if not isinstance(msg, dict):
                self.bad_lines.append("not an object: %r" % raw[:200])
                continue
            if "method" not in msg and "id" in msg:
                key = json.dumps(msg["id"])
                self.replies[key] = self.replies.get(key, 0) + 1
            self.inbox.put(msg)

    def send(self, line):
        if self.trace:
            self.trace.write(line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass"))
            self.trace.write(b"\n")
        self.proc.stdin.write(line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass"))
        self.proc.stdin.write(b"\n")

    def alive(self):
        return self.proc.poll() is None


def depth_of(v):
    # Iterative: the values built here may nest a few thousand levels.
    best, stack = 0, [(v, 1)]
    while stack:
        x, d = stack.pop()
        best = max(best, d)
        if isinstance(x, dict):
            stack.extend((y, d + 1) for y in x.values())
        elif isinstance(x, list):
            stack.extend((y, d + 1) for y in x)
    return best


def contains_surrogate(v):
    """Whether a string in `v` holds a lone surrogate (not valid UTF-8)."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in x):
            return True
        if isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


class Fuzzer:
    def __init__(self, args, server, cwd):
        self.args = args
        self.rng = random.Random(args.seed)
        self.server = server
        self.cwd = cwd
        self.ids = Ids(self.rng)
        self.owed = set()       # ids (JSON text) that must be answered exactly once
        self.maybe = set()      # ids that may be answered at most once
        self.reused = set()     # ids a mutation sent more than once
        self.sent = {}          # owed id -> the line's start (for reports)
        self.threads = []       # known thread ids
        self.turns = {}         # thread id -> turn ids seen
        self.asks = []          # server requests not yet answered by us
        self.answered = []      # server requests we answered (for late/duplicate replies)
        self.stats = {"cases": 0, "requests": 0, "mutated": 0, "junk": 0, "approval_replies": 0,
                      "server_requests": 0}

    # -- what the server said ------------------------------------------------

    def drain(self):
        while True:
            try:
                msg = self.server.inbox.get_nowait()
            except queue.Empty:
                return
            method = msg.get("method")
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            if method and "id" in msg:
                self.stats["server_requests"] += 1
                self.asks.append(msg)
            elif method == "thread/started":
                t = params.get("thread", {}).get("id")
                if t and t not in self.threads:
                    self.threads.append(t)
                    self.threads[:] = self.threads[-64:]
            elif method == "turn/started":
                t, turn = params.get("threadId"), params.get("turn", {}).get("id")
                if t and turn:
                    self.turns.setdefault(t, []).append(turn)
                    self.turns[t] = self.turns[t][-8:]

    # -- building blocks -------------------------------------------------------

    def thread_id(self):
        r = self.rng.random()
        if self.threads and r < 0.85:
            # Recent threads most often: races live there.
            return self.threads[-1 - min(int(self.rng.expovariate(0.5)), len(self.threads) - 1)]
        if r < 0.93:
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return self.rng.choice(ODD_STRINGS)

    def turn_id(self, t):
        known = self.turns.get(t)
        if known and self.rng.random() < 0.8:
            return self.rng.choice(known)
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def script(self):
        return self.rng.choice(SCRIPTS).replace("{n}", str(self.rng.randrange(8)))

    def overrides(self, p, turn=False):
        rng = self.rng
        if rng.random() < 0.5:
            p["approvalPolicy"] = rng.choice(POLICIES)
        if rng.random() < 0.3:
            if turn:
                p["sandboxPolicy"] = rng.choice([{"type": "dangerFullAccess"}, {"type": "readOnly"},
                                                 {"type": "workspaceWrite", "writableRoots": []}])
            else:
                p["sandbox"] = rng.choice(SANDBOXES)
        if rng.random() < 0.2:
            p["cwd"] = rng.choice([self.cwd, os.path.join(self.cwd, "sub"), "/nonexistent/dir", "."])
        if rng.random() < 0.1:
            p["model"] = "fuzz-model"
        return p

    def valid_request(self):
        """One request of every client method, in a valid shape."""
        rng = self.rng
        t = self.thread_id()
        method = rng.choice([
            "thread/start", "thread/start", "turn/start", "turn/start", "turn/start",
            "thread/read", "thread/read", "thread/loaded/list", "turn/interrupt", "thread/resume",
            "thread/fork", "thread/list", "thread/archive", "thread/unarchive", "thread/name/set",
            "thread/unsubscribe", "account/read", "model/list", "config/read",
            "configRequirements/read", "parley/debug/counts", "parley/stats", "initialize",
            "thread/turns/list", "skills/list", "plugin/installed", "hooks/list", "turn/steer",
            "turn/steer", "account/login/start", "thread/delete", "thread/items/list",
            "thread/goal/set", "thread/goal/get", "thread/goal/clear", "permissionProfile/list",
            "modelProvider/list"])
        if method == "thread/start":
            p = self.overrides({}, False)
            if rng.random() < 0.2:
                p["ephemeral"] = rng.random() < 0.5
        elif method == "turn/start":
            p = self.overrides({"threadId": t, "input": [{"type": "text", "text": self.script()}]}, True)
            if rng.random() < 0.2:
                p["clientUserMessageId"] = "c%d" % rng.randrange(1000)
            if rng.random() < 0.1:  # a structured turn: no tools, no asks
                p["outputSchema"] = {"type": "object", "properties": {"title": {"type": "string"}}}
        elif method == "thread/read":
            p = {"threadId": t, "includeTurns": rng.random() < 0.6}
        elif method == "thread/loaded/list":
            p = {}
            if rng.random() < 0.5:
                p["limit"] = rng.randrange(0, 5)
            if rng.random() < 0.2:
                p["cursor"] = t
        elif method == "turn/interrupt":
            p = {"threadId": t, "turnId": self.turn_id(t) if rng.random() < 0.9 else ""}
        elif method == "turn/steer":
            p = {"threadId": t, "expectedTurnId": self.turn_id(t) if rng.random() < 0.9 else "x",
                 "input": [{"type": "text", "text": self.script()}] if rng.random() < 0.9 else []}
        elif method == "thread/resume":
            p = self.overrides({"threadId": t}, False)
            if rng.random() < 0.3:
                p["excludeTurns"] = True
        elif method == "thread/fork":
            p = self.overrides({"threadId": t}, False)
            if rng.random() < 0.3:
                p["lastTurnId"] = self.turn_id(t)
            if rng.random() < 0.2:
                p["ephemeral"] = True
            if rng.random() < 0.2:
                p["excludeTurns"] = True
        elif method == "thread/list":
            p = {}
            if rng.random() < 0.5:
                p["limit"] = rng.randrange(1, 10)
            if rng.random() < 0.3:
                p["archived"] = rng.random() < 0.5
            if rng.random() < 0.2:
                p["sortKey"] = rng.choice(["created_at", "updated_at"])
        elif method == "thread/items/list":
            p = {"threadId": t}
            if rng.random() < 0.5:
                p["limit"] = rng.randrange(0, 4)
            if rng.random() < 0.4:
                p["sortDirection"] = rng.choice(["asc", "desc"])
            if rng.random() < 0.3:
                p["turnId"] = self.turn_id(t)
        elif method == "thread/goal/set":
            p = {"threadId": t}
            if rng.random() < 0.7:
                p["objective"] = rng.choice(["ship it", "", "goal %d" % rng.randrange(9)])
            if rng.random() < 0.4:
                p["status"] = rng.choice(["active", "paused", "complete", "bogus"])
            if rng.random() < 0.3:
                p["tokenBudget"] = rng.choice([None, 100, -1])
        elif method in ("thread/archive", "thread/unarchive", "thread/unsubscribe", "thread/delete",
                        "thread/goal/get", "thread/goal/clear"):
            p = {"threadId": t}
        elif method == "thread/name/set":
            p = {"threadId": t, "name": rng.choice(["fuzz name", "", "  ", "\u00e9t\u00e9", "n%d" % rng.randrange(99)])}
        elif method == "thread/turns/list":
            p = {"threadId": t}
            if rng.random() < 0.6:
                p["limit"] = rng.randrange(0, 4)
            if rng.random() < 0.5:
                p["sortDirection"] = rng.choice(["asc", "desc"])
            if rng.random() < 0.4:
                p["itemsView"] = rng.choice(["notLoaded", "summary", "full"])
            if rng.random() < 0.3:
                p["cursor"] = rng.choice(["after:", "from:"]) + self.turn_id(t)
        elif method == "initialize":
            p = {"clientInfo": {"name": "fuzz", "version": "1"}}
        else:
            p = {}
        msg = {"id": self.ids.next(), "method": method}
        if method not in ("configRequirements/read", "parley/debug/counts", "parley/stats") or rng.random() < 0.5:
            msg["params"] = p
        return msg

    # -- mutations -------------------------------------------------------------

    def deep_value(self):
        d = self.rng.randrange(2, self.args.max_depth + 1)
        v = self.rng.choice([1, "x", None, {}])
        for _ in range(d):
            v = [v] if self.rng.random() < 0.5 else {"k": v}
        return v

    def odd_value(self):
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            return rng.choice(ODD_STRINGS)
        if r < 0.55:
            return rng.choice(EXTREME_NUMBERS)
        if r < 0.65:
            return rng.choice([None, True, False, [], {}, [1, "a"], {"type": "text"}])
        if r < 0.75:
            return self.deep_value()
        if r < 0.75 + self.args.big_rate:
            return "\u00e9" * (1 << 19) if rng.random() < 0.5 else "a" * (1 << 20)
        if r < 0.8:
            return rng.choice(LONE_SURROGATES)
        return rng.choice(ODD_STRINGS) * rng.randrange(1, 50)

    def swap_type(self, v):
        rng = self.rng
        if isinstance(v, bool):
            return rng.choice([0, "true", None])
        if isinstance(v, (int, float)):
            return rng.choice([str(v), [v], None, rng.choice(EXTREME_NUMBERS)])
        if isinstance(v, str):
            return rng.choice([len(v), [v], {"value": v}, None, True])
        if isinstance(v, list):
            return rng.choice([{}, "list", 0, [None]])
        if isinstance(v, dict):
            return rng.choice([[], "object", 1, None])
        return rng.choice(["null", 0, {}])

    def containers(self, v, path=()):
        """Every (container, key) slot inside `v`, outermost first."""
        out = []
        if isinstance(v, dict):
            for k in list(v):
                out.append((v, k))
                out.extend(self.containers(v[k]))
        elif isinstance(v, list):
            for i in range(len(v)):
                out.append((v, i))
                out.extend(self.containers(v[i]))
        return out

    def mutate(self, msg):
        rng = self.rng
        for _ in range(rng.randrange(1, 4)):
            slots = self.containers(msg)
            if not slots:
                break
            # Mostly inside params: the envelope is a narrow target.
            inner = [s for s in slots if s[0] is not msg] or slots
            c, k = rng.choice(inner if rng.random() < 0.8 else slots)
            r = rng.random()
            if r < 0.25:
                if isinstance(c, dict):
                    del c[k]
                else:
                    c.pop(k)
            elif r < 0.5:
                c[k] = self.swap_type(c[k])
            elif r < 0.8:
                c[k] = self.odd_value()
            elif r < 0.9 and isinstance(c, dict):
                c[rng.choice(["extra", "unknownKey", "__proto__", ""])] = self.odd_value()
            elif c is msg and k == "method":
                c[k] = rng.choice(["thread/Start", "thread/", "", "nope/method", "turn/start\u0000"])
            else:
                c[k] = self.odd_value()
        return msg

    # -- lines -----------------------------------------------------------------

    def send_message(self, msg):
        """Sends `msg` and records whether a reply is owed for it."""
        line = json.dumps(msg, ensure_ascii=self.rng.random() < 0.5)
        rid = msg.get("id") if isinstance(msg, dict) else None
        shaped = (isinstance(msg, dict) and isinstance(msg.get("method"), str)
                  and ((isinstance(rid, int) and not isinstance(rid, bool)
                        and INT64_MIN <= rid <= 2 ** 64 - 1) or isinstance(rid, str)))
        if shaped:
            key = json.dumps(rid)
            if key in self.owed or key in self.maybe:
                self.reused.add(key)  # an id reused by a mutation: counted loosely
                self.maybe.add(key)
                self.owed.discard(key)
            elif contains_surrogate(msg) or depth_of(msg) > SAFE_DEPTH or not INT64_MIN <= (
                    rid if isinstance(rid, int) else 0) <= INT64_MAX:
                self.maybe.add(key)
            else:
                self.owed.add(key)
                self.sent[key] = line[:300]
            self.stats["requests"] += 1
        self.server.send(line)

    def junk(self):
        rng = self.rng
        choices = [
            b"", b"   ", b"not json", b"{", b"}", b"[]", b"[1,2]", b"null", b"42", b'"str"',
            b'{"id":1.5,"method":"thread/start"}', b'{"id":null,"method":"thread/list"}',
            b'{"id":{},"method":"x"}', b'{"id":[1],"method":"x"}', b'{"method":7,"id":"x-junk"}',
            b'{"jsonrpc":"2.0"}', b'{"result":{}}', b'{"id":"nobody","result":{}}',
            b'{"id":"nobody","error":{"code":1,"message":"x"}}', b"\x00\x01\x02",
            b"\xff\xfe invalid utf-8",
            b'{"method":"initialized"}', b'{"method":"unknown/notification","params":[]}',
            b"\xc3\x28", b'{"a":' * 50 + b"1" + b"}" * 50,
        ]
        line = rng.choice(choices)
        if rng.random() < 0.2:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))).replace(b"\n", b"")
        self.stats["junk"] += 1
        self.server.send(line)

    def approval_reply(self):
        rng = self.rng
        r = rng.random()
        if self.asks and r < 0.7:
            ask = self.asks.pop(rng.randrange(len(self.asks)))
            self.answered.append(ask)
            self.answered[:] = self.answered[-32:]
            rid = ask["id"]
            k = rng.random()
            if k < 0.55:
                msg = {"id": rid, "result": {"decision": rng.choice(DECISIONS)}}
            elif k < 0.7:
                msg = {"id": rid, "error": {"code": rng.choice([-32000, -1, 0]), "message": "client says no"}}
            elif k < 0.85:
                msg = {"id": rid, "result": rng.choice([{}, {"decision": 7}, {"decision": "maybe"}, "x", None,
                                                         {"decision": {"unknown": {}}}])}
            else:
                msg = self.mutate({"id": rid, "result": {"decision": rng.choice(DECISIONS)}})
        elif self.answered and r < 0.85:
            # Duplicate or late: the same id once more.
            ask = rng.choice(self.answered)
            msg = {"id": ask["id"], "result": {"decision": rng.choice(DECISIONS)}}
        else:
            foreign = rng.choice([10 ** 9 + rng.randrange(99), "foreign-%d" % rng.randrange(99), -5])
            msg = {"id": foreign, "result": {"decision": "accept"}}
        self.stats["approval_replies"] += 1
        self.server.send(json.dumps(msg))

    def burst(self):
        """A few valid requests at once on one recent thread: races live there."""
        t = self.thread_id()
        for _ in range(self.rng.randrange(2, 5)):
            method = self.rng.choice(["thread/read", "thread/archive", "thread/unarchive", "turn/start",
                                      "thread/resume", "thread/name/set", "thread/unsubscribe",
                                      "turn/interrupt", "thread/fork", "turn/steer"])
            p = {"threadId": t}
            if method == "thread/read":
                p["includeTurns"] = True
            elif method == "turn/start":
                p["input"] = [{"type": "text", "text": self.script()}]
            elif method == "thread/name/set":
                p["name"] = "burst"
            elif method == "turn/interrupt":
                p["turnId"] = self.turn_id(t)
            elif method == "turn/steer":
                p["expectedTurnId"] = self.turn_id(t)
                p["input"] = [{"type": "text", "text": self.script()}]
            self.send_message({"id": self.ids.next(), "method": method, "params": p})

    def run(self):
        rng = self.rng
        self.send_message({"id": self.ids.next(), "method": "initialize",
                           "params": {"clientInfo": {"name": "fuzz", "version": "1"},
                                      "capabilities": {"experimentalApi": rng.random() < 0.5}}})
        self.server.send('{"method":"initialized"}')
        for i in range(self.args.cases):
            if not self.server.alive():
                return "server exited early with %s after %d cases" % (self.server.proc.returncode, i)
            self.drain()
            self.stats["cases"] += 1
            r = rng.random()
            try:
                if r < 0.45:
                    self.send_message(self.valid_request())
                elif r < 0.7:
                    self.stats["mutated"] += 1
                    self.send_message(self.mutate(self.valid_request()))
                elif r < 0.8:
                    self.burst()
                elif r < 0.92:
                    self.approval_reply()
                else:
                    self.junk()
                if rng.random() < 0.1:
                    self.server.proc.stdin.flush()
                    time.sleep(rng.random() * self.args.pause)
            except BrokenPipeError:
                return "stdin closed by the server after %d cases" % i
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="path to the parley binary")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=1, help="runs with seeds seed, seed+1, ...")
    ap.add_argument("--store", choices=["memory", "local", "both", "postgres"], default="both",
                    help="postgres: on a private PostgreSQL cluster, a database per run")
    ap.add_argument("--threads", type=int, default=0, help="server scheduler threads (0: default)")
    ap.add_argument("--max-depth", type=int, default=200, help="deepest nesting a mutation builds")
    ap.add_argument("--big-rate", type=float, default=0.01, help="share of odd values that are 1 MB strings")
    ap.add_argument("--pause", type=float, default=0.02, help="longest pause between bursts (s)")
    ap.add_argument("--exit-timeout", type=float, default=60, help="bound on exit after stdin closes (s)")
    ap.add_argument("--show", type=int, default=5, help="unanswered requests to print")
    ap.add_argument("--trace", action="store_true", help="write every line sent to WORK/stdin.jsonl")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (stderr logs)")
    ap.add_argument("--mock", help="parley-mock-model: turns talk to it over HTTP (the real model "
                                   "provider's path: streams, tool calls, stored context) instead "
                                   "of the scripted model")
    args = ap.parse_args()
    args.binary = os.path.abspath(args.binary)
    model_args, mock = [], None
    if args.mock:
        # One mock for every run; its default script answers a text without
        # directives with a command call that needs approval, then a message.
        # Under ThreadSanitizer the mock is a fixture, not what is tested: its
        # server library is not instrumented and races in its own buffers.
        mock_env = dict(os.environ)
        if "TSAN_OPTIONS" in mock_env:
            mock_env["TSAN_OPTIONS"] = "report_bugs=0"
        mock = subprocess.Popen([args.mock, "--port=0", "--record=0"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=mock_env)
        url = mock.stdout.readline().split()[-1]
        model_args = ["-c", "model=mock-model", "-c", "model_provider=mock",
                      "-c", "model_providers.mock.base_url=%s/v1" % url,
                      "-c", "model_providers.mock.env_key=PARLEY_FUZZ_KEY"]
        os.environ.update(PARLEY_FUZZ_KEY="fuzz", no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    failures = 0
    total = 0
    stores = ["memory", "local"] if args.store == "both" else [args.store]
    cluster = None
    if args.store == "postgres":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                        "support"))
        import pg_cluster
        if not pg_cluster.available():
            print("PostgreSQL 15 is not installed" + (" (required in CI)" if pg_cluster.must_run() else ": skipped"))
            return 1 if pg_cluster.must_run() else 77
        cluster = pg_cluster.start(owner_pid=os.getpid())
    for run in range(args.runs):
        for store in stores:
            seed = args.seed + run
            work = tempfile.mkdtemp(prefix="parley-fuzz-")
            cwd = os.path.join(work, "cwd")
            os.makedirs(os.path.join(cwd, "sub"))
            argv = [args.binary, "app-server", "--store=" + store, "--cwd=" + cwd,
                    "--approval-timeout=2s", "--idle-unload=%dms" % random.Random(seed).choice([50, 300, 2000, 60000]),
                    "--output-cap=65536"] + model_args
            if store == "local":
                argv.append("--home=" + os.path.join(work, "home"))
            if store == "postgres":
                url = cluster.create_database("fuzz%d" % run)
                subprocess.run([args.binary, "store", "migrate", "--store-url=" + url], check=True,
                               capture_output=True)
                argv += ["--store-url=" + url, "--home=" + os.path.join(work, "home")]
            if args.threads:
                argv.append("--threads=%d" % args.threads)
            started = time.time()
            server = Server(argv, cwd, os.path.join(work, "stderr.log"),
                            os.path.join(work, "stdin.jsonl") if args.trace else None)
            fz = Fuzzer(argparse.Namespace(**dict(vars(args), seed=seed)), server, cwd)
            problems = []
            early = fz.run()
            if early:
                problems.append(early)
            try:
                server.proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                code = server.proc.wait(timeout=args.exit_timeout)
                if code != 0 and not early:
                    problems.append("exit status %d after stdin closed" % code)
            except subprocess.TimeoutExpired:
                problems.append("no exit within %ss of stdin closing" % args.exit_timeout)
                server.proc.kill()
                server.proc.wait()
            server.reader.join(timeout=10)
            problems.extend(server.bad_lines[:5])
            unanswered = sorted(fz.owed - set(server.replies))
            twice = sorted(k for k, n in server.replies.items() if n > 1 and k not in fz.reused)
            unowed = sorted(k for k in server.replies if k not in fz.owed and k not in fz.maybe)
            if unanswered:
                problems.append("%d requests unanswered, e.g. ids %s" % (len(unanswered), ", ".join(unanswered[:10])))
            for k in unanswered[:args.show]:
                problems.append("  unanswered: " + fz.sent.get(k, "?"))
            if twice:
                problems.append("%d ids answered more than once, e.g. %s" % (len(twice), ", ".join(twice[:10])))
            if unowed:
                problems.append("%d replies to ids never sent as requests: %s" % (len(unowed), ", ".join(unowed[:10])))
            total += fz.stats["cases"]
            print("seed=%d store=%s %.1fs %s owed=%d replies=%d threads=%d -> %s" % (
                seed, store, time.time() - started,
                " ".join("%s=%d" % kv for kv in fz.stats.items()), len(fz.owed), len(server.replies),
                len(fz.threads), "ok" if not problems else "FAIL"), flush=True)
            for p in problems:
                print("  " + p, flush=True)
            if problems:
                failures += 1
                print("  reproduce: %s --binary=%s --seed=%d --cases=%d --store=%s%s%s (logs in %s)" % (
                    sys.argv[0], args.binary, seed, args.cases, store,
                    " --threads=%d" % args.threads if args.threads else "",
                    " --mock=" + args.mock if args.mock else "", work), flush=True)
            elif not args.keep:
                shutil.rmtree(work, ignore_errors=True)
    if mock:
        mock.terminate()
        mock.wait(timeout=30)
    if cluster:
        pg_cluster.stop(cluster.dir)
    print("total cases: %d, failed runs: %d" % (total, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
