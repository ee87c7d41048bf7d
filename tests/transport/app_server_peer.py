"""Test peers shared by the model-provider and Codex tests: the mock model on
loopback, a JSON-RPC client of any app-server on stdio (parley's, or the real
Codex's) reading every line it prints on a thread of its own, and whether the
real Codex can be run here."""
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request

# The real Codex, from npm (the tests that run it skip where it cannot be had).
CODEX = ["npx", "-y", "@openai/codex@0.169.0"]


def codex_unavailable():
    """Why the Codex 0.169.0 package cannot be run here, or None. Once it can,
    CODEX names the package's own launcher in npx's cache: npx asks the
    registry again on each run, and where the registry is slow a TUI waited
    minutes on a blank screen before it started (CI saw it)."""
    if shutil.which("npx") is None:
        return "npx is missing"
    try:
        version = subprocess.run(CODEX + ["--version"], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "the Codex package could not be fetched in time"
    if version.returncode != 0 or "0.169.0" not in version.stdout:
        return "the Codex 0.169.0 package is not available: " + version.stderr[-200:]
    located = subprocess.run(["npx", "-y", "-p", "@openai/codex@0.169.0", "-c", "command -v codex"],
                             capture_output=True, text=True, timeout=600)
    launcher = located.stdout.strip()
    if located.returncode == 0 and launcher and os.access(launcher, os.X_OK):
        CODEX[:] = [launcher]  # in place: importers hold this list
    return None


class Mock:
    """parley-mock-model on a free loopback port."""

    def __init__(self, binary, *flags):
        self.dir = tempfile.mkdtemp(prefix="parley-mock-")
        self.log = open(os.path.join(self.dir, "mock.log"), "w")
        # Under ThreadSanitizer the mock is a fixture, not what is tested: its
        # server library (cpp-httplib) is not instrumented and races in its
        # own buffers, so the mock reports nothing and never stops on one;
        # parley's reports still fail the run.
        env = dict(os.environ)
        if "TSAN_OPTIONS" in env:
            env["TSAN_OPTIONS"] = "report_bugs=0"
        self.proc = subprocess.Popen([binary, "--port=0", *flags], stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=env)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError("the mock did not start: %r" % line)
        self.url = line.split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1])

    def requests(self):
        """The model requests it received, oldest first."""
        with urllib.request.urlopen(self.url + "/mock/requests", timeout=10) as r:
            return [q for q in json.load(r) if q["method"] == "POST"]

    def forget(self):
        req = urllib.request.Request(self.url + "/mock/requests", method="DELETE")
        urllib.request.urlopen(req, timeout=10).close()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class StdioPeer:
    """A client of one app-server process on stdio: requests with their
    replies, notifications and server requests kept in arrival order until
    a wait() wants them."""

    def __init__(self, args, env, stderr_path, client_name="provider-test"):
        self.stderr_path = stderr_path
        self.stderr = open(stderr_path, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, env=env, bufsize=1)
        self.inbox = queue.Queue()
        self.kept = []  # read but not yet wanted, in order
        self.lines = []
        self.methods = {}  # request id -> method, for the schema check
        self.next_id = 0
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.call("initialize", {"clientInfo": {"name": client_name, "version": "1"}}, timeout=60)
        self.notify("initialized")

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            try:
                m = json.loads(line)
            except ValueError:
                m = {"unparsable": line}
            m["_at"] = time.monotonic()
            self.inbox.put(m)
        self.inbox.put(None)

    def write(self, obj):
        with self.lock:
            self.proc.stdin.write(json.dumps(obj) + "\n")
            self.proc.stdin.flush()

    def notify(self, method, params=None):
        self.write({"method": method, **({"params": params} if params is not None else {})})

    def send(self, method, params):
        with self.lock:
            self.next_id += 1
            i = self.next_id
        self.methods[i] = method
        self.write({"id": i, "method": method, "params": params})
        return i

    def wait(self, pred, timeout=20):
        for m in self.kept:
            if pred(m):
                self.kept.remove(m)
                return m
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("nothing matched within %s s" % timeout)
            try:
                m = self.inbox.get(timeout=left)
            except queue.Empty:
                raise TimeoutError("nothing matched within %s s" % timeout)
            if m is None:
                raise EOFError("the server closed stdout")
            if pred(m):
                return m
            self.kept.append(m)

    def reply_to(self, i, timeout=20):
        return self.wait(lambda m: m.get("id") == i and "method" not in m, timeout)

    def call(self, method, params, timeout=20):
        return self.reply_to(self.send(method, params), timeout)

    def wait_index_ready(self, timeout=20):
        """Waits until the thread index has caught up with the rollouts on
        disk (lists never wait for it: they answer from what is indexed so
        far); returns the catch-up's figures from parley/stats."""
        deadline = time.monotonic() + timeout
        while True:
            index = self.call("parley/stats", {})["result"]["store"]["index"]
            if index["state"] == "ready" or time.monotonic() > deadline:
                return index
            time.sleep(0.02)

    def start_thread(self, **params):
        params.setdefault("approvalPolicy", "on-request")
        return self.call("thread/start", params)["result"]["thread"]["id"]

    def start_turn(self, thread, text):
        r = self.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": text}]})
        return r["result"]["turn"]["id"]

    def run_turn(self, thread, text, decisions=(), timeout=30):
        """Starts a turn, answers its approvals with `decisions` in order, and
        returns everything about it up to and including turn/completed."""
        turn = self.start_turn(thread, text)
        decisions = list(decisions)
        events = []
        while True:
            m = self.wait(lambda m: (m.get("params") or {}).get("turnId") == turn
                          or ((m.get("params") or {}).get("turn") or {}).get("id") == turn
                          or m.get("method") == "error" and m["params"].get("turnId") == turn,
                          timeout)
            events.append(m)
            if m.get("method", "").endswith("requestApproval") and "id" in m:
                if decisions:
                    self.write({"id": m["id"], "result": {"decision": decisions.pop(0)}})
            if m.get("method") == "turn/completed":
                return turn, events

    def stop(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self.proc.wait(timeout=60)
        self.reader.join(timeout=10)
        self.stderr.close()
        return code

    def log_text(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()
