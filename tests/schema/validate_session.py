#!/usr/bin/env python3
"""Drives a whole session through the real `parley app-server` over pipes and
validates every line it prints against the JSON Schema that Codex 0.169
generates (`codex app-server generate-json-schema`): notifications against
ServerNotification, requests against ServerRequest, each response against its
method's response type. Also checks that nothing but protocol reached stdout.

usage: validate_session.py PARLEY_BINARY SCHEMA_DIR WORK_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys

import jsonschema

RESPONSE_TYPES = {
    "initialize": "InitializeResponse",
    "thread/start": "v2/ThreadStartResponse",
    "thread/read": "v2/ThreadReadResponse",
    "thread/loaded/list": "v2/ThreadLoadedListResponse",
    "turn/start": "v2/TurnStartResponse",
    "turn/interrupt": "v2/TurnInterruptResponse",
    "turn/steer": "v2/TurnSteerResponse",
    "account/read": "v2/GetAccountResponse",
    "model/list": "v2/ModelListResponse",
    "config/read": "v2/ConfigReadResponse",
    "configRequirements/read": "v2/ConfigRequirementsReadResponse",
}


def main():
    binary, schema_dir, work = sys.argv[1:4]
    bundle_path = os.path.join(schema_dir, "codex_app_server_protocol.schemas.json")
    if not os.path.exists(bundle_path):
        print("SKIPPED: no Codex schema at %s (.ci/test generates it with npx)" % schema_dir)
        return 77
    # A fresh directory each run: the session adds files and threads.
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # Fail rather than hang if the server stops answering.
    signal.alarm(120)
    with open(bundle_path) as f:
        bundle = json.load(f)

    def validator(path):
        ref = {"$ref": "#/definitions/" + path, "definitions": bundle["definitions"]}
        return jsonschema.Draft7Validator(ref)

    notification_v = validator("ServerNotification")
    request_v = validator("ServerRequest")
    response_vs = {m: validator(t) for m, t in RESPONSE_TYPES.items()}

    proc = subprocess.Popen([binary, "app-server", "--log-level=warn", "--approval-timeout=500ms",
                             "--home=" + os.path.join(work, "home")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    lines = []
    methods_by_id = {}
    next_id = [1]

    def read():
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("server closed stdout early")
        lines.append(line)
        return json.loads(line)

    def send(method, params=None):
        i = next_id[0]
        next_id[0] += 1
        msg = {"id": i, "method": method}
        if params is not None:
            msg["params"] = params
        methods_by_id[i] = method
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        return i

    def until(pred):
        while True:
            m = read()
            if pred(m):
                return m

    def call(method, params=None):
        i = send(method, params)
        return until(lambda m: m.get("id") == i and "method" not in m)

    def text(t):
        return [{"type": "text", "text": t, "text_elements": []}]

    call("initialize", {"clientInfo": {"name": "schema-check", "version": "1"}})
    for m in ["account/read", "model/list", "config/read"]:
        call(m, {})
    call("configRequirements/read")
    t = call("thread/start", {"cwd": work, "approvalPolicy": "on-request"})["result"]["thread"]["id"]
    call("thread/loaded/list", {})
    # accept, decline, error reply, timeout; a message; a failing command
    call("turn/start", {"threadId": t, "input": text(
        "say: checking shapes\nrun[escalate]: echo out\nrun[escalate]: echo no\nrun[escalate]: echo err\nrun[escalate]: echo late\nrun[escalate]: exit 3")})
    answers = [{"result": {"decision": "accept"}}, {"result": {"decision": "decline"}},
               {"error": {"code": -32000, "message": "x"}}, None, {"result": {"decision": "accept"}}]
    for n, a in enumerate(answers):
        req = until(lambda m: m.get("method") == "item/commandExecution/requestApproval")
        if n == 0:  # input steered in while the first approval waits
            call("turn/steer", {"threadId": t, "expectedTurnId": req["params"]["turnId"],
                                "input": text("say: steered"), "clientUserMessageId": "c-1"})
        if a is not None:
            proc.stdin.write(json.dumps(dict(a, id=req["id"])) + "\n")
            proc.stdin.flush()
    until(lambda m: m.get("method") == "turn/completed")
    # file changes: an accepted patch (turn/diff/updated follows), a declined one
    with open(os.path.join(work, "edit.txt"), "w") as f:
        f.write("one\n")
    call("turn/start", {"threadId": t, "input": text(
        "patch:\n*** Begin Patch\n*** Add File: new.txt\n+hello\n*** Update File: edit.txt\n@@\n-one\n+two\n"
        "*** End Patch\npatch:\n*** Begin Patch\n*** Delete File: edit.txt\n*** End Patch")})
    for decision in ["accept", "decline"]:
        req = until(lambda m: m.get("method") == "item/fileChange/requestApproval")
        proc.stdin.write(json.dumps({"id": req["id"], "result": {"decision": decision}}) + "\n")
        proc.stdin.flush()
    until(lambda m: m.get("method") == "turn/completed")
    # interrupt with an approval pending
    turn = call("turn/start", {"threadId": t, "input": text("run[escalate]: sleep 5")})["result"]["turn"]["id"]
    until(lambda m: m.get("method") == "item/commandExecution/requestApproval")
    call("turn/interrupt", {"threadId": t, "turnId": turn})
    until(lambda m: m.get("method") == "turn/completed")
    call("thread/read", {"threadId": t, "includeTurns": True})
    call("thread/read", {"threadId": t})
    # what the TUI asks besides: its side panel's pages, features parley lacks
    page = call("thread/turns/list", {"threadId": t, "limit": 2, "sortDirection": "desc"})["result"]
    call("thread/turns/list", {"threadId": t, "cursor": page["nextCursor"], "itemsView": "full"})
    call("skills/list", {"cwds": []})
    call("plugin/installed", {})
    proc.stdin.close()
    for line in proc.stdout:
        lines.append(line)
    code = proc.wait()

    failures = []
    seen = set()
    for raw in lines:
        m = json.loads(raw)
        if "jsonrpc" in m:
            failures.append("jsonrpc key sent: " + raw)
        if "method" in m and "id" in m:
            errors = list(request_v.iter_errors(m))
            kind = "request " + m["method"]
        elif "method" in m:
            errors = list(notification_v.iter_errors({"method": m["method"], "params": m["params"]}))
            kind = "notification " + m["method"]
        elif "error" in m:
            errors = []
            kind = "error response"
            if not isinstance(m["error"].get("code"), int) or not isinstance(m["error"].get("message"), str):
                failures.append("bad error shape: " + raw)
        else:
            method = methods_by_id.get(m.get("id"))
            kind = "response " + str(method)
            errors = list(response_vs[method].iter_errors(m["result"])) if method in response_vs else []
        seen.add(kind)
        for e in errors[:3]:
            failures.append("%s: %s at %s\n  %s" % (kind, e.message[:300], list(e.absolute_path), raw.strip()[:400]))

    print("validated %d lines; kinds: %s" % (len(lines), ", ".join(sorted(seen))))
    expected = {"notification item/commandExecution/outputDelta", "notification serverRequest/resolved",
                "notification item/agentMessage/delta", "request item/commandExecution/requestApproval",
                "notification turn/completed", "notification thread/status/changed",
                "response thread/read", "response turn/interrupt", "response thread/turns/list",
                "response skills/list", "response plugin/installed", "response turn/steer",
                "request item/fileChange/requestApproval", "notification turn/diff/updated"}
    missing = expected - seen
    if missing:
        failures.append("session did not cover: %s" % sorted(missing))
    if code != 0:
        failures.append("server exit code %d" % code)
    for f in failures:
        print("FAIL", f)
    print("%d passed, %d failed" % (len(lines) - len(failures), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
