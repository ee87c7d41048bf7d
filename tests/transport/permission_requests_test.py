#!/usr/bin/env python3
"""item/permissions/requestApproval (issue 29): the model asks for more
sandbox permissions; what a client grants, and only what was asked, widens
the sandbox for the rest of the turn or for the session. Through the real
`parley app-server` over real pipes (and a WebSocket for a second client),
with real commands confined by the real `parley-sandbox`, driven by the
scripted model's `permissions:` directive:

- granted for the turn: a write outside the workspace fails before the grant
  and succeeds after it, in the same turn; the network (a loopback listener)
  is reachable only after its grant; the next turn is confined again;
- granted for the session: later turns of the thread keep it, another thread
  does not get it;
- declined, timed out (--approval-timeout), answered with an error or a
  malformed answer: nothing is granted, the turn goes on, the command fails;
- turn/interrupt while it waits: serverRequest/resolved, the turn ends
  interrupted, nothing granted, a late answer refused;
- two clients (stdio + WebSocket) racing: one answer applies, the other is
  refused (counted, logged), and the sandbox follows the answer that won;
- an answer granting more than was asked (another path, the network, a
  read): only what was asked is granted, the audit log says so;
- a request that asks for nothing is never sent.
Every request, its serverRequest/resolved and the audit log's line are
checked; every line parley prints is validated against the Codex schema.

The HTTP model (parley-mock-model, when given): request_permissions is
offered only with `features.request_permissions_tool` (as Codex); the
model's call asks the client; the model is told the grant as Codex tells
it, and the rollout holds the call and its output as Codex writes them.
Where the real Codex 0.169 runs offline, the same script is run against it
and the request's permissions and the model's output are compared.

The sandbox proof needs a host where `parley-sandbox --check` passes;
elsewhere those checks are left out (said so) and the rest still runs.

Usage: permission_requests_test.py PARLEY_BINARY SCHEMA_DIR [MOCK_BINARY]
"""
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
# The shared helpers of the other requests to a client (servers, the
# WebSocket peer, the schema check); that module reads the same arguments.
import client_requests_test as cr  # noqa: E402

PARLEY = os.path.abspath(sys.argv[1])
LAUNCHER = os.path.join(os.path.dirname(PARLEY), "parley-sandbox")
MOCK = cr.MOCK
check = cr.check
METHOD = "item/permissions/requestApproval"
CONFINES = False  # set in main(): whether this host confines commands


def is_request(m):
    return m.get("method") == METHOD and "id" in m


def outside_dir():
    """A folder outside every writable root (not under the cwd, not /tmp)."""
    return tempfile.mkdtemp(prefix="parley-perm-outside-", dir="/var/tmp")


def commands(events):
    return [m["params"]["item"] for m in events if m.get("method") == "item/completed"
            and m["params"]["item"]["type"] == "commandExecution"]


def audit_lines(home):
    path = os.path.join(home, "audit.jsonl")
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path)]


def permission_audits(home):
    return [a for a in audit_lines(home) if a.get("type") == "permissions"]


def listener():
    """A loopback TCP listener: reachable from a command only with the network."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)

    def serve():
        while True:
            try:
                c, _ = s.accept()
                c.close()
            except OSError:
                return
    threading.Thread(target=serve, daemon=True).start()
    return s


def connect_cmd(port):
    return ("python3 -c \"import socket; socket.create_connection(('127.0.0.1', %d), 2)\""
            " && echo connected" % port)


def server(extra=(), **kw):
    flags = list(extra)
    if not CONFINES:
        flags.append("--sandbox-unconfined")
    return cr.Server(extra=flags, **kw)


def start(p, thread, lines):
    return p.start_turn(thread, "\n".join(lines))


def expect_confined(ok, what):
    """A check that holds only where the host confines commands."""
    if CONFINES:
        check(ok, what)
    else:
        print("skip", what, "(this host does not confine commands)")


def ask_write(path, reason=None, network=False, read=None):
    perms = {"file_system": {"write": [path]}}
    if read:
        perms["file_system"]["read"] = read
    if network:
        perms["network"] = {"enabled": True}
    args = {"permissions": perms}
    if reason:
        args["reason"] = reason
    return "permissions: " + json.dumps(args)


def test_turn_scope():
    s = server()
    p = s.peer
    out = outside_dir()
    net = listener()
    port = net.getsockname()[1]
    try:
        thread = p.start_thread(sandbox="workspace-write")
        turn = start(p, thread, ["run: touch %s/before" % out,
                                 "run: " + connect_cmd(port),
                                 ask_write(out, "write the build output", network=True),
                                 "run: touch %s/during && echo wrote" % out,
                                 "run: " + connect_cmd(port),
                                 "say: done"])
        req = p.wait(is_request)
        params = req["params"]
        check(params["threadId"] == thread and params["turnId"] == turn and params["itemId"]
              and params["cwd"] == s.work and params["reason"] == "write the build output"
              and isinstance(params["startedAtMs"], int),
              "the request names the thread, turn, call, cwd and reason: %s" % params)
        check(params["permissions"]["fileSystem"]["write"] == [out]
              and params["permissions"]["fileSystem"]["entries"]
              == [{"path": {"type": "path", "path": out}, "access": "write"}]
              and params["permissions"]["network"] == {"enabled": True},
              "the permissions as Codex sends them: %s" % params["permissions"])
        status = p.wait(lambda m: m.get("method") == "thread/status/changed"
                        and "waitingOnApproval" in m["params"]["status"].get("activeFlags", []))
        check(status is not None, "the thread waits on approval")
        before = commands(p.kept)
        expect_confined(len(before) == 2 and before[0]["exitCode"] != 0
                        and not os.path.exists(os.path.join(out, "before")),
                        "before the grant the write outside fails")
        expect_confined(len(before) == 2 and before[1]["exitCode"] != 0,
                        "before the grant the network is off: %s"
                        % [(c["exitCode"], c.get("aggregatedOutput")) for c in before[1:]])
        p.kept.clear()  # what came before the answer
        p.write({"id": req["id"], "result": {"permissions": {"fileSystem": {"write": [out]},
                                                             "network": {"enabled": True}},
                                             "scope": "turn"}})
        p.wait(cr.resolved_for(req["id"]))
        events = cr.until_completed(p, turn)
        after = commands(events)
        check(events[-1]["params"]["turn"]["status"] == "completed" and cr.said(events) == ["done"],
              "the turn goes on and completes")
        check(len(after) == 2 and after[0]["exitCode"] == 0
              and os.path.exists(os.path.join(out, "during")),
              "after the grant the same write succeeds in the turn: %s"
              % [(c["exitCode"], c.get("aggregatedOutput")) for c in after])
        check(len(after) == 2 and after[1]["exitCode"] == 0,
              "after the grant the network is on: %s" % [c.get("aggregatedOutput") for c in after[1:]])
        again = [m for m in events if is_request(m) or m.get("method") == "serverRequest/resolved"]
        check(not again, "asked once, resolved once")
        p.kept.clear()
        # A turn-scoped grant ends with its turn.
        turn = p.start_turn(thread, "run: touch %s/next\nrun: %s" % (out, connect_cmd(port)))
        nxt = commands(cr.until_completed(p, turn))
        expect_confined(len(nxt) == 2 and nxt[0]["exitCode"] != 0 and nxt[1]["exitCode"] != 0
                        and not os.path.exists(os.path.join(out, "next")),
                        "the next turn is confined again (write and network)")
        audits = permission_audits(s.home)
        decided = [a for a in audits if a.get("event") == "decided"]
        check(any(a.get("event") == "requested" for a in audits) and len(decided) == 1
              and decided[0]["granted"] == {"fileSystem": {"write": [out]}, "network": {"enabled": True}}
              and decided[0]["scope"] == "turn" and decided[0]["grantedBeyondAsked"] is False
              and decided[0]["permissions"]["fileSystem"]["write"] == [out],
              "the audit log records what was asked and granted, and the scope: %s" % decided)
        stats = p.call("parley/stats", {})["result"]["approvals"]
        check(stats["requested"] == 1 and stats["decided"] == 1, "one request, one answer: %s" % stats)
        n = cr.counts(p)
        check(n["approvals"] == 0 and n["pendingRequests"] == 0, "nothing left pending: %s" % n)
    finally:
        net.close()
        s.stop("turn scope")
        shutil.rmtree(out, ignore_errors=True)


def test_session_scope():
    s = server()
    p = s.peer
    out = outside_dir()
    try:
        thread = p.start_thread(sandbox="read-only")
        other = p.start_thread(sandbox="read-only")
        turn = start(p, thread, [ask_write(out), "say: asked"])
        req = p.wait(is_request)
        p.write({"id": req["id"], "result": {"permissions": {"fileSystem": {"write": [out]}},
                                             "scope": "session"}})
        cr.until_completed(p, turn)
        p.kept.clear()
        turn = p.start_turn(thread, "run: touch %s/later && echo ok\nrun: touch inside" % out)
        later = commands(cr.until_completed(p, turn))
        check(len(later) == 2 and later[0]["exitCode"] == 0 and os.path.exists(os.path.join(out, "later")),
              "a later turn keeps a session grant (read-only thread, the granted path written)")
        expect_confined(len(later) == 2 and later[1]["exitCode"] != 0
                        and not os.path.exists(os.path.join(s.work, "inside")),
                        "read-only stays read-only elsewhere (the cwd was not granted)")
        turn = p.start_turn(other, "run: touch %s/other" % out)
        elsewhere = commands(cr.until_completed(p, turn))
        expect_confined(elsewhere and elsewhere[0]["exitCode"] != 0
                        and not os.path.exists(os.path.join(out, "other")),
                        "another thread does not get it")
        # A patch may write where the session granted it too.
        p.kept.clear()
        turn = p.start_turn(thread, "patch: *** Begin Patch\n*** Add File: %s/patched.txt\n+hi\n"
                            "*** End Patch" % out)
        events = []
        while True:
            m = p.wait(lambda m: True, 30)
            events.append(m)
            if m.get("method", "").endswith("requestApproval") and "id" in m:
                p.write({"id": m["id"], "result": {"decision": "accept"}})
            if m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == turn:
                break
        check(os.path.exists(os.path.join(out, "patched.txt")),
              "a patch writes into the path granted for the session")
        decided = [a for a in permission_audits(s.home) if a.get("event") == "decided"]
        check(decided and decided[0]["scope"] == "session", "the audit says session: %s" % decided)
    finally:
        s.stop("session scope")
        shutil.rmtree(out, ignore_errors=True)


def no_grant_case(name, answer=None, error=None, timeout=False):
    s = server(extra=["--approval-timeout", "800ms"] if timeout else [])
    p = s.peer
    out = outside_dir()
    try:
        thread = p.start_thread(sandbox="workspace-write")
        turn = start(p, thread, [ask_write(out), "run: touch %s/x" % out, "say: went on"])
        req = p.wait(is_request)
        if answer is not None:
            p.write({"id": req["id"], "result": answer})
        elif error is not None:
            p.write({"id": req["id"], "error": error})
        p.wait(cr.resolved_for(req["id"]), timeout=10)
        events = cr.until_completed(p, turn)
        ran = commands(events)
        check(events[-1]["params"]["turn"]["status"] == "completed" and cr.said(events) == ["went on"],
              "%s: the turn goes on" % name)
        expect_confined(len(ran) == 1 and ran[0]["exitCode"] != 0
                        and not os.path.exists(os.path.join(out, "x")),
                        "%s: nothing granted, the write stays refused" % name)
        if timeout:
            p.write({"id": req["id"], "result": {"permissions": {"fileSystem": {"write": [out]}}}})
            time.sleep(0.3)
            check("event=unknown_response" in p.log_text(), "%s: the late answer is refused" % name)
        audits = permission_audits(s.home)
        granted = [a for a in audits if a.get("granted")]
        check(not granted, "%s: the audit log shows no grant: %s" % (name, audits[-1:]))
        return p.call("parley/stats", {})["result"]["approvals"]
    finally:
        s.stop(name)
        shutil.rmtree(out, ignore_errors=True)


def test_declined():
    no_grant_case("declined", answer={"permissions": {}})


def test_timeout():
    stats = no_grant_case("timeout", timeout=True)
    check(stats["timedOut"] == 1 and stats["refusedReplies"] == 1,
          "timeout: counted, the late answer refused: %s" % stats)


def test_error_and_malformed():
    no_grant_case("error answer", error={"code": -32000, "message": "dismissed"})
    stats = no_grant_case("malformed answer", answer={"permissions": {"fileSystem": {"write": "/"}}})
    check(stats["failed"] == 1 and stats["decided"] == 0, "malformed: counted as failed: %s" % stats)


def test_interrupt():
    s = server()
    p = s.peer
    out = outside_dir()
    try:
        thread = p.start_thread(sandbox="workspace-write")
        turn = start(p, thread, [ask_write(out), "run: touch %s/x" % out])
        req = p.wait(is_request)
        r = p.call("turn/interrupt", {"threadId": thread, "turnId": turn})
        check("result" in r, "turn/interrupt answers: %s" % r)
        p.wait(cr.resolved_for(req["id"]))
        events = cr.until_completed(p, turn)
        check(events[-1]["params"]["turn"]["status"] == "interrupted" and not commands(events),
              "the turn ends interrupted, nothing more runs")
        p.write({"id": req["id"], "result": {"permissions": {"fileSystem": {"write": [out]}},
                                             "scope": "session"}})
        time.sleep(0.3)
        check("event=unknown_response" in p.log_text() or "event=late_answer" in p.log_text(),
              "an answer after the interrupt is refused and logged")
        p.kept.clear()
        turn = p.start_turn(thread, "run: touch %s/y" % out)
        ran = commands(cr.until_completed(p, turn))
        expect_confined(ran and ran[0]["exitCode"] != 0 and not os.path.exists(os.path.join(out, "y")),
                        "nothing was granted (the late session answer neither)")
        n = cr.counts(p)
        check(n["approvals"] == 0 and n["pendingRequests"] == 0, "nothing left pending: %s" % n)
    finally:
        s.stop("interrupt")
        shutil.rmtree(out, ignore_errors=True)


def test_two_clients_race():
    s = server(ws=True)
    out = outside_dir()
    try:
        if not check(s.ws_url is not None, "the server listens on a WebSocket too"):
            return
        p = s.peer
        thread = p.start_thread(sandbox="workspace-write")
        other = cr.WsPeer(s.ws_url)
        check("result" in other.call("thread/resume", {"threadId": thread}), "a second client resumes")
        turn = start(p, thread, [ask_write(out), "run: touch %s/raced" % out, "say: decided"])
        a = p.wait(is_request)
        b = other.wait(is_request)
        check(a["params"] == b["params"], "both clients are asked the same")
        # stdio grants, the WebSocket declines, at once: one answer applies.
        t = threading.Thread(target=lambda: other.write({"id": b["id"], "result": {"permissions": {}}}))
        t.start()
        p.write({"id": a["id"], "result": {"permissions": {"fileSystem": {"write": [out]}}}})
        t.join()
        p.wait(cr.resolved_for(a["id"]))
        other.wait(cr.resolved_for(b["id"]))
        events = cr.until_completed(p, turn)
        # The losing answer may still be on its way on the other connection.
        deadline = time.monotonic() + 5
        while True:
            stats = p.call("parley/stats", {})["result"]["approvals"]
            if stats["refusedReplies"] >= 1 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        check(stats["decided"] == 1 and stats["refusedReplies"] <= 1,
              "decided once, never twice: %s" % stats)
        decided = [x for x in permission_audits(s.home) if x.get("event") == "decided"]
        won_grant = bool(decided and decided[0].get("granted"))
        ran = commands(events)
        wrote = os.path.exists(os.path.join(out, "raced"))
        check(len(decided) == 1 and decided[0].get("connection"), "one decision, its connection audited")
        expect_confined(len(ran) == 1 and wrote == won_grant and (ran[0]["exitCode"] == 0) == won_grant,
                        "the sandbox follows the answer that won (granted: %s)" % won_grant)
        log = p.log_text()
        if stats["refusedReplies"] == 1:
            check("event=late_answer" in log or "event=unknown_response" in log,
                  "the losing answer is refused and logged")
        else:
            # A known gap of the approval machinery (all requests to a client,
            # approvals too): an answer its connection took before the
            # withdrawal reached it goes to an approval actor that has quit,
            # and is dropped unlogged. Nothing is applied twice either way.
            print("note: the losing answer crossed the withdrawal and was dropped unlogged")
        n = cr.counts(p)
        check(n["approvals"] == 0 and n["pendingRequests"] == 0, "nothing left pending: %s" % n)
        other.close()
        cr.SCHEMA.check(check, other, "race (ws client)")
    finally:
        s.stop("race")
        shutil.rmtree(out, ignore_errors=True)


def test_more_than_asked():
    s = server()
    p = s.peer
    out, extra = outside_dir(), outside_dir()
    net = listener()
    port = net.getsockname()[1]
    try:
        thread = p.start_thread(sandbox="workspace-write")
        asked = os.path.join(out, "asked")
        os.makedirs(asked)
        turn = start(p, thread, [ask_write(asked), "run: touch %s/ok" % asked,
                                 "run: touch %s/x" % extra, "run: touch %s/y" % out,
                                 "run: " + connect_cmd(port), "say: checked"])
        req = p.wait(is_request)
        # The client grants the parent, another folder, a read and the
        # network, for the session: only the asked path is granted.
        p.write({"id": req["id"], "result": {
            "permissions": {"fileSystem": {"write": [asked, out, extra], "read": ["/root"]},
                            "network": {"enabled": True}},
            "scope": "session"}})
        events = cr.until_completed(p, turn)
        ran = commands(events)
        check(len(ran) == 4 and ran[0]["exitCode"] == 0 and os.path.exists(os.path.join(asked, "ok")),
              "what was asked is granted")
        expect_confined(len(ran) == 4 and ran[1]["exitCode"] != 0 and ran[2]["exitCode"] != 0
                        and ran[3]["exitCode"] != 0 and not os.path.exists(os.path.join(extra, "x"))
                        and not os.path.exists(os.path.join(out, "y")),
                        "nothing more: not another folder, not the parent, not the network")
        decided = [a for a in permission_audits(s.home) if a.get("event") == "decided"]
        check(decided and decided[0]["granted"] == {"fileSystem": {"write": [asked]}}
              and decided[0]["grantedBeyondAsked"] is True
              and decided[0]["answered"]["network"] == {"enabled": True},
              "the audit log keeps the answer and the narrower grant: %s" % decided)
        # The next turn: the session keeps only what was granted.
        p.kept.clear()
        turn = p.start_turn(thread, "run: touch %s/later\nrun: touch %s/later" % (asked, extra))
        later = commands(cr.until_completed(p, turn))
        check(later and later[0]["exitCode"] == 0, "the session keeps the asked path")
        expect_confined(len(later) == 2 and later[1]["exitCode"] != 0, "and nothing else")
    finally:
        net.close()
        s.stop("more than asked")
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(extra, ignore_errors=True)


def test_home_stays_hidden():
    s = server()
    p = s.peer
    try:
        thread = p.start_thread(sandbox="workspace-write")
        target = os.path.join(s.home, "planted")
        turn = start(p, thread, [ask_write(s.home), "run: touch %s" % target,
                                 "run: cat %s/audit.jsonl > /dev/null" % s.home])
        req = p.wait(is_request)
        check(req["params"]["permissions"]["fileSystem"]["write"] == [s.home],
              "a request for parley's own home is asked as any other")
        p.write({"id": req["id"], "result": {"permissions": {"fileSystem": {"write": [s.home]}}}})
        ran = commands(cr.until_completed(p, turn))
        expect_confined(len(ran) == 2 and ran[0]["exitCode"] != 0 and not os.path.exists(target)
                        and ran[1]["exitCode"] != 0,
                        "granted or not, parley's home stays hidden (no write, no read of the audit log)")
    finally:
        s.stop("home hidden")


def test_asks_for_nothing():
    s = server()
    p = s.peer
    try:
        thread = p.start_thread()
        for bad in ('{"permissions": {}}', '{"permissions": {"network": {"enabled": false}}}',
                    '{"permissions": {"fileSystem": {"write": ["/x"]}}}', "not json"):
            turn = p.start_turn(thread, "permissions: %s\nsay: after" % bad)
            events = cr.until_completed(p, turn)
            check(not [m for m in events if is_request(m)] and cr.said(events) == ["after"],
                  "%s: nobody is asked, the model is told and goes on" % bad)
        check("event=request_refused kind=permissions" in p.log_text(), "refusals are logged")
    finally:
        s.stop("asks for nothing")


# -- the HTTP model --------------------------------------------------------------


def tool_names(request):
    return [t.get("name") for t in request["body"].get("tools", [])]


def call_outputs(request, call_id):
    return [i for i in request["body"]["input"]
            if i.get("type") == "function_call_output" and i.get("call_id") == call_id]


def mock_script(out, other):
    args = {"permissions": {"file_system": {"write": [out]}, "network": {"enabled": True}},
            "reason": "to publish"}
    return ("mock: tool request_permissions %s\nmock: say granted" % json.dumps(args))


def over_answer(out, other):
    # More than asked: another path and a read; and the network, which was asked.
    return {"permissions": {"fileSystem": {"write": [out, other], "read": ["/root"]},
                            "network": {"enabled": True}}, "scope": "session"}


def http_round(peer, thread, mock, out, other):
    """One model turn asking for permissions, answered with more than asked:
    (the request's permissions, the output the model got, the events)."""
    mock.forget()
    turn = peer.start_turn(thread, mock_script(out, other))
    req = peer.wait(is_request, 120)
    peer.write({"id": req["id"], "result": over_answer(out, other)})
    events = []
    while True:
        m = peer.wait(lambda m: True, 120)
        events.append(m)
        if m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == turn:
            break
    reqs = mock.requests()
    outs = call_outputs(reqs[-1], req["params"]["itemId"])
    told = json.loads(outs[-1]["output"]) if outs else None
    return req["params"], told, events, reqs


def test_http_model():
    if not MOCK:
        print("note: no mock model given; the HTTP model's part is left out")
        return
    os.environ["MOCK_KEY"] = "sk-test"
    mock = app_server_peer.Mock(MOCK)
    out, other = outside_dir(), outside_dir()
    try:
        s = cr.http_server(mock)
        p = s.peer
        thread = p.start_thread()
        turn = p.start_turn(thread, "mock: say hello")
        cr.until_completed(p, turn)
        check("request_permissions" not in tool_names(mock.requests()[0]),
              "request_permissions is not offered by default")
        s.stop("http default")

        s = cr.http_server(mock, "-c", "features.request_permissions_tool=true")
        p = s.peer
        thread = p.start_thread()
        params, told, events, reqs = http_round(p, thread, mock, out, other)
        offered = [t for t in reqs[0]["body"]["tools"] if t.get("name") == "request_permissions"]
        check(len(offered) == 1 and set(offered[0]["parameters"]["properties"]) == {"permissions", "reason"}
              and set(offered[0]["parameters"]["properties"]["permissions"]["properties"])
              == {"file_system", "network"},
              "offered with the feature, with Codex's argument names")
        check(params["permissions"]["fileSystem"]["write"] == [out] and params["reason"] == "to publish",
              "the model's request reaches the client: %s" % params)
        expected = {"permissions": {"network": {"enabled": True}, "file_system": {"write": [out]}},
                    "scope": "session"}
        check(told == expected, "the model is told what was granted of what it asked: %s" % told)
        check(cr.said(events) == ["granted"], "the turn goes on")
        rollout = glob.glob(os.path.join(s.home, "sessions", "**", "*.jsonl"), recursive=True)
        records = [json.loads(line) for f in rollout for line in open(f)]
        kinds = [(r["payload"].get("type"), r["payload"].get("name")) for r in records
                 if r["type"] == "response_item"
                 and r["payload"].get("call_id") == params["itemId"]]
        check(kinds == [("function_call", "request_permissions"), ("function_call_output", None)],
              "the rollout holds the call and its output as Codex writes them: %s" % kinds)
        s.stop("http feature")
        compare_with_codex(mock, params, told)
    finally:
        mock.stop()
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(other, ignore_errors=True)


def compare_with_codex(mock, parley_params, parley_told):
    why = app_server_peer.codex_unavailable()
    if why:
        print("note: the real Codex is not compared:", why)
        return
    root = tempfile.mkdtemp(prefix="parley-perm-codex-")
    home, work = os.path.join(root, "home"), os.path.join(root, "work")
    for d in (home, work, os.path.join(root, "user")):
        os.makedirs(d)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "on-request"\n'
                'suppress_unstable_features_warning = true\n'
                '[features]\nrequest_permissions_tool = true\n'
                '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                'wire_api = "responses"\nrequires_openai_auth = false\n' % mock.url)
    env = dict(os.environ, CODEX_HOME=home, HOME=os.path.join(root, "user"),
               no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost")
    env.pop("OPENAI_API_KEY", None)
    out = parley_params["permissions"]["fileSystem"]["write"][0]
    other = outside_dir()
    c = app_server_peer.StdioPeer(app_server_peer.CODEX + ["app-server"], env,
                                  os.path.join(root, "codex.stderr"))
    try:
        thread = c.call("thread/start", {"approvalPolicy": "on-request", "cwd": work},
                        timeout=120)["result"]["thread"]["id"]
        params, told, _, _ = http_round(c, thread, mock, out, other)
        ours = {k: v for k, v in parley_params["permissions"].items()}
        check(params["permissions"] == ours,
              "as Codex, the request's permissions: %s vs %s" % (params["permissions"], ours))
        check(params["reason"] == parley_params["reason"], "as Codex, the reason")
        check(told == parley_told, "as Codex, what the model is told: %s vs %s" % (told, parley_told))
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(other, ignore_errors=True)


def main():
    global CONFINES
    if os.access(LAUNCHER, os.X_OK):
        probe = subprocess.run([LAUNCHER, "--check"], capture_output=True, text=True)
        CONFINES = probe.returncode == 0
        if not CONFINES:
            print("note: this host cannot confine commands:", probe.stdout.strip(), probe.stderr.strip())
    else:
        print("note: no parley-sandbox beside", PARLEY)
    for test in (test_turn_scope, test_session_scope, test_declined, test_timeout,
                 test_error_and_malformed, test_interrupt, test_two_clients_race,
                 test_more_than_asked, test_home_stays_hidden, test_asks_for_nothing,
                 test_http_model):
        print("--", test.__name__, flush=True)
        try:
            test()
        except Exception as e:  # a hang or a crash is a failure of that test, not of the run
            check(False, "%s raised %r" % (test.__name__, e))
    print("%d failed" % len(cr.FAILURES))
    sys.exit(1 if cr.FAILURES else 0)


if __name__ == "__main__":
    main()
