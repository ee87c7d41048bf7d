#!/usr/bin/env python3
"""thread/metadata/update, thread/revert and thread/inject_items through the
real `parley app-server` over pipes (issue 29).

- thread/metadata/update: Codex's errors (params checked before the thread
  is looked for); a patch of the thread's gitInfo (trimmed; null clears a
  field, all cleared is null) on a loaded thread and on one that is not;
  thread/read, thread/list and thread/resume show it after kill -9 and a
  restart, and after the SQLite index is rebuilt from the rollouts; the
  memory store keeps it too.
- thread/inject_items (the HTTP model, parley-mock-model): Codex's errors;
  items injected before the first turn, between turns and during a running
  turn reach the model at its next turn, in place, after kill -9 and a
  resume too; they are no turn items; the rollout holds them as Codex does
  (response_item lines).
- thread/revert (the HTTP model): Codex's errors; the thread keeps the turns
  before the one named (thread/read, thread/turns/list, the model's next
  request, after kill -9 and a restart), its name and Git metadata too;
  thread/reverted to the subscriber; refused while a turn runs; a revert
  leftover from a crash (the hidden temporary file) changes nothing; the
  memory store reverts too; kill -9 at moments from 0 to 1.6 s into the
  revert of a ~9 MB rollout leaves the old or the new history, whole.
- The real Codex 0.169 (where it runs offline): the same errors, and it
  resumes parley's reverted and injected rollout with the same history.
Every line parley prints is validated against the Codex schema.

Usage: thread_edits_test.py PARLEY_BINARY MOCK_BINARY SCHEMA_DIR
"""
import glob
import json
import os
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import codex_schema  # noqa: E402

PARLEY, MOCK, SCHEMA_DIR = sys.argv[1:4]
FAILURES = []
PASSED = [0]
GHOST = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80"


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    else:
        PASSED[0] += 1
    return cond


# The replies whose results are checked against their Codex definitions.
SCHEMA = codex_schema.Schema(SCHEMA_DIR, {
    "thread/start": "v2/ThreadStartResponse",
    "thread/read": "v2/ThreadReadResponse",
    "thread/resume": "v2/ThreadResumeResponse",
    "turn/start": "v2/TurnStartResponse",
    "thread/list": "v2/ThreadListResponse",
    "thread/turns/list": "v2/ThreadTurnsListResponse",
    "thread/metadata/update": "v2/ThreadMetadataUpdateResponse",
    "thread/revert": "v2/ThreadRevertResponse",
    "thread/inject_items": "v2/ThreadInjectItemsResponse",
})


def error_of(reply):
    e = reply.get("error") or {}
    return (e.get("code"), e.get("message"))


def result_of(reply):
    return reply.get("result")


class Home:
    """A home for parley (and Codex: the same config), with the mock model
    when `mock` is given; parley started again at will."""

    def __init__(self, prefix, mock=None, store=None):
        self.root = tempfile.mkdtemp(prefix=prefix)
        self.home, self.work = os.path.join(self.root, "home"), os.path.join(self.root, "work")
        for d in (self.home, self.work, os.path.join(self.root, "user")):
            os.makedirs(d)
        self.mock = mock
        if mock:
            with open(os.path.join(self.home, "config.toml"), "w") as f:
                f.write('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "never"\n'
                        '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                        'wire_api = "responses"\nrequires_openai_auth = false\n' % mock.url)
        self.env = dict(os.environ, CODEX_HOME=self.home, HOME=os.path.join(self.root, "user"),
                        no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost")
        self.env.pop("OPENAI_API_KEY", None)
        self.store = store
        self.runs = 0
        self.peer = None

    def start(self):
        self.runs += 1
        args = [PARLEY, "app-server", "--home", self.home, "--cwd", self.work]
        if self.store:
            args += ["--store", self.store]
        self.peer = app_server_peer.StdioPeer(
            args, self.env, os.path.join(self.root, "parley%d.stderr" % self.runs))
        return self.peer

    def stop(self):
        code = self.peer.stop()
        SCHEMA.check(check, self.peer, "parley run %d" % self.runs)
        return code

    def kill9(self):
        self.peer.proc.send_signal(signal.SIGKILL)
        self.peer.proc.wait(timeout=30)
        SCHEMA.check(check, self.peer, "parley run %d (killed)" % self.runs)

    def rollouts(self, thread=""):
        return [p for p in glob.glob(os.path.join(self.home, "**", "rollout-*.jsonl*"),
                                     recursive=True) if thread in p]

    def records(self, thread):
        paths = self.rollouts(thread)
        return [json.loads(line) for line in open(paths[0])] if paths else []

    def codex(self, name):
        return app_server_peer.StdioPeer(app_server_peer.CODEX + ["app-server"], self.env,
                                         os.path.join(self.root, name))

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


def body(request):
    b = request["body"]
    return json.loads(b) if isinstance(b, str) else b


def conversation(request):
    """A request's messages as (role, text): developer messages and the
    environment context left out; other items as their type."""
    out = []
    for i in body(request)["input"]:
        if i.get("role") == "developer" or "<environment_context>" in json.dumps(i):
            continue
        if i.get("type", "message") == "message":
            texts = [c.get("text") for c in i.get("content") or [] if isinstance(c, dict)]
            out.append((i.get("role"), "\n".join(t for t in texts if t)))
        else:
            out.append((i.get("type"), None))
    return out


def last_conversation(mock):
    reqs = mock.requests()
    return conversation(reqs[-1]) if reqs else []


def message(role, text):
    kind = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def turns_of(peer, thread):
    r = result_of(peer.call("thread/read", {"threadId": thread, "includeTurns": True}))
    return [(t["id"], [i.get("text") or (i.get("content") or [{}])[0].get("text")
                       for i in t["items"]]) for t in r["thread"]["turns"]]


# -- thread/metadata/update ---------------------------------------------------

def metadata_errors(peer, thread):
    u = lambda params: error_of(peer.call("thread/metadata/update", params))
    return {
        "unknown": u({"threadId": GHOST, "gitInfo": {"branch": "x"}}),
        "bad id": u({"threadId": "nope", "gitInfo": {"branch": "x"}}),
        "missing": u({}),
        "no gitInfo": u({"threadId": thread}),
        "gitInfo null": u({"threadId": thread, "gitInfo": None}),
        "unknown, no gitInfo": u({"threadId": GHOST}),
        "gitInfo empty": u({"threadId": thread, "gitInfo": {}}),
        "branch empty": u({"threadId": thread, "gitInfo": {"branch": ""}}),
        "sha blank": u({"threadId": thread, "gitInfo": {"sha": "  "}}),
        "branch number": u({"threadId": thread, "gitInfo": {"branch": 5}}),
        "gitInfo string": u({"threadId": thread, "gitInfo": "x"}),
    }


METADATA_EXPECTED = {
    "unknown": (-32600, "no rollout found for thread id " + GHOST),
    "missing": (-32600, "Invalid request: missing field `threadId`"),
    "no gitInfo": (-32600, "thread metadata update must include at least one field"),
    "gitInfo null": (-32600, "thread metadata update must include at least one field"),
    "unknown, no gitInfo": (-32600, "thread metadata update must include at least one field"),
    "gitInfo empty": (-32600, "gitInfo must include at least one field"),
    "branch empty": (-32600, "gitInfo.branch must not be empty"),
    "sha blank": (-32600, "gitInfo.sha must not be empty"),
    "branch number": (-32600, "Invalid request: invalid type: integer `5`, expected a string"),
    "gitInfo string": (-32600, "Invalid request: invalid type: string \"x\", expected struct "
                               "ThreadMetadataGitInfoUpdateParams"),
}


def check_metadata_errors(errs, who):
    for k, want in METADATA_EXPECTED.items():
        check(errs[k] == want, "%s metadata/%s: %s" % (who, k, errs[k]))
    check(errs["bad id"][0] == -32600 and errs["bad id"][1].startswith("invalid thread id"),
          "%s metadata/bad id: %s" % (who, errs["bad id"]))


def git_of(peer, thread):
    return result_of(peer.call("thread/read", {"threadId": thread}))["thread"]["gitInfo"]


def listed_git(peer, thread):
    data = result_of(peer.call("thread/list", {}))["data"]
    return [t["gitInfo"] for t in data if t["id"] == thread]


def test_metadata():
    h = Home("parley-meta-git-")
    p = h.start()
    t = p.start_thread()
    p.run_turn(t, "say: hi")
    fresh = p.start_thread()
    errs = metadata_errors(p, t)
    check_metadata_errors(errs, "parley")
    p.kept.clear()
    r = result_of(p.call("thread/metadata/update", {"threadId": t, "gitInfo": {
        "branch": " main ", "sha": "abc123", "originUrl": "https://example.com/r.git"}}))
    full = {"sha": "abc123", "branch": "main", "originUrl": "https://example.com/r.git"}
    check(r["thread"]["gitInfo"] == full and r["thread"]["id"] == t and r["thread"]["turns"] == []
          and r["thread"]["status"]["type"] == "idle",
          "a loaded thread: the whole gitInfo, trimmed: %s" % r["thread"]["gitInfo"])
    r = result_of(p.call("thread/metadata/update", {"threadId": t, "gitInfo": {"sha": "def456"}}))
    check(r["thread"]["gitInfo"] == dict(full, sha="def456"), "a field left out stays")
    r = result_of(p.call("thread/metadata/update", {"threadId": t, "gitInfo": {"branch": None}}))
    after = {"sha": "def456", "branch": None, "originUrl": "https://example.com/r.git"}
    check(r["thread"]["gitInfo"] == after, "null clears a field: %s" % r["thread"]["gitInfo"])
    check(not [m for m in p.kept if m.get("method")], "no notification (as Codex): %s"
          % [m.get("method") for m in p.kept])
    check(git_of(p, t) == after and listed_git(p, t) == [after], "thread/read and thread/list")
    r = result_of(p.call("thread/metadata/update", {"threadId": fresh, "gitInfo": {"sha": "f1"}}))
    check(r["thread"]["gitInfo"] == {"sha": "f1", "branch": None, "originUrl": None},
          "a thread without turns too")
    rollout = h.records(t)
    lines = [x["payload"]["git"] for x in rollout if x["type"] == "parley_git_info"]
    check(len(lines) == 3 and lines[-1] == after, "the rollout holds each update: %s" % lines[-1:])
    h.kill9()

    p = h.start()
    check(git_of(p, t) == after, "after kill -9: thread/read (not loaded)")
    check(listed_git(p, t) == [after], "after kill -9: thread/list")
    res = result_of(p.call("thread/resume", {"threadId": t}))
    check(res["thread"]["gitInfo"] == after, "after kill -9: thread/resume")
    h.stop()

    p = h.start()  # not loaded: stored all the same
    r = result_of(p.call("thread/metadata/update", {"threadId": t, "gitInfo": {"branch": "dev"}}))
    check(r["thread"]["gitInfo"] == dict(after, branch="dev")
          and r["thread"]["status"]["type"] == "notLoaded", "a thread that is not loaded")
    r = result_of(p.call("thread/metadata/update", {"threadId": t, "gitInfo": {
        "branch": None, "sha": None, "originUrl": None}}))
    check(r["thread"]["gitInfo"] is None, "every field cleared: gitInfo is null")
    p.call("thread/metadata/update", {"threadId": t, "gitInfo": {"branch": "kept"}})
    h.kill9()
    for suffix in ("", "-wal", "-shm"):
        path = os.path.join(h.home, "parley-index.sqlite" + suffix)
        if os.path.exists(path):
            os.unlink(path)
    p = h.start()
    p.wait_index_ready()
    want = {"sha": None, "branch": "kept", "originUrl": None}
    check(listed_git(p, t) == [want], "the index rebuilt from the rollouts lists it")
    check(h.stop() == 0, "parley exits 0")
    h.remove()

    m = Home("parley-meta-git-mem-", store="memory")
    p = m.start()
    t = p.start_thread()
    p.run_turn(t, "say: hi")
    r = result_of(p.call("thread/metadata/update", {"threadId": t, "gitInfo": {"branch": "b"}}))
    want = {"sha": None, "branch": "b", "originUrl": None}
    check(r["thread"]["gitInfo"] == want and git_of(p, t) == want and listed_git(p, t) == [want],
          "memory store: updated, read and listed")
    check(m.stop() == 0, "parley exits 0")
    m.remove()
    return errs


# -- thread/inject_items -------------------------------------------------------

def inject_errors(peer, thread):
    i = lambda params: error_of(peer.call("thread/inject_items", params))
    return {
        "unknown": i({"threadId": GHOST, "items": []}),
        "bad id": i({"threadId": "nope", "items": []}),
        "missing items": i({"threadId": thread}),
        "items not array": i({"threadId": thread, "items": {}}),
        "empty": i({"threadId": thread, "items": []}),
        "no type": i({"threadId": thread, "items": [{"foo": 1}]}),
        "number": i({"threadId": thread, "items": [5]}),
        "second bad": i({"threadId": thread, "items": [message("user", "x"), "x"]}),
        "no role": i({"threadId": thread, "items": [{"type": "message", "content": []}]}),
        "bad part": i({"threadId": thread, "items": [
            {"type": "message", "role": "user", "content": [{"type": "zzz"}]}]}),
        "call without arguments": i({"threadId": thread, "items": [
            {"type": "function_call", "name": "f", "call_id": "c"}]}),
    }


INJECT_EXPECTED = {
    "unknown": (-32600, "thread not found: " + GHOST),
    "missing items": (-32600, "Invalid request: missing field `items`"),
    "items not array": (-32600, "Invalid request: invalid type: map, expected a sequence"),
    "empty": (-32600, "items must not be empty"),
    "no type": (-32600, "items[0] is not a valid response item: missing field `type`"),
    "number": (-32600, "items[0] is not a valid response item: invalid type: integer `5`, "
                       "expected internally tagged enum ResponseItem"),
    "second bad": (-32600, "items[1] is not a valid response item: invalid type: string \"x\", "
                           "expected internally tagged enum ResponseItem"),
    "no role": (-32600, "items[0] is not a valid response item: missing field `role`"),
    "bad part": (-32600, "items[0] is not a valid response item: unknown variant `zzz`, expected "
                         "one of `input_text`, `input_image`, `input_audio`, `output_text`"),
    "call without arguments": (-32600, "items[0] is not a valid response item: missing field "
                                       "`arguments`"),
}


def check_inject_errors(errs, who):
    for k, want in INJECT_EXPECTED.items():
        check(errs[k] == want, "%s inject/%s: %s" % (who, k, errs[k]))
    check(errs["bad id"][0] == -32600 and errs["bad id"][1].startswith("invalid thread id"),
          "%s inject/bad id: %s" % (who, errs["bad id"]))


def test_inject(mock):
    h = Home("parley-inject-", mock)
    p = h.start()
    t = p.start_thread(cwd=h.work, approvalPolicy="never")
    errs = inject_errors(p, t)
    check_inject_errors(errs, "parley")
    ok = p.call("thread/inject_items", {"threadId": t, "items": [message("user", "EARLY")]})
    check(result_of(ok) == {}, "before any turn: answers {}: %s" % ok)
    p.run_turn(t, "mock: say one", timeout=60)
    p.kept.clear()
    ok = p.call("thread/inject_items", {"threadId": t, "items": [
        message("user", "INJ-USER"), message("assistant", "INJ-ASSISTANT")]})
    check(result_of(ok) == {}, "between turns: answers {}")
    check(not [m for m in p.kept if m.get("method")], "no notification (as Codex)")
    mock.forget()
    p.run_turn(t, "mock: say two", timeout=60)
    conv = last_conversation(mock)
    want = [("user", "EARLY"), ("user", "mock: say one"), ("assistant", "one"),
            ("user", "INJ-USER"), ("assistant", "INJ-ASSISTANT"), ("user", "mock: say two")]
    check(conv == want, "the next request has them in place: %s" % conv)
    turn = p.start_turn(t, "mock: say three\nmock: stall 1500")
    time.sleep(0.4)
    ok = p.call("thread/inject_items", {"threadId": t, "items": [message("user", "DURING")]})
    check(result_of(ok) == {}, "during a turn: answers {} (as Codex)")
    p.wait(lambda m: m.get("method") == "turn/completed"
           and m["params"]["turn"]["id"] == turn, 30)
    texts = [x for _, items in turns_of(p, t) for x in items]
    check(not [x for x in texts if x in ("EARLY", "INJ-USER", "INJ-ASSISTANT", "DURING")],
          "injected items are no turn items: %s" % texts)
    records = h.records(t)
    kinds = [(r["type"], (r["payload"].get("content") or [{}])[0].get("text"))
             for r in records if r["type"] in ("parley_injected", "response_item")]
    i = kinds.index(("response_item", "INJ-USER")) if ("response_item", "INJ-USER") in kinds else 0
    check(i > 0 and kinds[i - 1][0] == "parley_injected"
          and kinds[i + 1] == ("response_item", "INJ-ASSISTANT"),
          "the rollout: Codex's response_item lines, after parley's marker")
    h.kill9()

    p = h.start()
    p.call("thread/resume", {"threadId": t})
    mock.forget()
    p.run_turn(t, "mock: say four", timeout=60)
    conv = last_conversation(mock)
    # Injected while the turn ran: stored where it arrived, after the turn's
    # request and before its answer (the turn's own requests do not see it;
    # the next turn's do, and the real Codex reads the file the same way).
    want = want + [("assistant", "two"), ("user", "mock: say three\nmock: stall 1500"),
                   ("user", "DURING"), ("assistant", "three"), ("user", "mock: say four")]
    check(conv == want, "after kill -9 and a resume, the same history: %s" % conv)
    check(h.stop() == 0, "parley exits 0")
    return h, t, want, errs


# -- thread/revert -------------------------------------------------------------

def revert_errors(peer, thread):
    r = lambda params: error_of(peer.call("thread/revert", params))
    return {
        "unknown": r({"threadId": GHOST, "beforeTurnId": "x"}),
        "bad id": r({"threadId": "nope", "beforeTurnId": "x"}),
        "missing turn": r({"threadId": thread}),
        "missing thread": r({"beforeTurnId": "x"}),
        "unknown turn": r({"threadId": thread, "beforeTurnId": "nope"}),
        "turn number": r({"threadId": thread, "beforeTurnId": 5}),
    }


REVERT_EXPECTED = {
    "unknown": (-32600, "thread not found: " + GHOST),
    "missing turn": (-32600, "Invalid request: missing field `beforeTurnId`"),
    "missing thread": (-32600, "Invalid request: missing field `threadId`"),
    "unknown turn": (-32600, "turn not found: nope"),
    "turn number": (-32600, "Invalid request: invalid type: integer `5`, expected a string"),
}


def check_revert_errors(errs, who):
    for k, want in REVERT_EXPECTED.items():
        check(errs[k] == want, "%s revert/%s: %s" % (who, k, errs[k]))
    check(errs["bad id"][0] == -32600 and errs["bad id"][1].startswith("invalid thread id"),
          "%s revert/bad id: %s" % (who, errs["bad id"]))


def test_revert(mock):
    h = Home("parley-revert-", mock)
    p = h.start()
    t = p.start_thread(cwd=h.work, approvalPolicy="never")
    p.call("thread/name/set", {"threadId": t, "name": "NAMED"})
    turns = [p.run_turn(t, "mock: say " + w, timeout=60)[0] for w in ("one", "two", "three")]
    p.call("thread/metadata/update", {"threadId": t, "gitInfo": {"branch": "main"}})
    errs = revert_errors(p, t)
    check_revert_errors(errs, "parley")
    p.kept.clear()
    r = p.call("thread/revert", {"threadId": t, "beforeTurnId": turns[1]})
    res = result_of(r) or {}
    th = res.get("thread") or {}
    check(th.get("id") == t and th.get("turns") == [] and th.get("status", {}).get("type") == "idle"
          and th.get("preview") == "mock: say one", "the answer: the thread, no turns: %s"
          % str(r)[:300])
    check(th.get("name") == "NAMED" and th.get("gitInfo", {}).get("branch") == "main",
          "its name and Git metadata are kept (as Codex)")
    check(res.get("turnsBackwardsCursor") == "from:" + turns[0] and res.get("itemsBackwardsCursor"),
          "cursors to page back from the last kept turn: %s" % res.get("turnsBackwardsCursor"))
    note = p.wait(lambda m: m.get("method") == "thread/reverted")
    check(note["params"] == {"threadId": t}, "thread/reverted to the subscriber")
    check([x[0] for x in turns_of(p, t)] == [turns[0]], "thread/read: the kept turn only")
    page = result_of(p.call("thread/turns/list", {"threadId": t, "sortDirection": "desc",
                                                  "cursor": res.get("turnsBackwardsCursor")}))
    check([x["id"] for x in page["data"]] == [turns[0]], "thread/turns/list from its cursor")
    items = result_of(p.call("thread/items/list", {"threadId": t, "sortDirection": "desc",
                                                   "cursor": res.get("itemsBackwardsCursor")}))
    check(len(items["data"]) == 2 and items["data"][0]["turnId"] == turns[0],
          "thread/items/list from its cursor: %d items" % len(items["data"]))
    again = error_of(p.call("thread/revert", {"threadId": t, "beforeTurnId": turns[1]}))
    check(again == (-32600, "turn not found: " + turns[1]), "a reverted turn is gone: %s"
          % (again,))
    mock.forget()
    four, _ = p.run_turn(t, "mock: say four", timeout=60)
    conv = last_conversation(mock)
    check(conv == [("user", "mock: say one"), ("assistant", "one"), ("user", "mock: say four")],
          "the model's next request: the kept turn only: %s" % conv)

    busy = p.start_turn(t, "mock: say five\nmock: stall 2000")
    time.sleep(0.4)
    refused = error_of(p.call("thread/revert", {"threadId": t, "beforeTurnId": turns[0]}))
    check(refused[0] == -32600 and "a turn is running (%s)" % busy in refused[1],
          "refused while a turn runs: %s" % (refused,))
    p.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == busy, 30)
    r = result_of(p.call("thread/revert", {"threadId": t, "beforeTurnId": busy}))
    check(r and r["turnsBackwardsCursor"] == "from:" + four, "then it reverts (the fifth turn)")
    records = h.records(t)
    check(len(h.rollouts(t)) == 1 and not [x for x in records if x["type"] == "event_msg" and
                                          x["payload"].get("turn_id") in turns[1:] + [busy]],
          "one rollout, without a line of the dropped turns")
    check(records[-1]["type"] == "parley_reverted", "it ends with parley's revert line")
    h.kill9()  # the revert was answered: it is on disk

    # A crash inside a revert leaves the temporary file beside the rollout,
    # never a part of the thread.
    path = h.rollouts(t)[0]
    leftover = os.path.join(os.path.dirname(path), ".revert-" + os.path.basename(path) + ".tmp")
    with open(leftover, "w") as f:
        f.write('{"half": \n')
    p = h.start()
    check([x[0] for x in turns_of(p, t)] == [turns[0], four],
          "after kill -9: the kept turns, and the one after the revert")
    listed = [x for x in result_of(p.call("thread/list", {}))["data"] if x["id"] == t]
    check(len(listed) == 1 and listed[0]["name"] == "NAMED", "listed once, named")
    p.call("thread/resume", {"threadId": t})
    mock.forget()
    p.run_turn(t, "mock: say six", timeout=60)
    conv = last_conversation(mock)
    want = [("user", "mock: say one"), ("assistant", "one"), ("user", "mock: say four"),
            ("assistant", "four"), ("user", "mock: say six")]
    check(conv == want, "after the restart the model sees what was kept: %s" % conv)
    r = result_of(p.call("thread/revert", {"threadId": t, "beforeTurnId": turns[0]}))
    check(r and r["turnsBackwardsCursor"] is None and r["itemsBackwardsCursor"] is None,
          "before the first turn: nothing kept, no cursors")
    check(turns_of(p, t) == [], "no turns left")
    mock.forget()
    p.run_turn(t, "mock: say again", timeout=60)
    check(last_conversation(mock) == [("user", "mock: say again")], "a new start for the model")
    p.run_turn(t, "mock: say one more", timeout=60)
    check(h.stop() == 0, "parley exits 0")
    check(not os.path.exists(leftover) or len(h.rollouts(t)) == 1,
          "the leftover is no rollout")

    m = Home("parley-revert-mem-", mock, store="memory")
    p = m.start()
    mt = p.start_thread(cwd=m.work, approvalPolicy="never")
    first = p.run_turn(mt, "mock: say one", timeout=60)[0]
    second = p.run_turn(mt, "mock: say two", timeout=60)[0]
    r = result_of(p.call("thread/revert", {"threadId": mt, "beforeTurnId": second}))
    check(r and [x[0] for x in turns_of(p, mt)] == [first], "memory store: reverted")
    mock.forget()
    p.run_turn(mt, "mock: say three", timeout=60)
    check(last_conversation(mock) == [("user", "mock: say one"), ("assistant", "one"),
                                      ("user", "mock: say three")],
          "memory store: the model sees the kept turn")
    check(m.stop() == 0, "parley exits 0")
    m.remove()
    return h, t, errs


def test_revert_killed():
    """kill -9 at moments inside a revert of a large rollout: after the
    restart the thread has either every turn it had or the reverted ones,
    never a part or nothing."""
    h = Home("parley-revert-kill-")
    p = h.start()
    t = p.start_thread()
    filler = "x" * 20000
    turns = [p.run_turn(t, "say: %d %s" % (i, filler))[0] for i in range(120)]
    size = os.path.getsize(h.rollouts(t)[0])
    outcomes = []
    have = len(turns)
    for delay in (0.0, 0.01, 0.03, 0.06, 0.1, 0.2, 0.4, 0.8, 1.6):
        target = turns[have - 1]  # drop one more turn each time
        p.send("thread/revert", {"threadId": t, "beforeTurnId": target})
        time.sleep(delay)
        h.kill9()
        p = h.start()
        r = p.call("thread/read", {"threadId": t, "includeTurns": True}, timeout=60)
        got = [x["id"] for x in result_of(r)["thread"]["turns"]] if "result" in r else None
        ok = got in (turns[:have], turns[:have - 1])
        outcomes.append("old" if got == turns[:have] else "new" if ok else "BROKEN")
        if got == turns[:have - 1]:
            have -= 1
        p.call("thread/resume", {"threadId": t})
        if not ok:
            break
    check("BROKEN" not in outcomes and len(outcomes) == 9,
          "kill -9 during a revert of a %d KB rollout leaves the old or the new history: %s"
          % (size // 1024, outcomes))
    began = time.monotonic()
    r = result_of(p.call("thread/revert", {"threadId": t, "beforeTurnId": turns[have - 1]}))
    took = time.monotonic() - began
    check(r is not None and len(turns_of(p, t)) == have - 1,
          "and it reverts afterwards (%.0f ms)" % (took * 1000))
    check(h.stop() == 0, "parley exits 0")
    h.remove()


# -- Codex, offline -----------------------------------------------------------

def codex_errors(mock):
    h = Home("parley-edits-codex-", mock)
    c = h.codex("codex.stderr")
    try:
        t = result_of(c.call("thread/start", {"cwd": h.work}, timeout=90))["thread"]["id"]
        c.run_turn(t, "mock: say hi", timeout=90)
        return {"metadata": metadata_errors(c, t), "inject": inject_errors(c, t),
                "revert": revert_errors(c, t)}
    finally:
        c.stop()
        h.remove()


def codex_resumes(h, thread, want):
    """The real Codex resumes parley's rollout: its request has what parley's had."""
    c = h.codex("codex-resume.stderr")
    try:
        r = c.call("thread/resume", {"threadId": thread}, timeout=120)
        if not check("result" in r, "Codex resumes parley's thread: %s" % str(r)[:200]):
            return
        h.mock.forget()
        c.run_turn(thread, "mock: say codex", timeout=120)
        conv = last_conversation(h.mock)
        check(conv == want + [("user", "mock: say codex")],
              "Codex's request has the same history: %s" % conv)
    finally:
        c.stop()


def main():
    mock = app_server_peer.Mock(MOCK)
    meta_errs = test_metadata()
    inject_home, inject_thread, inject_history, inject_errs = test_inject(mock)
    revert_home, revert_thread, revert_errs = test_revert(mock)
    test_revert_killed()
    why = app_server_peer.codex_unavailable()
    if why:
        print("note: the real Codex is not compared:", why)
    else:
        codex = codex_errors(mock)
        for k, v in codex["metadata"].items():
            check(v == meta_errs[k] or (k == "bad id" and v[1].startswith("invalid thread id")),
                  "as Codex, metadata/%s: %s" % (k, v))
        for k, v in codex["inject"].items():
            check(v == inject_errs[k] or (k == "bad id" and v[1].startswith("invalid thread id")),
                  "as Codex, inject/%s: %s" % (k, v))
        for k, v in codex["revert"].items():
            check(v == revert_errs[k] or (k == "bad id" and v[1].startswith("invalid thread id")),
                  "as Codex, revert/%s: %s" % (k, v))
        codex_resumes(inject_home, inject_thread, inject_history + [("assistant", "four")])
        codex_resumes(revert_home, revert_thread, [("user", "mock: say again"),
                                                   ("assistant", "again"),
                                                   ("user", "mock: say one more"),
                                                   ("assistant", "one more")])
    inject_home.remove()
    revert_home.remove()
    mock.stop()
    print("%d passed, %d failed" % (PASSED[0], len(FAILURES)))
    if FAILURES:
        print("FAILED:", *FAILURES, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
