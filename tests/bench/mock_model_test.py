#!/usr/bin/env python3
"""parley-mock-model through real loopback HTTP (bench/mock_model.md).

The real binary, python3's http.client: the default script (what runs the real
Codex offline) unchanged; the `mock:` directives (say, reason, run, shell, patch,
tool, usage, pace) and how a script advances with tool outputs; Chat
Completions with tool-call arguments split over chunks; every fault (http with
retries, 429 with Retry-After, cut, stall, malformed, failed); the request log
with credentials masked; --require-key; many streams open at once.

Usage: mock_model_test.py PARLEY_MOCK_MODEL_BINARY
"""
import codecs
import http.client
import json
import subprocess
import sys
import threading
import time

BINARY = sys.argv[1]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)


class Mock:
    """One parley-mock-model process on a free port."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([BINARY, "--port=0", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on http://127.0.0.1:"):
            raise RuntimeError("mock did not start: %r" % line)
        self.port = int(line.rsplit(":", 1)[1])

    def stop(self):
        self.proc.terminate()
        out, err = self.proc.communicate(timeout=30)
        check(self.proc.returncode == 0, "mock exits 0 on SIGTERM (got %s)" % self.proc.returncode)
        check(out == "", "nothing but the listening line on stdout (got %r)" % out[:200])
        check("Sanitizer" not in err and "runtime error" not in err,
              "no sanitizer report (a build with -fsanitize)")
        return err

    def request(self, method, path, body=None, headers=None, timeout=30):
        """(status, headers, body bytes) of a plain request."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers=headers or {})
        resp = conn.getresponse()
        payload = resp.read()
        conn.close()
        return resp.status, resp.getheaders(), payload

    def stream(self, path, body, headers=None, timeout=30):
        """Streams a POST: status, headers, [(arrival time, frame text)], and whether the
        body ended properly (the last chunk arrived)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        conn.request("POST", path, body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        frames, buffer, whole = [], "", False
        decoder = codecs.getincrementaldecoder("utf-8")()
        for piece in chunks(resp):
            if piece is None:
                whole = True
                break
            buffer += decoder.decode(piece)
            while "\n\n" in buffer:
                frame, buffer = buffer.split("\n\n", 1)
                frames.append((time.monotonic(), frame + "\n"))
        if buffer:  # a frame the connection cut in half
            frames.append((time.monotonic(), buffer))
        conn.close()
        return resp.status, dict(resp.getheaders()), frames, whole


def chunks(resp):
    """The chunks of a chunked body as they arrive, then None after the last chunk (0).
    Decoded here rather than by http.client, which reads a body cut short as a whole one."""
    if not resp.chunked:
        yield resp.read()
        yield None
        return
    fp = resp.fp
    while True:
        size_line = fp.readline()
        if not size_line.strip():
            return  # the connection closed before the last chunk
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            fp.readline()
            yield None
            return
        data = fp.read(size)
        if len(data) < size:
            yield data
            return
        yield data
        fp.readline()


def data_of(frame):
    """The JSON of a frame's data line (None for [DONE]); raises on one that is not JSON."""
    for line in frame.splitlines():
        if line.startswith("data: "):
            text = line[len("data: "):]
            return None if text == "[DONE]" else json.loads(text)
    raise ValueError("no data line in %r" % frame)


def events(frames):
    return [data_of(f) for _, f in frames]


def user(text):
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}


def responses_body(*items):
    return {"model": "mock-model", "stream": True, "input": list(items)}


def call_output(call_id, output="ok"):
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def types(evs):
    return [e["type"] for e in evs]


def output_items(evs):
    return [e["item"] for e in evs if e["type"] == "response.output_item.done"]


# -- the default script (no directive): what runs the real Codex offline ------------------

def test_default_script(mock):
    status, headers, frames, whole = mock.stream("/v1/responses", responses_body(user("go")))
    check(status == 200 and whole, "default: 200 and a whole stream")
    check(headers.get("Content-Type") == "text/event-stream", "default: text/event-stream")
    evs = events(frames)
    check(types(evs) == ["response.created", "response.output_item.done", "response.completed"],
          "default: exactly created, output_item.done, completed (got %s)" % types(evs))
    check([e["sequence_number"] for e in evs] == [0, 1, 2], "default: sequence numbers")
    check(all(f.startswith("event: %s\ndata: " % e["type"]) for (_, f), e in zip(frames, evs)),
          "default: each frame is `event: TYPE` then `data: JSON`")
    call = evs[1]["item"]
    args = json.loads(call["arguments"])
    check(call["type"] == "function_call" and call["name"] == "exec_command",
          "default: one exec_command call")
    check(args == {"cmd": "echo hi; exit 3", "sandbox_permissions": "require_escalated",
                   "justification": "parley benchmark"}, "default: its arguments (%s)" % args)
    usage = evs[2]["response"]["usage"]
    check(usage["input_tokens"] == 10 and usage["output_tokens"] == 5,
          "default: usage 10 per input item, 5 out")

    # The call answered: the message "done", again three events.
    body = responses_body(user("go"), call, call_output(call["call_id"]))
    evs = events(mock.stream("/v1/responses", body)[2])
    check(types(evs) == ["response.created", "response.output_item.done", "response.completed"],
          "default, answered: three events")
    msg = evs[1]["item"]
    check(msg["type"] == "message" and msg["content"][0]["text"] == "done",
          "default, answered: the message done")

    # A second turn of the same thread asks again.
    body = responses_body(user("go"), call, call_output(call["call_id"]), msg, user("go"))
    evs = events(mock.stream("/responses", body)[2])
    check(output_items(evs)[0]["type"] == "function_call", "default: the next turn calls again")
    check(output_items(evs)[0]["call_id"] != call["call_id"], "default: a fresh call_id")


# -- directives ----------------------------------------------------------------------------

def test_say_streams_deltas(mock):
    text = "the quick brown fox jumps over"
    status, _, frames, whole = mock.stream(
        "/v1/responses", responses_body(user("mock: pace 40\nmock: say " + text)))
    evs = events(frames)
    check(status == 200 and whole, "say: a whole stream")
    deltas = [(t, e) for (t, _), e in zip(frames, evs) if e["type"] == "response.output_text.delta"]
    check(len(deltas) >= 4, "say: several deltas (got %d)" % len(deltas))
    check("".join(e["delta"] for _, e in deltas) == text, "say: the deltas make the text")
    seqs = [e["sequence_number"] for e in evs]
    check(seqs == list(range(len(evs))), "say: sequence numbers in order")
    # Paced 40 ms apart, so they arrived one by one, not in one batch.
    check(deltas[-1][0] - deltas[0][0] >= 0.04 * (len(deltas) - 1) * 0.9,
          "say: deltas arrive over time (%.3f s)" % (deltas[-1][0] - deltas[0][0]))
    order = types(evs)
    check(order[0] == "response.created" and order[-1] == "response.completed", "say: framing")
    check(order.index("response.output_item.added") < order.index("response.output_text.delta")
          < order.index("response.output_item.done"), "say: added, deltas, done")
    items = output_items(evs)
    check(len(items) == 1 and items[0]["content"][0]["text"] == text,
          "say: output_item.done with the whole message")


def test_reason(mock):
    evs = events(mock.stream("/v1/responses",
                             responses_body(user("mock: reason weighing the options\nmock: say ok")))[2])
    deltas = [e["delta"] for e in evs if e["type"] == "response.reasoning_summary_text.delta"]
    check(len(deltas) >= 2 and "".join(deltas) == "weighing the options",
          "reason: summary deltas make the text")
    items = output_items(evs)
    check([i["type"] for i in items] == ["reasoning", "message"], "reason: reasoning then message")
    check(items[0]["summary"] == [{"type": "summary_text", "text": "weighing the options"}],
          "reason: the item's summary")


def test_run_then_say(mock):
    prompt = user("please\nmock: run ls -la /tmp\nmock: say finished")
    evs = events(mock.stream("/v1/responses", responses_body(prompt))[2])
    items = output_items(evs)
    check(len(items) == 1 and items[0]["type"] == "function_call", "run: response 1 is the call")
    call = items[0]
    check(json.loads(call["arguments"])["cmd"] == "ls -la /tmp", "run: cmd")
    arg_deltas = [e["delta"] for e in evs if e["type"] == "response.function_call_arguments.delta"]
    check(len(arg_deltas) >= 2 and "".join(arg_deltas) == call["arguments"],
          "run: arguments streamed in pieces")
    body = responses_body(prompt, call, call_output(call["call_id"], "total 0"))
    items = output_items(events(mock.stream("/v1/responses", body)[2]))
    check([i["type"] for i in items] == ["message"]
          and items[0]["content"][0]["text"] == "finished", "run: response 2 says finished")
    body["input"] += [items[0], call_output("extra")]
    items = output_items(events(mock.stream("/v1/responses", body)[2]))
    check(items[0]["content"][0]["text"] == "done", "run: past the script, done")


def test_shell_and_unknown_tool(mock):
    prompt = user("mock: shell echo 'a b'\nmock: tool frobnicate")
    items = output_items(events(mock.stream("/v1/responses", responses_body(prompt))[2]))
    check(items[0]["name"] == "shell"
          and json.loads(items[0]["arguments"]) == {"command": ["bash", "-lc", "echo 'a b'"]},
          "shell: the command as bash -lc")
    body = responses_body(prompt, items[0], call_output(items[0]["call_id"]))
    items = output_items(events(mock.stream("/v1/responses", body)[2]))
    check(items[0]["type"] == "function_call" and items[0]["name"] == "frobnicate",
          "tool: a call to the unknown tool, after the first output")


PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch"


def test_patch(mock):
    prompt = user("mock: patch\n" + PATCH + "\nmock: say patched")
    evs = events(mock.stream("/v1/responses", responses_body(prompt))[2])
    items = output_items(evs)
    check(len(items) == 1 and items[0]["type"] == "custom_tool_call"
          and items[0]["name"] == "apply_patch", "patch: a custom_tool_call apply_patch")
    check(items[0]["input"] == PATCH, "patch: the patch as its input (%r)" % items[0].get("input"))
    body = responses_body(prompt, items[0], {"type": "custom_tool_call_output",
                                             "call_id": items[0]["call_id"], "output": "ok"})
    items = output_items(events(mock.stream("/v1/responses", body)[2]))
    check(items[0]["content"][0]["text"] == "patched", "patch: a custom output advances the script")


def test_usage(mock):
    evs = events(mock.stream("/v1/responses", responses_body(user("mock: say hi\nmock: usage 1234 56")))[2])
    usage = evs[-1]["response"]["usage"]
    check(usage["input_tokens"] == 1234 and usage["output_tokens"] == 56
          and usage["total_tokens"] == 1290, "usage: as the directive says")


def test_bad_directive(mock):
    status, _, body = mock.request("POST", "/v1/responses",
                                   responses_body(user("mock: sing loudly")))
    check(status == 400 and "sing" in json.loads(body)["error"]["message"],
          "an unknown directive is a 400 naming it")


# -- Chat Completions ----------------------------------------------------------------------

def chat_body(messages, include_usage=True):
    body = {"model": "mock-model", "stream": True, "messages": messages}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    return body


def test_chat(mock):
    messages = [{"role": "system", "content": "be brief"},
                {"role": "user", "content": "mock: say let me look\nmock: run cat /etc/hostname\nmock: say all good"}]
    status, headers, frames, whole = mock.stream("/v1/chat/completions", chat_body(messages))
    check(status == 200 and whole, "chat: a whole stream")
    check(frames[-1][1] == "data: [DONE]\n", "chat: ends with [DONE]")
    chunks = events(frames)[:-1]
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    check(content == "let me look", "chat: content deltas (%r)" % content)
    calls = [tc for c in chunks if c["choices"] for tc in c["choices"][0]["delta"].get("tool_calls", [])]
    check(len(calls) >= 3, "chat: the call over several chunks (%d)" % len(calls))
    first = calls[0]
    check(first["index"] == 0 and first["type"] == "function"
          and first["function"]["name"] == "exec_command" and first["id"],
          "chat: the first tool_calls chunk has index, id, type, name")
    pieces = [tc["function"]["arguments"] for tc in calls]
    check(sum(1 for p in pieces if p) >= 2, "chat: arguments split over several chunks")
    check(json.loads("".join(pieces))["cmd"] == "cat /etc/hostname", "chat: the arguments join")
    finish = [c["choices"][0]["finish_reason"] for c in chunks
              if c["choices"] and c["choices"][0]["finish_reason"]]
    check(finish == ["tool_calls"], "chat: finish_reason tool_calls")
    check(chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 5,
          "chat: a usage chunk last")

    messages += [{"role": "assistant", "content": "let me look",
                  "tool_calls": [{"id": first["id"], "type": "function",
                                  "function": {"name": "exec_command", "arguments": "".join(pieces)}}]},
                 {"role": "tool", "tool_call_id": first["id"], "content": "box"}]
    frames = mock.stream("/chat/completions", chat_body(messages, include_usage=False))[2]
    chunks = events(frames)[:-1]
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    check(content == "all good", "chat: after the tool message, the rest (%r)" % content)
    check(chunks[-1]["choices"][0]["finish_reason"] == "stop", "chat: finish_reason stop")
    check(all("usage" not in c for c in chunks), "chat: no usage chunk unless asked")


def test_chat_patch(mock):
    frames = mock.stream("/v1/chat/completions",
                         chat_body([{"role": "user", "content": "mock: patch\n" + PATCH}]))[2]
    calls = [tc for c in events(frames)[:-1] if c["choices"]
             for tc in c["choices"][0]["delta"].get("tool_calls", [])]
    args = json.loads("".join(tc["function"]["arguments"] for tc in calls))
    check(calls[0]["function"]["name"] == "apply_patch" and args == {"input": PATCH},
          "chat: apply_patch as a function call with {input}")


# -- faults --------------------------------------------------------------------------------

def test_http_500_then_ok(mock):
    body = responses_body(user("unique 1\nmock: http 500\nmock: say recovered"))
    status, _, payload = mock.request("POST", "/v1/responses", body)
    check(status == 500 and "error" in json.loads(payload), "http 500: first attempt")
    status, _, frames, whole = mock.stream("/v1/responses", body)
    check(status == 200 and whole and output_items(events(frames))[0]["content"][0]["text"] == "recovered",
          "http 500: the retry streams")


def test_http_429_retry_after(mock):
    body = responses_body(user("unique 2\nmock: http 429 times=2 retry-after=7"))
    for attempt in (1, 2):
        status, headers, payload = mock.request("POST", "/v1/responses", body)
        check(status == 429 and dict(headers).get("Retry-After") == "7",
              "429: attempt %d with Retry-After: 7" % attempt)
        check(json.loads(payload)["error"]["type"] == "rate_limit_exceeded", "429: error type")
    status, _, _, whole = mock.stream("/v1/responses", body)
    check(status == 200 and whole, "429: the third attempt streams")
    # A different request (another input) has its own count.
    status, _, _ = mock.request("POST", "/v1/responses",
                                responses_body(user("unique 3\nmock: http 429 times=2 retry-after=7")))
    check(status == 429, "429: counted per input")


def test_cut(mock):
    body = responses_body(user("unique 4\nmock: cut\nmock: say one two three four five"))
    status, _, frames, whole = mock.stream("/v1/responses", body)
    check(status == 200 and not whole, "cut: the body ends without its last chunk")
    texts = [f for _, f in frames]
    check(not any("response.completed" in t for t in texts), "cut: no response.completed")
    try:
        json.loads(texts[-1].split("data: ", 1)[1])
        cut_mid_event = False
    except (ValueError, IndexError):
        cut_mid_event = True
    check(len(texts) >= 2 and cut_mid_event, "cut: the last frame is half an event")
    status, _, frames, whole = mock.stream("/v1/responses", body)
    check(whole and types(events(frames))[-1] == "response.completed", "cut: the retry is whole")


def test_stall(mock):
    body = responses_body(user("unique 5\nmock: stall 700\nmock: say slow and steady"))
    _, _, frames, whole = mock.stream("/v1/responses", body)
    evs = events(frames)
    first = next(i for i, e in enumerate(evs) if e["type"].endswith(".delta"))
    gap = frames[first + 1][0] - frames[first][0]
    check(whole and gap >= 0.65, "stall: 700 ms after the first delta (%.3f s)" % gap)
    others = [b[0] - a[0] for a, b in zip(frames, frames[1:])]
    others.pop(first)
    check(max(others) < 0.5, "stall: only there")
    _, _, frames, _ = mock.stream("/v1/responses", body)
    check(max(b[0] - a[0] for a, b in zip(frames, frames[1:])) < 0.5, "stall: once by default")

    body = responses_body(user("unique 6\nmock: stall 300 close\nmock: say slow and steady"))
    _, _, frames, whole = mock.stream("/v1/responses", body)
    check(not whole and not any("response.completed" in f for _, f in frames),
          "stall close: the connection closes after the pause")


def test_malformed(mock):
    body = responses_body(user("unique 7\nmock: malformed\nmock: say fine"))
    _, _, frames, whole = mock.stream("/v1/responses", body)
    bad = 0
    for _, f in frames:
        try:
            data_of(f)
        except ValueError:
            bad += 1
    check(whole and bad == 1, "malformed: one data line that is not JSON (%d)" % bad)
    check("response.completed" in frames[-1][1], "malformed: the rest of the stream follows")


def test_failed(mock):
    body = responses_body(user("unique 8\nmock: failed the model is overloaded"))
    evs = events(mock.stream("/v1/responses", body)[2])
    check(types(evs) == ["response.created", "response.failed"], "failed: created then failed")
    check(evs[-1]["response"]["error"]["message"] == "the model is overloaded",
          "failed: the message")
    evs = events(mock.stream("/v1/responses", body)[2])
    check(types(evs)[-1] == "response.completed", "failed: the retry completes")

    frames = mock.stream("/v1/chat/completions",
                         chat_body([{"role": "user", "content": "unique 9\nmock: failed boom"}]))[2]
    check(events(frames)[-1] == {"error": {"message": "boom", "type": "server_error",
                                           "code": "server_error"}},
          "failed (chat): an error chunk last, no [DONE]")


def test_fault_at_second_response(mock):
    prompt = user("unique 10\nmock: run true\nmock: say after\nmock: http 503 at=2")
    status, _, frames, _ = mock.stream("/v1/responses", responses_body(prompt))
    check(status == 200, "at=2: the first response is untouched")
    call = output_items(events(frames))[0]
    body = responses_body(prompt, call, call_output(call["call_id"]))
    check(mock.request("POST", "/v1/responses", body)[0] == 503, "at=2: the second fails")
    check(mock.request("POST", "/v1/responses", body)[0] == 200, "at=2: then streams")


# -- the request log, the key, many streams ------------------------------------------------

def test_request_log(mock):
    mock.request("DELETE", "/mock/requests")
    body = responses_body(user("logged"))
    mock.stream("/v1/responses", body, headers={"Authorization": "Bearer sk-secret-123",
                                                "X-Trace": "t1"})
    status, _, payload = mock.request("GET", "/mock/requests")
    records = json.loads(payload)
    check(status == 200 and len(records) == 1, "log: one request (%d)" % len(records))
    r = records[0]
    check(r["method"] == "POST" and r["path"] == "/v1/responses" and r["body"] == body,
          "log: method, path and the body as sent")
    headers = {k.lower(): v for k, v in r["headers"].items()}
    check(headers.get("authorization") == "Bearer <13 chars>", "log: Authorization masked (%r)"
          % headers.get("authorization"))
    check(headers.get("x-trace") == "t1", "log: other headers kept")
    check(b"sk-secret-123" not in payload, "log: the key appears nowhere")
    status, _, last = mock.request("GET", "/mock/requests/last")
    check(status == 200 and json.loads(last) == r, "log: /mock/requests/last")
    mock.request("POST", "/v1/chat/completions", {"model": "m", "messages": []})
    check(json.loads(mock.request("GET", "/mock/requests/last")[2])["path"] == "/v1/chat/completions",
          "log: the newest last")
    check(len(json.loads(mock.request("GET", "/mock/requests")[2])) == 2, "log: /mock/* not recorded")


def test_require_key():
    mock = Mock("--require-key", "k-123")
    try:
        body = responses_body(user("go"))
        check(mock.request("POST", "/v1/responses", body)[0] == 401, "key: none is 401")
        check(mock.request("POST", "/v1/responses", body, {"Authorization": "Bearer nope"})[0] == 401,
              "key: a wrong one is 401")
        status, _, _, whole = mock.stream("/v1/responses", body, {"Authorization": "Bearer k-123"})
        check(status == 200 and whole, "key: the right one streams")
        check(len(json.loads(mock.request("GET", "/mock/requests")[2])) == 3,
              "key: refused requests are recorded too")
    finally:
        mock.stop()


def test_keep_alive_off():
    """--keep-alive=0: every answer closes its connection (none idles in the mock); by
    default a connection serves request after request."""
    def two_on_one_connection(mock):
        conn = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
        answers = []
        for i in range(2):
            try:
                body = json.dumps(responses_body(user("k %d" % i))).encode()
                conn.request("POST", "/v1/responses", body=body,
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                answers.append((resp.status, resp.getheader("Connection", "")))
            except (http.client.HTTPException, OSError):
                answers.append((None, ""))
            if conn.sock is None:  # http.client closed it: the answer said close
                answers.append(("closed", ""))
                break
        conn.close()
        return answers

    mock = Mock("--keep-alive=0")
    try:
        answers = two_on_one_connection(mock)
        check(answers[0] == (200, "close"), "keep-alive 0: the answer says close (got %r)" % answers)
        check(len(answers) == 2 and answers[1][0] == "closed",
              "keep-alive 0: the connection ends (got %r)" % answers)
        status, _, _, whole = mock.stream("/v1/responses", responses_body(user("again")))
        check(status == 200 and whole, "keep-alive 0: a new connection streams")
    finally:
        mock.stop()
    mock = Mock()
    try:
        answers = two_on_one_connection(mock)
        check(answers == [(200, ""), (200, "")],
              "keep-alive: two answers on one connection (got %r)" % answers)
    finally:
        mock.stop()


def test_many_streams():
    """400 streams at once, each stalled 3 s after its first delta: more are open together
    (between a stream's first delta and its end) than a fixed pool of 256 threads would allow.
    (Asking for all 400 together failed on a loaded machine, where starting 400 client threads
    took longer than the stall: the claim is the mock's, not the client's.)"""
    mock = Mock()
    count, results, lock = 400, [], threading.Lock()

    def one(i):
        try:
            body = responses_body(user("stream %d\nmock: stall 3000\nmock: say hello there" % i))
            _, _, frames, whole = mock.stream("/v1/responses", body, timeout=60)
            first = next(t for (t, f) in frames if ".delta" in f.split("\n", 1)[0])
            with lock:
                results.append((whole, first, frames[-1][0]))
        except Exception as e:  # noqa: BLE001 - reported as a failed stream
            with lock:
                results.append((False, 0.0, 0.0))
                print("stream", i, "failed:", e, flush=True)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    mock.stop()
    check(len(results) == count and all(w for w, _, _ in results), "many: all %d whole" % count)
    # The most streams open at one moment: a sweep over (first delta, end) intervals.
    edges = sorted([(first, 1) for _, first, _ in results if first]
                   + [(end, -1) for _, first, end in results if first])
    open_now = most_open = 0
    for _, step in edges:
        open_now += step
        most_open = max(most_open, open_now)
    check(most_open > 256, "many: %d streams open at once, more than 256" % most_open)


def main():
    mock = Mock("--command", "echo hi; exit 3")
    tests = [test_default_script, test_say_streams_deltas, test_reason, test_run_then_say,
             test_shell_and_unknown_tool, test_patch, test_usage, test_bad_directive, test_chat,
             test_chat_patch, test_http_500_then_ok, test_http_429_retry_after, test_cut,
             test_stall, test_malformed, test_failed, test_fault_at_second_response,
             test_request_log]
    try:
        for test in tests:
            print("--", test.__name__, flush=True)
            test(mock)
    finally:
        err = mock.stop()
    check("POST /v1/responses" in err, "requests are logged on stderr")
    print("--", "test_require_key", flush=True)
    test_require_key()
    print("--", "test_keep_alive_off", flush=True)
    test_keep_alive_off()
    print("--", "test_many_streams", flush=True)
    test_many_streams()
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
