#!/usr/bin/env python3
"""A slow stdio client slows its own threads, not the process (issue 22),
through real parts: the real `parley app-server` on stdio, its model a real
HTTP endpoint (this test's own streaming server on loopback, below) that
streams a long answer to each of many threads at once.

The client starts THREADS threads, then sends every turn/start and stops
reading its stdout for PAUSE_S seconds (parley's queue for it: 16 MiB).
Meanwhile:
- parley's resident memory (VmRSS) stays within RSS_BOUND_MIB of what it was
  before the turns (see the figure's reasons there), and within
  CATCH_UP_BOUND_MIB while it catches up;
- the model server sees its writes stall: most streams have a write that
  blocks for a second or more (parley stopped reading their sockets: the
  pause reached the network).
Then it reads again, and every thread's deltas arrive whole: joined, they are
the text the server sent, in order, each once, and equal to the completed
item's text.

On a parley without backpressure (the tenants branch) the stdio writer queues
every delta of every stream while the client does not read: memory grows
with the streams (hundreds of MB here) and no stream ever stalls, so both
checks fail.

Usage: backpressure_test.py PARLEY_BINARY [THREADS [DELTAS [PAUSE_S [MAX_QUEUE]]]]
(MAX_QUEUE 0: no --stdio-max-queue flag, for a binary that has none.)
(bench/backpressure_bench.py runs it with 1,000 threads and reports the figures.)
"""
import json
import os
import re
import shutil
import socket
import socketserver
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_server_peer  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL", what, flush=True)
    return cond


def delta_text(stream, k):
    """The k-th delta of stream `stream`: unique, so a delta lost, repeated
    or out of order changes the joined text."""
    return "%d.%d " % (stream, k)


class StreamingModel:
    """A Responses API endpoint on loopback: a request whose input says
    "stream N" gets DELTAS small text deltas, written in batches, on its own
    connection (closed after the answer). Each write's duration is kept per
    stream: a write blocks when the client does not read its socket."""

    def __init__(self, deltas, batch=25, pace_s=0.002):
        self.deltas, self.batch, self.pace_s = deltas, batch, pace_s
        self.lock = threading.Lock()
        self.longest_write = {}  # stream -> seconds of its longest blocked write
        self.finished = set()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                outer.serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
            request_queue_size = 4096

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def serve(self, sock):
        # A small send buffer: what parley does not read stalls the writer soon.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
        data = b""
        while b"\r\n\r\n" not in data:
            piece = sock.recv(65536)
            if not piece:
                return
            data += piece
        head, body = data.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
        while len(body) < length:
            piece = sock.recv(65536)
            if not piece:
                return
            body += piece
        match = re.search(rb"stream (\d+)", body)
        stream = int(match.group(1)) if match else -1
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Connection: close\r\n\r\n")
        longest = 0.0
        for chunk in self.events(stream):
            started = time.monotonic()
            try:
                sock.sendall(chunk)
            except OSError:
                return
            longest = max(longest, time.monotonic() - started)
            time.sleep(self.pace_s)
        with self.lock:
            self.longest_write[stream] = longest
            self.finished.add(stream)

    def events(self, stream):
        """The response's SSE events, in write batches."""
        item = "msg_%d" % stream
        seq = [0]

        def event(kind, fields):
            seq[0] += 1
            data = dict(fields, type=kind, sequence_number=seq[0])
            return "event: %s\ndata: %s\n\n" % (kind, json.dumps(data, separators=(",", ":")))

        text = "".join(delta_text(stream, k) for k in range(self.deltas))
        where = {"item_id": item, "output_index": 0, "content_index": 0}
        done_item = {"type": "message", "id": item, "role": "assistant", "status": "completed",
                     "content": [{"type": "output_text", "text": text, "annotations": []}]}
        head = [
            event("response.created", {"response": {"id": "resp_%d" % stream, "object": "response",
                                                    "status": "in_progress", "output": []}}),
            event("response.output_item.added", {"output_index": 0, "item": dict(
                done_item, status="in_progress", content=[])}),
            event("response.content_part.added", dict(where, part={
                "type": "output_text", "text": "", "annotations": []})),
        ]
        yield "".join(head).encode()
        batch = []
        for k in range(self.deltas):
            batch.append(event("response.output_text.delta", dict(where, delta=delta_text(stream, k))))
            if len(batch) == self.batch:
                yield "".join(batch).encode()
                batch = []
        tail = batch + [
            event("response.output_text.done", dict(where, text=text)),
            event("response.content_part.done", dict(where, part={
                "type": "output_text", "text": text, "annotations": []})),
            event("response.output_item.done", {"output_index": 0, "item": done_item}),
            event("response.completed", {"response": {
                "id": "resp_%d" % stream, "object": "response", "status": "completed",
                "output": [done_item],
                "usage": {"input_tokens": 10, "output_tokens": self.deltas, "total_tokens": 10 + self.deltas}}}),
        ]
        yield "".join(tail).encode()


class SlowClient(app_server_peer.StdioPeer):
    """A stdio client that can stop reading parley's stdout (its reader
    waits before each line while `reading` is clear)."""

    def __init__(self, args, env, stderr_path):
        self.reading = threading.Event()
        self.reading.set()
        super().__init__(args, env, stderr_path, client_name="backpressure-test")

    def _read(self):
        while True:
            self.reading.wait()
            line = self.proc.stdout.readline()
            if not line:
                break
            try:
                m = json.loads(line)
            except ValueError:
                m = {"unparsable": line}
            self.inbox.put(m)
        self.inbox.put(None)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def sanitized(pid):
    """Whether the process runs under ASan or TSan (their runtime is mapped)."""
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    return "libasan" in maps or "libtsan" in maps


def run(parley, threads, deltas, pause_s, max_queue=16 << 20, rss_bound_mib=None, report=None,
        model_cap=0):
    """One run; returns its figures. `rss_bound_mib` None: only report.
    `model_cap`: the provider's max_concurrent_requests (0: none); with a cap
    below THREADS most requests wait in the model gate and run only after the
    client reads again, so the stalled-writes check is left out."""
    model = StreamingModel(deltas)
    root = tempfile.mkdtemp(prefix="parley-bp-")
    home, work = os.path.join(root, "home"), os.path.join(root, "work")
    os.makedirs(home)
    os.makedirs(work)
    args = [parley, "app-server", "--home", home, "--cwd", work, "--store", "memory",
            "-c", "model=stream-model", "-c", "model_provider=streamer",
            "-c", "model_providers.streamer.base_url=%s/v1" % model.url,
            "-c", "model_providers.streamer.max_concurrent_requests=%d" % model_cap]
    if max_queue:
        args += ["--stdio-max-queue", str(max_queue)]
    args += os.environ.get("PARLEY_BP_ARGS", "").split()  # --log-level=debug, say
    client = SlowClient(args, dict(os.environ), os.path.join(root, "parley.stderr"))
    figures = {"threads": threads, "deltas": deltas, "pause_s": pause_s}
    try:
        ids = [client.start_thread() for _ in range(threads)]
        rss_before = rss_kib(client.proc.pid)
        # The client stops reading, then asks for every turn.
        client.reading.clear()
        for n, t in enumerate(ids):
            client.send("turn/start", {"threadId": t, "input": [
                {"type": "text", "text": "stream %d" % n}]})
        peak = rss_before
        paused_at = time.monotonic()
        until, halfway = paused_at + pause_s, paused_at + pause_s / 2
        peak_first_half = None
        while time.monotonic() < until:
            peak = max(peak, rss_kib(client.proc.pid))
            if peak_first_half is None and time.monotonic() >= halfway:
                peak_first_half = peak
            time.sleep(0.05)
        peak_paused = peak
        peak_first_half = peak_first_half or peak
        with model.lock:
            streamed_while_paused = len(model.finished)
        # It reads again: everything owed arrives.
        resumed = time.monotonic()
        client.reading.set()
        texts, completed, statuses = {}, {}, {}
        deadline = resumed + 30 + threads * deltas / 5000
        seen = 0
        while len(statuses) < threads and time.monotonic() < deadline:
            m = client.wait(lambda m: True, max(1, deadline - time.monotonic()))
            seen += 1
            if seen % 2000 == 0:
                peak = max(peak, rss_kib(client.proc.pid))
            method, params = m.get("method"), m.get("params") or {}
            if method == "item/agentMessage/delta":
                texts.setdefault(params["threadId"], []).append(params["delta"])
            elif method == "item/completed" and params["item"]["type"] == "agentMessage":
                completed[params["threadId"]] = params["item"]["text"]
            elif method == "turn/completed":
                statuses[params["threadId"]] = params["turn"]["status"]
        figures["resume_to_last_delta_s"] = round(time.monotonic() - resumed, 2)
        figures["rss_before_mib"] = round(rss_before / 1024, 1)
        figures["rss_peak_mib"] = round(peak / 1024, 1)
        figures["rss_growth_mib"] = round((peak - rss_before) / 1024, 1)
        figures["rss_growth_paused_mib"] = round((peak_paused - rss_before) / 1024, 1)
        figures["rss_growth_second_half_mib"] = round((peak_paused - peak_first_half) / 1024, 1)
        with model.lock:
            stalled = sum(1 for s in model.longest_write.values() if s >= 1.0)
            figures["streams_stalled"] = stalled
            figures["longest_write_s"] = round(max(model.longest_write.values(), default=0), 2)
        figures["streams_done_while_paused"] = streamed_while_paused
        whole, first_bad = 0, None
        for n, t in enumerate(ids):
            expected = "".join(delta_text(n, k) for k in range(deltas))
            got = "".join(texts.get(t, []))
            if got == expected and completed.get(t) == expected and len(texts[t]) == deltas:
                whole += 1
            elif first_bad is None:
                first_bad = "thread %d: deltas %d, joined == sent: %s, completed == sent: %s" % (
                    n, len(texts.get(t, [])), got == expected, completed.get(t) == expected)
        figures["threads_whole"] = whole
        if report:
            report(figures)
        if rss_bound_mib is None:
            return figures

        check(len(statuses) == threads and set(statuses.values()) == {"completed"},
              "every turn completes (%d of %d: %s)" % (len(statuses), threads,
                                                       sorted(set(statuses.values()))))
        check(whole == threads, "every delta of every thread arrives in order, once (%d of %d "
              "whole; first not: %s)" % (whole, threads, first_bad))
        if sanitized(client.proc.pid):
            print("SKIP the memory bound: a sanitizer's allocator keeps what is freed", flush=True)
        else:
            check(peak_paused - rss_before < rss_bound_mib * 1024,
                  "RSS grows by %.1f MiB while the client does not read (bound %d MiB)"
                  % ((peak_paused - rss_before) / 1024, rss_bound_mib))
            # Held streams stop growing: memory follows the streams and the
            # marks, not the time the client does not read.
            check(peak_paused - peak_first_half < PLATEAU_SLACK_MIB * 1024,
                  "RSS grows by %.1f MiB in the pause's second half (at most %d MiB: held "
                  "streams stop growing)" % ((peak_paused - peak_first_half) / 1024,
                                             PLATEAU_SLACK_MIB))
            check(peak - rss_before < CATCH_UP_BOUND_MIB * 1024,
                  "RSS grows by %.1f MiB at most while it catches up (bound %d MiB)"
                  % ((peak - rss_before) / 1024, CATCH_UP_BOUND_MIB))
        if model_cap == 0:
            check(stalled >= threads * 8 // 10,
                  "the model server's writes stall: %d of %d streams blocked >= 1 s (longest %.1f s)"
                  % (stalled, threads, figures["longest_write_s"]))
        log = open(client.stderr_path, errors="replace").read()
        check("event=pressure" in log and "behind=true" in log,
              "parley says its client was behind (log event=pressure)")
    finally:
        try:
            client.reading.set()
            code = client.stop()
            if rss_bound_mib is not None:
                check(code == 0, "parley exits 0 (%s)" % code)
        finally:
            model.stop()
            if os.environ.get("PARLEY_KEEP_LOGS"):
                print("kept", client.stderr_path, flush=True)
            else:
                shutil.rmtree(root, ignore_errors=True)
    return figures


# What one delta of a scripted answer costs while it is on its way (bytes,
# jemalloc's size classes, measured on the 200 kB answers below): the event
# (outgoing_event, 656 B: its notification variant is as large as its largest
# alternative: 768), its params encoded ahead (159 B: 192), its three ids
# (128), a mailbox element on each of its two hops (turn -> conversation ->
# connection: 224), the conversation's outbox entry (32), its line (256 B:
# 320) and the hop to the writer (128).
DELTA_EVENT_BYTES = 1792


def never_reads_again_bound_mib(threads, say_bytes, max_queue):
    """What never_reads_again's parley may grow by, computed: every delta of
    every answer alive at once (it is not: the connection takes them as the
    turns make them, measured 15 to 43 thousand at a time for 200 kB answers),
    ten copies of each answer's text (the request's line, its parsed params,
    the user's item, the turn's text, the agent's item, its completed line,
    the memory store's copies), the writer's queue with its reserve, and 16 MiB
    of allocator floor (its thread caches and arenas). It grows with what the
    client asked for, never with how long it does not read: parley exits."""
    deltas = -(-(say_bytes // 4) // 3)  # the scripted model says three words a delta
    answers = threads * deltas * DELTA_EVENT_BYTES + 10 * threads * say_bytes
    return (answers + max_queue * 9 // 8) / (1 << 20) + 16


def never_reads_again(parley, threads=16, say_bytes=24_000, max_queue=1 << 20):
    """A stdio client that stops reading for good while output that does not
    pause (the scripted model's whole answers) piles up: past its cap parley
    gives up on it as if its input had ended (its turns stop, it exits 0 by
    itself), its memory bounded all along, rather than queue without end.

    The answers are sized to pass the cap several times over (16 x 2,000
    deltas: 8 MB of lines against a 1 MiB queue) and no more: the turns
    started before parley gave up on the client run to their end (a turn/start
    still held behind its thread's route then is dropped, not run for nobody),
    so the growth is at most that of the answers asked for: with 16 x 200 kB answers
    (267,000 deltas at ~1.3 KiB each on their way) it was 85 to 126 MiB,
    scheduling-dependent, against a bound of 128."""
    root = tempfile.mkdtemp(prefix="parley-bp-gone-")
    home, work = os.path.join(root, "home"), os.path.join(root, "work")
    os.makedirs(home)
    os.makedirs(work)
    args = [parley, "app-server", "--home", home, "--cwd", work, "--store", "memory",
            "--stdio-max-queue", str(max_queue)]
    client = SlowClient(args, dict(os.environ), os.path.join(root, "parley.stderr"))
    try:
        ids = [client.start_thread() for _ in range(threads)]
        rss_before = rss_kib(client.proc.pid)
        under_sanitizer = sanitized(client.proc.pid)
        client.reading.clear()
        for n, t in enumerate(ids):
            try:
                client.send("turn/start", {"threadId": t, "input": [
                    {"type": "text", "text": "say: " + ("w%d " % n) * (say_bytes // 4)}]})
            except BrokenPipeError:
                break  # it gave up on us already
        peak, code = rss_before, None
        deadline = time.monotonic() + 60
        while code is None and time.monotonic() < deadline:
            try:
                peak = max(peak, rss_kib(client.proc.pid))
            except OSError:
                pass
            code = client.proc.poll()
            time.sleep(0.05)
        check(code == 0, "parley gives up on the client and exits 0 by itself (%s)" % code)
        log = open(client.stderr_path, errors="replace").read()
        check("stdio event=slow_client" in log, "it says why (stdio event=slow_client)")
        # Given up is not an input's end: what it sent and was not yet run is
        # dropped, not run for nobody.
        check("connection event=client_given_up" in log,
              "its connection was told it was given up on (connection event=client_given_up)")
        # Without the cap the process would never exit and its queue would
        # hold every line and whatever the client asked for next.
        growth = (peak - rss_before) / 1024
        bound = never_reads_again_bound_mib(threads, say_bytes, max_queue)
        print("figures never_reads_again rss_growth_mib=%.1f bound_mib=%.1f" % (growth, bound),
              flush=True)
        if not under_sanitizer:
            check(growth < bound, "memory stays bounded meanwhile (+%.1f MiB, bound %.1f MiB)"
                  % (growth, bound))
    finally:
        client.reading.set()
        if client.proc.poll() is None:
            client.proc.kill()
        client.proc.wait(timeout=30)
        client.stderr.close()
        shutil.rmtree(root, ignore_errors=True)


# What parley may grow by while its client does not read, with a 16 MiB
# queue: the queue up to its high-water mark (2 MiB); what was on its way
# when the hold was felt (every stream's window: 8 KiB of body and curl's
# next piece, written as notifications about twice as large: ~50 KiB a
# stream, 10 MiB for 200); what each running stream costs whatever its pace
# (curl's 16 KiB download and 64 KiB upload buffers, the socket, the turn's
# and the model's actors and parser: ~100 KiB, 20 MiB for 200); allocator
# slack: 2 + 10 + 20 + 16 = 48 MiB (measured 15 to 38). The base branch
# grows by hundreds of MiB here (its writer queues every delta of every
# stream: 135 MiB for 50 streams of 2,000 deltas).
RSS_BOUND_MIB = 48
# While it catches up, parley runs flat out (600,000 deltas through 200
# streams, read again in bursts of the queue's marks): the queue stays under
# its cap, and jemalloc keeps the pages its threads freed for a while (its
# decay is 10 s), so the peak is the allocator's, measured 93 MiB; the base
# branch peaks far higher before the client reads at all.
CATCH_UP_BOUND_MIB = 160
# What the pause's second half may add to its first half's peak: the streams
# were all held within the first (measured 0.0 MiB over 200 and over 40
# streams); 8 MiB leaves room for a late turn's stream and allocator noise,
# and catches what grows with the pause's length (a queue without a bound).
PLATEAU_SLACK_MIB = 8


def main():
    parley = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    deltas = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    pause_s = float(sys.argv[4]) if len(sys.argv) > 4 else 6.0
    max_queue = int(sys.argv[5]) if len(sys.argv) > 5 else 16 << 20
    tests = [("slow_reader", lambda: run(
                 parley, threads, deltas, pause_s, max_queue=max_queue, rss_bound_mib=RSS_BOUND_MIB,
                 report=lambda f: print("figures", json.dumps(f), flush=True)))]
    if max_queue:  # a binary with the flag
        # More threads than the model's cap: while the client is behind, the
        # running streams are held in their gate slots (both of a stream's
        # pauses, the hold and its flow window, overlap) and the others wait
        # in the gate, some admitted during a later hold; once the client
        # reads, every turn still ends whole (no slot or stream stays stuck).
        tests.append(("model_cap", lambda: run(
            parley, 40, 1000, 3.0, max_queue=max_queue, rss_bound_mib=RSS_BOUND_MIB,
            model_cap=10, report=lambda f: print("figures model_cap", json.dumps(f), flush=True))))
        tests.append(("never_reads_again", lambda: never_reads_again(parley)))
    for name, test in tests:
        before, start = len(FAILURES), time.monotonic()
        try:
            test()
        except Exception as e:  # a hang or a crash fails the test
            check(False, "%s raised %s: %s" % (name, type(e).__name__, e))
        print("%s %s (%.1f s)" % ("ok  " if len(FAILURES) == before else "FAIL", name,
                                  time.monotonic() - start), flush=True)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
