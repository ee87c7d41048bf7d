#!/usr/bin/env python3
"""A client's answer that reaches its connection after the approval was
decided, but before the connection heard the withdrawal (the loser of two
clients racing, or a client answering as the turn is interrupted or the
approval times out), is refused: logged (`event=late_answer`) and counted
(parley/stats refusedReplies), never applied, never dropped in silence.

Through the real `parley app-server`: the first client on stdio, the second
on a WebSocket. The ordering is forced, not hoped for: the WebSocket client
first sends frames that keep its connection busy (large JSON lines, each
parsed in full), then its answer, then a marker request; its connection
reads them in that order. While it is busy, the stdio client decides (or
interrupts the turn, or the deadline passes), the approval settles and the
turn goes on; only then does the WebSocket connection reach the answer. The
marker's response arriving after the turn went on proves the order held.

- two clients racing a command approval: the first's accept runs the
  command once, the second's decline is refused and logged;
- the turn interrupted while the second's accept is queued: nothing runs,
  the accept is refused and logged;
- the approval timed out while the answer is queued: the same;
and in every case the server keeps serving both clients, and every line it
printed is valid against the Codex schema.

Usage: late_reply_test.py PARLEY_BINARY SCHEMA_DIR
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client_requests_test as cr  # noqa: E402

check = cr.check
APPROVAL = "item/commandExecution/requestApproval"


class BusyWsPeer(cr.WsPeer):
    """A WebSocket client that can keep its connection busy: frames go out
    with a zero mask (a valid RFC 6455 key that leaves the payload as is), so
    megabytes are framed without a byte-wise XOR in Python."""

    def write_raw(self, data):
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536 else
                                bytes([0x80 | 127]) + n.to_bytes(8, "big"))
        self.sock.sendall(head + b"\0\0\0\0" + data)

    def write(self, obj):
        self.write_raw(json.dumps(obj).encode())

    def send_call(self, method, params):
        """A request whose response is waited for later."""
        self.next_id += 1
        self.methods[self.next_id] = method
        self.write({"id": self.next_id, "method": method, "params": params})
        return self.next_id


# One busy line: a notification of no method, which the connection parses in
# full and then ignores; about 260 KB of small arrays (read in linear time).
# Many small lines rather than one big one: the connection takes the probe
# (read_through) between two of them, not only after all of them.
BUSY_LINE = (b'{"method":"parley/test/busy","params":['
             + b",".join([b"[0,1]"] * 44000) + b"]}")

# How long the busy lines keep the connection busy: well past the timed-out
# case's deadline, and long enough that, after the probe came through, the
# stdio client's decision lands while the answer still waits.
BUSY_SECONDS = 5.0
APPROVAL_TIMEOUT = "2s"

def busy_for(peer, frames):
    """Seconds the connection takes to read `frames` busy lines."""
    started = time.monotonic()
    for _ in range(frames):
        peer.write_raw(BUSY_LINE)
    marker = peer.send_call("parley/debug/counts", {})
    # Generous: under ThreadSanitizer on a loaded 2-core machine one line has
    # taken several seconds (a 20 s wait failed CI); this only measures.
    peer.wait(lambda m: m.get("id") == marker and "method" not in m, timeout=300)
    return time.monotonic() - started


def calibrate(peer):
    """How many busy lines keep the connection busy for BUSY_SECONDS."""
    one = busy_for(peer, 8) / 8
    frames = max(4, min(1000, int(BUSY_SECONDS / max(one, 0.001)) + 1))
    print("note: one busy line takes %.3f s; %d lines queued ahead of the answer" % (one, frames),
          flush=True)
    return frames


def answer_behind_busy_lines(peer, frames, rid, decision):
    """Queues `frames` busy lines, then the answer, then a marker request:
    the connection reads them in that order. Returns the marker's id.

    A line without "method" is taken for a reply and overtakes the requests
    queued before it (transport/line_reader.hpp), and the withdrawal, a
    message like any other, is not kept behind it. So the answer carries a
    "method" key in its result (ignored there, as any unknown field): it is
    queued in order with the busy lines, and the withdrawal sent once the
    approval settles lands behind it."""
    for _ in range(frames):
        peer.write_raw(BUSY_LINE)
    peer.write({"id": rid, "result": {"decision": decision, "method": "queued in order"}})
    return peer.send_call("parley/debug/counts", {})


PROBES = [0]


def read_through(log_peer, peer):
    """Waits until the connection's reader has taken every frame sent so far
    off the socket and handed it to the connection (a fixed sleep was not
    enough under a sanitizer on a loaded machine: the withdrawal overtook an
    answer still in the socket, and the answer was refused by the
    connection's table instead of by the approval).

    The probe is a reply to no request: a line without "method", so it is
    handed over ahead of the queued requests and logged as
    `event=unknown_response` with its id once the connection is done with the
    busy line it is reading. The reader hands lines over in
    order, so when the probe is logged the answer sent before it is already
    in the connection's mailbox, and the withdrawal can only land behind it."""
    PROBES[0] += 1
    probe = "late-reply-probe-%d" % PROBES[0]
    peer.write({"id": probe, "result": {}})
    deadline = time.monotonic() + 120
    while probe not in log_peer.log_text():
        if time.monotonic() > deadline:
            check(False, "the probe %s was read within 120 s" % probe)
            return
        time.sleep(0.02)


def foreign_responses(log):
    """`event=unknown_response` lines other than the probes'."""
    return [l for l in log.splitlines()
            if "event=unknown_response" in l and "late-reply-probe-" not in l]


def late_answers(log):
    return log.count("event=late_answer")


def setup(extra=()):
    s = cr.Server(ws=True, extra=["--sandbox-unconfined", *extra])
    if not check(s.ws_url is not None, "the server listens on a WebSocket too"):
        s.stop("setup")
        return None
    p = s.peer
    thread = p.start_thread()
    other = BusyWsPeer(s.ws_url)
    r = other.call("thread/resume", {"threadId": thread})
    check("result" in r, "a second client resumes the thread: %s" % r.get("error"))
    return s, p, other, thread


def approvals_of_both(p, other):
    a = p.wait(lambda m: m.get("method") == APPROVAL and "id" in m)
    b = other.wait(lambda m: m.get("method") == APPROVAL and "id" in m)
    check(a["params"]["itemId"] == b["params"]["itemId"], "both clients are asked about the command")
    return a, b


def marker_after(other, marker, what):
    """The marker's response comes only now: the queued answer was read after
    the approval had settled (the turn went on before it)."""
    early = [m for m in other.kept if m.get("id") == marker and "method" not in m]
    check(not early, "%s: the WebSocket connection was still busy when the turn went on "
          "(the ordering was forced)" % what)
    other.wait(lambda m: m.get("id") == marker and "method" not in m, timeout=120)


def still_serving(s, p, other, thread, what):
    """Both connections answer, and the thread runs another turn."""
    r = other.call("parley/debug/counts", {})
    check("result" in r, "%s: the WebSocket client is still served" % what)
    turn, events = p.run_turn(thread, "say: still here")
    check(events[-1]["params"]["turn"]["status"] == "completed", "%s: a next turn completes" % what)
    n = p.call("parley/debug/counts", {})["result"]
    check(n["approvals"] == 0 and n["pendingRequests"] == 0, "%s: nothing left pending: %s" % (what, n))


def finish(s, other, what):
    other.close()
    cr.SCHEMA.check(check, other, what + " (ws client)")
    return s.stop(what)


def test_race(frames):
    """The loser of two clients answers after the decision."""
    what = "race"
    ctx = setup()
    if not ctx:
        return
    s, p, other, thread = ctx
    work = s.work
    turn = p.start_turn(thread, "run[escalate]: echo ran >> ran.txt\nsay: done")
    a, b = approvals_of_both(p, other)
    marker = answer_behind_busy_lines(other, frames, b["id"], "decline")
    read_through(p, other)  # the answer and the marker are in the connection's mailbox
    p.write({"id": a["id"], "result": {"decision": "accept"}})
    p.wait(cr.resolved_for(a["id"]))
    events = cr.until_completed(p, turn)
    check(events[-1]["params"]["turn"]["status"] == "completed", "%s: the turn completes" % what)
    marker_after(other, marker, what)
    other.wait(cr.resolved_for(b["id"]))
    done = [m["params"]["item"] for m in events if m.get("method") == "item/completed"
            and m["params"]["item"]["type"] == "commandExecution"]
    check(len(done) == 1 and done[0]["status"] == "completed",
          "%s: the accept that won applies once: %s" % (what, [d["status"] for d in done]))
    with open(os.path.join(work, "ran.txt")) as f:
        check(f.read() == "ran\n", "%s: the command ran exactly once" % what)
    stats = p.call("parley/stats", {})["result"]["approvals"]
    # Refused: the late decline, and the probe (a reply to no request).
    check(stats["decided"] == 1 and stats["refusedReplies"] == 2,
          "%s: decided once, the late decline refused and counted: %s" % (what, stats))
    time.sleep(0.2)
    log = p.log_text()
    check(late_answers(log) == 1, "%s: the late decline is logged (event=late_answer): %d"
          % (what, late_answers(log)))
    check(not foreign_responses(log),
          "%s: it reached the approval (not refused by the connection's table)" % what)
    still_serving(s, p, other, thread, what)
    finish(s, other, what)


def test_interrupted(frames):
    """The turn is interrupted while the second client's accept is queued."""
    what = "interrupted"
    ctx = setup()
    if not ctx:
        return
    s, p, other, thread = ctx
    turn = p.start_turn(thread, "run[escalate]: echo ran >> ran.txt\nsay: never said")
    a, b = approvals_of_both(p, other)
    marker = answer_behind_busy_lines(other, frames, b["id"], "accept")
    read_through(p, other)
    r = p.call("turn/interrupt", {"threadId": thread, "turnId": turn})
    check("result" in r, "%s: turn/interrupt answers: %s" % (what, r))
    p.wait(cr.resolved_for(a["id"]))
    events = cr.until_completed(p, turn)
    check(events[-1]["params"]["turn"]["status"] == "interrupted", "%s: the turn ends interrupted" % what)
    marker_after(other, marker, what)
    check(not os.path.exists(os.path.join(s.work, "ran.txt")), "%s: the late accept runs nothing" % what)
    stats = p.call("parley/stats", {})["result"]["approvals"]
    check(stats["cancelled"] == 1 and stats["refusedReplies"] == 2,  # with the probe
          "%s: cancelled, the late accept refused and counted: %s" % (what, stats))
    time.sleep(0.2)
    log = p.log_text()
    check(late_answers(log) == 1, "%s: the late accept is logged (event=late_answer): %d"
          % (what, late_answers(log)))
    still_serving(s, p, other, thread, what)
    finish(s, other, what)


def test_timed_out(frames):
    """The approval's deadline passes while the second client's accept is queued."""
    what = "timed out"
    ctx = setup(["--approval-timeout", APPROVAL_TIMEOUT])
    if not ctx:
        return
    s, p, other, thread = ctx
    turn = p.start_turn(thread, "run[escalate]: echo ran >> ran.txt\nsay: moving on")
    a, b = approvals_of_both(p, other)
    # Queued behind lines that take longer than the deadline: three times the
    # calibrated count, as the calibration may have run under a heavier load
    # than this case (a line took 0.045 s there and less than half of it
    # here: the accept arrived in time and was applied).
    marker = answer_behind_busy_lines(other, 3 * frames, b["id"], "accept")
    p.wait(cr.resolved_for(a["id"]), timeout=10)
    events = cr.until_completed(p, turn)
    check(events[-1]["params"]["turn"]["status"] == "completed", "%s: the turn goes on" % what)
    marker_after(other, marker, what)
    check(not os.path.exists(os.path.join(s.work, "ran.txt")), "%s: the late accept runs nothing" % what)
    stats = p.call("parley/stats", {})["result"]["approvals"]
    check(stats["timedOut"] == 1 and stats["refusedReplies"] == 1,
          "%s: timed out, the late accept refused and counted: %s" % (what, stats))
    time.sleep(0.2)
    log = p.log_text()
    check(late_answers(log) == 1, "%s: the late accept is logged (event=late_answer): %d"
          % (what, late_answers(log)))
    still_serving(s, p, other, thread, what)
    finish(s, other, what)


def main():
    ctx = setup()
    if not ctx:
        sys.exit(1)
    s, _, other, _ = ctx
    frames = calibrate(other)
    finish(s, other, "calibration")
    for test in (test_race, test_interrupted, test_timed_out):
        print("--", test.__name__, flush=True)
        try:
            test(frames)
        except Exception as e:  # a hang or a crash is a failure of that test, not of the run
            check(False, "%s raised %r" % (test.__name__, e))
    print("%d failed" % len(cr.FAILURES))
    sys.exit(1 if cr.FAILURES else 0)


if __name__ == "__main__":
    main()
