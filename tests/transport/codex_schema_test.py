#!/usr/bin/env python3
"""The Codex-schema checker the Python suites share (codex_schema.py),
against the real Codex 0.169 bundle: valid lines of every kind pass, and a
line wrong in each way (a notification, a server request, a mapped reply,
an error, not JSON, none of the kinds) fails, as does a reply the suite
wanted and never saw. Without the bundle the checker checks nothing, and
says so.

Usage: codex_schema_test.py SCHEMA_DIR   (exit 77: no bundle there)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import codex_schema  # noqa: E402

SCHEMA_DIR = sys.argv[1]
FAILURES = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


RESPONSES = {"thread/delete": "v2/ThreadDeleteResponse", "thread/start": "v2/ThreadStartResponse"}
METHODS = {1: "thread/delete", 2: "thread/start", 3: "thread/archive"}

GOOD = [
    '{"method":"thread/closed","params":{"threadId":"t"}}',
    '{"method":"serverRequest/resolved","params":{"threadId":"t","requestId":3}}',
    '{"id":0,"method":"item/tool/call","params":{"threadId":"t","turnId":"u","callId":"c",'
    '"tool":"lookup","arguments":{}}}',
    '{"id":1,"result":{}}',                              # thread/delete: in the map
    '{"id":3,"result":{"anything":1}}',                  # thread/archive: not in the map
    '{"id":4,"error":{"code":-32600,"message":"no"}}',
]

BAD = {
    "a notification without its params' fields": '{"method":"thread/closed","params":{}}',
    "a notification Codex does not have": '{"method":"thread/nope","params":{"threadId":"t"}}',
    "a server request without its params' fields": '{"id":0,"method":"item/tool/call","params":{}}',
    "a server request whose id is no RequestId": '{"id":[1],"method":"item/tool/call","params":'
    '{"threadId":"t","turnId":"u","callId":"c","tool":"lookup","arguments":{}}}',
    "a mapped reply of the wrong shape": '{"id":2,"result":{}}',
    "an error whose code is a string": '{"id":4,"error":{"code":"x","message":"no"}}',
    "an error without its message": '{"id":4,"error":{"code":-32600}}',
    "not JSON": '{"method":',
    "not an object": '[1, 2]',
    "none of the kinds": '{"id":5}',
}


def main():
    if not os.path.exists(os.path.join(SCHEMA_DIR, codex_schema.BUNDLE)):
        print("SKIPPED: no Codex schema at", SCHEMA_DIR)
        return 77
    schema = codex_schema.Schema(SCHEMA_DIR, RESPONSES)
    for line in GOOD:
        check(schema.line_problems(line, METHODS) == [], "valid: %s" % line)
    for what, line in BAD.items():
        problems = schema.line_problems(line, METHODS)
        check(problems != [], "%s fails: %s" % (what, problems))

    bad, replied = schema.problems(GOOD, METHODS)
    check(bad == [] and replied == {"thread/delete"},
          "problems(): none, and the mapped replies seen: %s %s" % (bad, replied))
    said = []
    into = lambda cond, what: said.append((cond, what)) or cond  # noqa: E731
    check(schema.check(into, lines=GOOD, methods=METHODS) is True and said[-1][0],
          "check(): every line valid passes: %s" % said[-1:])
    check(schema.check(into, lines=GOOD, methods=METHODS, all_replies=True) is False
          and "missing ['thread/start']" in said[-1][1],
          "check(all_replies=True): a reply never seen fails, named: %s" % said[-1][1])
    check(schema.check(into, lines=GOOD + [BAD["none of the kinds"]], methods=METHODS) is False
          and '{"id":5}' in said[-1][1], "check(): one wrong line fails, quoted: %s" % said[-1][1])

    class Peer:
        lines, methods = GOOD, METHODS
    check(schema.check(into, Peer(), "peer") is True and said[-1][1].startswith("peer: 6 lines"),
          "check(peer): its lines and methods: %s" % said[-1][1])

    try:
        codex_schema.Schema(SCHEMA_DIR, {"thread/start": "v2/NoSuchResponse"})
        check(False, "a map naming a definition the bundle lacks is refused")
    except KeyError as e:
        check(True, "a map naming a definition the bundle lacks is refused: %s" % e)

    none = codex_schema.Schema(os.path.join(SCHEMA_DIR, "nowhere"), RESPONSES)
    said.clear()
    check(not none.available and none.check(into, lines=BAD.values(), methods={}) is True
          and said == [], "without the bundle nothing is checked (and nothing reported)")
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
