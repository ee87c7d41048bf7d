#!/usr/bin/env python3
"""One parley over three nodes (issue 21), through real parts: three real
`parley app-server --cluster` processes on loopback, their node links over
CAF's middleman with TLS (a cluster CA made here with the openssl CLI), the
shared store a private PostgreSQL cluster (tests/support/pg_cluster.py), a
stdio client on each node. Every command the scripted model runs appends a
line to a file of its own, so the files say how often each action ran.

Covered: threads spread over the nodes (rendezvous placement) and every
request reaches its thread from every node; approvals asked of a client
on another node than the thread's and answered from there; two clients on
different nodes racing on one approval (exactly one decision applied);
thread/list across nodes; kill -9 of a node: its threads' pending approvals
are asked again of the clients subscribed through the survivors, applied
once, and the takeover time is reported; SIGSTOP of a node past its lease:
the others take its threads over, and once it runs again it writes nothing
for them (fenced), steps down and rejoins.

Usage: cluster_test.py PARLEY_BINARY [TEST_NAME...]
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import app_server_peer  # noqa: E402
import pg_cluster  # noqa: E402

PARLEY = sys.argv[1]
ONLY = set(sys.argv[2:])
FAILURES = []
PG = None  # the run's PostgreSQL cluster
NODES = ["n1", "n2", "n3"]
LEASE_MS = int(os.environ.get("PARLEY_CLUSTER_LEASE_MS", "2000"))


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_certificates(d, names):
    """A cluster CA and a certificate of each node signed by it."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=parley-test-ca", cwd=d)
    for n in names:
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", n + ".key", "-out", n + ".csr",
                "-subj", "/CN=" + n, cwd=d)
        openssl("x509", "-req", "-in", n + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", n + ".pem", "-days", "2", cwd=d)


class Cluster:
    """Three nodes' homes, one cluster file each, one database."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="parley-cluster-")
        self.work = os.path.join(self.dir, "work")
        os.makedirs(self.work)
        self.db = os.path.basename(self.dir).replace("-", "_").lower()
        self.url = PG.create_database(self.db)
        migrate = subprocess.run([PARLEY, "store", "migrate", "--store-url=" + self.url],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if migrate.returncode != 0:
            raise RuntimeError("store migrate failed: " + migrate.stdout)
        make_certificates(self.dir, NODES)
        self.ports = {n: free_port() for n in NODES}
        self.starts = 0
        self.peers = {}
        self.extra = {}  # node -> more app-server options

    def cluster_file(self, node):
        path = os.path.join(self.dir, node + ".toml")
        members = "".join('[[members]]\nname = "%s"\naddress = "127.0.0.1:%d"\n\n' % (n, p)
                          for n, p in self.ports.items())
        with open(path, "w") as f:
            f.write('cluster = "test"\nnode = "%s"\npostgres = "%s"\n'
                    'lease_ttl_ms = %d\nheartbeat_ms = 250\nconnection_timeout_ms = 1000\n\n'
                    '[tls]\nca = "ca.pem"\ncert = "%s.pem"\nkey = "%s.key"\n\n%s'
                    % (node, self.url, LEASE_MS, node, node, members))
        return path

    def start(self, node):
        self.starts += 1
        home = os.path.join(self.dir, "home-" + node)
        args = [PARLEY, "app-server", "--cluster=" + self.cluster_file(node), "--home=" + home,
                "--cwd=" + self.work, "--log-level=info", *self.extra.get(node, [])]
        p = app_server_peer.StdioPeer(args, dict(os.environ),
                                      os.path.join(self.dir, "%s-%d.log" % (node, self.starts)),
                                      client_name="cluster-test-" + node)
        self.peers[node] = p
        return p

    def start_all(self):
        for n in NODES:
            self.start(n)
        self.wait_linked()
        return [self.peers[n] for n in NODES]

    def peers_up(self, node):
        """The peers this node's router has seen come up (from its log)."""
        with open(self.peers[node].stderr_path, errors="replace") as f:
            return set(re.findall(r"cluster event=peer_up node=(\w+)$", f.read(), re.M))

    def wait_linked(self, timeout=30):
        """Until every node sees the other two."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(len(self.peers_up(n)) == len(NODES) - 1 for n in self.peers):
                return True
            time.sleep(0.2)
        return check(False, "the nodes linked within %s s" % timeout)

    def leases(self):
        """thread -> node, from `parley cluster status`."""
        out = subprocess.run([PARLEY, "cluster", "status", "--store-url=" + self.url, "--threads",
                              "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, check=True).stdout
        return {t["thread"]: t["node"] for t in json.loads(out).get("leases", [])
                if t.get("node")}

    def runs(self, name):
        path = os.path.join(self.work, name)
        if not os.path.exists(path):
            return 0
        with open(path) as f:
            return len(f.read().splitlines())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # All at once: each stops its threads and lets its leases go.
        for p in self.peers.values():
            if p.proc.poll() is None:
                p.proc.send_signal(signal.SIGCONT)
                try:
                    p.proc.stdin.close()
                except OSError:
                    pass
        for node, p in self.peers.items():
            try:
                p.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                check(False, "node %s exits once its client has left" % node)
                p.proc.kill()
            p.stderr.close()
        if os.environ.get("KEEP"):
            print("kept", self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def is_ask(m, thread=None):
    return (m.get("method") == "item/commandExecution/requestApproval" and "id" in m
            and (thread is None or m["params"]["threadId"] == thread))


def answer(p, ask, decision):
    p.write({"id": ask["id"], "result": {"decision": decision}})


def turn_done(p, thread, timeout=30):
    return p.wait(lambda m: m.get("method") == "turn/completed"
                  and m["params"]["threadId"] == thread, timeout)


def ordinal(request_id):
    return request_id >> 40


# -- 1. routing from every node to every node --------------------------------------------------

def test_routing_and_approvals_across_nodes(c):
    if True:
        peers = [c.peers[n] for n in NODES]
        threads = {}
        for i, p in enumerate(peers):
            for k in range(4):
                t = p.start_thread()
                threads[t] = (i, k)
        leases = c.leases()
        owners = {leases.get(t) for t in threads}
        check(len(owners - {None}) >= 2, "12 threads spread over more than one node: %s" % owners)
        check(all(t in leases for t in threads), "every started thread has a lease")
        # Every thread runs a turn with an approval from the node it was
        # started through; the ask's id names the owner's ordinal.
        for t, (i, k) in threads.items():
            p = peers[i]
            name = "route-%s" % t
            p.start_turn(t, "run[escalate]: echo x >> %s\nsay: done" % name)
            ask = p.wait(lambda m: is_ask(m, t))
            owner = leases.get(t)
            check(owner is not None and ordinal(ask["id"]) == NODES.index(owner),
                  "the ask's id names the owner's ordinal (%s, %s)" % (ask["id"], owner))
            answer(p, ask, "accept")
            done = turn_done(p, t)
            check(done["params"]["turn"]["status"] == "completed", "turn of %s completed" % t)
            check(c.runs(name) == 1, "the command of %s ran once" % t)
        # Every node reads every thread, and lists them all.
        for p in peers:
            for t in threads:
                r = p.call("thread/read", {"threadId": t, "includeTurns": True})
                check("result" in r and len(r["result"]["thread"]["turns"]) == 1,
                      "thread/read of %s from another node: %s" % (t, str(r)[:200]))
            listed = {x["id"] for x in p.call("thread/list", {"limit": 100})["result"]["data"]}
            check(set(threads) <= listed, "thread/list on every node lists all 12 threads")
        # parley/stats through any node: every member's figures, and totals.
        stats = peers[1].call("parley/stats", None)["result"]
        nodes = stats.get("cluster", {}).get("nodes", [])
        check([n.get("node") for n in nodes] == NODES and all(n.get("reachable") for n in nodes),
              "parley/stats lists the three members, reachable: %s" % str(stats)[:300])
        totals = stats.get("cluster", {}).get("totals", {})
        check(totals.get("approvals", {}).get("requested", 0) >= 12,
              "the cluster's totals count the 12 approvals: %s" % totals)


# -- 2. an approval answered through another node, and a race ------------------------------

def test_answer_through_another_node_and_race(c):
    if True:
        p1, p2, p3 = [c.peers[n] for n in NODES]
        # A thread owned by a node other than n1 and n2 where possible.
        t = p1.start_thread()
        p1.start_turn(t, "run[escalate]: echo x >> via-other\nsay: done")
        ask1 = p1.wait(lambda m: is_ask(m, t))
        r = p2.call("thread/resume", {"threadId": t})
        check("result" in r, "n2 resumes the thread: %s" % str(r)[:200])
        ask2 = p2.wait(lambda m: is_ask(m, t))
        check(ask2["params"]["itemId"] == ask1["params"]["itemId"], "n2 is asked the same item")
        answer(p2, ask2, "accept")
        resolved = p1.wait(lambda m: m.get("method") == "serverRequest/resolved"
                           and m["params"]["requestId"] == ask1["id"])
        check(resolved is not None, "n1's prompt resolved by n2's answer")
        check(turn_done(p1, t)["params"]["turn"]["status"] == "completed", "turn completed")
        check(c.runs("via-other") == 1, "ran once")
        answer(p1, ask1, "accept")  # late: ignored
        time.sleep(0.5)
        check(c.runs("via-other") == 1, "a late answer through the other node runs nothing")

        # Two clients on different nodes race on one approval, many times.
        for k in range(10):
            name = "race-%d" % k
            t = p3.start_thread()
            p3.start_turn(t, "run[escalate]: echo x >> %s\nsay: done" % name)
            a3 = p3.wait(lambda m: is_ask(m, t))
            p1.call("thread/resume", {"threadId": t})
            a1 = p1.wait(lambda m: is_ask(m, t))
            answer(p1, a1, "accept")
            answer(p3, a3, "decline")
            done = turn_done(p3, t)
            item = next((i for i in done["params"]["turn"].get("items", [])
                         if i.get("type") == "commandExecution"), None)
            ran = c.runs(name)
            check(ran in (0, 1), "race %d: ran at most once (%d)" % (k, ran))
            if item is not None:
                check((item["status"] == "completed") == (ran == 1),
                      "race %d: the item says what happened (%s, ran %d)" % (k, item["status"], ran))


# -- 3. kill -9 of a node -----------------------------------------------------------------------

def test_kill_9_node_takeover(c):
    if True:
        peers = [c.peers[n] for n in NODES]
        p1 = peers[0]
        # Threads started through n1 whose owner is another node, each waiting.
        pending = []
        for k in range(12):
            t = p1.start_thread()
            p1.start_turn(t, "run[escalate]: echo x >> kill-%d\nsay: done" % k)
            ask = p1.wait(lambda m: is_ask(m, t))
            pending.append((t, k, ask))
        leases = c.leases()
        victim = next((leases[t] for t, _, _ in pending if leases.get(t) not in (None, "n1")), None)
        if not check(victim is not None, "some thread lives on another node than n1"):
            return
        moved = [(t, k, ask) for t, k, ask in pending if leases.get(t) == victim]
        killed_at = time.monotonic()
        c.peers[victim].proc.send_signal(signal.SIGKILL)
        c.peers[victim].proc.wait(timeout=30)
        del c.peers[victim]
        took = []
        print("victim %s holds %d of the 12 threads" % (victim, len(moved)), flush=True)
        # Every thread's approval is answered as often as it is asked (a
        # moved thread's again, by its new node) until its turn completes.
        moved_ids = {t for t, _, _ in moved}
        first = {t: ask for t, _, ask in pending}
        for t, _, ask in pending:
            if t not in moved_ids:
                answer(p1, ask, "accept")
        open_turns = {t for t, _, _ in pending}
        deadline = time.monotonic() + 60
        while open_turns and time.monotonic() < deadline:
            try:
                # Quiet for 8 s (four lease periods): the rest ended unseen.
                m = p1.wait(lambda m: is_ask(m) or m.get("method") == "turn/completed",
                            timeout=min(8, max(0.1, deadline - time.monotonic())))
            except TimeoutError:
                break
            t = m["params"]["threadId"]
            if m.get("method") == "turn/completed":
                check(m["params"]["turn"]["status"] == "completed", "turn of %s completed" % t)
                open_turns.discard(t)
                continue
            if t in moved_ids and m["id"] != first[t]["id"]:
                took.append(time.monotonic() - killed_at)
                check(m["params"]["itemId"] == first[t]["params"]["itemId"],
                      "asked again about the same item after the kill")
                check(ordinal(m["id"]) != NODES.index(victim), "asked by a survivor")
            answer(p1, m, "accept")
        # A turn that ended while its node's link to n1 was down (CAF 0.17's
        # links among the survivors drop for a moment when a node dies; see
        # README) sent its end to nobody: the store has it.
        for t in sorted(open_turns):
            r = p1.call("thread/read", {"threadId": t, "includeTurns": True})
            turns = r.get("result", {}).get("thread", {}).get("turns", [])
            check(turns and turns[-1]["status"] == "completed",
                  "thread %s: its turn completed (thread/read): %s"
                  % (t, turns[-1]["status"] if turns else r))
        for _, k, _ in pending:
            check(c.runs("kill-%d" % k) == 1, "kill-%d ran exactly once" % k)
        # Once the survivors' links are back (see README), parley/stats
        # names the member that does not answer.
        stats = p1.call("parley/stats", None)["result"]["cluster"]
        gone = [n for n in stats["nodes"] if n["node"] == victim]
        check(gone and not gone[0]["reachable"] and stats["totals"]["reachable"] == 2,
              "parley/stats says %s does not answer: %s" % (victim, stats["nodes"]))
        if not took:
            check(False, "the moved threads were asked again")
            return
        took.sort()
        print("takeover: %d threads of %s asked again after %.2f s (median), %.2f s (last)"
              % (len(took), victim, took[len(took) // 2], took[-1]), flush=True)


# -- 4. SIGSTOP past the lease: fencing -------------------------------------------------------

def test_paused_node_is_fenced(c):
    if True:
        peers = [c.peers[n] for n in NODES]
        p1 = peers[0]
        t = None
        for _ in range(20):
            cand = p1.start_thread()
            if c.leases().get(cand) not in (None, "n1"):
                t = cand
                break
        if not check(t is not None, "a thread placed on another node"):
            return
        victim = c.leases()[t]
        p1.start_turn(t, "run[escalate]: echo x >> paused\nsay: done")
        old = p1.wait(lambda m: is_ask(m, t))
        c.peers[victim].proc.send_signal(signal.SIGSTOP)
        ask = p1.wait(lambda m: is_ask(m, t) and m["id"] != old["id"], timeout=40)
        check(ordinal(ask["id"]) != NODES.index(victim), "asked again by a survivor")
        new_owner = c.leases().get(t)
        check(new_owner not in (None, victim), "the lease moved: %s" % new_owner)
        c.peers[victim].proc.send_signal(signal.SIGCONT)
        # The paused node's own answer path: the old ask, answered now, must
        # not run anything (its node lost the thread).
        answer(p1, old, "accept")
        time.sleep(LEASE_MS / 1000.0)
        check(c.runs("paused") == 0, "the fenced node ran nothing")
        answer(p1, ask, "accept")
        check(turn_done(p1, t)["params"]["turn"]["status"] == "completed", "completed on the new owner")
        check(c.runs("paused") == 1, "ran exactly once")
        deadline = time.monotonic() + 20
        log = ""
        while time.monotonic() < deadline:
            with open(c.peers[victim].stderr_path, errors="replace") as f:
                log = f.read()
            if "event=rejoined" in log:
                break
            time.sleep(0.2)
        check("event=fenced" in log and "event=rejoined" in log,
              "the paused node noticed it was fenced, stepped down and rejoined")


# Tests in one list share a cluster (started once); a list's last test may
# kill or pause a node.
TESTS = [[test_routing_and_approvals_across_nodes, test_answer_through_another_node_and_race,
          test_kill_9_node_takeover],
         [test_paused_node_is_fenced]]


def main(groups=TESTS, extra=None):
    """Runs each group of tests on a cluster of its own (cluster_load_test
    and cluster_tenants_test run their own groups through here); `extra`:
    node -> more app-server options for it."""
    global PG
    if not pg_cluster.available():
        if pg_cluster.must_run():
            print("FAIL PostgreSQL is not installed", flush=True)
            return 1
        print("SKIP PostgreSQL is not installed", flush=True)
        return 77
    with pg_cluster.started() as pg:
        PG = pg
        for group in groups:
            group = [t for t in group if not ONLY or t.__name__ in ONLY]
            if not group:
                continue
            with Cluster() as c:
                c.extra = dict(extra or {})
                c.start_all()
                for t in group:
                    print("==", t.__name__, flush=True)
                    before = len(FAILURES)
                    try:
                        t(c)
                    except Exception as e:  # noqa: BLE001
                        FAILURES.append("%s: %r" % (t.__name__, e))
                        print("FAIL", t.__name__, repr(e), flush=True)
                    print("ok" if len(FAILURES) == before else "FAILED", t.__name__, flush=True)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
