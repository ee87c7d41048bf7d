#!/usr/bin/env python3
"""parley and the real Codex 0.169.0 continue each other's threads, with the
model's whole context (issue 11, "History").

Both app-servers run on stdio against the same `parley-mock-model` and the
same home (Codex's CODEX_HOME is parley's --home), and what each sends the
model is read back from the mock:

- a thread parley started (a message, an `exec_command` call accepted and
  run, an answer) is resumed by Codex: Codex's next request carries parley's
  items as the model produced them (the same call, arguments and call_id,
  its output, the answer), in order;
- a thread Codex started is resumed by parley: parley's next request carries
  Codex's items as Codex itself sends them again, without the fields Codex
  keeps for itself in its rollout;
- the `exec_command` tool parley offers is the one Codex offers, by name,
  kind and parameters.

Exits 77 (skipped) when the Codex package cannot be had (no npm registry).

Usage: codex_interop_test.py PARLEY_BINARY MOCK_BINARY
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402

PARLEY = sys.argv[1]
MOCK = sys.argv[2]
FAILURES = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


class Home:
    """One home for both servers, and their clients' environment."""

    def __init__(self, mock):
        self.root = tempfile.mkdtemp(prefix="parley-interop-")
        self.home = os.path.join(self.root, "home")
        self.work = os.path.join(self.root, "work")
        for d in (self.home, self.work, os.path.join(self.root, "user")):
            os.makedirs(d)
        with open(os.path.join(self.home, "config.toml"), "w") as f:
            f.write('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "on-request"\n'
                    '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                    'wire_api = "responses"\nrequires_openai_auth = false\n' % mock.url)
        self.env = dict(os.environ, CODEX_HOME=self.home, HOME=os.path.join(self.root, "user"),
                        no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost")
        self.env.pop("OPENAI_API_KEY", None)

    def parley(self):
        # parley reads the same config.toml ($CODEX_HOME/config.toml).
        return app_server_peer.StdioPeer(
            [PARLEY, "app-server", "--home", self.home, "--cwd", self.work],
            self.env, os.path.join(self.root, "parley.stderr"))

    def codex(self):
        return app_server_peer.StdioPeer(app_server_peer.CODEX + ["app-server"], self.env,
                                         os.path.join(self.root, "codex.stderr"))

    def codex_thread(self):
        """A Codex app-server and a thread it started in the work directory."""
        c = self.codex()
        r = c.call("thread/start", {"approvalPolicy": "on-request", "cwd": self.work}, timeout=90)
        return c, r["result"]["thread"]["id"]

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


def last_input(mock):
    reqs = mock.requests()
    return reqs[-1]["body"]["input"] if reqs else []


def find(items, pred):
    return next((n for n, i in enumerate(items) if pred(i)), None)


def text_of(item):
    c = item.get("content")
    if isinstance(c, str):
        return c
    return "".join(p.get("text", "") for p in c or [] if isinstance(p, dict))


def own_fields(item):
    """What a request carries of an item, whoever sends it (Codex keeps
    server ids and statuses; parley sends none, as nothing is stored)."""
    return {k: v for k, v in item.items() if k not in ("id", "status")}


def first_turn(server, thread, text):
    _, events = server.run_turn(thread, text, ["accept"], timeout=90)
    status = events[-1]["params"]["turn"]["status"]
    return status, events


def test_codex_continues_a_parley_thread(mock):
    home = Home(mock)
    try:
        p = home.parley()
        thread = p.start_thread(cwd=home.work)
        status, _ = first_turn(p, thread, "parley turn one\nmock: run echo from-parley\n"
                                          "mock: say parley turn one over")
        check(status == "completed", "parley's turn completes")
        check(p.stop() == 0, "parley exits 0")
        sent = last_input(mock)  # parley's second request: the whole turn
        call = next((i for i in sent if i.get("type") == "function_call"), None)
        out = next((i for i in sent if i.get("type") == "function_call_output"), None)
        mock.forget()

        c = home.codex()
        r = c.call("thread/resume", {"threadId": thread}, timeout=90)
        check("result" in r, "Codex resumes parley's thread: %s" % str(r)[:300])
        if "result" in r:
            _, events = c.run_turn(thread, "codex turn two\nmock: say codex two", timeout=90)
            check(events[-1]["params"]["turn"]["status"] == "completed", "Codex's turn completes")
        c.stop()
        got = last_input(mock)
        u1 = find(got, lambda i: i.get("role") == "user" and "parley turn one" in text_of(i))
        fc = find(got, lambda i: i.get("type") == "function_call")
        fo = find(got, lambda i: i.get("type") == "function_call_output")
        a1 = find(got, lambda i: i.get("role") == "assistant" and "parley turn one over" in text_of(i))
        u2 = find(got, lambda i: i.get("role") == "user" and "codex turn two" in text_of(i))
        check(None not in (u1, fc, fo, a1, u2) and u1 < fc < fo < a1 < u2,
              "Codex sends parley's turn (user, call, output, answer) before its own: %s"
              % [u1, fc, fo, a1, u2])
        if None not in (fc, fo) and call and out:
            check(own_fields(got[fc]) == own_fields(call),
                  "the call is the model's own, as parley sent it: %s" % got[fc])
            check(got[fc]["name"] == "exec_command"
                  and json.loads(got[fc]["arguments"]).get("cmd") == "echo from-parley",
                  "still exec_command with its cmd (not rewritten as another tool)")
            check(own_fields(got[fo]) == own_fields(out), "the output is the one parley sent")
    finally:
        home.remove()


def test_parley_continues_a_codex_thread(mock):
    home = Home(mock)
    try:
        c, thread = home.codex_thread()
        status, _ = first_turn(c, thread, "codex turn one\nmock: run echo from-codex\n"
                                          "mock: say codex turn one over")
        check(status == "completed", "Codex's turn completes")
        c.stop()
        codex_sent = last_input(mock)  # Codex's second request: its whole context
        mock.forget()

        p = home.parley()
        r = p.call("thread/resume", {"threadId": thread})
        check("result" in r, "parley resumes Codex's thread: %s" % str(r)[:300])
        if "result" in r:
            _, events = p.run_turn(thread, "parley turn two\nmock: say parley two")
            check(events[-1]["params"]["turn"]["status"] == "completed", "parley's turn completes")
        check(p.stop() == 0, "parley exits 0")
        got = last_input(mock)
        check(got and text_of(got[-1]).startswith("parley turn two"), "parley's message is last")
        # Codex's context as Codex sends it, minus what parley leaves out:
        # server ids and statuses, and Codex's own base instructions (its
        # first developer message, built for each request and never stored;
        # parley sends its own instructions).
        expected = [own_fields(i) for i in codex_sent
                    if not (i.get("role") == "developer"
                            and text_of(i).startswith("You are a coding agent running in the Codex CLI"))]
        earlier = [own_fields(i) for i in got[:-1]]
        # Codex's last request did not have its answer yet; parley's does.
        answer = earlier.pop() if earlier else {}
        check(earlier == expected,
              "parley sends Codex's whole context as Codex does (%d items; first difference: %s)"
              % (len(expected), next(((a, b) for a, b in zip(earlier, expected) if a != b),
                                     (len(earlier), len(expected)))))
        check(answer.get("role") == "assistant" and text_of(answer) == "codex turn one over",
              "then Codex's answer: %s" % answer)
        leaked = [sorted(i) for i in got if any(k.startswith("internal_") or k == "metadata" for k in i)]
        check(not leaked, "no field Codex keeps for itself is sent: %s" % leaked)
    finally:
        home.remove()


def test_the_same_exec_command_tool(mock):
    home = Home(mock)
    try:
        c, thread = home.codex_thread()
        c.run_turn(thread, "hello\nmock: say hi", timeout=90)
        c.stop()
        p = home.parley()
        p.run_turn(p.start_thread(cwd=home.work), "hello\nmock: say hi")
        p.stop()
        codex_req, parley_req = [q["body"] for q in mock.requests()]

        def exec_tool(body):
            return next((t for t in body.get("tools", []) if t.get("name") == "exec_command"), None)

        ours, theirs = exec_tool(parley_req), exec_tool(codex_req)
        check(ours is not None and theirs is not None, "both offer exec_command")
        if ours and theirs:
            check(ours["type"] == theirs["type"] == "function", "as a function tool")
            ours_p = set(ours["parameters"]["properties"])
            theirs_p = set(theirs["parameters"]["properties"])
            check(ours_p <= theirs_p, "parley's parameters are Codex's: %s vs %s" % (ours_p, theirs_p))
            check(set(ours["parameters"].get("required", [])) == set(theirs["parameters"].get("required", [])),
                  "the same required parameters")
        for key in ("stream", "store", "tool_choice", "parallel_tool_calls"):
            check(parley_req.get(key) == codex_req.get(key),
                  "%s as Codex sends it (%r)" % (key, codex_req.get(key)))
    finally:
        home.remove()


def main():
    why = app_server_peer.codex_unavailable()
    if why:
        skip(why)
    mock = app_server_peer.Mock(MOCK)
    try:
        for test in (test_codex_continues_a_parley_thread, test_parley_continues_a_codex_thread,
                     test_the_same_exec_command_tool):
            before = len(FAILURES)
            try:
                mock.forget()
                test(mock)
            except Exception as e:  # a hang or a crash fails this test, not the run
                check(False, "%s raised %s: %s" % (test.__name__, type(e).__name__, e))
            print("%s %s" % ("ok  " if len(FAILURES) == before else "FAIL", test.__name__), flush=True)
    finally:
        mock.stop()
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
