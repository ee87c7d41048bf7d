#!/usr/bin/env python3
"""A restart of the local store reads what changed, not what exists (issue 28).

The real binary on a real home (rollouts, SQLite index, journals); the start's
log line `thread_index event=synced ... reread=R journaled=J full=F` says how
many rollouts the index read again:
  * a new home: a rebuild of nothing;
  * after an orderly stop (input closed) that followed turns: none;
  * after SIGTERM with turns just done: none;
  * after kill -9 while turns run on K threads: no more than those K, and
    the list then agrees with every thread's rollout (preview, updatedAt);
  * with the index deleted: every rollout, behind the lists (a list answers
    while it runs), and the same threads listed after it;
  * an index from before the search table (schema 5) keeps its rows (no
    rollout read), fills the table behind the lists (logged), and a
    searchTerm then lists what the scan listed, page after page;
  * an index of schema 6 (its search table keyed by rowid) keeps its rows,
    drops that table and fills the new one (keyed by the list's order)
    behind the lists, and lists the same again.
Exit 0 when every check held.
  store_restart_test.py --binary PARLEY --work DIR
"""
import argparse
import json
import os
import queue
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time

TIMEOUT = 30.0
THREADS = 24  # threads with a turn each
BUSY = 6      # of them, with turns running when the server is killed


class Failure(Exception):
    pass


class Server:
    def __init__(self, binary, home, log):
        self.log = log
        self.proc = subprocess.Popen(
            [binary, "app-server", "--store=local", "--home=" + home, "--log-level=info"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log, "wb"))
        self.lines = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()
        self.call("initialize", {"clientInfo": {"name": "t", "version": "1"}})
        self.notify("initialized")

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def notify(self, method):
        self.proc.stdin.write((json.dumps({"method": method}) + "\n").encode())
        self.proc.stdin.flush()

    def send(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.proc.stdin.write((json.dumps({"id": rid, "method": method, "params": params})
                               + "\n").encode())
        self.proc.stdin.flush()
        return rid

    def next(self):
        try:
            m = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            raise Failure("no message for %.0f s" % TIMEOUT)
        if m is None:
            raise Failure("the server closed its output")
        return m

    def call(self, method, params, on_other=None):
        rid = self.send(method, params)
        while True:
            m = self.next()
            if m.get("id") == rid and "method" not in m:
                if "error" in m:
                    raise Failure("%s: %s" % (method, m["error"]))
                return m["result"]
            if on_other:
                on_other(m)

    def turn(self, thread, text):
        self.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": text}]})
        while True:
            m = self.next()
            if m.get("method") == "turn/completed" and m["params"]["threadId"] == thread:
                return

    def list_all(self, limit=50, **extra):
        out, cursor = {}, None
        while True:
            p = dict(extra, limit=limit)
            if cursor:
                p["cursor"] = cursor
            r = self.call("thread/list", p)
            for t in r["data"]:
                out[t["id"]] = t
            cursor = r.get("nextCursor")
            if not cursor:
                return out

    def close(self):
        self.proc.stdin.close()
        if self.proc.wait(timeout=60) != 0:
            raise Failure("the server exited %d" % self.proc.returncode)

    def term(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def synced(log, full=None, wait=True):
    """The figures of the start's (last) synced line."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        text = open(log, errors="replace").read()
        found = re.findall(r"thread_index event=synced threads=(\d+) reread=(\d+) "
                           r"journaled=(\d+) full=(\w+)", text)
        if found:
            t, r, j, f = found[-1]
            return {"threads": int(t), "reread": int(r), "journaled": int(j),
                    "full": f == "true"}
        if not wait or time.monotonic() > deadline:
            raise Failure("no synced line in %s" % log)
        time.sleep(0.05)


def expect(cond, what):
    if not cond:
        raise Failure(what)
    print("ok: " + what, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    home = os.path.join(a.work, "home")
    os.makedirs(home)
    n = [0]

    def log():
        n[0] += 1
        return os.path.join(a.work, "server-%d.log" % n[0])

    # A new home: the index is built (from nothing); then threads with turns.
    s = Server(a.binary, home, log())
    f = synced(s.log)
    expect(f["full"] and f["reread"] == 0, "a new home builds its index: %s" % f)
    ids = []
    for i in range(THREADS):
        t = s.call("thread/start", {})["thread"]["id"]
        s.turn(t, "say: first %d" % i)
        ids.append(t)
    s.close()

    # An orderly stop after those writes: nothing is read again.
    s = Server(a.binary, home, log())
    f = synced(s.log)
    expect(not f["full"] and f["reread"] == 0 and f["journaled"] == 0,
           "after an orderly stop nothing is read again: %s" % f)
    listed = s.list_all()
    expect(set(listed) == set(ids), "every thread is listed (%d)" % len(listed))
    # More turns, then SIGTERM (the server seals the store and stops).
    for t in ids[:4]:
        s.call("thread/resume", {"threadId": t})
        s.turn(t, "say: second")
    s.term()

    s = Server(a.binary, home, log())
    f = synced(s.log)
    expect(not f["full"] and f["reread"] == 0, "after SIGTERM nothing is read again: %s" % f)

    # kill -9 while BUSY threads run turn after turn.
    busy = ids[-BUSY:]
    for t in busy:
        s.call("thread/resume", {"threadId": t})
    pending = {}
    for t in busy:
        pending[s.send("turn/start", {"threadId": t, "input": [
            {"type": "text", "text": "say: busy"}]})] = t
    completed = 0
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        m = s.next()
        if m.get("method") == "turn/completed":
            completed += 1
            t = m["params"]["threadId"]
            pending[s.send("turn/start", {"threadId": t, "input": [
                {"type": "text", "text": "say: busy %d" % completed}]})] = t
    s.kill()
    expect(completed >= BUSY, "turns completed before the kill: %d" % completed)

    s = Server(a.binary, home, log())
    f = synced(s.log)
    expect(not f["full"] and f["journaled"] > 0 and f["reread"] <= BUSY,
           "after kill -9 at most the %d busy threads are read again: %s" % (BUSY, f))
    listed = s.list_all()
    expect(set(listed) == set(ids), "every thread is listed after the kill")
    for t in ids:
        r = s.call("thread/read", {"threadId": t, "includeTurns": False})["thread"]
        row = listed[t]
        if (row["updatedAt"], row["preview"]) != (r["updatedAt"], r["preview"]):
            raise Failure("thread %s: listed %s, its rollout says %s" % (
                t, (row["updatedAt"], row["preview"]), (r["updatedAt"], r["preview"])))
    print("ok: the list agrees with every rollout after the kill", flush=True)
    s.close()

    # A deleted index: every rollout is read again, behind the lists.
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(os.path.join(home, "parley-index.sqlite" + suffix))
        except FileNotFoundError:
            pass
    s = Server(a.binary, home, log())
    s.call("thread/list", {"limit": 5})  # answers while (or after) the rebuild runs
    f = synced(s.log)
    expect(f["full"] and f["reread"] == THREADS,
           "a deleted index reads every rollout: %s" % f)
    expect(set(s.list_all()) == set(ids), "the rebuilt index lists every thread")
    s.close()
    s = Server(a.binary, home, log())
    f = synced(s.log)
    expect(not f["full"] and f["reread"] == 0, "and the start after it reads none: %s" % f)
    previews = {t: r["preview"] for t, r in s.list_all().items()}
    terms = ("first 1", "FIRST 2", "irst", "say", "%", "1", "no such")
    first_lists = {}
    for term in terms:
        first_lists[term] = list(s.list_all(limit=3, searchTerm=term))
        want = {t for t, p in previews.items() if term.lower() in p.lower()}
        expect(set(first_lists[term]) == want,
               "searchTerm %r lists the %d threads whose preview has it" % (term, len(want)))
    s.close()

    # The index as schema 5 left it: no search table.
    db = sqlite3.connect(os.path.join(home, "parley-index.sqlite"))
    db.executescript("DROP TRIGGER threads_search_insert; DROP TRIGGER threads_search_update;"
                     " DROP TRIGGER threads_search_delete; DROP TABLE threads_search;"
                     " UPDATE meta SET value='5' WHERE key='schema_version';")
    db.close()
    s = Server(a.binary, home, log())
    f = synced(s.log)
    expect(not f["full"] and f["reread"] == 0,
           "an index from before the search table keeps its rows: %s" % f)
    deadline = time.monotonic() + TIMEOUT
    while not re.search(r"event=search_filled threads=%d " % THREADS,
                        open(s.log, errors="replace").read()):
        if time.monotonic() > deadline:
            raise Failure("no `event=search_filled threads=%d` in %s" % (THREADS, s.log))
        time.sleep(0.05)
    expect("event=search_filling threads=%d" % THREADS in open(s.log, errors="replace").read(),
           "its search table is filled behind the lists (logged)")
    for term in terms:
        expect(list(s.list_all(limit=3, searchTerm=term)) == first_lists[term],
               "searchTerm %r lists the same threads in the same order" % term)
    s.close()
    db = sqlite3.connect(os.path.join(home, "parley-index.sqlite"))
    version = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    rows = db.execute("SELECT count(*) FROM threads_search").fetchone()[0]
    expect(version == "7" and rows == THREADS, "schema 7, every row in the search table")

    # The index as schema 6 left it: a search table keyed by the rows' rowids.
    db.executescript(
        "DROP TRIGGER threads_search_insert; DROP TRIGGER threads_search_update;"
        " DROP TRIGGER threads_search_delete; DROP TABLE threads_search;"
        " CREATE VIRTUAL TABLE threads_search USING fts5(preview, name, tokenize='trigram');"
        " CREATE TRIGGER threads_search_insert AFTER INSERT ON threads BEGIN"
        " DELETE FROM threads_search WHERE rowid = new.rowid;"
        " INSERT INTO threads_search(rowid, preview, name)"
        " VALUES(new.rowid, new.preview, new.name); END;"
        " CREATE TRIGGER threads_search_update AFTER UPDATE OF preview, name ON threads"
        " WHEN old.preview IS NOT new.preview OR old.name IS NOT new.name BEGIN"
        " DELETE FROM threads_search WHERE rowid = new.rowid;"
        " INSERT INTO threads_search(rowid, preview, name)"
        " VALUES(new.rowid, new.preview, new.name); END;"
        " CREATE TRIGGER threads_search_delete AFTER DELETE ON threads BEGIN"
        " DELETE FROM threads_search WHERE rowid = old.rowid; END;"
        " INSERT INTO threads_search(rowid, preview, name)"
        " SELECT rowid, preview, name FROM threads;"
        " UPDATE meta SET value='6' WHERE key='schema_version';")
    db.close()
    s = Server(a.binary, home, log())
    f = synced(s.log)
    expect(not f["full"] and f["reread"] == 0,
           "an index of schema 6 keeps its rows: %s" % f)
    deadline = time.monotonic() + TIMEOUT
    while not re.search(r"event=search_filled threads=%d " % THREADS,
                        open(s.log, errors="replace").read()):
        if time.monotonic() > deadline:
            raise Failure("no `event=search_filled threads=%d` in %s" % (THREADS, s.log))
        time.sleep(0.05)
    for term in terms:
        expect(list(s.list_all(limit=3, searchTerm=term)) == first_lists[term],
               "after schema 6: searchTerm %r lists the same threads in the same order" % term)
    s.close()
    db = sqlite3.connect(os.path.join(home, "parley-index.sqlite"))
    version = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    rows = db.execute("SELECT count(*) FROM threads_search").fetchone()[0]
    old_keys = db.execute("SELECT count(*) FROM threads_search WHERE rowid > 0").fetchone()[0]
    old_table = db.execute(
        "SELECT count(*) FROM sqlite_master WHERE name LIKE 'threads_search_v6%'").fetchone()[0]
    db.close()
    expect(version == "7" and rows == THREADS and old_keys == 0 and old_table == 0,
           "schema 7, every row in the search table by its new key, the old table gone"
           " (version %s, rows %d, old keys %d, old tables %d)" % (version, rows, old_keys, old_table))
    print("store_restart: all checks held")


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
