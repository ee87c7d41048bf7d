#!/usr/bin/env python3
"""Model requests under limits, through real parts: the real `parley
app-server` on stdio and the real `parley-mock-model` over loopback HTTP.

test_request_cap: a provider's `max_concurrent_requests` holds at the
endpoint (the mock counts the streams it writes at once) while every thread's
turn completes whole; without the cap the same burst reaches the endpoint all
at once (so the check can fail). test_retry_deltas_once: a stream cut
midway and retried shows the client each delta once, in order, and the
completed message is the retry's whole text.

Usage: model_limits_test.py PARLEY_BINARY MOCK_BINARY [TEST_NAME...]
"""
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402

PARLEY = sys.argv[1]
MOCK = sys.argv[2]
ONLY = set(sys.argv[3:])
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)
    return cond


class Parley(app_server_peer.StdioPeer):
    """One `parley app-server` on stdio whose model is the mock."""

    def __init__(self, mock, extra=()):
        self.root = tempfile.mkdtemp(prefix="parley-limits-")
        home, work = os.path.join(self.root, "home"), os.path.join(self.root, "work")
        os.makedirs(home)
        os.makedirs(work)
        args = [PARLEY, "app-server", "--home", home, "--cwd", work, "--store", "memory",
                "-c", "model=mock-model", "-c", "model_provider=mock",
                "-c", "model_providers.mock.base_url=%s/v1" % mock.url, *extra]
        super().__init__(args, dict(os.environ), os.path.join(self.root, "parley.stderr"))

    def stop(self):
        code = super().stop()
        shutil.rmtree(self.root, ignore_errors=True)
        return code


def mock_stats(mock):
    with urllib.request.urlopen(mock.url + "/mock/stats", timeout=30) as r:
        return json.load(r)


def model_figures(p):
    """parley/stats' model figures (issue 22's metrics, as stats shows them)."""
    return p.call("parley/stats", {})["result"]["model"]


def run_burst(mock, p, count, pace_ms=20):
    """`count` threads each start a streaming turn at once (a delta every
    `pace_ms`); returns the turns' statuses and each turn's deltas in arrival
    order."""
    threads = [p.start_thread() for _ in range(count)]
    for n, t in enumerate(threads):
        p.start_turn(t, "mock: pace %d\nmock: say turn %d streams one two three four"
                     % (pace_ms, n))
    statuses, deltas = {}, {}
    deadline = time.monotonic() + 120
    while len(statuses) < count and time.monotonic() < deadline:
        m = p.wait(lambda m: m.get("method") in ("turn/completed", "item/agentMessage/delta"),
                   max(1, deadline - time.monotonic()))
        if m["method"] == "item/agentMessage/delta":
            deltas.setdefault(m["params"]["turnId"], []).append(m["params"]["delta"])
        else:
            statuses[m["params"]["turn"]["id"]] = m["params"]["turn"]["status"]
    return statuses, deltas


def test_request_cap(count=24, cap=3):
    # The mock has threads for every connection: only parley's cap can hold the streams back.
    mock = app_server_peer.Mock(MOCK, "--threads=64", "--keep-alive=0")
    p = Parley(mock, ["-c", "model_providers.mock.max_concurrent_requests=%d" % cap])
    try:
        statuses, deltas = run_burst(mock, p, count)
        check(len(statuses) == count and set(statuses.values()) == {"completed"},
              "cap %d: all %d turns complete (%d done: %s)"
              % (cap, count, len(statuses), sorted(set(statuses.values()))))
        whole = [n for n, d in deltas.items() if "".join(d).endswith("streams one two three four")]
        check(len(whole) == count, "cap %d: every turn's deltas make its whole message (%d of %d)"
              % (cap, len(whole), count))
        stats = mock_stats(mock)
        check(1 <= stats["streams_most"] <= cap,
              "cap %d: never more than %d streams at the endpoint at once (most %d)"
              % (cap, cap, stats["streams_most"]))
        check(len(mock.requests()) == count, "cap %d: one request per turn" % cap)
        # The model figures saw the same: every attempt completed, none left
        # waiting or in flight, and some waited for the cap.
        m = model_figures(p)
        check(m["requests"]["completed"] == count and m["waiting"] == 0 and m["inFlight"] == 0,
              "cap %d: the model figures count %d completed requests, none open: %s"
              % (cap, count, m))
        check(m["queueWaitMs"]["p99"] > 0 and m["responseMs"]["p50"] > 0
              and m["firstByteMs"]["p50"] > 0, "cap %d: latencies recorded: %s" % (cap, m))
    finally:
        check(p.stop() == 0, "parley exits 0")
        mock.stop()

    # The same burst with the cap off reaches the endpoint all at once. Its
    # streams are slow (about a second each), so that they overlap however
    # loaded the machine is: at 20 ms a delta, a machine at load 12-58 started
    # them too far apart to see more than 3 at once.
    mock = app_server_peer.Mock(MOCK, "--threads=64", "--keep-alive=0")
    p = Parley(mock, ["-c", "model_providers.mock.max_concurrent_requests=0"])
    try:
        statuses, _ = run_burst(mock, p, count, pace_ms=200)
        check(set(statuses.values()) == {"completed"}, "no cap: the turns complete")
        most = mock_stats(mock)["streams_most"]
        check(most > cap, "no cap: more than %d streams at once (most %d): the check above can fail"
              % (cap, most))
    finally:
        check(p.stop() == 0, "parley exits 0")
        mock.stop()


def test_request_cap_small_backlog(count=12):
    """An endpoint like a local model server: 2 connections served, 2 more in
    the kernel's backlog, the rest wait for SYN retransmissions. parley's
    default cap for a loopback provider (8) and a cap of 2 both complete every
    turn; with 2 the endpoint never serves more than 2 at once."""
    mock = app_server_peer.Mock(MOCK, "--threads=2", "--backlog=2", "--queue-connections=0",
                                "--keep-alive=0")
    p = Parley(mock, ["-c", "model_providers.mock.max_concurrent_requests=2"])
    try:
        statuses, _ = run_burst(mock, p, count)
        check(len(statuses) == count and set(statuses.values()) == {"completed"},
              "small backlog: all %d turns complete (%s)" % (count, sorted(set(statuses.values()))))
        check(mock_stats(mock)["streams_most"] <= 2, "small backlog: at most 2 streams at once")
    finally:
        check(p.stop() == 0, "parley exits 0")
        mock.stop()


def test_queued_request_is_not_idle(count=4):
    """A request waiting for the cap is not a silent stream: with a cap of 1
    and an idle timeout shorter than the wait, no request is retried."""
    mock = app_server_peer.Mock(MOCK, "--keep-alive=0")
    p = Parley(mock, ["-c", "model_providers.mock.max_concurrent_requests=1",
                      "-c", "model_providers.mock.stream_idle_timeout_ms=400"])
    try:
        threads = [p.start_thread() for _ in range(count)]
        for n, t in enumerate(threads):
            p.start_turn(t, "mock: pace 100\nmock: say slow turn %d a b c d e" % n)
        statuses, retries = {}, 0
        deadline = time.monotonic() + 60
        while len(statuses) < count and time.monotonic() < deadline:
            m = p.wait(lambda m: m.get("method") in ("turn/completed", "error"),
                       max(1, deadline - time.monotonic()))
            if m["method"] == "error":
                retries += 1
            else:
                statuses[m["params"]["turn"]["id"]] = m["params"]["turn"]["status"]
        check(len(statuses) == count and set(statuses.values()) == {"completed"},
              "queued: every turn completes (%s)" % sorted(set(statuses.values())))
        check(retries == 0, "queued: no request counted as idle while it waited (%d retries)" % retries)
        check(len(mock.requests()) == count, "queued: one request per turn (%d)" % len(mock.requests()))
    finally:
        check(p.stop() == 0, "parley exits 0")
        mock.stop()


def test_retry_deltas_once():
    mock = app_server_peer.Mock(MOCK)
    p = Parley(mock)
    try:
        t = p.start_thread()
        words = "every delta of this answer arrives exactly once even after a cut"
        _, ev = p.run_turn(t, "mock: cut\nmock: say " + words)
        retries = [m for m in ev if m.get("method") == "error" and m["params"].get("willRetry")]
        check(len(retries) == 1, "cut: one retry notice (%d)" % len(retries))
        deltas = [m for m in ev if m.get("method") == "item/agentMessage/delta"]
        cut_at = ev.index(retries[0]) if retries else 0
        check(any(ev.index(d) < cut_at for d in deltas),
              "the broken attempt had streamed deltas before the cut (else this tests nothing)")
        text = "".join(d["params"]["delta"] for d in deltas)
        check(text == words, "the client's deltas make the message once: %r" % text)
        done = [m["params"]["item"] for m in ev if m.get("method") == "item/completed"
                and m["params"]["item"]["type"] == "agentMessage"]
        check(len(done) == 1 and done[0]["text"] == words, "one whole message item: %s" % done)
        check(len(mock.requests()) == 2, "two attempts")
        # Cut twice: still once.
        _, ev = p.run_turn(t, "mock: cut times=2\nmock: say twice broken and still said once")
        text = "".join(m["params"]["delta"] for m in ev if m.get("method") == "item/agentMessage/delta")
        check(text == "twice broken and still said once", "cut twice: each delta once: %r" % text)
        # Five attempts in all: two completed, three cut (each one retried).
        m = model_figures(p)
        retried = m["retries"]["request"] + m["retries"]["stream"]
        broken = m["requests"]["stream_broken"] + m["requests"]["unreachable"]
        check(m["requests"]["completed"] == 2 and retried == 3 and broken == 3,
              "the model figures count 2 completed attempts, 3 cut and retried: %s" % m)
        # Cut in the answer after the reasoning was shown completed: the retry
        # streams the reasoning again, and the client does not see it twice.
        words = ("the answer after a short thought streams once even when the stream is cut "
                 "in the middle of it and asked again from its very start")
        _, ev = p.run_turn(t, "mock: cut\nmock: reason a short thought\nmock: say " + words)
        retry_at = next((i for i, m in enumerate(ev) if m.get("method") == "error"), len(ev))
        before = [m for m in ev[:retry_at] if m.get("method") == "item/agentMessage/delta"]
        check(before, "the cut came after the reasoning, in the answer (else this tests nothing)")
        reasoning = [m["params"]["item"] for m in ev if m.get("method") == "item/completed"
                     and m["params"]["item"]["type"] == "reasoning"]
        check(len(reasoning) == 1 and reasoning[0]["summary"] == ["a short thought"],
              "one reasoning item, not shown again by the retry: %s" % reasoning)
        summary = "".join(m["params"]["delta"] for m in ev
                          if m.get("method") == "item/reasoning/summaryTextDelta")
        check(summary == "a short thought", "its summary deltas once: %r" % summary)
        text = "".join(m["params"]["delta"] for m in ev if m.get("method") == "item/agentMessage/delta")
        check(text == words, "the answer's deltas once: %r" % text)
    finally:
        check(p.stop() == 0, "parley exits 0")
        mock.stop()


TESTS = [test_request_cap, test_request_cap_small_backlog, test_queued_request_is_not_idle,
         test_retry_deltas_once]


def main():
    for test in TESTS:
        if ONLY and test.__name__ not in ONLY:
            continue
        before = len(FAILURES)
        start = time.monotonic()
        try:
            test()
        except Exception as e:  # a hang or a crash fails this test, not the run
            check(False, "%s raised %s: %s" % (test.__name__, type(e).__name__, e))
        print("%s %s (%.1f s)" % ("ok  " if len(FAILURES) == before else "FAIL", test.__name__,
                                 time.monotonic() - start), flush=True)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
