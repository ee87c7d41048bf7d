#!/usr/bin/env python3
"""The README's tables of client methods and server requests against the
Codex 0.169 schema and the real `parley app-server` (issue 29).

- Every method of ClientRequest.json and ServerRequest.json has exactly one
  row, and no row names a method the schema lacks.
- Each client method answers as its row says: `not offered` answers -32002
  with a message that names the method and says why; `planned` answers
  -32601 (method not found); `supported` answers anything but those two.
  Sent with empty params after initialize: what is asked is the dispatch,
  not the method's own checks.

Usage: method_table_test.py PARLEY_BINARY SCHEMA_DIR README
"""
import json
import os
import re
import subprocess
import sys
import tempfile

BINARY, SCHEMA_DIR, README = sys.argv[1:4]
NOT_OFFERED, NOT_FOUND = -32002, -32601


def schema_methods(name):
    path = os.path.join(SCHEMA_DIR, name)
    with open(path) as f:
        return [v["properties"]["method"]["enum"][0] for v in json.load(f)["oneOf"]]


def readme_rows(header):
    """method -> status from the table whose header starts with `header`."""
    with open(README) as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("| " + header))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        method = cells[0].strip("`")
        if method in rows:
            print("FAIL duplicate row", method)
            sys.exit(1)
        rows[method] = cells[1]
    return rows


def main():
    if not os.path.exists(os.path.join(SCHEMA_DIR, "ClientRequest.json")):
        print("SKIPPED: no Codex schema at", SCHEMA_DIR)
        return 77
    failures = []
    client, server = schema_methods("ClientRequest.json"), schema_methods("ServerRequest.json")
    for title, methods in (("client method", client), ("server request", server)):
        rows = readme_rows(title)
        if sorted(rows) != sorted(methods):
            failures.append("%s table: missing %s, extra %s" % (
                title, sorted(set(methods) - set(rows)), sorted(set(rows) - set(methods))))
        bad = {m: s for m, s in rows.items()
               if s not in ("supported", "not offered", "planned (#29)", "planned (#30)")}
        if bad:
            failures.append("%s table: unknown statuses %s" % (title, bad))
    rows = readme_rows("client method")
    print("client methods: %d (%s)" % (len(client), ", ".join(
        "%d %s" % (list(rows.values()).count(s), s) for s in sorted(set(rows.values())))))

    home = tempfile.mkdtemp(prefix="parley-methods-")
    proc = subprocess.Popen([BINARY, "app-server", "--store=memory", "--home", home,
                             "--log-level=warn"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, bufsize=1)
    lines = [json.dumps({"id": 0, "method": "initialize",
                         "params": {"clientInfo": {"name": "methods", "version": "1"}}})]
    asked = [m for m in client if m != "initialize"]
    for i, m in enumerate(asked, 1):
        lines.append(json.dumps({"id": i, "method": m, "params": {}}))
    out, _ = proc.communicate("\n".join(lines) + "\n", timeout=120)
    replies = {}
    for line in out.splitlines():
        m = json.loads(line)
        if "id" in m and "method" not in m:
            replies[m["id"]] = m
    for i, method in enumerate(asked, 1):
        reply = replies.get(i)
        status = rows.get(method)
        if reply is None:
            failures.append("%s: no reply" % method)
            continue
        code = (reply.get("error") or {}).get("code")
        message = (reply.get("error") or {}).get("message", "")
        if status == "not offered":
            if code != NOT_OFFERED or ("`%s` is not offered by parley: " % method) not in message:
                failures.append("%s: not offered, but answered %s" % (method, reply))
        elif status and status.startswith("planned"):
            if code != NOT_FOUND:
                failures.append("%s: planned (method not found), but answered %s" % (method, reply))
        elif status == "supported":
            if code in (NOT_FOUND, NOT_OFFERED):
                failures.append("%s: supported, but answered %s" % (method, reply))
    if proc.returncode != 0:
        failures.append("exit code %d" % proc.returncode)
    for f in failures:
        print("FAIL", f)
    print("%d methods asked, %d failures" % (len(asked), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
