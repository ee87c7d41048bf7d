"""Many conversations at once through several stdio clients (tests/transport/
app_server_peer.StdioPeer), without waiting on each reply: every request is
sent at once, and every line any client reads is handed to the caller's
handlers in arrival order, from one queue.

StdioPeer.wait() keeps what it was not asked for and scans it again on the
next wait; with thousands of threads in flight that is quadratic. Here
nothing is kept: a reply goes to the callback its request named, and every
other line (notifications, server->client requests) to on_message.

    drive = Pipelined({"n1": peer1, "n2": peer2})
    drive.call("n1", "thread/start", {...}, lambda reply: ...)
    drive.pump(until=lambda: done(), quiet=8)
"""
import queue
import time


class _Tagged:
    """Stands in for a peer's inbox: what its reader thread puts is tagged
    with the peer's name and goes to the shared queue."""

    def __init__(self, shared, name):
        self.shared = shared
        self.name = name

    def put(self, m):
        self.shared.put((self.name, m))


class Pipelined:
    def __init__(self, peers, on_message=None):
        self.peers = dict(peers)
        self.queue = queue.Queue()
        self.on_message = on_message or (lambda name, m: None)
        self.callbacks = {}  # (peer name, request id) -> callback(reply)
        self.closed = set()  # peers whose stdout ended
        for name, p in self.peers.items():
            # Whatever the peer read and kept before is handed on first.
            for m in p.kept:
                self.queue.put((name, m))
            p.kept = []
            old, p.inbox = p.inbox, _Tagged(self.queue, name)
            while True:  # read before the swap, not yet taken (the peer is idle)
                try:
                    self.queue.put((name, old.get_nowait()))
                except queue.Empty:
                    break

    def call(self, name, method, params, callback):
        """Sends a request through `name`; `callback` gets its reply (the
        whole message: "result" or "error"). Nothing is sent to a peer that
        is gone."""
        if name in self.closed:
            return None
        try:
            i = self.peers[name].send(method, params)
        except OSError:  # its process died: its stdin is closed
            self.forget(name)
            return None
        self.callbacks[(name, i)] = callback
        return i

    def answer(self, name, request_id, result):
        if name in self.closed:
            return
        try:
            self.peers[name].write({"id": request_id, "result": result})
        except OSError:
            self.forget(name)

    def outstanding(self, name=None):
        return sum(1 for (n, _) in self.callbacks if name is None or n == name)

    def forget(self, name):
        """A peer that is gone: its outstanding requests get no reply, and
        nothing more is sent to it."""
        self.closed.add(name)
        for key in [k for k in self.callbacks if k[0] == name]:
            del self.callbacks[key]

    def pump(self, until=lambda: False, quiet=10.0, timeout=600.0):
        """Handles lines until `until()` holds, nothing came for `quiet`
        seconds, or `timeout` passed. Returns True when `until()` held."""
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                name, m = self.queue.get(timeout=min(quiet, left))
            except queue.Empty:
                return until()
            if m is None:
                self.forget(name)
                continue
            if "id" in m and "method" not in m:
                callback = self.callbacks.pop((name, m["id"]), None)
                if callback is not None:
                    callback(m)
                continue
            self.on_message(name, m)
        return True
