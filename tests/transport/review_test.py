#!/usr/bin/env python3
"""review/start through the real `parley app-server` over pipes (issue 29).

- The scripted model, in a git repository: each target (uncommittedChanges,
  baseBranch, commit, custom) is reviewed as a turn of its own: the reply
  carries the turn, then turn/started, an enteredReviewMode item, the
  review's own work, an exitedReviewMode item with the review and the
  review as an agentMessage, turn/completed. What git said reached the
  model (the scripted review names the changed files). Codex's errors for
  bad params; a target git cannot find fails the turn saying why; a
  running review takes no steer and no turn/start.
- The rollout holds Codex's EnteredReviewMode / ExitedReviewMode lines;
  after a restart thread/read shows the review's items.
- The HTTP model (parley-mock-model): the review's request carries the
  reviewer's instructions and the prompt, not the thread's history; the
  JSON answer becomes the review; the next turn's model sees the review's
  result and not its work.
- The real Codex 0.169 on the same inputs (where it runs offline): the same
  errors, the same items, and Codex resumes parley's thread with its review.
Every line parley prints is validated against the Codex schema.

Usage: review_test.py PARLEY_BINARY MOCK_BINARY SCHEMA_DIR
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
import codex_schema  # noqa: E402

PARLEY, MOCK, SCHEMA_DIR = sys.argv[1:4]
FAILURES = []
GHOST = "019a5c3e-7b10-7c21-9a3d-2f4e5a6b7c80"


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


# The replies whose results are checked against their Codex definitions.
SCHEMA = codex_schema.Schema(SCHEMA_DIR, {
    "thread/start": "v2/ThreadStartResponse",
    "turn/start": "v2/TurnStartResponse",
    "review/start": "v2/ReviewStartResponse",
    "thread/read": "v2/ThreadReadResponse",
    "thread/resume": "v2/ThreadResumeResponse",
})


def error_of(reply):
    e = reply.get("error") or {}
    return (e.get("code"), e.get("message"))


def git(work, *args):
    subprocess.run(["git", "-C", work, *args], check=True, capture_output=True)


def make_repo(work):
    """main: a.txt; feature: a commit adding a line; then an uncommitted
    line and an untracked file."""
    git(work, "init", "-q", "-b", "main")
    git(work, "config", "user.email", "t@example.com")
    git(work, "config", "user.name", "T")
    with open(os.path.join(work, "a.txt"), "w") as f:
        f.write("one\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "first")
    git(work, "checkout", "-qb", "feature")
    with open(os.path.join(work, "b.txt"), "w") as f:
        f.write("two\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "second: add b")
    with open(os.path.join(work, "a.txt"), "a") as f:
        f.write("three\n")
    with open(os.path.join(work, "new.txt"), "w") as f:
        f.write("untracked\n")


def review(peer, thread, target, timeout=60):
    """review/start and its turn's events through turn/completed."""
    r = peer.call("review/start", {"threadId": thread, "target": target}, timeout)
    if "result" not in r:
        return r, []
    events = []
    while True:
        m = peer.wait(lambda m: (m.get("params") or {}).get("threadId") == thread
                      and m.get("method") not in ("thread/status/changed", "warning",
                                                  "thread/tokenUsage/updated",
                                                  "account/rateLimits/updated"), timeout)
        events.append(m)
        if m.get("method") == "turn/completed":
            return r, events


def items_of(events):
    return [(m["method"], m["params"]["item"]["type"]) for m in events
            if m.get("method") in ("item/started", "item/completed")]


def item(events, kind, method="item/completed"):
    for m in events:
        if m.get("method") == method and m["params"]["item"]["type"] == kind:
            return m["params"]["item"]
    return None


REVIEW_ITEMS = [("item/started", "enteredReviewMode"), ("item/completed", "enteredReviewMode"),
                ("item/started", "exitedReviewMode"), ("item/completed", "exitedReviewMode"),
                ("item/started", "agentMessage"), ("item/completed", "agentMessage")]


def rollout_of(home, thread):
    paths = glob.glob(os.path.join(home, "sessions", "**", "*%s.jsonl" % thread), recursive=True)
    return [json.loads(line) for line in open(paths[0])] if paths else []


def bad_params(p, thread):
    """Codex's answers to malformed review/start params (compared below)."""
    return {
        "unknown": error_of(p.call("review/start", {"threadId": thread,
                                                    "target": {"type": "bogus"}})),
        "missing": error_of(p.call("review/start", {"threadId": thread})),
        "empty": error_of(p.call("review/start", {"threadId": thread, "target": {
            "type": "custom", "instructions": "  "}})),
        "nobranch": error_of(p.call("review/start", {"threadId": thread, "target": {
            "type": "baseBranch", "branch": ""}})),
        "nosha": error_of(p.call("review/start", {"threadId": thread, "target": {
            "type": "commit", "sha": ""}})),
        "detached": error_of(p.call("review/start", {"threadId": thread, "target": {
            "type": "custom", "instructions": "x"}, "delivery": "detached"})),
        "ghost": error_of(p.call("review/start", {"threadId": GHOST, "target": {
            "type": "uncommittedChanges"}})),
    }


def scripted():
    root = tempfile.mkdtemp(prefix="parley-review-")
    home, work = os.path.join(root, "home"), os.path.join(root, "work")
    os.makedirs(work)
    make_repo(work)
    env = dict(os.environ)
    env.pop("CODEX_HOME", None)
    args = [PARLEY, "app-server", "--home", home, "--cwd", work]
    p = app_server_peer.StdioPeer(args, env, os.path.join(root, "parley.stderr"))
    thread = p.start_thread(cwd=work, approvalPolicy="never")
    p.run_turn(thread, "say: before the review")

    r, events = review(p, thread, {"type": "uncommittedChanges"})
    res = r.get("result") or {}
    turn = (res.get("turn") or {}).get("id")
    check(res.get("reviewThreadId") == thread and (res.get("turn") or {}).get("status")
          == "inProgress", "review/start answers the review's turn: %s" % str(r)[:300])
    check(events and events[0].get("method") == "turn/started"
          and events[0]["params"]["turn"]["id"] == turn, "then turn/started for it")
    check(items_of(events) == REVIEW_ITEMS, "the review's items: %s" % items_of(events))
    entered = item(events, "enteredReviewMode") or {}
    check(entered.get("review") == "uncommitted changes", "entered names the target: %s" % entered)
    exited = item(events, "exitedReviewMode") or {}
    check("2 changed file(s): a.txt, new.txt" in exited.get("review", ""),
          "git's status reached the model (the scripted review names the files): %s" % exited)
    said = item(events, "agentMessage") or {}
    check(said.get("text") == exited.get("review"), "and the review is the turn's message")
    check(events[-1]["params"]["turn"]["status"] == "completed", "the review's turn completes")

    _, events = review(p, thread, {"type": "baseBranch", "branch": "main"})
    exited = item(events, "exitedReviewMode") or {}
    check("1 changed file(s): b.txt" in exited.get("review", "") or
          "2 changed file(s): a.txt, b.txt" in exited.get("review", ""),
          "baseBranch: the diff since the merge base: %s" % exited.get("review"))
    _, events = review(p, thread, {"type": "commit", "sha": "HEAD", "title": "second: add b"})
    check(((item(events, "enteredReviewMode") or {}).get("review") or "").startswith("commit HEAD"),
          "commit: entered names it")
    check("1 changed file(s): b.txt" in (item(events, "exitedReviewMode") or {}).get("review", ""),
          "commit: its diff reached the model")
    _, events = review(p, thread, {"type": "custom", "instructions":
                                   "run: echo looked\nsay: {\"findings\": [{\"title\": \"[P1] a bug\", "
                                   "\"body\": \"b\", \"priority\": 1, \"confidence_score\": 0.5, "
                                   "\"code_location\": {\"absolute_file_path\": \"/x/a.txt\", "
                                   "\"line_range\": {\"start\": 1, \"end\": 2}}}], "
                                   "\"overall_correctness\": \"patch is incorrect\", "
                                   "\"overall_explanation\": \"one bug\", "
                                   "\"overall_confidence_score\": 0.7}"})
    kinds = items_of(events)
    check(("item/completed", "commandExecution") in kinds and kinds[-4:] == REVIEW_ITEMS[2:],
          "custom: the reviewer's command shows, then the review: %s" % kinds)
    text = (item(events, "exitedReviewMode") or {}).get("review", "")
    check(text.startswith("one bug") and "[P1] a bug" in text and "/x/a.txt" in text,
          "a JSON answer becomes the review's text: %r" % text)

    _, events = review(p, thread, {"type": "baseBranch", "branch": "nosuch"})
    last = events[-1]["params"]["turn"] if events else {}
    check(last.get("status") == "failed" and "nosuch" in ((last.get("error") or {}).get("message") or ""),
          "a branch git cannot find fails the review, saying why: %s" % last.get("error"))

    errors = bad_params(p, thread)
    check(errors["unknown"] == (-32600, "Invalid request: unknown variant `bogus`, expected one of "
                                "`uncommittedChanges`, `baseBranch`, `commit`, `custom`"),
          "unknown target: %s" % (errors["unknown"],))
    check(errors["missing"] == (-32600, "Invalid request: missing field `target`"),
          "missing target: %s" % (errors["missing"],))
    check(errors["empty"] == (-32600, "instructions must not be empty"), "empty instructions")
    check(errors["detached"] == (-32600, "Invalid request: unknown variant `detached`, "
                                 "expected `inline`"), "detached delivery: %s" % (errors["detached"],))
    check(errors["ghost"] == (-32600, "thread not found: " + GHOST), "unknown thread")

    # A running review takes no steer and no turn/start; a running turn no review.
    r = p.call("review/start", {"threadId": thread, "target": {
        "type": "custom", "instructions": "run: sleep 2\nsay: slow"}})
    rid = r["result"]["turn"]["id"]
    steer = error_of(p.call("turn/steer", {"threadId": thread, "expectedTurnId": rid,
                                           "input": [{"type": "text", "text": "x"}]}))
    check(steer == (-32600, "cannot steer a review turn"), "no steer into a review: %s" % (steer,))
    start = error_of(p.call("turn/start", {"threadId": thread,
                                           "input": [{"type": "text", "text": "say: hi"}]}))
    check(start[0] == -32600 and "a review is running" in start[1], "no turn during a review")
    again = error_of(p.call("review/start", {"threadId": thread,
                                             "target": {"type": "uncommittedChanges"}}))
    check(again[0] == -32600 and ("a turn is running (%s)" % rid) in again[1],
          "no second review while one runs: %s" % (again,))
    p.wait(lambda m: m.get("method") == "turn/completed"
           and m["params"]["turn"]["id"] == rid, 60)
    _, after = p.run_turn(thread, "say: after the review")
    check(after[-1]["params"]["turn"]["status"] == "completed", "the thread goes on")
    check(p.stop() == 0, "parley exits 0")
    SCHEMA.check(check, p, "parley (scripted)")

    records = rollout_of(home, thread)
    done = [r["payload"]["item"] for r in records if r["type"] == "event_msg"
            and r["payload"].get("type") == "item_completed"]
    entered = [i for i in done if i.get("type") == "EnteredReviewMode"]
    exited = [i for i in done if i.get("type") == "ExitedReviewMode"]
    check(len(entered) == 6 and entered[0].get("target") == {"type": "uncommittedChanges"}
          and entered[0].get("user_facing_hint") == "uncommitted changes",
          "the rollout has Codex's EnteredReviewMode lines: %s" % entered[:1])
    check(len(exited) == 5 and exited[3]["review_output"]["findings"][0]["title"] == "[P1] a bug",
          "and ExitedReviewMode with the review's output: %s" % [e.get("review_output") for e in exited][:1])
    users = [c["text"] for r in records if r["type"] == "response_item"
             and r["payload"].get("role") == "user" for c in r["payload"]["content"]]
    check(any("one bug" in u for u in users) and not any("looked" in u for u in users),
          "the thread's context has the review's result, not its work")
    calls = [r for r in records if r["type"] == "response_item"
             and r["payload"].get("type") == "function_call"]
    check(not calls, "no review command in the thread's context: %s" % calls[:1])

    p = app_server_peer.StdioPeer(args, env, os.path.join(root, "parley2.stderr"))
    read = p.call("thread/read", {"threadId": thread, "includeTurns": True})["result"]["thread"]
    kinds = [[i["type"] for i in t["items"]] for t in read["turns"]]
    check(kinds[1] == ["enteredReviewMode", "exitedReviewMode", "agentMessage"],
          "after a restart the review reads back: %s" % kinds[1:3])
    check([i for i in read["turns"][4]["items"] if i["type"] == "exitedReviewMode"][0]["review"]
          .startswith("one bug"),
          "with the review's text rendered from the rollout")
    check(p.stop() == 0, "parley exits 0 (restart)")
    SCHEMA.check(check, p, "parley (restart)")
    shutil.rmtree(root, ignore_errors=True)
    return errors


class ModelHome:
    def __init__(self, mock):
        self.root = tempfile.mkdtemp(prefix="parley-review-model-")
        self.home, self.work = os.path.join(self.root, "home"), os.path.join(self.root, "work")
        for d in (self.home, self.work, os.path.join(self.root, "user")):
            os.makedirs(d)
        make_repo(self.work)
        self.config = os.path.join(self.home, "config.toml")
        self.point_at(mock)
        self.env = dict(os.environ, CODEX_HOME=self.home, HOME=os.path.join(self.root, "user"),
                        no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost")
        self.env.pop("OPENAI_API_KEY", None)

    def point_at(self, mock):
        with open(self.config, "w") as f:
            f.write('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "never"\n'
                    '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                    'wire_api = "responses"\nrequires_openai_auth = false\n' % mock.url)

    def peer(self, args, name):
        if args[0] == PARLEY:
            args = args + ["--home", self.home, "--cwd", self.work]
        return app_server_peer.StdioPeer(args, self.env, os.path.join(self.root, name))


def texts(request):
    body = request["body"] if isinstance(request["body"], dict) else json.loads(request["body"])
    out = []
    for i in body["input"]:
        for c in i.get("content") or []:
            if isinstance(c, dict) and c.get("text"):
                out.append((i.get("role"), c["text"]))
    return out


ANSWER = ('mock: say {"findings":[{"title":"[P2] x","body":"y","confidence_score":0.5,'
          '"priority":2,"code_location":{"absolute_file_path":"/w/a.txt","line_range":'
          '{"start":1,"end":1}}}],"overall_correctness":"patch is incorrect",'
          '"overall_explanation":"found one","overall_confidence_score":0.6}')


def with_model(server, who):
    mock = app_server_peer.Mock(MOCK)
    h = ModelHome(mock)
    p = h.peer(server, who + ".stderr")
    thread = p.start_thread(cwd=h.work, approvalPolicy="never")
    p.run_turn(thread, "mock: say HISTORY-ONE", timeout=120)
    mock.forget()
    r, events = review(p, thread, {"type": "custom", "instructions": ANSWER}, 120)
    review_reqs = mock.requests()
    mock.forget()
    _, later = p.run_turn(thread, "mock: say after", timeout=120)
    after = mock.requests()
    p.stop()
    if who == "parley":
        SCHEMA.check(check, p, "parley (HTTP model)")
    mock.stop()
    return {"home": h, "thread": thread, "reply": r, "events": events,
            "review_reqs": review_reqs, "after": after}


def check_model(run, who):
    check(items_of(run["events"])[:2] == REVIEW_ITEMS[:2] and items_of(run["events"])[-4:]
          == REVIEW_ITEMS[2:], "%s: the review's items: %s" % (who, items_of(run["events"])))
    text = (item(run["events"], "exitedReviewMode") or {}).get("review", "")
    check(text.startswith("found one") and "[P2] x" in text, "%s: the review: %r" % (who, text))
    reqs = run["review_reqs"]
    check(len(reqs) == 1, "%s: one review request (%d)" % (who, len(reqs)))
    if reqs:
        t = texts(reqs[0])
        check(not any("HISTORY-ONE" in x for _, x in t),
              "%s: the review's request has none of the thread's history" % who)
        check(t[-1] == ("user", ANSWER), "%s: its prompt is the instructions" % who)
        check(any(role == "developer" and "findings" in x for role, x in t),
              "%s: it carries the reviewer's instructions" % who)
    if run["after"]:
        t = texts(run["after"][-1])
        check(any("HISTORY-ONE" in x for _, x in t) and any("found one" in x for _, x in t),
              "%s: the next turn's model sees the history and the review's result" % who)


def codex_resumes_parley(run):
    h = run["home"]
    mock = app_server_peer.Mock(MOCK)
    h.point_at(mock)
    c = h.peer(app_server_peer.CODEX + ["app-server"], "codex-resume.stderr")
    r = c.call("thread/resume", {"threadId": run["thread"]}, timeout=120)
    ok = check("result" in r, "Codex resumes parley's reviewed thread: %s" % str(r)[:200])
    if ok:
        read = c.call("thread/read", {"threadId": run["thread"], "includeTurns": True}, 60)
        kinds = [[i["type"] for i in t["items"]] for t in read["result"]["thread"]["turns"]]
        # Known gap (README, Reviews): Codex's thread/read of parley's rollout
        # shows the review's agentMessage but not its review items.
        print("note: Codex's thread/read of parley's reviewed thread: %s" % kinds)
        c.run_turn(run["thread"], "mock: say codex", timeout=120)
        t = texts(mock.requests()[-1])
        check(any("found one" in x for _, x in t), "Codex's model sees parley's review result")
    c.stop()
    mock.stop()


def main():
    ours_errors = scripted()
    parley = [PARLEY, "app-server"]
    ours = with_model(parley, "parley")
    check_model(ours, "parley")
    why = app_server_peer.codex_unavailable()
    if why:
        print("note: the real Codex is not compared:", why)
    else:
        theirs = with_model(app_server_peer.CODEX + ["app-server"], "codex")
        # Codex's reviewer text differs (its own rendering); the items agree.
        check(items_of(theirs["events"])[:2] == REVIEW_ITEMS[:2]
              and items_of(theirs["events"])[-4:] == REVIEW_ITEMS[2:],
              "as Codex, the review's items: %s" % items_of(theirs["events"]))
        check(len(theirs["review_reqs"]) == 1
              and not any("HISTORY-ONE" in x for _, x in texts(theirs["review_reqs"][0])),
              "as Codex, one review request without the thread's history")
        root = tempfile.mkdtemp(prefix="parley-review-codex-")
        mock = app_server_peer.Mock(MOCK)
        h = ModelHome(mock)
        c = h.peer(app_server_peer.CODEX + ["app-server"], "codex-errors.stderr")
        thread = c.start_thread(cwd=h.work, approvalPolicy="never")
        theirs_errors = bad_params(c, thread)
        c.stop()
        mock.stop()
        for k in ("unknown", "missing", "empty", "nobranch", "nosha", "detached", "ghost"):
            check(theirs_errors[k] == ours_errors[k],
                  "as Codex, %s: %s" % (k, (theirs_errors[k], ours_errors[k])))
        codex_resumes_parley(ours)
        shutil.rmtree(theirs["home"].root, ignore_errors=True)
        shutil.rmtree(h.root, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(ours["home"].root, ignore_errors=True)
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
