#!/usr/bin/env python3
"""thread/delete, thread/items/list, thread/goal/* and the configuration and
discovery methods through the real `parley app-server` over pipes (issue 29).

- thread/delete: an unknown or malformed id answers as Codex 0.169 does; an
  idle loaded thread is unloaded (its subscribers told: status notLoaded,
  thread/closed) and deleted (thread/deleted), its rollout and index entry
  gone, still gone after kill -9 and a restart; a thread whose turn waits on
  an approval has its turn interrupted first (the approval resolved once)
  and its subscriber sees the turn end, notLoaded and thread/closed before
  the reply and thread/deleted (40 times, on each store);
  a rollout removed with its index entry left behind (a crash between the
  two steps, the order parley deletes in) is gone after the restart too.
  The same through the memory store.
- thread/items/list: every item, in pages whose cursors chain without a gap
  or a repeat in both directions, one turn's items, an item anchor, and the
  errors (bad cursor, unknown turn, anchor without a turn, unknown thread).
- thread/goal/*: set, get, update, clear, each change stored: the goal is
  read back after kill -9 and a restart, and a cleared goal stays cleared.
- config/value/write and config/batchWrite write config.toml (versions,
  conflicts, bad key paths, values parley could not start with, a batch
  that fails leaves the file as it was) and parley starts with what was
  written; modelProvider/*, permissionProfile/list, experimentalFeature/*,
  hooks/list say what parley has.
- With the real Codex 0.169.0 run offline where npm has it: the same error
  cases answer the same codes and messages.
Every line parley prints is validated against the Codex schema.

Usage: thread_meta_test.py PARLEY_BINARY MOCK_BINARY SCHEMA_DIR
"""
import glob
import json
import os
import shutil
import signal
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import codex_schema  # noqa: E402

PARLEY, MOCK, SCHEMA_DIR = sys.argv[1:4]
FAILURES = []
PASSED = [0]
GHOST = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80"
DELETE_RUNS = int(os.environ.get("PARLEY_DELETE_RUNS", "40"))


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
    "thread/delete": "v2/ThreadDeleteResponse",
    "thread/items/list": "v2/ThreadItemsListResponse",
    "thread/goal/get": "v2/ThreadGoalGetResponse",
    "thread/goal/set": "v2/ThreadGoalSetResponse",
    "thread/goal/clear": "v2/ThreadGoalClearResponse",
    "config/value/write": "v2/ConfigWriteResponse",
    "config/batchWrite": "v2/ConfigWriteResponse",
    "modelProvider/list": "v2/ModelProviderListResponse",
    "modelProvider/capabilities/read": "v2/ModelProviderCapabilitiesReadResponse",
    "modelProvider/config/write": "v2/ModelProviderConfigWriteResponse",
    "permissionProfile/list": "v2/PermissionProfileListResponse",
    "experimentalFeature/list": "v2/ExperimentalFeatureListResponse",
    "experimentalFeature/enablement/set": "v2/ExperimentalFeatureEnablementSetResponse",
    "hooks/list": "v2/HooksListResponse",
    "thread/list": "v2/ThreadListResponse",
})
def error_of(reply):
    e = reply.get("error") or {}
    return (e.get("code"), e.get("message"))


def result_of(reply):
    return reply.get("result")


class Server:
    """A parley app-server on a home of its own, started again at will."""

    def __init__(self, root, schema, *extra):
        self.root, self.schema, self.extra = root, schema, list(extra)
        self.home = os.path.join(root, "home")
        self.work = os.path.join(root, "work")
        os.makedirs(self.work, exist_ok=True)
        self.env = dict(os.environ)
        self.env.pop("CODEX_HOME", None)
        self.runs = 0
        self.peer = None

    def start(self):
        self.runs += 1
        args = [PARLEY, "app-server", "--home", self.home, "--cwd", self.work] + self.extra
        self.peer = app_server_peer.StdioPeer(
            args, self.env, os.path.join(self.root, "parley%d.stderr" % self.runs))
        return self.peer

    def stop(self):
        code = self.peer.stop()
        self.schema.check(check, self.peer, "parley run %d" % self.runs)
        return code

    def kill9(self):
        self.peer.proc.send_signal(signal.SIGKILL)
        self.peer.proc.wait(timeout=30)
        self.schema.check(check, self.peer, "parley run %d (killed)" % self.runs)

    def rollouts(self):
        return glob.glob(os.path.join(self.home, "**", "rollout-*.jsonl*"), recursive=True)

    def indexed(self):
        db = sqlite3.connect(os.path.join(self.home, "parley-index.sqlite"))
        try:
            return [r[0] for r in db.execute("SELECT id FROM threads")]
        finally:
            db.close()


def run_turn(peer, thread, text):
    turn, events = peer.run_turn(thread, text, timeout=30)
    return turn, events


def listed(peer, archived=False):
    r = peer.call("thread/list", {"archived": archived})
    return [t["id"] for t in result_of(r)["data"]]


# -- thread/delete -------------------------------------------------------------

def delete_errors(peer):
    out = {"unknown": error_of(peer.call("thread/delete", {"threadId": GHOST})),
           "not a uuid": error_of(peer.call("thread/delete", {"threadId": "nope"})),
           "no params": error_of(peer.call("thread/delete", {}))}
    return out


def delete_busy_threads(p, who):
    """Deletes threads whose turns wait on an approval, again and again;
    returns the last. Each turn is interrupted first, its ask resolved once;
    the client sees the turn end and the thread close (status notLoaded,
    thread/closed) before the reply and thread/deleted, as Codex 0.169
    orders them (run offline: turn/completed, status notLoaded, the reply,
    thread/deleted). The events and the deletion once took different paths
    and thread/deleted overtook them (under ASan; with the memory store both
    are one hop from the store's answers)."""
    for run in range(DELETE_RUNS):
        busy = p.start_thread()
        turn = p.start_turn(busy, "run[escalate]: echo never-runs")
        ask = p.wait(lambda m: m.get("method") == "item/commandExecution/requestApproval")
        p.kept.clear()
        i = p.send("thread/delete", {"threadId": busy})
        seen = []
        while not seen or seen[-1].get("method") != "thread/deleted":
            seen.append(p.wait(lambda m: m.get("id") == i and "method" not in m
                               or (m.get("params") or {}).get("threadId") == busy))
        reply = [m for m in seen if m.get("id") == i and "method" not in m]
        unloaded = [m for m in seen if m.get("method") == "thread/status/changed"
                    and m["params"]["status"] == {"type": "notLoaded"}]
        order = ["reply" if m is (reply or [None])[0] else m.get("method") for m in seen
                 if m.get("method") in ("serverRequest/resolved", "turn/completed", "thread/closed",
                                        "thread/deleted")
                 or m is (unloaded or [None])[0] or m.get("id") == i and "method" not in m]
        want = ["serverRequest/resolved", "turn/completed", "thread/status/changed",
                "thread/closed", "reply", "thread/deleted"]
        if not check(order[-len(want):] == want and order.count("turn/completed") == 1,
                     "%s run %d: resolved, turn ended, notLoaded, closed, the reply, then deleted: %s"
                     % (who, run, order)):
            break
        check(result_of(reply[0]) == {}, "delete of a thread with a turn in flight answers {}")
        done = [m for m in seen if m.get("method") == "turn/completed"]
        check(done[0]["params"]["turn"]["status"] == "interrupted"
              and done[0]["params"]["turn"]["id"] == turn, "its turn ended interrupted")
        resolved = [m for m in seen if m.get("method") == "serverRequest/resolved"]
        check(len(resolved) == 1 and resolved[0]["params"]["requestId"] == ask["id"],
              "the approval was resolved once")
    return busy


def test_delete(schema):
    root = tempfile.mkdtemp(prefix="parley-delete-")
    s = Server(root, schema)
    p = s.start()
    errs = delete_errors(p)
    check(errs["unknown"] == (-32600, "no rollout found for thread id " + GHOST),
          "unknown thread: %s" % (errs["unknown"],))
    check(errs["not a uuid"][0] == -32600 and errs["not a uuid"][1].startswith("invalid thread id"),
          "malformed id: %s" % (errs["not a uuid"],))
    check(errs["no params"] == (-32600, "Invalid request: missing field `threadId`"),
          "missing threadId: %s" % (errs["no params"],))

    kept = p.start_thread()
    run_turn(p, kept, "say: kept")
    gone = p.start_thread()
    run_turn(p, gone, "say: deleted soon")
    check(len(s.rollouts()) == 2 and sorted(listed(p)) == sorted([kept, gone]),
          "two threads stored and listed")
    p.kept.clear()
    r = p.call("thread/delete", {"threadId": gone})
    check(result_of(r) == {}, "delete answers {}: %s" % r)
    p.kept.append(p.wait(lambda m: m.get("method") == "thread/deleted"))
    notes = [(m["method"], m["params"].get("threadId")) for m in p.kept if "method" in m]
    want = [("thread/status/changed", gone), ("thread/closed", gone), ("thread/deleted", gone)]
    check([n for n in notes if n[1] == gone] == want,
          "the subscriber is told: notLoaded, closed, deleted: %s" % notes)
    read_back = p.call("thread/read", {"threadId": gone})
    check(error_of(read_back) == (-32600, "thread not loaded: " + gone),
          "thread/read of it fails: %s" % str(read_back)[:300])
    check(listed(p) == [kept], "thread/list no longer shows it")
    check(len(s.rollouts()) == 1 and gone not in "".join(s.rollouts()), "its rollout is gone")
    check(gone not in s.indexed() and kept in s.indexed(), "its index entry is gone")
    again = error_of(p.call("thread/delete", {"threadId": gone}))
    check(again == (-32600, "no rollout found for thread id " + gone), "deleting again: %s"
          % (again,))
    check(error_of(p.call("thread/resume", {"threadId": gone}))[0] == -32600,
          "it cannot be resumed")

    busy = delete_busy_threads(p, "local")
    check(not any(busy in f for f in s.rollouts()), "its rollout is gone")
    counts = result_of(p.call("parley/debug/counts", {}))
    check(counts["conversations"] == 1 and counts["turns"] == 0 and counts["approvals"] == 0,
          "nothing of it is left running: %s" % counts)

    # Deleted, then kill -9 at once: still deleted after the restart.
    third = p.start_thread()
    run_turn(p, third, "say: third")
    check(result_of(p.call("thread/delete", {"threadId": third})) == {}, "third deleted")
    s.kill9()
    p = s.start()
    check(listed(p) == [kept], "after kill -9: only the kept thread is listed")
    check(error_of(p.call("thread/read", {"threadId": third}))[0] == -32600
          and error_of(p.call("thread/read", {"threadId": gone}))[0] == -32600,
          "after kill -9: the deleted threads cannot be read")
    check(result_of(p.call("thread/read", {"threadId": kept, "includeTurns": True}))
          ["thread"]["turns"][0]["items"][-1]["text"] == "kept", "the kept thread is whole")
    check(s.stop() == 0, "parley exits 0")

    # A crash between the two steps: the rollout unlinked, the index entry
    # not yet dropped. The next start drops the entry.
    p = s.start()
    half = p.start_thread()
    run_turn(p, half, "say: half")
    check(s.stop() == 0, "parley exits 0")
    check(half in s.indexed(), "indexed before the simulated crash")
    for f in s.rollouts():
        if half in f:
            os.unlink(f)
    p = s.start()
    index = p.wait_index_ready()
    check(index["state"] == "ready" and index["removed"] == 1,
          "the start's reconcile found the rollout gone: %s" % index)
    check(listed(p) == [kept], "a rollout gone with its index entry left: not listed")
    check(error_of(p.call("thread/delete", {"threadId": half}))
          == (-32600, "no rollout found for thread id " + half), "and not deletable again")
    check(s.stop() == 0, "parley exits 0")
    check(half not in s.indexed(), "its stale index entry was dropped at the start")
    shutil.rmtree(root, ignore_errors=True)


def test_delete_memory(schema):
    root = tempfile.mkdtemp(prefix="parley-delete-mem-")
    s = Server(root, schema, "--store", "memory")
    p = s.start()
    t = p.start_thread()
    run_turn(p, t, "say: in memory")
    check(result_of(p.call("thread/delete", {"threadId": t})) == {}, "memory: delete answers {}")
    check(listed(p) == [], "memory: not listed")
    check(error_of(p.call("thread/delete", {"threadId": t}))
          == (-32600, "no rollout found for thread id " + t), "memory: deleting again")
    check(error_of(p.call("thread/read", {"threadId": t}))[0] == -32600, "memory: not readable")
    delete_busy_threads(p, "memory")
    check(s.stop() == 0, "parley exits 0")
    shutil.rmtree(root, ignore_errors=True)


# -- thread/items/list -----------------------------------------------------------

def all_pages(peer, thread, limit, direction, turn=None):
    seen, cursor, pages = [], None, 0
    while True:
        params = {"threadId": thread, "limit": limit, "sortDirection": direction}
        if cursor:
            params["cursor"] = cursor
        if turn:
            params["turnId"] = turn
        r = result_of(peer.call("thread/items/list", params))
        seen += [(e["turnId"], e["item"]["id"]) for e in r["data"]]
        pages += 1
        cursor = r.get("nextCursor")
        if not cursor or pages > 50:
            return seen, pages


def test_items(schema):
    root = tempfile.mkdtemp(prefix="parley-items-")
    s = Server(root, schema)
    p = s.start()
    t = p.start_thread()
    t1, _ = run_turn(p, t, "say: one\nsay: two")
    t2, _ = run_turn(p, t, "say: three")
    full = result_of(p.call("thread/items/list", {"threadId": t}))
    everything = [(e["turnId"], e["item"]["id"]) for e in full["data"]]
    read = result_of(p.call("thread/read", {"threadId": t, "includeTurns": True}))["thread"]
    expected = [(turn["id"], i["id"]) for turn in read["turns"] for i in turn["items"]]
    check(everything == expected and len(expected) == 5,
          "every item in order, with its turn (%d)" % len(everything))
    check(full["nextCursor"] is None and full["backwardsCursor"], "one page: no next cursor")
    asc, pages = all_pages(p, t, 2, "asc")
    check(asc == expected and pages == 3, "pages of 2 ascending chain without gap (%d pages)"
          % pages)
    desc, _ = all_pages(p, t, 2, "desc")
    check(desc == list(reversed(expected)), "pages of 2 descending")
    first = result_of(p.call("thread/items/list", {"threadId": t, "limit": 2}))
    second = result_of(p.call("thread/items/list", {"threadId": t, "limit": 2,
                                                    "cursor": first["nextCursor"]}))
    back = result_of(p.call("thread/items/list", {"threadId": t, "sortDirection": "desc",
                                                  "cursor": second["backwardsCursor"]}))
    check([(e["turnId"], e["item"]["id"]) for e in back["data"]] == list(reversed(expected[:3])),
          "a page's backwards cursor, read the other way, starts at its first item")
    one, _ = all_pages(p, t, 10, "asc", turn=t1)
    check(one == [e for e in expected if e[0] == t1] and len(one) == 3, "one turn's items")
    anchor = result_of(p.call("thread/items/list", {
        "threadId": t, "turnId": t1, "cursor": {"type": "item", "itemId": expected[0][1]}}))
    check([(e["turnId"], e["item"]["id"]) for e in anchor["data"]] == expected[1:3],
          "an item anchor is exclusive, within its turn")
    errs = {
        "bad cursor": error_of(p.call("thread/items/list", {"threadId": t, "cursor": "garbage"})),
        "unknown turn": error_of(p.call("thread/items/list", {"threadId": t, "turnId": "nope"})),
        "anchor without turn": error_of(p.call("thread/items/list", {
            "threadId": t, "cursor": {"type": "item", "itemId": "x"}})),
        "unknown thread": error_of(p.call("thread/items/list", {"threadId": GHOST})),
        "bad direction": error_of(p.call("thread/items/list", {"threadId": t,
                                                                "sortDirection": "up"})),
        "no thread": error_of(p.call("thread/items/list", {})),
    }
    check(errs["bad cursor"] == (-32600, "invalid cursor: garbage"), "bad cursor (Codex's text)")
    check(errs["unknown turn"] == (-32600, "turn not found: nope"), "unknown turn")
    check(errs["anchor without turn"] == (-32600, "an item anchor requires a non-empty turnId"),
          "an anchor without its turn")
    check(errs["unknown thread"] == (-32600, "thread not loaded: " + GHOST), "unknown thread")
    check(errs["bad direction"][0] == -32600 and "unknown variant `up`" in errs["bad direction"][1],
          "a bad sortDirection: %s" % (errs["bad direction"],))
    check(errs["no thread"] == (-32600, "Invalid request: missing field `threadId`"),
          "missing threadId")
    s.kill9()
    p = s.start()
    after = result_of(p.call("thread/items/list", {"threadId": t}))
    check([(e["turnId"], e["item"]["id"]) for e in after["data"]] == expected,
          "after kill -9 the same items (the thread not loaded)")
    check(s.stop() == 0, "parley exits 0")
    shutil.rmtree(root, ignore_errors=True)


# -- thread/goal/* ---------------------------------------------------------------

def goal_errors(peer, thread, fresh):
    return {
        "unknown thread": error_of(peer.call("thread/goal/get", {"threadId": GHOST})),
        "set unknown thread": error_of(peer.call("thread/goal/set", {"threadId": GHOST,
                                                                     "objective": "x"})),
        "clear unknown thread": error_of(peer.call("thread/goal/clear", {"threadId": GHOST})),
        "empty objective": error_of(peer.call("thread/goal/set", {"threadId": thread,
                                                                  "objective": " "})),
        "bad status": error_of(peer.call("thread/goal/set", {"threadId": thread,
                                                             "status": "bogus"})),
        "no goal yet": error_of(peer.call("thread/goal/set", {"threadId": fresh,
                                                              "status": "paused"})),
    }


def test_goals(schema):
    root = tempfile.mkdtemp(prefix="parley-goal-")
    s = Server(root, schema)
    p = s.start()
    t = p.start_thread()
    run_turn(p, t, "say: hi")
    fresh = p.start_thread()
    check(result_of(p.call("thread/goal/get", {"threadId": t})) == {"goal": None}, "no goal yet")
    errs = goal_errors(p, t, fresh)
    check(errs["unknown thread"] == (-32600, "thread not found: " + GHOST), "get: unknown thread")
    check(errs["set unknown thread"] == errs["unknown thread"]
          and errs["clear unknown thread"] == errs["unknown thread"], "set/clear: unknown thread")
    check(errs["empty objective"] == (-32600, "goal objective must not be empty"),
          "an empty objective")
    check(errs["bad status"][0] == -32600 and "unknown variant `bogus`" in errs["bad status"][1],
          "a bad status")
    check(errs["no goal yet"] == (-32600, "cannot update goal for thread %s: no goal exists"
                                  % fresh), "updating a goal that does not exist")
    p.kept.clear()
    g = result_of(p.call("thread/goal/set", {"threadId": t, "objective": "ship it",
                                             "tokenBudget": 1000}))["goal"]
    check(g["objective"] == "ship it" and g["status"] == "active" and g["tokenBudget"] == 1000
          and g["threadId"] == t, "set: a new goal, active by default")
    upd = p.wait(lambda m: m.get("method") == "thread/goal/updated")
    check(upd["params"]["goal"] == g and upd["params"]["threadId"] == t,
          "thread/goal/updated with the goal")
    g2 = result_of(p.call("thread/goal/set", {"threadId": t, "status": "paused",
                                              "tokenBudget": None}))["goal"]
    check(g2["status"] == "paused" and g2["tokenBudget"] is None and g2["createdAt"] == g["createdAt"],
          "set without an objective updates the goal (status, budget cleared)")
    s.kill9()
    p = s.start()
    got = result_of(p.call("thread/goal/get", {"threadId": t}))["goal"]
    check(got == g2, "after kill -9 the goal is read back: %s" % got)
    rollout = [f for f in s.rollouts() if t in f][0]
    records = [json.loads(line) for line in open(rollout)]
    goals = [r["payload"] for r in records if r["payload"].get("type") == "thread_goal_updated"]
    check(len(goals) == 2 and goals[-1]["goal"]["status"] == "paused"
          and "tokenBudget" not in goals[-1]["goal"],
          "the rollout holds the updates as Codex writes them (event_msg thread_goal_updated)")
    p.kept.clear()
    check(result_of(p.call("thread/goal/clear", {"threadId": t})) == {"cleared": True}, "cleared")
    check(p.wait(lambda m: m.get("method") == "thread/goal/cleared")["params"] == {"threadId": t},
          "thread/goal/cleared")
    check(result_of(p.call("thread/goal/clear", {"threadId": t})) == {"cleared": False},
          "clearing again: nothing to clear")
    s.kill9()
    p = s.start()
    check(result_of(p.call("thread/goal/get", {"threadId": t})) == {"goal": None},
          "after kill -9 the cleared goal stays cleared")
    r = p.call("thread/resume", {"threadId": t})
    check("result" in r, "the thread with goal records resumes")
    check(s.stop() == 0, "parley exits 0")
    shutil.rmtree(root, ignore_errors=True)
    return errs


# -- configuration and discovery ---------------------------------------------------

def config_errors(peer, home):
    w = lambda **kw: error_of(peer.call("config/value/write", dict(
        {"keyPath": "model", "value": "m", "mergeStrategy": "replace"}, **kw)))
    return {
        "empty key": w(keyPath=""),
        "empty segment": w(keyPath="model..x"),
        "conflict": w(expectedVersion="sha256:bogus"),
        "elsewhere": w(filePath="/tmp/elsewhere.toml"),
        "bad strategy": w(mergeStrategy="merge"),
        "not a string": w(value=5),
    }


def test_config(schema):
    root = tempfile.mkdtemp(prefix="parley-config-")
    s = Server(root, schema)
    os.makedirs(s.home)
    hooks = {"hooks": [{"name": "ticket", "command": ["/bin/true", "--queue", "ops"],
                        "timeoutMs": 2500}]}
    with open(os.path.join(s.home, "hooks.json"), "w") as f:
        json.dump(hooks, f)
    config = os.path.join(s.home, "config.toml")
    p = s.start()
    providers = result_of(p.call("modelProvider/list", {}))
    ids = [d["id"] for d in providers["data"]]
    check(providers["defaultProviderId"] == "scripted" and "scripted" in ids and "openai" in ids,
          "modelProvider/list: parley's providers, scripted active: %s" % ids)
    check(result_of(p.call("modelProvider/capabilities/read", {}))
          == {"imageGeneration": False, "webSearch": False}, "no image generation, no web search")
    profiles = result_of(p.call("permissionProfile/list", {}))
    check([d["id"] for d in profiles["data"]] == [":read-only", ":workspace",
                                                  ":danger-full-access"], "the three sandbox modes")
    page = result_of(p.call("permissionProfile/list", {"limit": 1}))
    rest = result_of(p.call("permissionProfile/list", {"cursor": page["nextCursor"]}))
    check(len(page["data"]) == 1 and [d["id"] for d in rest["data"]] == [":workspace",
                                                                         ":danger-full-access"]
          and rest["nextCursor"] is None, "permissionProfile/list pages")
    check(result_of(p.call("experimentalFeature/list", {})) == {"data": [], "nextCursor": None},
          "no experimental features")
    check(result_of(p.call("experimentalFeature/enablement/set", {"enablement": {"x": True}}))
          == {"enablement": {}}, "enablement/set: nothing updated")
    check(error_of(p.call("experimentalFeature/enablement/set", {"enablement": {"x": 1}}))[0]
          == -32600, "enablement/set: a non-boolean")
    hl = result_of(p.call("hooks/list", {}))["data"]
    check(len(hl) == 1 and hl[0]["cwd"] == s.work and [h["key"] for h in hl[0]["hooks"]]
          == ["ticket"] and hl[0]["hooks"][0]["command"] == "/bin/true --queue ops"
          and hl[0]["hooks"][0]["timeoutSec"] == 3, "hooks/list: the approval hook program")
    check(error_of(p.call("hooks/list", {"threadId": GHOST}))
          == (-32600, "thread not found: " + GHOST), "hooks/list: unknown thread")

    w = p.call("config/value/write", {"keyPath": "model_reasoning_effort", "value": "high",
                                      "mergeStrategy": "replace"})
    r = result_of(w)
    check(r and r["status"] == "ok" and r["filePath"] == config and r["version"].startswith(
        "sha256:"), "config/value/write: %s" % w)
    text = open(config).read()
    check('model_reasoning_effort = "high"' in text, "written to config.toml")
    import hashlib
    check(r["version"] == "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
          "the version is the file's SHA-256")
    ok = result_of(p.call("config/value/write", {
        "keyPath": "model_providers.local", "value": {"name": "Local", "base_url":
                                                      "http://127.0.0.1:9/v1"},
        "mergeStrategy": "upsert", "expectedVersion": r["version"]}))
    check(ok and ok["version"] != r["version"], "a write at the expected version")
    errs = config_errors(p, s.home)
    check(errs["empty key"] == (-32600, "keyPath must not be empty"), "an empty keyPath")
    check(errs["empty segment"] == (-32600, "keyPath segments must not be empty"),
          "an empty segment")
    check(errs["conflict"] == (-32600, "Configuration was modified since last read. Fetch latest "
                                       "version and retry."), "a version conflict")
    check(errs["elsewhere"] == (-32600, "Only writes to the user config are allowed"),
          "another file")
    check(errs["bad strategy"][0] == -32600 and "unknown variant `merge`" in errs["bad strategy"][1],
          "a bad mergeStrategy")
    check(errs["not a string"][0] == -32600 and errs["not a string"][1].startswith(
        "Invalid configuration:"), "a value parley could not start with: %s"
          % (errs["not a string"],))
    codes = [json.loads(l)["error"].get("data") for l in p.lines
             if '"config_write_error_code"' in l]
    check({c["config_write_error_code"] for c in codes} == {
        "configValidationError", "configVersionConflict", "configLayerReadonly"},
        "errors carry Codex's config_write_error_code")
    before = open(config).read()
    bad = p.call("config/batchWrite", {"edits": [
        {"keyPath": "model_provider", "value": "local", "mergeStrategy": "replace"},
        {"keyPath": "model_provider", "value": "no-such", "mergeStrategy": "replace"}]})
    check(error_of(bad)[0] == -32600 and open(config).read() == before,
          "a batch that fails writes nothing")
    good = result_of(p.call("config/batchWrite", {"edits": [
        {"keyPath": "model_provider", "value": "local", "mergeStrategy": "replace"},
        {"keyPath": "model", "value": "local-model", "mergeStrategy": "replace"}]}))
    check(good and good["status"] == "ok", "a batch of two edits")
    mp = result_of(p.call("modelProvider/config/write", {"settings": {
        "type": "customGateway", "name": "Gateway Two", "baseUrl": "http://127.0.0.1:9/v2"}}))
    check(mp and mp["provider"]["id"] == "gateway-two" and mp["provider"]["canEdit"],
          "modelProvider/config/write: a new provider: %s" % mp)
    check(error_of(p.call("modelProvider/config/write", {"settings": {"type": "bedrock",
                                                                      "providerId": "x"}}))[0]
          == -32600, "no Bedrock provider")
    # Nothing changed at run time: the running server keeps its provider.
    check(result_of(p.call("modelProvider/list", {}))["defaultProviderId"] == "scripted",
          "the running server keeps what it started with")
    check(s.stop() == 0, "parley exits 0")
    p = s.start()
    after = result_of(p.call("modelProvider/list", {}))
    check(after["defaultProviderId"] == "local" and "gateway-two" in [d["id"] for d in after["data"]],
          "the next start reads what was written")
    thread = result_of(p.call("thread/start", {}))["thread"]
    check(thread["model"] == "local-model" and thread["modelProvider"] == "local",
          "threads use the written model")
    check(s.stop() == 0, "parley exits 0")
    shutil.rmtree(root, ignore_errors=True)
    return errs


# -- Codex, offline -----------------------------------------------------------------

def codex_cases():
    """The same error cases against the real Codex, or None where it cannot run."""
    why = app_server_peer.codex_unavailable()
    if why:
        print("note: Codex not compared:", why)
        return None
    mock = app_server_peer.Mock(MOCK)
    root = tempfile.mkdtemp(prefix="parley-meta-codex-")
    home = os.path.join(root, "home")
    work = os.path.join(root, "work")
    for d in (home, work, os.path.join(root, "user")):
        os.makedirs(d)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "on-request"\n'
                '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                'wire_api = "responses"\nrequires_openai_auth = false\n' % mock.url)
    env = dict(os.environ, CODEX_HOME=home, HOME=os.path.join(root, "user"),
               no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost")
    env.pop("OPENAI_API_KEY", None)
    c = app_server_peer.StdioPeer(app_server_peer.CODEX + ["app-server"], env,
                                  os.path.join(root, "codex.stderr"))
    try:
        t = c.call("thread/start", {"approvalPolicy": "on-request", "cwd": work},
                   timeout=90)["result"]["thread"]["id"]
        c.run_turn(t, "hello\nmock: say hi", timeout=90)
        fresh = c.call("thread/start", {"cwd": work}, timeout=90)["result"]["thread"]["id"]
        out = {"delete": delete_errors(c), "goal": goal_errors(c, t, fresh),
               "config": config_errors(c, home),
               "items bad cursor": error_of(c.call("thread/items/list",
                                                   {"threadId": t, "cursor": "garbage"}))}
    finally:
        c.stop()
        mock.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out


def compare_with_codex(codex, goal_errs, config_errs):
    if codex is None:
        return
    d = codex["delete"]
    check(d["unknown"] == (-32600, "no rollout found for thread id " + GHOST),
          "Codex: unknown thread answers the same: %s" % (d["unknown"],))
    check(d["not a uuid"][1].startswith("invalid thread id"), "Codex: malformed id, same prefix")
    check(d["no params"] == (-32600, "Invalid request: missing field `threadId`"),
          "Codex: missing threadId, the same")
    for k, v in codex["goal"].items():
        mine = goal_errs[k]
        if k == "no goal yet":  # names another thread id
            same = mine[1].startswith("cannot update goal") and v[1].startswith("cannot update goal")
        elif k == "bad status":
            same = "unknown variant `bogus`" in v[1]
        else:
            same = mine == v
        check(same and mine[0] == v[0], "Codex goal/%s: %s / parley %s" % (k, v, mine))
    for k, v in codex["config"].items():
        mine = config_errs[k]
        same = mine == v if k not in ("not a string", "bad strategy") else \
            (mine[0] == v[0] and mine[1].split(":")[0] == v[1].split(":")[0])
        check(same, "Codex config/%s: %s / parley %s" % (k, v, mine))
    check(codex["items bad cursor"] == (-32600, "invalid cursor: garbage"),
          "Codex: a bad items cursor, the same text")


def main():
    schema = SCHEMA
    test_delete(schema)
    test_delete_memory(schema)
    test_items(schema)
    goal_errs = test_goals(schema)
    config_errs = test_config(schema)
    compare_with_codex(codex_cases(), goal_errs, config_errs)
    print("%d passed, %d failed" % (PASSED[0], len(FAILURES)))
    if FAILURES:
        print("FAILED:", *FAILURES, sep="\n  ")
        sys.exit(1)


if __name__ == "__main__":
    main()
