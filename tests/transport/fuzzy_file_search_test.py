#!/usr/bin/env python3
"""fuzzyFileSearch (issue 29) through the real `parley app-server` on stdio,
on real trees: ranking, .gitignore in a git repository (nested, negated, above the root, and
.ignore), hidden files and node_modules, the 50-match cap and its order,
cancellation by cancellationToken, confinement (roots outside what the
connection may see, parley's home, symbolic links out), malformed params;
every answer validated against Codex 0.169's schema. Where the real Codex
0.169 runs (npx), the same queries go to both servers on the same tree and
the answers must be identical.

Usage: fuzzy_file_search_test.py PARLEY_BINARY SCHEMA_DIR
"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402
from app_server_peer import StdioPeer  # noqa: E402

BINARY = os.path.abspath(sys.argv[1])
SCHEMA_DIR = sys.argv[2] if len(sys.argv) > 2 else ""
failures = []
VALIDATOR = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def load_schema():
    path = os.path.join(SCHEMA_DIR, "FuzzyFileSearchResponse.json")
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is None or not os.path.exists(path):
        print("NOTE: schema validation skipped (no schema at %r or no python3-jsonschema)" % path)
        return
    with open(path) as f:
        VALIDATOR.append(jsonschema.Draft7Validator(json.load(f)))


def validate(result):
    if not VALIDATOR:
        return
    errors = list(VALIDATOR[0].iter_errors(result))
    if errors:
        check(False, "schema: FuzzyFileSearchResponse %s" % errors[0].message[:200])


def make(base, paths):
    for p in paths:
        full = os.path.join(base, p)
        if p.endswith("/"):
            os.makedirs(full, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write("x")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Server:
    def __init__(self, args, env, log, name="fuzzy-test"):
        self.peer = StdioPeer(args, env, log, client_name=name)

    def search(self, query, roots, **extra):
        r = self.peer.call("fuzzyFileSearch", dict({"query": query, "roots": roots}, **extra),
                           timeout=60)
        if "result" in r:
            validate(r["result"])
        return r

    def files(self, query, roots, **extra):
        r = self.search(query, roots, **extra)
        check("result" in r, "%r: answered (%s)" % (query, r.get("error", {}).get("message", "ok")))
        return r.get("result", {}).get("files", [])

    def stop(self):
        return self.peer.stop()


def parley(root, cwd, home):
    return Server([BINARY, "app-server", "--store=memory", "--home", home, "--cwd", cwd,
                   "--log-level=warn"], dict(os.environ), os.path.join(root, "parley.log"))


def paths(files):
    return [f["path"] for f in files]


# -- the tree both servers see ------------------------------------------------

SHARED = [".git/", "src/main.rs", "src/lib.rs", "src/util/mod.rs", "README.md", ".hidden/secret.txt",
          ".env", "node_modules/pkg/index.js", "build/out.o", "ignored.log", "keep.log",
          "docs/main_guide.md", "sub/a.txt", "sub/b.tmp", "sub/x/deep.md", "sub/y/deep.md",
          "emptydir/", "Main.java", "mainframe/x.c", "Makefile", "makefile.am", "m_n.rs",
          "gen/a/z.txt", "gen/keep/z.txt", "docs/API Guide.md", "CamelCase.txt", "a1b2.txt"]
QUERIES = ["main", "mod", "secret", "index", "out", "log", "tmp", "a", "sub", "emptydir", "src",
           "MAIN", "m r", "makefile", "mn", "deep", "z.txt", "^mai", "main$", "'ain", "mai n",
           "api g", "cc", "ab", "x", "srcmain", "dmd", "utilmod", "u/m", "md !docs", "ccase",
           "a1", "b2t", "gdmd", "readme.md", "'.md$", "^src/ .rs$", "e", ""]


def build_shared(tree):
    make(tree, SHARED)
    write(os.path.join(tree, ".gitignore"), "build/\n*.log\n!keep.log\n# a comment\n/gen/*\n!/gen/keep/\n")
    write(os.path.join(tree, "sub/.gitignore"), "*.tmp\n/y/\n")


def test_ranking_and_ignores(s, tree):
    got = s.files("main", [tree])
    check(paths(got) == ["Main.java", "docs/main_guide.md", "src/main.rs", "mainframe",
                         "mainframe/x.c"],
          "main: name matches first, then by path (%s)" % paths(got))
    check([f["score"] for f in got] == [65645, 65645, 65645, 109, 109], "main: Codex's scores")
    check(got[0]["indices"] == [0, 1, 2, 3] and got[2]["indices"] == [4, 5, 6, 7],
          "main: indices are positions in the path")
    check(got[3]["match_type"] == "directory" and got[0]["match_type"] == "file",
          "directories are listed as such")
    check(all(f["root"] == tree and f["file_name"] == f["path"].rsplit("/", 1)[-1] for f in got),
          "root as given, file_name the last component")
    check(paths(s.files("makefile", [tree]))[0] == "Makefile", "an exact name ranks first")
    sub = s.files("sub", [tree])
    check(sub[0]["path"] == "sub" and sub[0]["score"] == 131156, "a directory named so: 2 tiers")
    # .gitignore: a directory, a glob, a negation, anchored patterns, nested files.
    check(s.files("out", [tree]) == [], ".gitignore: build/ is not walked")
    check(paths(s.files("log", [tree])) == ["keep.log"], ".gitignore: *.log with !keep.log")
    check(s.files("tmp", [tree]) == [], "nested .gitignore: sub/*.tmp")
    deep = paths(s.files("deep", [tree]))
    check("sub/x/deep.md" in deep and "sub/y/deep.md" not in deep,
          "nested .gitignore: anchored /y/ (%s)" % deep)
    check(paths(s.files("z.txt", [tree])) == ["gen/keep/z.txt"],
          ".gitignore: /gen/* with !/gen/keep/")
    # Hidden entries and node_modules are searched.
    check(paths(s.files("secret", [tree])) == [".hidden/secret.txt"], "hidden files are searched")
    check(paths(s.files("index", [tree])) == ["node_modules/pkg/index.js"],
          "node_modules is searched")
    check(s.files("", [tree]) == [], "an empty query finds nothing")
    check(s.files("   ", [tree]) == [], "a blank query finds nothing")


def test_ignore_files(s, work):
    # A .gitignore above the root still counts (Codex reads its parents'),
    # and .ignore too, in a git repository whose root is above the search's.
    outer = os.path.join(work, "outer")
    make(outer, [".git/", "proj/skipme.txt", "proj/keep.txt", "proj/hid.bak",
                 "proj/dir/inside_only.txt"])
    write(os.path.join(outer, ".gitignore"), "skipme*\nproj/dir/\n")
    write(os.path.join(outer, "proj/.ignore"), "*.bak\n")
    root = os.path.join(outer, "proj")
    check(s.files("skipme", [root]) == [], "a parent's .gitignore applies beneath the root")
    got = paths(s.files("inside_only", [root]))
    check(got == [], "a parent's anchored rule applies too (%s)" % got)
    check(s.files("bak", [root]) == [], ".ignore is honoured")
    check(paths(s.files("keep", [root])) == ["keep.txt"], "what no rule ignores is found")
    # Outside any git repository a .gitignore means nothing (Codex's walker
    # is ripgrep's, which requires git for it); .ignore still counts.
    make(work, ["nogit/skipme.txt", "nogit/hid.bak", "nogit/keep.txt"])
    write(os.path.join(work, "nogit/.gitignore"), "skipme*\n")
    write(os.path.join(work, "nogit/.ignore"), "*.bak\n")
    nogit = os.path.join(work, "nogit")
    check(paths(s.files("skipme", [nogit])) == ["skipme.txt"],
          "no git repository: .gitignore is not in force")
    check(s.files("bak", [nogit]) == [], "no git repository: .ignore still is")
    # A .gitignore that is a symlink to a file outside is not read through.
    os.makedirs(os.path.join(work, "linkign/.git"))
    make(work, ["linkign/a.secretext"])
    os.symlink("/etc/hostname", os.path.join(work, "linkign/.gitignore"))
    check(paths(s.files("secretext", [os.path.join(work, "linkign")])) == ["a.secretext"],
          "a symlinked .gitignore is not followed")


def test_cap_and_order(s, work):
    big = os.path.join(work, "big")
    for i in range(300):
        make(big, ["d%02d/file_%03d.txt" % (i % 17, i)])
    got = s.files("file", [big])
    check(len(got) == 50, "at most 50 matches (%d)" % len(got))
    keyed = [(-f["score"], f["path"]) for f in got]
    check(keyed == sorted(keyed), "sorted by score, then path")
    everything = sorted("d%02d/file_%03d.txt" % (i % 17, i) for i in range(300))
    check(paths(got) == everything[:50], "ties cut at the 50 first paths (deterministic)")


def test_cancellation(s, work):
    many = os.path.join(work, "many")
    for d in range(200):
        os.makedirs(os.path.join(many, "d%03d" % d))
        for f in range(100):
            open(os.path.join(many, "d%03d" % d, "f%03d.txt" % f), "w").close()
    peer = s.peer
    # Both in one write: the second is read while the first still walks.
    first, second = peer.next_id + 1, peer.next_id + 2
    peer.next_id += 2
    peer.proc.stdin.write(json.dumps({"id": first, "method": "fuzzyFileSearch", "params": {
        "query": "f0", "roots": [many], "cancellationToken": "tok"}}) + "\n" + json.dumps({
            "id": second, "method": "fuzzyFileSearch", "params": {
                "query": "d199", "roots": [many], "cancellationToken": "tok"}}) + "\n")
    peer.proc.stdin.flush()
    a = peer.reply_to(first, 60)
    b = peer.reply_to(second, 60)
    validate(a.get("result", {}))
    check(a.get("result") == {"files": []}, "the cancelled search answers an empty list")
    check(len(b.get("result", {}).get("files", [])) == 50, "the newer search answers in full")
    check(a["_at"] <= b["_at"], "the cancelled one answers first")
    # Other tokens, or none, cancel nothing.
    ids = [peer.send("fuzzyFileSearch", {"query": "f0", "roots": [many], "cancellationToken": t})
           for t in ("one", "two", None)]
    replies = [peer.reply_to(i, 60) for i in ids]
    check(all(len(r.get("result", {}).get("files", [])) == 50 for r in replies),
          "different tokens do not cancel each other")
    # The token is free again once its search answered.
    check(len(s.files("f0", [many], cancellationToken="tok")) == 50, "a used token can be reused")


def test_confinement(s, work, home, outside):
    make(outside, ["outside_secret.txt", "dir/deep_secret.txt"])
    r = s.search("secret", [outside])
    err = r.get("error") or {}
    check(err.get("code") == -32600 and "outside the roots" in err.get("message", ""),
          "a root outside the connection's roots is refused (%s)" % err.get("message"))
    r = s.search("secret", [work, outside])
    check((r.get("error") or {}).get("code") == -32600, "one root outside fails the request")
    r = s.search("x", ["/"])
    check((r.get("error") or {}).get("code") == -32600, "/ is refused")
    r = s.search("config", [home])
    check("parley's home" in (r.get("error") or {}).get("message", ""), "parley's home is refused")
    check(s.files("x", ["relative/dir"]) == [], "a relative root finds nothing (as in Codex)")
    check(s.files("x", [os.path.join(work, "nope")]) == [], "a missing root finds nothing")
    check(s.files("x", []) == [], "no roots: nothing")
    # Symbolic links are listed, never followed.
    links = os.path.join(work, "links")
    make(links, ["real/inside.txt"])
    os.symlink(outside, os.path.join(links, "outlink"))
    os.symlink(os.path.join(links, "real"), os.path.join(links, "inlink"))
    got = s.files("secret", [links])
    check(got == [], "a symlinked directory out of the root is not followed (%s)" % paths(got))
    got = s.files("outlink", [links])
    check(paths(got) == ["outlink"] and got[0]["match_type"] == "file",
          "a symlink is listed by its own name, as a file")
    check(paths(s.files("inside", [links])) == ["real/inside.txt"],
          "a symlink inside is not followed either: each file once")
    # A root that is itself a symlink out of the roots is refused.
    os.symlink(outside, os.path.join(work, "rootlink"))
    r = s.search("secret", [os.path.join(work, "rootlink")])
    check((r.get("error") or {}).get("code") == -32600, "a root that links out is refused")
    # The home inside a root is skipped by the walk.


def test_home_inside_root(root):
    work = os.path.join(root, "wide")
    home = os.path.join(work, "parley-home")
    make(work, ["visible_config.txt"])
    os.makedirs(home)
    s = parley(root, work, home)
    try:
        make(home, ["home_config.txt"])
        got = paths(s.files("config", [work]))
        check(got == ["visible_config.txt"], "parley's home inside a root is not walked (%s)" % got)
    finally:
        s.stop()


def test_multiple_roots(s, work):
    multi = os.path.join(work, "multi")
    make(multi, ["a/one_x.txt", "b/two_x.txt", "top_x.txt"])
    a, b = os.path.join(multi, "a"), os.path.join(multi, "b")
    got = s.files("x.txt", [a, b])
    check(sorted((f["root"], f["path"]) for f in got) == [(a, "one_x.txt"), (b, "two_x.txt")],
          "each match names its root")
    got = s.files("x.txt", [multi, a, multi])
    pairs = sorted((f["root"], f["path"]) for f in got)
    check(pairs == sorted([(a, "one_x.txt"), (multi, "b/two_x.txt"), (multi, "top_x.txt")]),
          "nested or repeated roots: each file once, under its deepest root (%s)" % pairs)


def test_malformed(s, tree):
    cases = [({}, "Invalid request: missing field `query`"),
             ({"query": "x"}, "Invalid request: missing field `roots`"),
             ({"query": 1, "roots": []}, "Invalid request: invalid type: integer `1`, expected a string"),
             ({"query": "x", "roots": "a"},
              'Invalid request: invalid type: string "a", expected a sequence'),
             ({"query": "x", "roots": [1]},
              "Invalid request: invalid type: integer `1`, expected a string"),
             ({"query": "x", "roots": [], "cancellationToken": 5},
              "Invalid request: invalid type: integer `5`, expected a string")]
    for params, message in cases:
        r = s.peer.call("fuzzyFileSearch", params)
        err = r.get("error") or {}
        check(err.get("code") == -32600 and err.get("message") == message,
              "malformed %s: %s" % (json.dumps(params), err.get("message")))
    r = s.search("main", [tree], extra=1)
    check("result" in r, "an unknown field is ignored (as in Codex)")
    s.peer.write({"id": 9999, "method": "fuzzyFileSearch"})
    r = s.peer.reply_to(9999)
    check((r.get("error") or {}).get("message") == "Invalid request: missing field `params`",
          "no params: -32600")


class ExperimentalPeer(StdioPeer):
    """A client that initializes with capabilities.experimentalApi."""

    def __init__(self, args, env, stderr_path):
        import queue
        import subprocess
        import threading
        self.stderr_path = stderr_path
        self.stderr = open(stderr_path, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, env=env, bufsize=1)
        self.inbox, self.kept, self.lines, self.methods = queue.Queue(), [], [], {}
        self.next_id, self.lock = 0, threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.call("initialize", {"clientInfo": {"name": "fuzzy-exp", "version": "1"},
                                 "capabilities": {"experimentalApi": True}}, timeout=60)
        self.notify("initialized")


def session_validator(name):
    path = os.path.join(SCHEMA_DIR, name + ".json")
    try:
        import jsonschema
        with open(path) as f:
            return jsonschema.Draft7Validator(json.load(f))
    except (ImportError, OSError):
        return None


def test_sessions(root, s, work, tree, outside):
    r = s.peer.call("fuzzyFileSearch/sessionStart", {"sessionId": "s", "roots": [tree]})
    check((r.get("error") or {}).get("message")
          == "fuzzyFileSearch/sessionStart requires experimentalApi capability",
          "sessions need experimentalApi (%s)" % r.get("error"))
    home = os.path.join(root, "exp-home")
    os.makedirs(home)
    peer = ExperimentalPeer([BINARY, "app-server", "--store=memory", "--home", home, "--cwd",
                             work, "--log-level=warn"], dict(os.environ),
                            os.path.join(root, "exp.log"))
    updated = session_validator("FuzzyFileSearchSessionUpdatedNotification")
    completed = session_validator("FuzzyFileSearchSessionCompletedNotification")

    def notes(session):
        u = peer.wait(lambda m: m.get("method") == "fuzzyFileSearch/sessionUpdated"
                      and m["params"]["sessionId"] == session, 30)
        c = peer.wait(lambda m: m.get("method") == "fuzzyFileSearch/sessionCompleted"
                      and m["params"]["sessionId"] == session, 30)
        for v, m in ((updated, u), (completed, c)):
            if v is not None:
                errors = list(v.iter_errors(m["params"]))
                check(not errors, "schema: %s %s" % (m["method"], errors[0].message if errors else ""))
        return u["params"]

    try:
        r = peer.call("fuzzyFileSearch/sessionUpdate", {"sessionId": "nope", "query": "x"})
        check((r.get("error") or {}).get("message") == "fuzzy file search session not found: nope",
              "update of an unknown session: -32600")
        check(peer.call("fuzzyFileSearch/sessionStop", {"sessionId": "nope"}).get("result") == {},
              "stop of an unknown session: {}")
        check(peer.call("fuzzyFileSearch/sessionStart", {"sessionId": "s1", "roots": [tree]})
              .get("result") == {}, "sessionStart: {}")
        first = notes("s1")
        check(first == {"sessionId": "s1", "query": "", "files": []},
              "a started session reports the empty query (%s)" % first)
        check(peer.call("fuzzyFileSearch/sessionUpdate", {"sessionId": "s1", "query": "main"})
              .get("result") == {}, "sessionUpdate: {}")
        got = notes("s1")
        direct = s.files("main", [tree])
        check(got["query"] == "main" and got["files"] == direct,
              "an update reports what fuzzyFileSearch finds")
        # Two updates at once: the last one is reported last.
        peer.send("fuzzyFileSearch/sessionUpdate", {"sessionId": "s1", "query": "m"})
        peer.send("fuzzyFileSearch/sessionUpdate", {"sessionId": "s1", "query": "mod"})
        last = notes("s1")
        if last["query"] == "m":
            last = notes("s1")
        check(last["query"] == "mod" and paths(last["files"])[0] == "src/util/mod.rs",
              "the latest query is reported")
        check(peer.call("fuzzyFileSearch/sessionStop", {"sessionId": "s1"}).get("result") == {},
              "sessionStop: {}")
        r = peer.call("fuzzyFileSearch/sessionUpdate", {"sessionId": "s1", "query": "x"})
        check("not found" in (r.get("error") or {}).get("message", ""), "a stopped session is gone")
        r = peer.call("fuzzyFileSearch/sessionStart", {"sessionId": "s2", "roots": []})
        check(r.get("error") == {"code": -32603, "message": "failed to start fuzzy file search "
                                 "session: at least one search directory is required"},
              "no roots: -32603 as in Codex")
        r = peer.call("fuzzyFileSearch/sessionStart", {"sessionId": "s3", "roots": [outside]})
        check((r.get("error") or {}).get("code") == -32600, "a root outside is refused")
        r = peer.call("fuzzyFileSearch/sessionStart", {"sessionId": "s4"})
        check((r.get("error") or {}).get("message") == "Invalid request: missing field `roots`",
              "malformed sessionStart")
    finally:
        peer.stop()


def test_against_codex(root, tree, parley_server):
    why = app_server_peer.codex_unavailable()
    if why:
        print("NOTE: no comparison with Codex:", why)
        return
    home = os.path.join(root, "codex-home")
    os.makedirs(home)
    env = dict(os.environ, CODEX_HOME=home, HOME=os.path.join(root, "codex-user"))
    env.pop("OPENAI_API_KEY", None)
    codex = Server(app_server_peer.CODEX + ["app-server"], env, os.path.join(root, "codex.log"))
    try:
        for q in QUERIES:
            ours = parley_server.search(q, [tree]).get("result")
            theirs = codex.search(q, [tree]).get("result")
            check(ours == theirs, "same answer as Codex for %r%s" % (
                q, "" if ours == theirs else ": parley %s / Codex %s" % (
                    json.dumps(ours)[:600], json.dumps(theirs)[:600])))
        for params in ({}, {"query": "x"}, {"query": 1, "roots": []},
                       {"query": "x", "roots": "a"}, {"query": "x", "roots": [], "cancellationToken": 5}):
            ours = parley_server.peer.call("fuzzyFileSearch", params).get("error")
            theirs = codex.peer.call("fuzzyFileSearch", params).get("error")
            check(ours == theirs, "same error as Codex for %s (%s)" % (json.dumps(params), ours))
    finally:
        codex.stop()


def main():
    load_schema()
    root = tempfile.mkdtemp(prefix="parley-fuzzy-")
    try:
        work = os.path.join(root, "work")
        home = os.path.join(root, "home")
        outside = os.path.join(root, "outside")
        for d in (work, home, outside):
            os.makedirs(d)
        tree = os.path.join(work, "tree")
        build_shared(tree)
        s = parley(root, work, home)
        try:
            test_ranking_and_ignores(s, tree)
            test_ignore_files(s, work)
            test_cap_and_order(s, work)
            test_cancellation(s, work)
            test_confinement(s, work, home, outside)
            test_multiple_roots(s, work)
            test_malformed(s, tree)
            test_sessions(root, s, work, tree, outside)
            test_against_codex(root, tree, s)
        finally:
            code = s.stop()
            check(code == 0, "parley exits cleanly (%s)" % code)
        test_home_inside_root(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if failures:
        print("%d FAILED" % len(failures))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
