#!/usr/bin/env python3
"""Fills a PostgreSQL store with N threads directly, fast (issue 28): COPY
into parley's tables, no server writing them turn by turn.

The same threads as store_gen.py writes for the local store (its copies():
ids, creation times one every --step seconds, cwds, model providers, first
messages, the archived fraction), from a template written by parley itself:
one thread with one short turn (`say: hello bench`) on the PostgreSQL store,
its `threads` row and its `thread_lines` rows read back, made tokens (as
store_gen tokenizes a rollout), the template thread deleted. Then a COPY of
N rows into `threads` and one of N x (lines per thread) into
`thread_lines`, and VACUUM ANALYZE (what autovacuum would have done).

The database must exist; it is migrated first (`parley store migrate`).

  pg_store_gen.py --binary PARLEY --url postgresql://... --threads N
                  [--cwds 20] [--step 30] [--archived 0.05]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import store_gen  # noqa: E402

PSQL = os.path.join(os.environ.get("PARLEY_PG_BIN", "/usr/lib/postgresql/15/bin"), "psql")

THREAD_COLUMNS = ("id, cwd, preview, name, source, model_provider, model, forked_from, created_at,"
                  " updated_at, archived, listed, pending, deadline_ms")
LINE_COLUMNS = "thread_id, seq, kind, turn_id, line"


def psql(url, sql, stdin=None):
    r = subprocess.run([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                       input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("psql failed: %s" % r.stderr)
    return r.stdout


def write_template_thread(binary, url):
    """One thread with one turn, written by parley on the PostgreSQL store."""
    work = tempfile.mkdtemp(prefix="pg-store-gen-")
    proc = subprocess.Popen([binary, "app-server", "--store=postgres", "--store-url=" + url,
                             "--cwd=" + work, "--log-level=warn"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(msg):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def wait(pred):
        for line in proc.stdout:
            m = json.loads(line)
            if pred(m):
                return m
        raise RuntimeError("the server closed its output")

    send({"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "gen", "version": "1"}}})
    wait(lambda m: m.get("id") == 0)
    send({"method": "initialized"})
    send({"id": 1, "method": "thread/start", "params": {}})
    tid = wait(lambda m: m.get("id") == 1)["result"]["thread"]["id"]
    send({"id": 2, "method": "turn/start", "params": {
        "threadId": tid, "input": [{"type": "text", "text": "say: hello bench"}]}})
    wait(lambda m: m.get("method") == "turn/completed")
    proc.stdin.close()
    proc.wait(timeout=30)
    os.rmdir(work)
    return tid


def copy_field(v):
    """A value in COPY's text format."""
    if v is None:
        return r"\N"
    if isinstance(v, bool):
        return "t" if v else "f"
    s = v if isinstance(v, str) else str(v)
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def read_template(url, tid):
    """The template thread's row and lines as COPY text with tokens, then
    the thread deleted: (row template, lines template, lines per thread)."""
    row = json.loads(psql(url, "SELECT row_to_json(t) FROM (SELECT %s FROM threads WHERE id = '%s') t"
                          % (THREAD_COLUMNS, tid)))
    lines = [json.loads(l) for l in psql(
        url, "SELECT json_build_object('seq', seq, 'kind', kind, 'turn_id', turn_id, 'line', line)"
             " FROM thread_lines WHERE thread_id = '%s' ORDER BY seq" % tid).splitlines()]
    psql(url, "DELETE FROM threads WHERE id = '%s'" % tid)
    walk = store_gen.token_walker(lines[0]["line"]["payload"])
    cols = [c.strip() for c in THREAD_COLUMNS.split(",")]
    fields = []
    for c in cols:
        v = row[c]
        if c == "archived":
            fields.append("@@ARCH@@")
        elif c in ("created_at", "updated_at"):
            fields.append(store_gen.tokenized_json(walk(v)))
        else:
            fields.append(copy_field(walk(v)))
    row_text = "\t".join(fields) + "\n"
    line_rows = []
    for l in lines:
        line_rows.append("\t".join([
            "@@ID@@", str(l["seq"]), copy_field(l["kind"]), copy_field(walk(l["turn_id"])),
            copy_field(store_gen.tokenized_json(walk(l["line"])))]))
    return row_text, "\n".join(line_rows) + "\n", len(lines)


def copy_into(url, table, columns, chunks):
    """COPY `table` FROM STDIN, fed from the `chunks` iterator."""
    proc = subprocess.Popen([PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c",
                             "COPY %s (%s) FROM STDIN" % (table, columns)],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    buf = []
    for c in chunks:
        buf.append(c)
        if len(buf) >= 2000:
            proc.stdin.write("".join(buf))
            buf = []
    proc.stdin.write("".join(buf))
    proc.stdin.close()
    err = proc.stderr.read()
    if proc.wait() != 0:
        raise RuntimeError("COPY %s failed: %s" % (table, err))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--cwds", type=int, default=20)
    ap.add_argument("--step", type=int, default=30)
    ap.add_argument("--archived", type=float, default=0.05)
    a = ap.parse_args()
    subprocess.run([a.binary, "store", "migrate", "--store-url=" + a.url], check=True,
                   capture_output=True)
    tid = write_template_thread(a.binary, a.url)
    row_t, lines_t, per_thread = read_template(a.url, tid)

    def rows(template, with_archived):
        for i, created, vals, archived in store_gen.copies(a.threads, a.cwds, a.step, a.archived):
            if with_archived:
                vals = dict(vals, ARCH="t" if archived else "f")
            yield store_gen.substitute(template, created, vals)
            if i and i % 100000 == 0:
                print("pg_store_gen: %d threads" % i, file=sys.stderr, flush=True)

    t0 = time.monotonic()
    copy_into(a.url, "threads", THREAD_COLUMNS, rows(row_t, True))
    t1 = time.monotonic()
    print("pg_store_gen: %d threads rows in %.1f s" % (a.threads, t1 - t0), file=sys.stderr)
    copy_into(a.url, "thread_lines", LINE_COLUMNS, rows(lines_t, False))
    t2 = time.monotonic()
    print("pg_store_gen: %d thread_lines rows in %.1f s" % (a.threads * per_thread, t2 - t1),
          file=sys.stderr)
    psql(a.url, "VACUUM ANALYZE threads")
    psql(a.url, "VACUUM ANALYZE thread_lines")
    print("pg_store_gen: vacuumed in %.1f s; database %s" % (
        time.monotonic() - t2, psql(a.url, "SELECT pg_size_pretty(pg_database_size(current_database()))")
        .strip()), file=sys.stderr)


if __name__ == "__main__":
    main()
