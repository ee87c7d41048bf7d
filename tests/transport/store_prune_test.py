#!/usr/bin/env python3
"""Retention of the local store: `parley store prune` (issue 28).

A home of 10 threads made by bench/store_gen.py, one created a day over the
last 10 days (every fifth archived), plus one thread whose approval is
pending (made by a real server, stopped with SIGTERM so it stays pending on
disk; its index row then aged by hand). Checks, on the real binary:
  * refused while a server holds the home (exit 1, nothing removed);
  * --dry-run names the threads older than the cutoff and removes nothing;
  * --archived-only takes only the archived ones;
  * a prune removes the old threads' rollouts and index rows, keeps the one
    with work pending and every younger thread; a server started after lists
    exactly the rest, and cannot read a pruned thread;
  * --tenant T prunes only T's old threads.
Exit 0 when every check held.
  store_prune_test.py --binary PARLEY --work DIR
"""
import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "bench", "store_gen.py")


class Failure(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failure(what)
    print("ok: " + what, flush=True)


class Server:
    def __init__(self, binary, home, work, extra=(), log=None):
        self.proc = subprocess.Popen(
            [binary, "app-server", "--store=local", "--home=" + home, "--cwd=" + work,
             "--approval-timeout=1h", "--log-level=info"] + list(extra),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=open(log, "wb") if log else subprocess.DEVNULL)
        self.next_id = 1
        self.call("initialize", {"clientInfo": {"name": "t", "version": "1"}})
        self.proc.stdin.write(b'{"method":"initialized"}\n')
        self.proc.stdin.flush()

    def send(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.proc.stdin.write((json.dumps({"id": rid, "method": method, "params": params})
                               + "\n").encode())
        self.proc.stdin.flush()
        return rid

    def wait_for(self, pred):
        for line in self.proc.stdout:
            m = json.loads(line)
            if pred(m):
                return m
        raise Failure("the server closed its output")

    def call(self, method, params, ok=True):
        rid = self.send(method, params)
        m = self.wait_for(lambda m: m.get("id") == rid and "method" not in m)
        if ok and "error" in m:
            raise Failure("%s: %s" % (method, m["error"]))
        return m

    def list_ids(self, archived=False):
        out, cursor = set(), None
        while True:
            p = {"limit": 100, "archived": archived}
            if cursor:
                p["cursor"] = cursor
            r = self.call("thread/list", p)["result"]
            out |= {t["id"] for t in r["data"]}
            cursor = r.get("nextCursor")
            if not cursor:
                return out


def prune(binary, home, *args):
    p = subprocess.run([binary, "store", "prune", "--home", home] + list(args),
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def named(out, word):
    return set(re.findall(r"^%s ([0-9a-f-]{36}) " % word, out, re.M))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    home = os.path.join(a.work, "home")
    os.makedirs(home)
    subprocess.run([sys.executable, GEN, "--binary", a.binary, "--home", home, "--threads", "10",
                    "--step", "86400", "--archived", "0.2"], check=True)  # and `store reindex`
    now = time.time()
    # store_gen: thread i was created (10 - i) days ago; i = 4 and 9 are archived.
    rollouts = {}
    for root, _, files in os.walk(home):
        for f in files:
            if f.startswith("rollout-"):
                rollouts[f[-42:-6]] = os.path.join(root, f)
    expect(len(rollouts) == 10, "the generator wrote 10 rollouts")

    # One thread with an approval pending, stopped with SIGTERM (kept pending).
    s = Server(a.binary, home, a.work)
    pending = s.call("thread/start", {"approvalPolicy": "on-request"})["result"]["thread"]["id"]
    s.send("turn/start", {"threadId": pending, "input": [
        {"type": "text", "text": "run[escalate]: true"}]})
    s.wait_for(lambda m: m.get("method") == "item/commandExecution/requestApproval")
    before = s.list_ids() | s.list_ids(archived=True)
    expect(len(before) == 11, "the server lists all 11 threads")
    rc, out, err = prune(a.binary, home, "--older-than", "1d")
    expect(rc == 1 and "prunes by its own" in err and not out,
           "refused while a server holds the home (%d: %s)" % (rc, err.strip()))
    s.proc.send_signal(signal.SIGTERM)
    s.proc.wait(timeout=60)
    db = sqlite3.connect(os.path.join(home, "parley-index.sqlite"))
    row = db.execute("SELECT pending FROM threads WHERE id=?", (pending,)).fetchone()
    expect(row and row[0] != 0, "the pending thread's row says so (%s)" % (row,))
    db.execute("UPDATE threads SET updated_at=? WHERE id=?", (int(now) - 30 * 86400, pending))
    db.commit()
    db.close()

    # The oldest five by their file names (which start with the creation time):
    # 6 to 10 days old.
    by_age = sorted(rollouts, key=lambda t: os.path.basename(rollouts[t]))
    old = set(by_age[:5])
    rc, out, _ = prune(a.binary, home, "--older-than", "132h", "--dry-run")
    expect(rc == 0 and named(out, "would prune") == old,
           "--dry-run names the 5 threads older than 5.5 days")
    expect(all(os.path.exists(p) for p in rollouts.values()), "--dry-run removes nothing")
    expect("kept 1 with work pending" in out, "--dry-run keeps the pending thread")
    archived_old = {t for t in old if "/archived_sessions/" in rollouts[t]}
    rc, out, _ = prune(a.binary, home, "--older-than", "132h", "--archived-only",
                       "--dry-run")
    expect(rc == 0 and named(out, "would prune") == archived_old and len(archived_old) == 1,
           "--archived-only takes only the archived one")
    rc, out, _ = prune(a.binary, home, "--older-than", "132h")
    expect(rc == 0 and named(out, "pruned") == old, "the prune removes the 5 old threads")
    expect(not any(os.path.exists(rollouts[t]) for t in old), "their rollouts are gone")
    expect(all(os.path.exists(rollouts[t]) for t in set(rollouts) - old),
           "the younger threads' rollouts stay")
    rc, out, _ = prune(a.binary, home, "--older-than", "bogus")
    expect(rc == 2, "a bad duration is a usage error")

    s = Server(a.binary, home, a.work)
    left = s.list_ids() | s.list_ids(archived=True)
    expect(left == (set(rollouts) - old) | {pending},
           "a server lists exactly the rest (and the pending thread)")
    m = s.call("thread/read", {"threadId": sorted(old)[0]}, ok=False)
    expect("error" in m, "a pruned thread cannot be read")
    s.proc.stdin.close()
    s.proc.wait(timeout=60)

    # A server's own retention (--prune-older-than): the same 5 go at its start.
    home2 = os.path.join(a.work, "home2")
    subprocess.run([sys.executable, GEN, "--binary", a.binary, "--home", home2, "--threads", "10",
                    "--step", "86400", "--archived", "0.2"], check=True)
    log = os.path.join(a.work, "server2.log")
    s = Server(a.binary, home2, a.work, ["--prune-older-than=132h"], log)
    deadline = time.monotonic() + 30
    while "event=pruned threads=5 " not in open(log, errors="replace").read():
        if time.monotonic() > deadline:
            raise Failure("no `event=pruned threads=5` in %s" % log)
        time.sleep(0.05)
    left = s.list_ids() | s.list_ids(archived=True)
    expect(len(left) == 5, "a server with --prune-older-than=132h keeps the 5 younger threads")
    s.proc.stdin.close()
    s.proc.wait(timeout=60)

    # Per tenant (--tenant): the index row holds each thread's tenant; here
    # set by hand on three threads (two old, one young), the rest stay the
    # default tenant's (as threads stored before tenants are).
    home3 = os.path.join(a.work, "home3")
    subprocess.run([sys.executable, GEN, "--binary", a.binary, "--home", home3, "--threads", "10",
                    "--step", "86400", "--archived", "0.2"], check=True)
    ids3 = sorted((os.path.basename(os.path.join(r, f)), f[-42:-6])
                  for r, _, fs in os.walk(home3) for f in fs if f.startswith("rollout-"))
    ids3 = [t for _, t in ids3]  # oldest first
    acme = {ids3[0], ids3[2], ids3[7]}
    db = sqlite3.connect(os.path.join(home3, "parley-index.sqlite"))
    for t in acme:
        db.execute("UPDATE threads SET tenant='acme' WHERE id=?", (t,))
    db.commit()
    db.close()
    rc, out, _ = prune(a.binary, home3, "--older-than", "132h", "--tenant", "acme", "--dry-run")
    expect(rc == 0 and named(out, "would prune") == {ids3[0], ids3[2]},
           "--tenant acme --dry-run names only acme's 2 old threads")
    rc, out, _ = prune(a.binary, home3, "--older-than", "132h", "--tenant", "default")
    expect(rc == 0 and named(out, "pruned") == set(ids3[:5]) - acme,
           "--tenant default prunes the other 3 old threads")
    rc, out, _ = prune(a.binary, home3, "--older-than", "132h", "--tenant", "nobody")
    expect(rc == 0 and not named(out, "pruned"), "--tenant with no threads prunes nothing")
    for tenant, want in (("default", set(ids3[5:]) - acme), ("acme", acme)):
        s = Server(a.binary, home3, a.work, ["--local-tenant=" + tenant])
        left = s.list_ids() | s.list_ids(archived=True)
        expect(left == want, "tenant %s lists its %d threads left" % (tenant, len(want)))
        s.proc.stdin.close()
        s.proc.wait(timeout=60)
    print("store_prune: all checks held")


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
