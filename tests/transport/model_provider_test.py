#!/usr/bin/env python3
"""The HTTP model provider through real parts: the real `parley app-server`
over real pipes, the real `parley-mock-model` over real loopback HTTP.

Each test function gets a fresh parley home and a fresh mock. `mock:` lines in
the user's message script what the mock answers (bench/mock_model.md); what
parley sent is read back from `GET /mock/requests`. Covered: streaming deltas
and token usage; commands accepted, declined, cancelled and timed out, and
what the model is told of each; apply_patch; an unknown tool; retries of HTTP
errors (Retry-After), cut and stalled streams, and the faults that end a turn;
an interrupt mid-stream; a resumed or forked thread's history, also after kill -9 with a
call waiting (asked again; its real outcome goes back under the same call id); the API key kept out of
commands, logs, stdout and messages; Chat Completions; 200 streaming turns at
once. Every line parley prints is validated against Codex 0.169's JSON Schema
when SCHEMA_DIR holds it and python3-jsonschema is installed (otherwise only
the shapes of the provider's own notifications are checked by hand, and the
run says so).

Usage: model_provider_test.py PARLEY_BINARY MOCK_BINARY [SCHEMA_DIR] [TEST_NAME...]
"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402

PARLEY = sys.argv[1]
MOCK = sys.argv[2]
SCHEMA_DIR = sys.argv[3] if len(sys.argv) > 3 else ""
ONLY = set(sys.argv[4:])
FAILURES = []
KNOWN = []
# Every line any parley printed on stdout, with the method of each request
# it answered (for the schema check at the end).
ALL_LINES = []


def known(cond, what):
    """A check that fails because of a known, reported and not yet fixed
    defect: printed as KNOWN so it stays visible, not counted as a failure.
    When the defect is fixed, turn it back into check()."""
    if not cond:
        KNOWN.append(what)
        print("KNOWN", what, flush=True)
    return cond


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)
    return cond


def Mock(*flags):
    return app_server_peer.Mock(MOCK, *flags)


class Parley(app_server_peer.StdioPeer):
    """One `parley app-server` on stdio, its model the mock's provider."""

    def __init__(self, mock, home=None, extra=(), env=None, log_level="info"):
        self.home = home or os.path.join(tempfile.mkdtemp(prefix="parley-provider-"), "home")
        # Beside the home, not in it: parley's home is out of every command's reach.
        self.work = os.path.join(os.path.dirname(self.home), "work")
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(self.home, exist_ok=True)
        args = [PARLEY, "app-server", "--home", self.home, "--cwd", self.work,
                "--log-level=" + log_level,
                "-c", "model=mock-model", "-c", "model_provider=mock",
                "-c", "model_providers.mock.base_url=%s/v1" % mock.url,
                "-c", "model_providers.mock.env_key=MOCK_KEY", *extra]
        full_env = dict(os.environ)
        full_env.pop("MOCK_KEY", None)
        full_env.update(env or {"MOCK_KEY": "sk-test-default"})
        super().__init__(args, full_env, os.path.join(self.home, "parley.stderr"))

    def stop(self):
        code = super().stop()
        ALL_LINES.append((list(self.lines), dict(self.methods)))
        return code


def text(*lines):
    return "\n".join(lines)


def methods(events):
    return [m.get("method") for m in events if "method" in m]


def items(events, kind, phase="item/completed"):
    return [m["params"]["item"] for m in events
            if m.get("method") == phase and m["params"]["item"]["type"] == kind]


def turn_status(events):
    return events[-1]["params"]["turn"]["status"]


def turn_error(events):
    return (events[-1]["params"]["turn"].get("error") or {}).get("message") or ""


def outputs_in(request, kind="function_call_output"):
    return [i for i in request["body"].get("input", []) if i.get("type") == kind]


def output_text(item):
    out = item.get("output")
    if isinstance(out, list):  # content parts
        return "".join(p.get("text", "") for p in out if isinstance(p, dict))
    return out if isinstance(out, str) else json.dumps(out)


class Session:
    """A mock and a parley for one test; both stopped at the end."""

    def __init__(self, mock_flags=(), **parley_args):
        self.mock = Mock(*mock_flags)
        self.parley = Parley(self.mock, **parley_args)

    def __enter__(self):
        return self.mock, self.parley

    def __exit__(self, *exc):
        code = self.parley.stop()
        check(code == 0, "parley exits 0 when stdin closes (got %s)" % code)
        self.mock.stop()
        shutil.rmtree(os.path.dirname(self.parley.home), ignore_errors=True)
        return False


# -- 1. streaming ------------------------------------------------------------

def test_streaming():
    with Session() as (mock, p):
        t = p.start_thread()
        words = "the quick brown fox jumps over the lazy dog"
        _, ev = p.run_turn(t, text("mock: say " + words, "mock: usage 11 7"))
        ms = methods(ev)
        deltas = [m for m in ev if m.get("method") == "item/agentMessage/delta"]
        check(len(deltas) >= 5, "a streamed message arrives in several deltas (got %d)" % len(deltas))
        check(len({d["params"]["itemId"] for d in deltas}) == 1, "all deltas name one item")
        check("".join(d["params"]["delta"] for d in deltas) == words, "the deltas in order are the text")
        item_id = deltas[0]["params"]["itemId"] if deltas else None
        started = [i for i, m in enumerate(ev) if m.get("method") == "item/started"
                   and m["params"]["item"]["id"] == item_id]
        completed = [i for i, m in enumerate(ev) if m.get("method") == "item/completed"
                     and m["params"]["item"]["id"] == item_id]
        positions = [i for i, m in enumerate(ev) if m.get("method") == "item/agentMessage/delta"]
        check(len(started) == 1 and len(completed) == 1 and positions
              and started[0] < positions[0] and positions[-1] < completed[0],
              "deltas come between the message's item/started and item/completed")
        if completed:
            item = ev[completed[0]]["params"]["item"]
            check(item["type"] == "agentMessage" and item["text"] == words,
                  "the completed agentMessage has the whole text: %r" % item)
        check(turn_status(ev) == "completed", "the turn completes")
        check(ms.index("turn/completed") == len(ms) - 1, "turn/completed comes last")
        usage = [m for m in ev if m.get("method") == "thread/tokenUsage/updated"]
        check(len(usage) == 1, "one thread/tokenUsage/updated per response (got %d)" % len(usage))
        if usage:
            u = usage[0]["params"]
            check(u["threadId"] == t and u["tokenUsage"]["last"]["inputTokens"] == 11
                  and u["tokenUsage"]["last"]["outputTokens"] == 7
                  and u["tokenUsage"]["last"]["totalTokens"] == 18
                  and u["tokenUsage"]["total"]["totalTokens"] == 18,
                  "the usage is the mock's (11 in, 7 out): %s" % u)
            check(usage_shape_ok(u), "thread/tokenUsage/updated has the fields Codex sends: %s" % u)
        # A second turn adds to the thread's total.
        _, ev2 = p.run_turn(t, text("mock: say again", "mock: usage 5 3"))
        usage = [m for m in ev2 if m.get("method") == "thread/tokenUsage/updated"]
        check(usage and usage[-1]["params"]["tokenUsage"]["total"]["totalTokens"] == 26
              and usage[-1]["params"]["tokenUsage"]["last"]["totalTokens"] == 8,
              "the thread's total usage adds up over turns: %s" % (usage[-1]["params"] if usage else None))
        check(len(mock.requests()) == 2, "one model request per turn")
        # Reasoning: its summary streams under a reasoning item, before the answer.
        _, ev3 = p.run_turn(t, text("mock: reason weighing the options", "mock: say decided"))
        rdeltas = [m["params"] for m in ev3 if m.get("method") == "item/reasoning/summaryTextDelta"]
        check(rdeltas and "".join(d["delta"] for d in rdeltas) == "weighing the options"
              and all(d["summaryIndex"] == 0 for d in rdeltas),
              "reasoning summary deltas stream: %s" % rdeltas)
        reasoning = items(ev3, "reasoning")
        check(len(reasoning) == 1 and reasoning[0]["summary"] == ["weighing the options"]
              and rdeltas and reasoning[0]["id"] == rdeltas[0]["itemId"],
              "the reasoning item completes with its summary: %s" % reasoning)
        order = [m["params"]["item"]["type"] for m in ev3 if m.get("method") == "item/completed"]
        check(order == ["userMessage", "reasoning", "agentMessage"],
              "reasoning completes before the answer: %s" % order)


def usage_shape_ok(params):
    fields = ["cachedInputTokens", "inputTokens", "outputTokens", "reasoningOutputTokens", "totalTokens"]
    u = params.get("tokenUsage", {})
    return (isinstance(params.get("turnId"), str)
            and all(isinstance(u.get(k, {}).get(f), int) for k in ("last", "total") for f in fields))


# -- 2. a command accepted ---------------------------------------------------

def test_command_accepted():
    with Session() as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, text("mock: run echo made > made.txt; echo visible-output",
                                   "mock: say all finished"), ["accept"])
        asks = [m for m in ev if m.get("method") == "item/commandExecution/requestApproval"]
        check(len(asks) == 1, "one approval request for the call")
        check(os.path.exists(os.path.join(p.work, "made.txt")), "the accepted command ran in the cwd")
        done = items(ev, "commandExecution")
        check(len(done) == 1 and done[0]["status"] == "completed" and done[0]["exitCode"] == 0
              and "visible-output" in (done[0]["aggregatedOutput"] or ""),
              "commandExecution completed with its output: %s" % done)
        msgs = items(ev, "agentMessage")
        check(msgs and msgs[-1]["text"] == "all finished", "the final message arrives")
        check(turn_status(ev) == "completed", "the turn completes")
        reqs = mock.requests()
        check(len(reqs) == 2, "two model requests: the call, then its output (got %d)" % len(reqs))
        if len(reqs) == 2:
            calls = [i for i in reqs[1]["body"]["input"] if i.get("type") == "function_call"]
            outs = outputs_in(reqs[1])
            check(len(calls) == 1 and len(outs) == 1 and outs[0]["call_id"] == calls[0]["call_id"],
                  "the next request has the call and a function_call_output with its call_id")
            check(outs and "visible-output" in output_text(outs[0])
                  and "code: 0" in output_text(outs[0]).replace("code 0", "code: 0"),
                  "the output sent back has the command's output and exit code: %r"
                  % (output_text(outs[0]) if outs else None))
        check(done and asks and asks[0]["params"]["itemId"] == done[0]["id"],
              "the approval names the command's item")
        if len(reqs) == 2 and done:
            calls = [i for i in reqs[1]["body"]["input"] if i.get("type") == "function_call"]
            check(calls and done[0]["id"] == calls[0]["call_id"],
                  "the command's item id is the model's call_id, as Codex's")
        # The `shell` shape (an argv) is a command too.
        before = len(mock.requests())
        _, ev = p.run_turn(t, text("mock: shell echo from-the-shell-shape"), ["accept"])
        done = items(ev, "commandExecution")
        check(done and "from-the-shell-shape" in (done[0]["aggregatedOutput"] or ""),
              "a `shell` call runs as a command: %s" % done)
        outs = outputs_in(mock.requests()[-1]) if len(mock.requests()) > before else []
        check(outs and "from-the-shell-shape" in output_text(outs[-1]),
              "and its output goes back to the model: %r" % [output_text(o) for o in outs])
        _, ev = p.run_turn(t, text("mock: say looking first", "mock: run true",
                                   "mock: say done looking"), ["accept"])
        phases = [(m["text"], m["phase"]) for m in items(ev, "agentMessage")]
        check(phases == [("looking first", "commentary"), ("done looking", "final_answer")],
              "a message on the way to a tool call is commentary, the answer final: %s" % phases)


# -- 3. declined, cancelled, timed out ---------------------------------------

def test_declined_cancelled_timed_out():
    with Session(extra=["--approval-timeout=700ms"]) as (mock, p):
        t = p.start_thread()
        marker = os.path.join(p.work, "never")
        _, ev = p.run_turn(t, text("mock: run touch never", "mock: say ok then"), ["decline"])
        check(not os.path.exists(marker), "a declined command does not run")
        done = items(ev, "commandExecution")
        check(done and done[0]["status"] == "declined", "declined: the item is declined: %s" % done)
        check(turn_status(ev) == "completed", "declined: the turn goes on and completes")
        reqs = mock.requests()
        outs = outputs_in(reqs[-1]) if reqs else []
        check(len(reqs) == 2 and outs and "rejected by user" in output_text(outs[0]),
              "declined: the model is told the user rejected it: %r" % [output_text(o) for o in outs])
        check(items(ev, "agentMessage")[-1:] and items(ev, "agentMessage")[-1]["text"] == "ok then",
              "declined: the model's answer arrives")

        _, ev = p.run_turn(t, text("mock: run touch never", "mock: say not reached"), ["cancel"])
        check(not os.path.exists(marker), "a cancelled command does not run")
        check(turn_status(ev) == "interrupted", "cancel ends the turn interrupted: %s" % turn_status(ev))
        check(len(mock.requests()) == 3, "cancel: no request after the cancelled call")
        check(not [m for m in items(ev, "agentMessage") if m["text"] == "not reached"],
              "cancel: the model says nothing more")

        start = time.monotonic()
        _, ev = p.run_turn(t, text("mock: run touch never", "mock: say after timeout"), [])
        waited = time.monotonic() - start
        check(not os.path.exists(marker), "a timed-out command does not run")
        check(0.6 <= waited < 10, "the approval timed out after about 0.7 s (%.2f s)" % waited)
        reqs = mock.requests()
        outs = outputs_in(reqs[-1]) if reqs else []
        check(len(reqs) == 5 and outs and ("expired" in output_text(outs[-1])
                                           or "timed out" in output_text(outs[-1])),
              "timed out: the model is told the approval expired: %r" % [output_text(o) for o in outs])
        check(turn_status(ev) == "completed", "timed out: the turn goes on and completes")
        # The next turn's history: the cancelled call is answered "aborted" (as
        # Codex answers an interrupted one), so the endpoint never sees a call
        # without its output.
        hist = reqs[3]["body"]["input"] if len(reqs) > 3 else []
        calls = [n for n, i in enumerate(hist) if i.get("type") == "function_call"]
        paired = all(n + 1 < len(hist) and hist[n + 1].get("type") == "function_call_output"
                     and hist[n + 1].get("call_id") == hist[n].get("call_id") for n in calls)
        check(len(calls) == 2 and paired and output_text(hist[calls[1] + 1]) == "aborted",
              "the cancelled call goes back answered 'aborted': %r"
              % [(i.get("type"), output_text(i) if "output" in i else "") for i in hist])


# -- 4. apply_patch ----------------------------------------------------------

def test_apply_patch():
    with Session() as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, text("mock: patch", "*** Begin Patch", "*** Add File: hello.txt",
                                   "+hello from the model", "*** End Patch", "mock: say patched"),
                           ["accept"])
        asks = [m for m in ev if m.get("method") == "item/fileChange/requestApproval"]
        check(len(asks) == 1, "a fileChange approval is asked")
        path = os.path.join(p.work, "hello.txt")
        check(os.path.exists(path) and open(path).read() == "hello from the model\n",
              "the accepted patch wrote the file")
        changes = items(ev, "fileChange")
        check(changes and changes[0]["status"] == "completed", "the fileChange completes: %s" % changes)
        check(turn_status(ev) == "completed", "the turn completes")
        reqs = mock.requests()
        outs = outputs_in(reqs[-1], "custom_tool_call_output") if reqs else []
        calls = [i for i in reqs[-1]["body"]["input"] if i.get("type") == "custom_tool_call"] if reqs else []
        check(len(reqs) == 2 and len(outs) == 1 and calls and outs[0]["call_id"] == calls[0]["call_id"]
              and output_text(outs[0]).startswith("Success. Updated the following files:"),
              "a custom_tool_call_output for the call says the patch applied: %r"
              % [output_text(o) for o in outs])
        # As Codex: "Success. Updated the following files:\nA hello.txt".
        check(outs and "A hello.txt" in output_text(outs[0]),
              "the patch's output names the files it changed: %r" % [output_text(o) for o in outs])


# -- 5. an unknown tool ------------------------------------------------------

def test_unknown_tool():
    with Session() as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, text("mock: tool frobnicate", "mock: say carried on"))
        check(turn_status(ev) == "completed", "an unknown tool does not end the turn")
        check(items(ev, "agentMessage") and items(ev, "agentMessage")[-1]["text"] == "carried on",
              "the model's next answer arrives")
        reqs = mock.requests()
        outs = outputs_in(reqs[-1]) if reqs else []
        check(len(reqs) == 2 and outs and "frobnicate" in output_text(outs[0]),
              "the model is told the tool is unknown: %r" % [output_text(o) for o in outs])
        check(p.proc.poll() is None, "parley is still running")


# -- 6. faults ---------------------------------------------------------------

def retry_errors(events):
    return [m["params"] for m in events if m.get("method") == "error" and m["params"]["willRetry"]]


def final_errors(events):
    return [m["params"] for m in events if m.get("method") == "error" and not m["params"]["willRetry"]]


def test_faults():
    with Session() as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, text("mock: http 500 times=2", "mock: say survived"))
        errs = retry_errors(ev)
        check(len(errs) == 2 and all(e["willRetry"] is True for e in errs)
              and all("500" in e["error"]["message"] for e in errs),
              "http 500 x2: two error notifications with willRetry: %s" % errs)
        check(turn_status(ev) == "completed" and items(ev, "agentMessage")[-1:]
              and items(ev, "agentMessage")[-1]["text"] == "survived", "http 500 x2: then success")
        check(len(mock.requests()) == 3, "http 500 x2: three attempts")

        _, ev = p.run_turn(t, text("mock: http 429 retry-after=1", "mock: say waited"))
        errs = [m for m in ev if m.get("method") == "error" and m["params"]["willRetry"]]
        first = [m for m in ev if m.get("method") == "item/started"
                 and m["params"]["item"]["type"] == "agentMessage"]
        check(len(errs) == 1 and errs[0]["params"]["willRetry"], "429: one retry notice")
        if errs and first:
            gap = first[0]["_at"] - errs[0]["_at"]
            check(0.9 <= gap < 3.0, "429 Retry-After: 1 is honoured (%.2f s)" % gap)
        check(turn_status(ev) == "completed", "429: then success")

        before = len(mock.requests())
        _, ev = p.run_turn(t, text("mock: cut", "mock: say whole this time around"))
        msgs = items(ev, "agentMessage")
        check(turn_status(ev) == "completed" and msgs and msgs[-1]["text"] == "whole this time around",
              "cut: the stream is retried from the start and the message is whole: %s" % msgs)
        check(len(mock.requests()) - before == 2, "cut: two attempts")
        check(len(retry_errors(ev)) == 1 and retry_errors(ev)[0]["willRetry"], "cut: one retry notice")
        check(len(msgs) == 1, "cut: one message item, not the broken attempt's fragment and the "
              "whole one (got %s)" % [m["text"] for m in msgs])
        delta_ids = {m["params"]["itemId"] for m in ev if m.get("method") == "item/agentMessage/delta"}
        started_ids = {m["params"]["item"]["id"] for m in ev if m.get("method") == "item/started"
                       and m["params"]["item"]["type"] == "agentMessage"}
        check(msgs and delta_ids == started_ids == {msgs[0]["id"]},
              "cut: every delta, the retry's too, names the item that was started (deltas %s, "
              "started %s)" % (sorted(delta_ids), sorted(started_ids)))

        _, ev = p.run_turn(t, text("mock: malformed", "mock: say never whole"))
        check(turn_status(ev) == "failed", "malformed: the turn fails (%s)" % turn_status(ev))
        check("malformed" in turn_error(ev) or "not valid JSON" in turn_error(ev),
              "malformed: the error says so: %r" % turn_error(ev))

        _, ev = p.run_turn(t, text("mock: failed boom", "mock: say never"))
        check(turn_status(ev) == "failed" and "boom" in turn_error(ev),
              "response.failed: the turn fails mentioning boom: %r" % turn_error(ev))

    with Session(extra=["-c", "model_providers.mock.request_max_retries=1"]) as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, text("mock: http 500 times=99", "mock: say never"))
        check(turn_status(ev) == "failed" and "500" in turn_error(ev),
              "request_max_retries=1: the turn fails with the HTTP status: %r" % turn_error(ev))
        check(len(mock.requests()) == 2, "request_max_retries=1: one retry (%d requests)" % len(mock.requests()))
        check(len(retry_errors(ev)) == 1, "request_max_retries=1: one retry notice")
        check(len(final_errors(ev)) == 1 and "500" in final_errors(ev)[0]["error"]["message"],
              "request_max_retries=1: one error without willRetry before the turn fails")

    with Session(extra=["-c", "model_providers.mock.stream_idle_timeout_ms=500"]) as (mock, p):
        t = p.start_thread()
        start = time.monotonic()
        _, ev = p.run_turn(t, text("mock: stall 3000", "mock: say after the stall"))
        took = time.monotonic() - start
        errs = retry_errors(ev)
        check(len(errs) == 1 and "idle" in errs[0]["error"]["message"],
              "stall: the idle stream is retried: %s" % errs)
        msgs = items(ev, "agentMessage")
        check(turn_status(ev) == "completed" and msgs and msgs[-1]["text"] == "after the stall",
              "stall: then the message is whole: %s" % msgs)
        check(took < 2.9, "stall: the retry did not wait for the stall to end (%.2f s)" % took)


# -- 7. interrupt mid-stream -------------------------------------------------

def established_to(port):
    """Client-side TCP connections to 127.0.0.1:port that are open."""
    n = 0
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            remote, state = fields[2], fields[3]
            if state == "01" and int(remote.split(":")[1], 16) == port:
                n += 1
    return n


def test_interrupt_mid_stream():
    with Session() as (mock, p):
        t = p.start_thread()
        words = " ".join("word%d" % i for i in range(40))
        turn = p.start_turn(t, text("mock: pace 200", "mock: say " + words))
        first = p.wait(lambda m: m.get("method") == "item/agentMessage/delta", 20)
        check(first["params"]["turnId"] == turn, "the first delta is the turn's")
        check(established_to(mock.port) >= 1, "the stream is open while the model speaks")
        i = p.send("turn/interrupt", {"threadId": t, "turnId": turn})
        after_reply = []
        replied = False
        while True:
            m = p.wait(lambda m: True, 20)
            if m.get("id") == i and "method" not in m:
                replied = True
                check("result" in m, "turn/interrupt answers: %s" % m)
                continue
            if replied and m.get("method") == "item/agentMessage/delta":
                after_reply.append(m)
            if m.get("method") == "turn/completed":
                check(m["params"]["turn"]["status"] == "interrupted",
                      "the turn ends interrupted: %s" % m["params"]["turn"]["status"])
                break
        check(not after_reply, "no delta after the interrupt's reply (%d)" % len(after_reply))
        time.sleep(0.6)
        late = [m for m in p.kept if m.get("method") == "item/agentMessage/delta"]
        while not p.inbox.empty():
            m = p.inbox.get()
            if m and m.get("method") == "item/agentMessage/delta":
                late.append(m)
        check(not late, "no delta after turn/completed (%d)" % len(late))
        deadline = time.monotonic() + 3
        while established_to(mock.port) and time.monotonic() < deadline:
            time.sleep(0.05)
        check(established_to(mock.port) == 0, "the model's connection is closed after the interrupt")
        # The thread is not blocked: the next turn runs at once.
        _, ev = p.run_turn(t, "mock: say next turn", timeout=10)
        check(turn_status(ev) == "completed", "a turn after the interrupt completes")


# -- 8. resume continues the history -----------------------------------------

def test_resume_continues_history():
    mock = Mock()
    home = os.path.join(tempfile.mkdtemp(prefix="parley-provider-"), "home")
    try:
        p = Parley(mock, home=home)
        t = p.start_thread()
        _, ev = p.run_turn(t, text("first question", "mock: say first answer",
                                   "mock: run echo from-turn-one", "mock: say turn one over"), ["accept"])
        check(turn_status(ev) == "completed", "turn 1 completes")
        check(p.stop() == 0, "parley stops cleanly")
        p = Parley(mock, home=home)
        r = p.call("thread/resume", {"threadId": t})
        check("result" in r, "thread/resume after a restart: %s" % r)
        kinds = [i["type"] for i in r["result"]["thread"]["turns"][0]["items"]] if "result" in r else []
        check(kinds == ["userMessage", "agentMessage", "commandExecution", "agentMessage"],
              "the resumed turn's items keep their order: %s" % kinds)
        _, ev = p.run_turn(t, text("second question", "mock: say second answer"))
        check(turn_status(ev) == "completed", "turn 2 completes")
        check(p.stop() == 0, "parley stops cleanly")
        reqs = mock.requests()
        body = reqs[-1]["body"]["input"]

        def find(pred):
            return next((n for n, i in enumerate(body) if pred(i)), None)

        def content_text(i):
            c = i.get("content")
            if isinstance(c, str):
                return c
            return "".join(part.get("text", "") for part in c or [])

        u1 = find(lambda i: i.get("role") == "user" and "first question" in content_text(i))
        a1 = find(lambda i: i.get("role") == "assistant" and "first answer" in content_text(i))
        call = find(lambda i: i.get("type") == "function_call" and "from-turn-one" in i.get("arguments", ""))
        out = find(lambda i: i.get("type") == "function_call_output" and "from-turn-one" in output_text(i))
        a2 = find(lambda i: i.get("role") == "assistant" and "turn one over" in content_text(i))
        u2 = find(lambda i: i.get("role") == "user" and "second question" in content_text(i))
        check(None not in (u1, a1, call, out, a2, u2) and u1 < a1 < call < out < a2 < u2,
              "turn 2's request carries turn 1 (user, assistant, call, output, assistant) before "
              "turn 2's message: %s" % [u1, a1, call, out, a2, u2])
        if call is not None and out is not None:
            check(body[call]["call_id"] == body[out]["call_id"], "the resumed call and output pair up")
        check(u2 == len(body) - 1, "turn 2's message is last")
    finally:
        mock.stop()
        shutil.rmtree(os.path.dirname(home), ignore_errors=True)


def test_fork_continues_history():
    """A fork's next turn sends the source's turns as the model produced them
    (the same call, call_id and output), from the fork's own rollout."""
    with Session() as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, text("forked question", "mock: run echo in-the-source",
                                   "mock: say source over"), ["accept"])
        check(turn_status(ev) == "completed", "the source's turn completes")
        source = mock.requests()[-1]["body"]["input"]
        r = p.call("thread/fork", {"threadId": t})
        check("result" in r, "thread/fork: %s" % str(r)[:300])
        if "result" not in r:
            return
        fork = r["result"]["thread"]["id"]
        _, ev = p.run_turn(fork, text("fork turn", "mock: say fork answer"))
        check(turn_status(ev) == "completed", "the fork's turn completes")
        body = mock.requests()[-1]["body"]["input"]
        # The source's second request had its whole turn but the answer.
        check(body[:len(source)] == source, "the fork sends the source's items verbatim: %s"
              % [(i.get("type"), i.get("role")) for i in body])
        rest = body[len(source):]
        check(len(rest) == 2 and rest[0].get("role") == "assistant" and "source over" in json.dumps(rest[0])
              and "fork turn" in json.dumps(rest[1]), "then the source's answer and the fork's message")


def test_kill_9_keeps_the_models_history():
    """parley killed while a call waits for its approval: the call and its ask
    were stored before anyone was asked, so after a restart the resumed
    thread asks it again (same item, which is the call id), the accepted
    command runs once, and the model gets its real output under the same
    call_id, exactly once, and goes on with the conversation."""
    mock = Mock()
    home = os.path.join(tempfile.mkdtemp(prefix="parley-provider-"), "home")
    try:
        p = Parley(mock, home=home)
        t = p.start_thread()
        turn = p.start_turn(t, text("first question", "mock: run echo crash-me"))
        ask = p.wait(lambda m: m.get("method") == "item/commandExecution/requestApproval"
                     and m["params"].get("turnId") == turn)
        p.proc.kill()
        p.proc.wait(timeout=30)
        p.stderr.close()
        p = Parley(mock, home=home)
        r = p.call("thread/resume", {"threadId": t})
        check("result" in r, "thread/resume after kill -9: %s" % str(r)[:300])
        if "result" in r:
            check(r["result"]["thread"]["turns"][0]["status"] == "inProgress",
                  "the killed turn is still in progress (it waits on its approval)")
        again = p.wait(lambda m: m.get("method") == "item/commandExecution/requestApproval"
                       and m["params"].get("turnId") == turn)
        check(again["params"]["itemId"] == ask["params"]["itemId"], "the same call is asked again")
        before = len(mock.requests())
        p.write({"id": again["id"], "result": {"decision": "accept"}})
        done = p.wait(lambda m: m.get("method") == "turn/completed" and m["params"]["turn"]["id"] == turn,
                      timeout=30)
        check(done["params"]["turn"]["status"] == "completed", "the model turn goes on to its end")
        sent = mock.requests()[before:]
        check(len(sent) == 1, "one more request to the model: %d" % len(sent))
        if sent:
            body = sent[0]["body"]["input"]
            calls = [i for i in body if i.get("type") == "function_call" and "crash-me" in i.get("arguments", "")]
            outs = [i for i in body if i.get("type") == "function_call_output"]
            check(len(calls) == 1 and body[0].get("role") == "user"
                  and "first question" in json.dumps(body[0]), "the turn's message and its call, once")
            check(len(outs) == 1 and calls and outs[0].get("call_id") == calls[0]["call_id"]
                  and "crash-me" in output_text(outs[0]),
                  "the command's real output under the same call_id, once: %s" % outs)
        _, ev = p.run_turn(t, text("second question", "mock: say after the crash"))
        check(turn_status(ev) == "completed", "the next turn completes")
        check(p.stop() == 0, "parley stops cleanly")
        body = mock.requests()[-1]["body"]["input"]
        outs = [output_text(i) for i in body if i.get("type") == "function_call_output"]
        check(len(outs) == 1 and "crash-me" in outs[0] and "aborted" not in outs[0],
              "later requests carry that outcome once, not 'aborted': %s" % outs)
        check("second question" in json.dumps(body[-1]), "the new message is last")
    finally:
        mock.stop()
        shutil.rmtree(os.path.dirname(home), ignore_errors=True)


# -- 9. the API key never appears --------------------------------------------

def test_api_key_never_appears():
    key = "sk-parley-secret-4f7a9c2e"
    other = "sk-openai-secret-81b3d6"
    env = {"MOCK_KEY": key, "OPENAI_API_KEY": other}
    with Session(["--require-key=" + key], env=env, log_level="trace") as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, text("mock: run env", "mock: say listed"), ["accept"])
        check(turn_status(ev) == "completed", "with the right key the turn completes")
        done = items(ev, "commandExecution")
        out = (done[0]["aggregatedOutput"] or "") if done else ""
        check("PATH=" in out, "`env` ran and printed the environment")
        for secret in (key, other, "MOCK_KEY", "OPENAI_API_KEY"):
            check(secret not in out, "the command's environment has no %s" % secret)
        reqs = mock.requests()
        check(all(secret not in json.dumps(r["body"]) for r in reqs for secret in (key, other)),
              "no request body carries a key")
        check(reqs and reqs[0]["headers"].get("Authorization") == "Bearer <%d chars>" % len(key),
              "the key goes in the Authorization header")
        stdout = "".join(p.lines)
        log = p.log_text()
    check(key not in stdout and other not in stdout, "parley's stdout never has the key")
    check(key not in log and other not in log, "parley's log (trace level) never has the key")

    wrong = "sk-wrong-key-0d9e1f"
    with Session(["--require-key=" + key], env={"MOCK_KEY": wrong}, log_level="trace") as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, "mock: say never")
        check(turn_status(ev) == "failed" and "401" in turn_error(ev),
              "a wrong key: the turn fails with 401: %r" % turn_error(ev))
        check(len(mock.requests()) == 1, "a 401 is not retried")
        check(wrong not in "".join(p.lines), "the wrong key is not on stdout")
        log = p.log_text()
        check(wrong not in log and key not in log, "the wrong key is not in the log")


# -- 10. Chat Completions ----------------------------------------------------

def test_chat_completions():
    with Session(extra=["-c", "model_providers.mock.wire_api=chat"]) as (mock, p):
        t = p.start_thread()
        _, ev = p.run_turn(t, text("mock: say chat streams in pieces", "mock: run echo chat-out",
                                   "mock: say chat done"), ["accept"])
        deltas = [m for m in ev if m.get("method") == "item/agentMessage/delta"]
        check(len(deltas) >= 3, "chat: the message arrives in deltas (%d)" % len(deltas))
        msgs = items(ev, "agentMessage")
        check([m["text"] for m in msgs] == ["chat streams in pieces", "chat done"],
              "chat: both messages whole: %s" % [m["text"] for m in msgs])
        asks = [m for m in ev if m.get("method") == "item/commandExecution/requestApproval"]
        check(len(asks) == 1 and "echo chat-out" in asks[0]["params"]["command"],
              "chat: the call (arguments in pieces) is asked")
        done = items(ev, "commandExecution")
        check(done and done[0]["status"] == "completed" and "chat-out" in done[0]["aggregatedOutput"],
              "chat: the command ran")
        check(turn_status(ev) == "completed", "chat: the turn completes")
        reqs = mock.requests()
        check(len(reqs) == 2 and all(r["path"].endswith("/chat/completions") for r in reqs),
              "chat: two requests to /chat/completions")
        if len(reqs) == 2:
            messages = reqs[1]["body"].get("messages", [])
            calls = [c for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
            tools = [m for m in messages if m.get("role") == "tool"]
            check(len(calls) == 1 and len(tools) == 1 and tools[0]["tool_call_id"] == calls[0]["id"]
                  and "chat-out" in json.dumps(tools[0]["content"]),
                  "chat: the output goes back as a role: tool message for the call: %s" % tools)
            check(calls and json.loads(calls[0]["function"]["arguments"]).get("cmd") == "echo chat-out",
                  "chat: the call's arguments are whole in the history")


# -- 11. many streaming turns at once ----------------------------------------

def test_concurrency(count=200):
    with Session() as (mock, p):
        threads = [p.start_thread() for _ in range(count)]
        turns = {}
        for n, t in enumerate(threads):
            turns[p.start_turn(t, text("mock: pace 20", "mock: say turn %d streams a b c d" % n))] = n
        completed = {}
        deltas = {}
        deadline = time.monotonic() + 120
        while len(completed) < count and time.monotonic() < deadline:
            m = p.wait(lambda m: m.get("method") in ("turn/completed", "item/agentMessage/delta"),
                       max(1, deadline - time.monotonic()))
            if m["method"] == "item/agentMessage/delta":
                deltas[m["params"]["turnId"]] = deltas.get(m["params"]["turnId"], 0) + 1
            else:
                completed[m["params"]["turn"]["id"]] = m["params"]["turn"]["status"]
        check(len(completed) == count and set(completed.values()) == {"completed"},
              "%d streaming turns at once all complete (%d done, %s)"
              % (count, len(completed), sorted(set(completed.values()))))
        check(len(deltas) == count and min(deltas.values()) >= 5,
              "every turn streamed several deltas (min %s)" % (min(deltas.values()) if deltas else None))
        check(len(mock.requests()) == count, "one request per turn")


# -- 12. the schema ----------------------------------------------------------

def validate_schema():
    bundle_path = os.path.join(SCHEMA_DIR, "codex_app_server_protocol.schemas.json")
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if not SCHEMA_DIR or not os.path.exists(bundle_path) or jsonschema is None:
        print("NOTE: schema validation skipped (no Codex schema at %r or no python3-jsonschema);"
              " token usage shapes were checked by hand" % SCHEMA_DIR)
        return
    with open(bundle_path) as f:
        bundle = json.load(f)

    def validator(name):
        return jsonschema.Draft7Validator({"$ref": "#/definitions/" + name,
                                           "definitions": bundle["definitions"]})

    notification_v, request_v = validator("ServerNotification"), validator("ServerRequest")
    responses = {"thread/start": "v2/ThreadStartResponse", "turn/start": "v2/TurnStartResponse",
                 "turn/interrupt": "v2/TurnInterruptResponse", "thread/resume": "v2/ThreadResumeResponse",
                 "initialize": "InitializeResponse"}
    response_vs = {m: validator(t) for m, t in responses.items()}
    checked, seen, bad = 0, set(), 0
    for lines, ids in ALL_LINES:
        for raw in lines:
            m = json.loads(raw)
            if "method" in m and "id" in m:
                errors, kind = list(request_v.iter_errors(m)), m["method"]
            elif "method" in m:
                errors = list(notification_v.iter_errors({"method": m["method"], "params": m["params"]}))
                kind = m["method"]
            elif "result" in m and ids.get(m.get("id")) in response_vs:
                kind = ids[m["id"]]
                errors = list(response_vs[kind].iter_errors(m["result"]))
            else:
                continue
            checked += 1
            seen.add(kind)
            if errors and bad < 20:
                bad += 1
                check(False, "schema: %s: %s at %s\n  %s" % (kind, errors[0].message[:200],
                                                            list(errors[0].absolute_path), raw[:300]))
    print("schema: validated %d lines (%s)" % (checked, ", ".join(sorted(seen))))
    for kind in ("thread/tokenUsage/updated", "error", "item/agentMessage/delta",
                 "item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
        check(kind in seen, "schema: the run had a %s to validate" % kind)


TESTS = [test_streaming, test_command_accepted, test_declined_cancelled_timed_out, test_apply_patch,
         test_unknown_tool, test_faults, test_interrupt_mid_stream, test_resume_continues_history,
         test_fork_continues_history, test_kill_9_keeps_the_models_history,
         test_api_key_never_appears, test_chat_completions, test_concurrency]


def main():
    for test in TESTS:
        if ONLY and test.__name__ not in ONLY:
            continue
        before = len(FAILURES)
        start = time.monotonic()
        try:
            test()
        except Exception as e:  # a hang or a crash is a failure of this test, not of the run
            check(False, "%s raised %s: %s" % (test.__name__, type(e).__name__, e))
        print("%s %s (%.1f s)" % ("ok  " if len(FAILURES) == before else "FAIL", test.__name__,
                                 time.monotonic() - start), flush=True)
    validate_schema()
    for lines, _ in ALL_LINES:
        for raw in lines:
            try:
                json.loads(raw)
            except ValueError:
                check(False, "stdout holds only JSON: %r" % raw[:200])
    print("%d failure(s), %d known defect(s)" % (len(FAILURES), len(KNOWN)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
