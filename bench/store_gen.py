#!/usr/bin/env python3
"""Writes a local store of N threads directly, in Codex's rollout format, fast
(issue 28): no server runs while it writes.

Every thread is a copy of one template rollout (a thread with one short
turn, as parley wrote it: make one with --make-template) with its own id,
creation time, cwd, model provider and preview text:
  * created one every --step seconds, the newest now (sessions/YYYY/MM/DD/
    as Codex files them);
  * cwd /bench/proj-<i mod --cwds>; model provider "openai", every tenth
    "oss"; the first user message "hello bench <i> topic<i mod 1000>";
  * a --archived fraction of them in archived_sessions/ (plain JSONL, as
    Codex archives).
The index is then built as parley builds it (`parley store reindex`), unless
--no-index.

  store_gen.py --binary PARLEY --home DIR --threads N [--cwds 20] [--step 30]
               [--archived 0.05] [--template FILE | --make-template]
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

# (ARCH: pg_store_gen.py's archived column)
TOKEN = re.compile(r"@@(ID|TS|CWD|TEXT|PROV|ARCH|T[+-]\d+)@@")


def make_template(binary, out):
    """One thread with one turn ("say: hello bench"), written by parley."""
    home = tempfile.mkdtemp(prefix="store-gen-")
    try:
        proc = subprocess.Popen([binary, "app-server", "--store=local", "--home=" + home,
                                 "--cwd=" + home, "--log-level=warn"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)

        def send(msg):
            proc.stdin.write((json.dumps(msg) + "\n").encode())
            proc.stdin.flush()

        def wait(pred):
            for line in proc.stdout:
                m = json.loads(line)
                if pred(m):
                    return m
            raise RuntimeError("the server closed its output")

        send({"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "gen",
                                                                         "version": "1"}}})
        wait(lambda m: m.get("id") == 0)
        send({"method": "initialized"})
        send({"id": 1, "method": "thread/start", "params": {}})
        t = wait(lambda m: m.get("id") == 1)["result"]["thread"]["id"]
        send({"id": 2, "method": "turn/start", "params": {
            "threadId": t, "input": [{"type": "text", "text": "say: hello bench"}]}})
        wait(lambda m: m.get("method") == "turn/completed")
        proc.stdin.close()
        proc.wait(timeout=30)
        for root, _, files in os.walk(os.path.join(home, "sessions")):
            for f in files:
                shutil.copy(os.path.join(root, f), out)
                return
        raise RuntimeError("no rollout written")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def tokenize(template_path):
    """The template's lines with its id, times, cwd, text and provider as tokens."""
    lines = open(template_path).read().splitlines()
    walk = token_walker(json.loads(lines[0])["payload"])
    out = [tokenized_json(walk(json.loads(l))) for l in lines]
    return "\n".join(out) + "\n"


def tokenized_json(v):
    """`v` (tokens in it) as compact JSON, its time tokens unquoted integers."""
    s = json.dumps(v, separators=(",", ":"))
    return re.sub(r'"(@@T[+-]\d+@@)"', r"\1", s)


def token_walker(meta):
    """A function that replaces, in a JSON value, what each copy of the
    thread whose session metadata is `meta` changes by tokens."""
    old_id, old_cwd, old_prov = meta["id"], meta["cwd"], meta.get("model_provider", "openai")
    created = datetime.datetime.fromisoformat(meta["timestamp"].replace("Z", "+00:00"))
    base = int(created.timestamp())
    iso = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")

    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, str):
            if v == old_id:
                return "@@ID@@"
            if v == old_cwd:
                return "@@CWD@@"
            if v == old_prov:
                return "@@PROV@@"
            if iso.fullmatch(v):
                return "@@TS@@"
            return v.replace("hello bench", "@@TEXT@@")
        if isinstance(v, int) and not isinstance(v, bool) and abs(v - base) < 600:
            return "@@T%+d@@" % (v - base)
        return v

    return walk


def copies(n, cwds, step, archived, providers_every=10):
    """Thread i of n (0 the oldest): (i, its creation second, its values for
    the tokens, whether it is archived). The same for either store."""
    now = int(time.time())
    first = now - n * step
    arch_every = int(round(1 / archived)) if archived > 0 else 0
    for i in range(n):
        created = first + i * step
        tid = str(uuid.UUID(int=(0x0199 << 112) | (i << 16) | 0x7000, version=4))
        dt = datetime.datetime.fromtimestamp(created, datetime.timezone.utc)
        vals = {"ID": tid, "TS": dt.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "CWD": "/bench/proj-%d" % (i % cwds),
                "TEXT": "hello bench %d topic%d" % (i, i % 1000),
                "PROV": "oss" if providers_every and i % providers_every == 9 else "openai"}
        yield i, created, vals, bool(arch_every and i % arch_every == arch_every - 1)


def substitute(template, created, vals):
    def sub(m):
        k = m.group(1)
        if k[0] == "T" and k[1] in "+-":
            return str(created + int(k[1:]))
        return vals[k]

    return TOKEN.sub(sub, template)


def generate(template, home, n, cwds, step, archived):
    made_dirs = set()
    arch_dir = os.path.join(home, "archived_sessions")
    os.makedirs(arch_dir, exist_ok=True)
    for i, created, vals, is_archived in copies(n, cwds, step, archived):
        tid = vals["ID"]
        dt = datetime.datetime.fromtimestamp(created, datetime.timezone.utc)
        body = substitute(template, created, vals)
        name = "rollout-%s-%s.jsonl" % (dt.strftime("%Y-%m-%dT%H-%M-%S"), tid)
        if is_archived:
            path = os.path.join(arch_dir, name)
        else:
            d = os.path.join(home, "sessions", dt.strftime("%Y"), dt.strftime("%m"),
                             dt.strftime("%d"))
            if d not in made_dirs:
                os.makedirs(d, exist_ok=True)
                made_dirs.add(d)
            path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(body)
        if i and i % 100000 == 0:
            print("store_gen: %d threads" % i, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--cwds", type=int, default=20)
    ap.add_argument("--step", type=int, default=30)
    ap.add_argument("--archived", type=float, default=0.05)
    ap.add_argument("--template")
    ap.add_argument("--no-index", action="store_true")
    a = ap.parse_args()
    template_path = a.template
    tmp = None
    if not template_path:
        tmp = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
        make_template(a.binary, tmp)
        template_path = tmp
    t0 = time.monotonic()
    generate(tokenize(template_path), a.home, a.threads, a.cwds, a.step, a.archived)
    t1 = time.monotonic()
    print("store_gen: wrote %d rollouts in %.1f s" % (a.threads, t1 - t0), file=sys.stderr)
    if tmp:
        os.unlink(tmp)
    if not a.no_index:
        subprocess.run([a.binary, "store", "reindex", "--home", a.home], check=True,
                       stdout=subprocess.DEVNULL)
        print("store_gen: indexed in %.1f s" % (time.monotonic() - t1), file=sys.stderr)


if __name__ == "__main__":
    main()
