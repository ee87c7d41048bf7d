#!/usr/bin/env python3
"""A thread moves between parley's PostgreSQL store and the real Codex 0.169.0
(issue 20: `parley store export` / `parley store import`).

On a private PostgreSQL cluster (tests/support/pg_cluster.py), with both
app-servers on stdio against the same `parley-mock-model`:

- parley, on the PostgreSQL store, runs a turn (a message, an
  `exec_command` call accepted and run, an answer); `parley store export
  --codex-home` writes it where Codex looks; Codex resumes it, sends the
  model parley's turn before its own, and takes a turn;
- `parley store import` stores Codex's rollout (with Codex's turn) in a
  second database; parley resumes it from there and takes a turn, sending the
  model both earlier turns; thread/read shows all three;
- importing a thread the database already has is refused (exit 1), as is a
  file that is no rollout; export of an unknown thread exits 1; the exported
  file holds every line the database holds, as JSON objects.

Exits 77 (skipped) when the Codex package cannot be had; fails in CI
without PostgreSQL.

Usage: postgres_transfer_test.py PARLEY_BINARY MOCK_BINARY
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "support"))
import app_server_peer  # noqa: E402
import pg_cluster  # noqa: E402

PARLEY = sys.argv[1]
MOCK = sys.argv[2]
FAILURES = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def text_of(item):
    c = item.get("content")
    if isinstance(c, str):
        return c
    return "".join(p.get("text", "") for p in c or [] if isinstance(p, dict))


def store(*args):
    return subprocess.run([PARLEY, "store", *args], capture_output=True, text=True, timeout=60)


def main():
    if not pg_cluster.available():
        print("PostgreSQL 15 is not installed" + (" (required in CI)" if pg_cluster.must_run() else ": skipped"))
        return 1 if pg_cluster.must_run() else 77
    why = app_server_peer.codex_unavailable()
    if why:
        print("SKIP:", why)
        return 77
    root = tempfile.mkdtemp(prefix="parley-pgtransfer-")
    mock = app_server_peer.Mock(MOCK)
    try:
        with pg_cluster.started() as cluster:
            run(root, mock, cluster)
    finally:
        mock.stop()
        shutil.rmtree(root, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


def run(root, mock, cluster):
    codex_home = os.path.join(root, "codex")
    parley_home = os.path.join(root, "parley")
    work = os.path.join(root, "work")
    for d in (codex_home, parley_home, work, os.path.join(root, "user")):
        os.makedirs(d)
    config = ('model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "on-request"\n'
              '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
              'wire_api = "responses"\nrequires_openai_auth = false\n' % mock.url)
    for home in (codex_home, parley_home):
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(config)
    env = dict(os.environ, HOME=os.path.join(root, "user"), no_proxy="127.0.0.1,localhost",
               NO_PROXY="127.0.0.1,localhost")
    env.pop("OPENAI_API_KEY", None)
    first, second = cluster.create_database("first"), cluster.create_database("second")
    for url in (first, second):
        m = store("migrate", "--store-url=" + url)
        check(m.returncode == 0, "store migrate: " + m.stdout + m.stderr)

    def parley(url, name):
        return app_server_peer.StdioPeer(
            [PARLEY, "app-server", "--home", parley_home, "--cwd", work, "--store=postgres",
             "--store-url=" + url, "--config", os.path.join(parley_home, "config.toml")],
            env, os.path.join(root, name + ".stderr"))

    # 1. parley on PostgreSQL takes a turn.
    p = parley(first, "parley-1")
    thread = p.start_thread(cwd=work)
    _, events = p.run_turn(thread, "parley turn one\nmock: run echo from-parley\n"
                                   "mock: say parley turn one over", ["accept"], timeout=90)
    check(events[-1]["params"]["turn"]["status"] == "completed", "parley's turn completes")
    check(p.stop() == 0, "parley exits 0")

    # 2. Exported where Codex looks, Codex resumes it and takes a turn.
    e = store("export", "--thread", thread, "--codex-home", codex_home, "--store-url=" + first)
    check(e.returncode == 0 and "exported thread " + thread in e.stdout, "export: " + e.stdout + e.stderr)
    files = glob.glob(os.path.join(codex_home, "sessions", "*", "*", "*", "rollout-*-%s.jsonl" % thread))
    check(len(files) == 1, "the rollout is where Codex finds threads: %s" % files)
    if not files:
        return
    with open(files[0]) as f:
        exported = [json.loads(line) for line in f]
    rows = cluster.psql("SELECT count(*) FROM thread_lines WHERE thread_id = '%s'" % thread, db="first")
    check(str(len(exported)) in rows, "every line the database holds is exported (%d; %s)"
          % (len(exported), rows.strip()))
    check(exported[0].get("type") == "session_meta" and exported[0]["payload"]["id"] == thread,
          "it opens with the thread's session_meta")
    mock.forget()
    c = app_server_peer.StdioPeer(app_server_peer.CODEX + ["app-server"],
                                  dict(env, CODEX_HOME=codex_home), os.path.join(root, "codex.stderr"))
    r = c.call("thread/resume", {"threadId": thread}, timeout=90)
    check("result" in r, "Codex resumes the exported thread: %s" % str(r)[:300])
    if "result" not in r:
        c.stop()
        return
    _, events = c.run_turn(thread, "codex turn two\nmock: say codex two", timeout=90)
    check(events[-1]["params"]["turn"]["status"] == "completed", "Codex's turn completes")
    c.stop()
    sent = mock.requests()[-1]["body"]["input"]
    order = [n for n, i in enumerate(sent) if "parley turn one" in text_of(i) and i.get("role") == "user"]
    call = [n for n, i in enumerate(sent) if i.get("type") == "function_call"]
    mine = [n for n, i in enumerate(sent) if "codex turn two" in text_of(i)]
    check(order and call and mine and order[0] < call[0] < mine[0],
          "Codex sends the model parley's turn (message, call) before its own")

    # 3. Codex's rollout, imported into another database, continues on parley.
    bad = store("import", files[0], "--store-url=" + first)
    check(bad.returncode == 1 and "already has thread" in bad.stderr,
          "a thread the database has is refused: " + bad.stderr)
    junk = os.path.join(root, "junk.jsonl")
    with open(junk, "w") as f:
        f.write("not a rollout\n")
    bad = store("import", junk, "--store-url=" + second)
    check(bad.returncode == 1 and bad.stderr.startswith("parley: "), "a file that is no rollout is refused: "
          + bad.stderr)
    i = store("import", files[0], "--store-url=" + second)
    check(i.returncode == 0 and "imported thread " + thread in i.stdout and "2 turns" in i.stdout,
          "import: " + i.stdout + i.stderr)
    mock.forget()
    p = parley(second, "parley-2")
    r = p.call("thread/resume", {"threadId": thread})
    check("result" in r, "parley resumes the imported thread: %s" % str(r)[:300])
    if "result" in r:
        _, events = p.run_turn(thread, "parley turn three\nmock: say parley three")
        check(events[-1]["params"]["turn"]["status"] == "completed", "parley's turn completes")
        sent = mock.requests()[-1]["body"]["input"]
        texts = [text_of(i) for i in sent]
        at = [next((n for n, t in enumerate(texts) if s in t), None)
              for s in ("parley turn one", "codex two", "parley turn three")]
        check(None not in at and at[0] < at[1] < at[2],
              "parley sends the model all three turns in order: %s" % at)
        read = p.call("thread/read", {"threadId": thread, "includeTurns": True})["result"]["thread"]
        check([t["status"] for t in read["turns"]] == ["completed"] * 3,
              "thread/read shows the three turns: %s" % [t["status"] for t in read["turns"]])
        listed = p.call("thread/list", {})["result"]["data"]
        check([t["id"] for t in listed] == [thread], "thread/list lists it")
    check(p.stop() == 0, "parley exits 0")
    missing = store("export", "--thread", "019a0000-0000-7000-8000-000000000000",
                    "--out", os.path.join(root, "x.jsonl"), "--store-url=" + second)
    check(missing.returncode == 1 and "no thread" in missing.stderr, "an unknown thread: " + missing.stderr)


if __name__ == "__main__":
    sys.exit(main())
