#!/usr/bin/env python3
"""turn/steer through the real `parley app-server` over pipes (issue 29).

- Errors as Codex 0.169 words them: no active turn, another turn expected,
  empty input, a thread that is not loaded; with the real Codex run offline
  on the same input where it can be had, both answer the same code and text.
- The scripted model: input steered while the turn waits on an approval
  changes nothing about the approval (decided once, resolved once); it joins
  the turn after the command, as a userMessage item (clientId kept), and the
  model acts on it; a turn/start while a turn runs steers into it. A restart
  reads the steered message back in its turn, and the rollout holds it as
  Codex writes it (a user_message event and a user message item).
- The HTTP model (parley-mock-model): the next request carries the steered
  message after the call and its output (Codex's order, compared with the
  real Codex's request when it runs); a later turn after a restart still
  sends it as history.
Every line parley prints is validated against the Codex schema.

Usage: turn_steer_test.py PARLEY_BINARY MOCK_BINARY SCHEMA_DIR
"""
import glob
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import codex_schema  # noqa: E402

PARLEY, MOCK, SCHEMA_DIR = sys.argv[1:4]
FAILURES = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def text(t):
    return [{"type": "text", "text": t, "text_elements": []}]


# The replies whose results are checked against their Codex definitions.
SCHEMA = codex_schema.Schema(SCHEMA_DIR, {
    "thread/start": "v2/ThreadStartResponse",
    "turn/start": "v2/TurnStartResponse",
    "turn/steer": "v2/TurnSteerResponse",
    "thread/read": "v2/ThreadReadResponse",
    "thread/resume": "v2/ThreadResumeResponse",
})
def error_of(reply):
    e = reply.get("error") or {}
    return (e.get("code"), e.get("message"))


def steer(peer, thread, turn, t, client_id=None):
    params = {"threadId": thread, "expectedTurnId": turn, "input": text(t) if t else []}
    if client_id:
        params["clientUserMessageId"] = client_id
    return peer.call("turn/steer", params)


GHOST = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80"


def error_cases(peer, thread, turn):
    """The answers to each wrong steer; `turn` is the active turn or None."""
    out = {"unknown thread": error_of(steer(peer, GHOST, "t", "x"))}
    if turn is None:
        out["no active turn"] = error_of(steer(peer, thread, "t", "x"))
        out["no active turn, empty input"] = error_of(steer(peer, thread, "t", ""))
    else:
        out["another turn"] = error_of(steer(peer, thread, "wrong", "x"))
        out["empty input"] = error_of(steer(peer, thread, turn, ""))
    return out


def drain(peer, seconds):
    """Keeps everything the peer prints for `seconds`."""
    try:
        peer.wait(lambda m: False, seconds)
    except TimeoutError:
        pass


def items_of(events, kind, method="item/completed"):
    return [m["params"]["item"] for m in events
            if m.get("method") == method and m["params"]["item"]["type"] == kind]


def scripted(schema):
    root = tempfile.mkdtemp(prefix="parley-steer-")
    home, work = os.path.join(root, "home"), os.path.join(root, "work")
    os.makedirs(work)
    env = dict(os.environ)
    env.pop("CODEX_HOME", None)
    args = [PARLEY, "app-server", "--home", home, "--cwd", work]
    p = app_server_peer.StdioPeer(args, env, os.path.join(root, "parley.stderr"))
    thread = p.start_thread()
    idle = error_cases(p, thread, None)
    check(idle["no active turn"] == (-32600, "no active turn to steer"), "idle: %s" % (idle,))
    check(idle["unknown thread"] == (-32600, "thread not found: " + GHOST), "unknown thread")

    turn = p.start_turn(thread, "run[escalate]: echo first")
    ask = p.wait(lambda m: m.get("method") == "item/commandExecution/requestApproval")
    busy = error_cases(p, thread, turn)
    check(busy["another turn"] == (-32600, "expected active turn id `wrong` but found `%s`" % turn),
          "another turn: %s" % (busy["another turn"],))
    check(busy["empty input"] == (-32600, "input must not be empty"), "empty input")
    r = steer(p, thread, turn, "say: steered ok", "cli-1")
    check(r.get("result") == {"turnId": turn}, "steer answers the active turn: %s" % r)
    # turn/start while the turn runs: its input is steered in too.
    again = p.call("turn/start", {"threadId": thread, "input": text("say: via start")})
    check(again["result"]["turn"]["id"] == turn, "turn/start while active answers that turn")
    drain(p, 0.5)
    early = [m for m in p.kept if m.get("method") == "item/started"
             and m["params"]["item"]["type"] == "userMessage"
             and m["params"]["item"]["content"][0]["text"] in ("say: steered ok", "say: via start")]
    check(not early, "nothing is shown before the step under way (the approval) ends")
    p.kept.clear()  # what came before the answer
    p.write({"id": ask["id"], "result": {"decision": "accept"}})
    events = []
    while True:
        m = p.wait(lambda m: (m.get("params") or {}).get("turnId") == turn
                   or m.get("method") in ("turn/completed", "serverRequest/resolved")
                   or "method" in m and "id" in m, 30)
        events.append(m)
        if m.get("method") == "turn/completed":
            break
    check(events[-1]["params"]["turn"]["status"] == "completed", "the turn completes")
    resolved = [m for m in events if m.get("method") == "serverRequest/resolved"]
    asks = [m for m in events if "id" in m and "method" in m]
    check(len(resolved) == 1 and resolved[0]["params"]["requestId"] == ask["id"] and not asks,
          "the approval was resolved once, nothing asked again")
    stats = p.call("parley/stats", {})["result"]["approvals"]
    check(stats["requested"] == 1 and stats["decided"] == 1 and stats["allowed"] == 1,
          "one approval, one decision: %s" % stats)
    order = [(m["method"], m["params"]["item"]["type"]) for m in events
             if m.get("method") in ("item/started", "item/completed")]
    check(order == [("item/completed", "commandExecution"),
                    ("item/started", "userMessage"), ("item/completed", "userMessage"),
                    ("item/started", "userMessage"), ("item/completed", "userMessage"),
                    ("item/started", "agentMessage"), ("item/completed", "agentMessage"),
                    ("item/started", "agentMessage"), ("item/completed", "agentMessage")],
          "command, then the steered messages, then the model's answers: %s" % order)
    users = items_of(events, "userMessage")
    check([u["content"][0]["text"] for u in users] == ["say: steered ok", "say: via start"]
          and users[0].get("clientId") == "cli-1", "the steered messages, clientId kept")
    said = [a["text"] for a in items_of(events, "agentMessage")]
    check(said == ["steered ok", "via start"], "the model acted on them: %s" % said)
    after = error_cases(p, thread, None)
    check(after["no active turn"] == (-32600, "no active turn to steer"), "after the turn")
    check(p.stop() == 0, "parley exits 0")
    schema.check(check, p, "parley (scripted)")

    rollout = glob.glob(os.path.join(home, "sessions", "**", "*.jsonl"), recursive=True)
    records = [json.loads(line) for line in open(rollout[0])] if rollout else []
    payloads = [(r["type"], r["payload"].get("type"), r["payload"].get("role"),
                 json.dumps(r["payload"])) for r in records]
    steered_records = [(t, k, role) for t, k, role, body in payloads if "say: steered ok" in body]
    check(steered_records == [("response_item", "message", "user"),
                              ("event_msg", "user_message", None)],
          "the rollout holds it as Codex writes it: %s" % steered_records)

    p = app_server_peer.StdioPeer(args, env, os.path.join(root, "parley2.stderr"))
    read = p.call("thread/read", {"threadId": thread, "includeTurns": True})["result"]["thread"]
    kinds = [(i["type"], i.get("text") or (i.get("content") or [{}])[0].get("text"))
             for i in read["turns"][0]["items"]]
    check([k for k, _ in kinds] == ["userMessage", "commandExecution", "userMessage",
                                    "userMessage", "agentMessage", "agentMessage"]
          and kinds[2][1] == "say: steered ok" and len(read["turns"]) == 1,
          "after a restart the turn shows the steered messages in place: %s" % kinds)
    check(p.stop() == 0, "parley exits 0 (restart)")
    shutil.rmtree(root, ignore_errors=True)
    return idle, busy


class ModelHome:
    def __init__(self, mock):
        self.root = tempfile.mkdtemp(prefix="parley-steer-model-")
        self.home, self.work = os.path.join(self.root, "home"), os.path.join(self.root, "work")
        for d in (self.home, self.work, os.path.join(self.root, "user")):
            os.makedirs(d)
        with open(os.path.join(self.home, "config.toml"), "w") as f:
            f.write('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "on-request"\n'
                    '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                    'wire_api = "responses"\nrequires_openai_auth = false\n' % mock.url)
        self.env = dict(os.environ, CODEX_HOME=self.home, HOME=os.path.join(self.root, "user"),
                        no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost")
        self.env.pop("OPENAI_API_KEY", None)

    def peer(self, args, name):
        return app_server_peer.StdioPeer(args, self.env, os.path.join(self.root, name))


def tail_shape(request):
    """The last request's input after the first user message, as kinds."""
    body = request["body"]
    if isinstance(body, str):
        body = json.loads(body)
    items = [i for i in body["input"] if i.get("role") != "developer"
             and "environment_context" not in json.dumps(i)]
    out = []
    for i in items:
        if i.get("type") == "message":
            texts = [c.get("text") for c in i.get("content") or [] if isinstance(c, dict)]
            out.append(("message", i.get("role"), "\n".join(t for t in texts if t)))
        else:
            out.append((i.get("type"), None, None))
    return out


def steered_turn(peer, mock, thread):
    """A model turn asking for approval, steered while it waits; returns
    the turn's events and the model's last request."""
    mock.forget()
    turn = peer.start_turn(thread, "mock: run echo first")
    ask = peer.wait(lambda m: m.get("method") == "item/commandExecution/requestApproval", 120)
    r = steer(peer, thread, turn, "mock: say steered ok", "cli-1")
    check(r.get("result") == {"turnId": turn}, "model turn: steer answers the turn")
    peer.write({"id": ask["id"], "result": {"decision": "accept"}})
    events = []
    while True:
        m = peer.wait(lambda m: (m.get("params") or {}).get("turnId") == turn
                      or ((m.get("params") or {}).get("turn") or {}).get("id") == turn, 120)
        events.append(m)
        if m.get("method") == "turn/completed":
            break
    return turn, events, mock.requests()


def with_model(parley_busy, parley_idle):
    mock = app_server_peer.Mock(MOCK)
    h = ModelHome(mock)
    args = [PARLEY, "app-server", "--home", h.home, "--cwd", h.work]
    p = h.peer(args, "parley.stderr")
    thread = p.start_thread(cwd=h.work)
    turn, events, requests = steered_turn(p, mock, thread)
    said = [a["text"] for a in items_of(events, "agentMessage")]
    check(said == ["steered ok"], "model turn: the model answered the steered input: %s" % said)
    users = items_of(events, "userMessage")
    check(len(users) == 2 and users[1].get("clientId") == "cli-1", "model turn: userMessage shown")
    shape = tail_shape(requests[-1])
    parley_tail = [k for k, _, _ in shape[-3:]]
    check(shape[-1] == ("message", "user", "mock: say steered ok")
          and parley_tail == ["function_call", "function_call_output", "message"],
          "model turn: the next request sends it after the call and its output: %s" % shape)
    check(p.stop() == 0, "parley exits 0 (model)")
    SCHEMA.check(check, p, "parley (model)")

    # A later turn after a restart: the steered message is history.
    p = h.peer(args, "parley2.stderr")
    p.call("thread/resume", {"threadId": thread})
    mock.forget()
    p.run_turn(thread, "mock: say later", timeout=120)
    later = tail_shape(mock.requests()[-1])
    check(("message", "user", "mock: say steered ok") in later
          and later.index(("message", "user", "mock: say steered ok"))
          < later.index(("message", "user", "mock: say later")),
          "after a restart the model still gets the steered message as history: %s" % later)
    check(p.stop() == 0, "parley exits 0 (model, restart)")

    why = app_server_peer.codex_unavailable()
    if why:
        print("note: the real Codex is not compared:", why)
    else:
        c = h.peer(app_server_peer.CODEX + ["app-server"], "codex.stderr")
        cthread = c.call("thread/start", {"approvalPolicy": "on-request", "cwd": h.work},
                         timeout=120)["result"]["thread"]["id"]
        idle = error_cases(c, cthread, None)
        for case in ("no active turn", "no active turn, empty input", "unknown thread"):
            check(idle[case] == parley_idle[case],
                  "as Codex, %s: %s vs %s" % (case, idle[case], parley_idle[case]))
        cturn = c.start_turn(cthread, "mock: run echo first")
        cask = c.wait(lambda m: m.get("method") == "item/commandExecution/requestApproval", 120)
        busy = error_cases(c, cthread, cturn)
        theirs = busy["another turn"][1].replace(cturn, "TURN")
        ours = parley_busy["another turn"][1].replace(parley_busy["turn"], "TURN")
        check(busy["another turn"][0] == parley_busy["another turn"][0] and theirs == ours,
              "as Codex, another turn: %s vs %s" % (theirs, ours))
        check(busy["empty input"] == parley_busy["empty input"], "as Codex, empty input")
        c.write({"id": cask["id"], "result": {"decision": "decline"}})
        c.wait(lambda m: m.get("method") == "turn/completed", 120)
        cthread2 = c.call("thread/start", {"approvalPolicy": "on-request", "cwd": h.work},
                          timeout=120)["result"]["thread"]["id"]
        _, cevents, crequests = steered_turn(c, mock, cthread2)
        ctail = [k for k, _, _ in tail_shape(crequests[-1])[-3:]]
        check(ctail == parley_tail, "as Codex, the request's tail: %s vs %s" % (ctail, parley_tail))
        corder = [(m["method"], m["params"]["item"]["type"]) for m in cevents
                  if m.get("method") in ("item/started", "item/completed")
                  and m["params"]["item"]["type"] in ("userMessage", "commandExecution")]
        porder = [(m["method"], m["params"]["item"]["type"]) for m in events
                  if m.get("method") in ("item/started", "item/completed")
                  and m["params"]["item"]["type"] in ("userMessage", "commandExecution")]
        check(corder == porder, "as Codex, the items' order: %s vs %s" % (corder, porder))
        c.stop()
    mock.stop()
    shutil.rmtree(h.root, ignore_errors=True)


def main():
    schema = SCHEMA
    idle, busy = scripted(schema)
    busy = dict(busy)
    # For the comparison: the turn id parley named in its mismatch message.
    busy["turn"] = busy["another turn"][1].rsplit("`", 2)[-2]
    with_model(busy, idle)
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
