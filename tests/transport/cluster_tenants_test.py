#!/usr/bin/env python3
"""Two tenants on one cluster (issue 22), through real parts: three real
`parley app-server --cluster` nodes (TLS links, a private PostgreSQL), a
stdio client on each, each node's local operator a tenant of its own
(`--local-tenant`): n1 and n3 are acme, n2 is globex.

acme starts threads through n1; placement spreads them over the nodes, so
some live on n2, globex's own node. Then, through n2, globex tries what it
could do to each of them: every answer is the answer for a thread nobody has
(the same bytes once the ids are the same placeholder), lists show none of
them, no message of theirs reaches globex, and afterwards the threads are
whole. Through n3, acme reads and lists every one of them. A thread globex
starts is as unknown to acme. The tenant check holds on whichever node the
request arrives and whichever node owns the thread.

Usage: cluster_tenants_test.py PARLEY_BINARY
"""
import json
import os
import re
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import cluster_test  # noqa: E402  (reads the binary from argv[1])
from cluster_test import check, turn_done  # noqa: E402

TENANTS = {"n1": "acme", "n2": "globex", "n3": "acme"}
THREADS = 6


def text(t):
    return [{"type": "text", "text": t}]


def tries(thread, turn):
    """What an intruder tries on a thread: read it, join it, act in it, change it."""
    return [
        ("thread/read", {"threadId": thread, "includeTurns": True}),
        ("thread/turns/list", {"threadId": thread}),
        ("thread/resume", {"threadId": thread}),
        ("thread/fork", {"threadId": thread}),
        ("thread/name/set", {"threadId": thread, "name": "stolen"}),
        ("turn/start", {"threadId": thread, "input": text("run: touch stolen")}),
        ("turn/interrupt", {"threadId": thread, "turnId": turn}),
        ("thread/archive", {"threadId": thread}),
        ("thread/delete", {"threadId": thread}),
    ]


def raw_answer(p, method, params):
    """The reply as the client got it, its request id taken out."""
    r = p.call(method, params)
    r.pop("id", None)
    r.pop("_at", None)  # when the test read it
    return json.dumps(r, sort_keys=True)


def same_as_unknown(p, thread, turn, who):
    for method, params in tries(thread, turn):
        unknown = str(uuid.uuid4())
        a = raw_answer(p, method, params).replace(thread, "THREAD")
        b = raw_answer(p, method, dict(params, threadId=unknown)).replace(unknown, "THREAD")
        # A fresh thread id or turn id in a message differs run to run.
        a, b = (re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UUID", x)
                for x in (a, b))
        check(a == b, "%s: %s on another tenant's thread answers as an unknown thread:\n  %s\n  %s"
              % (who, method, a[:300], b[:300]))
        check('"error"' in a, "%s: %s on another tenant's thread is refused: %s"
              % (who, method, a[:200]))


def listed(p):
    return {t["id"] for t in p.call("thread/list", {"limit": 100})["result"]["data"]}


def test_two_tenants_across_nodes(c):
    acme, globex, acme_too = (c.peers[n] for n in ("n1", "n2", "n3"))
    threads, turns = [], {}
    for k in range(THREADS):
        t = acme.start_thread()
        turns[t] = acme.start_turn(t, "say: acme's secret %d" % k)
        check(turn_done(acme, t)["params"]["turn"]["status"] == "completed", "acme's turn ran")
        threads.append(t)
    leases = c.leases()
    on_globex_node = [t for t in threads if leases.get(t) == "n2"]
    check(len({leases.get(t) for t in threads} - {None}) >= 2,
          "acme's threads are spread over the nodes: %s" % {leases.get(t) for t in threads})
    print("acme's threads owned by globex's node n2: %d of %d" % (len(on_globex_node), THREADS),
          flush=True)

    check(not (listed(globex) & set(threads)), "globex lists none of acme's threads")
    for t in threads:
        same_as_unknown(globex, t, turns[t], "globex via n2 (thread on %s)" % leases.get(t))
    leaked = [m for m in globex.kept if any(t in json.dumps(m) for t in threads)]
    check(not leaked, "nothing of acme's threads reaches globex: %s" % json.dumps(leaked)[:300])

    # acme, through another node, finds each thread whole.
    check(set(threads) <= listed(acme_too), "acme lists its threads through n3")
    for t in threads:
        r = acme_too.call("thread/read", {"threadId": t, "includeTurns": True})
        th = r.get("result", {}).get("thread", {})
        check(len(th.get("turns", [])) == 1 and th.get("name") != "stolen",
              "acme reads %s whole through n3: %s" % (t, json.dumps(r)[:200]))
    check(c.runs("stolen") == 0 and not os.path.exists(os.path.join(c.work, "stolen")),
          "globex's command never ran")

    # And the other way: globex's thread is unknown to acme on either node.
    g = globex.start_thread()
    g_turn = globex.start_turn(g, "say: globex's secret")
    turn_done(globex, g)
    check(g in listed(globex) and g not in listed(acme) and g not in listed(acme_too),
          "globex's thread is listed for globex only")
    same_as_unknown(acme_too, g, g_turn, "acme via n3 (thread on %s)" % c.leases().get(g))


if __name__ == "__main__":
    sys.exit(cluster_test.main([[test_two_tenants_across_nodes]],
                               extra={n: ["--local-tenant=" + t] for n, t in TENANTS.items()}))
