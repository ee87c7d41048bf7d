#!/usr/bin/env python3
"""The five figures of issue 23, for two or more builds, measured alternately.

Each round runs every figure once per build, builds in turn (A, B, A, B, ...), so
that a machine's drift falls on both alike; the table gives each figure's median
over the rounds and its range. The figures:

  1  10,000 threads x 1 approval, declined, stdio: server CPU per thread-turn
  2  the same over WebSocket, 100 connections: wall, and its ratio to stdio's
     wall in the same round
  3  answer -> serverRequest/resolved in that WebSocket run: p50 and p99
  4  streaming, 5,000 threads x 200 deltas from parley-mock-model: parley's CPU
     (the server's less the mock's) per item/agentMessage/delta
  5  memory per idle loaded thread: peak RSS of 100,000 thread/start less that
     of 1,000, over 99,000

    bench/issue23_figures.py --build before=/tmp/before --build after=build/release \\
        --harness build/release/bench/parley-bench --rounds 5 [--figures 1,2,3,4,5]

A build's DIR holds `parley` (and `parley-sandbox` beside it) or is a build tree
(DIR/transport/parley). The mock model is taken from --mock (default: the
harness's folder). One harness drives every build: what is measured stays the
same. Every run's JSON goes to --out (default /tmp/issue23-figures) for a later
look.
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def parley_of(folder):
    for candidate in (os.path.join(folder, "parley"), os.path.join(folder, "transport", "parley")):
        if os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    sys.exit(f"no parley binary in {folder}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def bench(args, harness, server, extra, name, env=None):
    """Runs the harness once; returns its JSON figures and the server's log."""
    json_path = os.path.join(args.out, f"{name}.json")
    log_path = os.path.join(args.out, f"{name}.log")
    command = [harness, "--server", server, "--json", json_path, "--server-log", log_path,
               "--quiet", "--timeout", "600"] + extra
    result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    if result.returncode != 0 or not os.path.exists(json_path):
        sys.exit(f"{name}: parley-bench failed ({result.returncode}): {result.stderr[-2000:]}")
    with open(json_path) as f:
        figures = json.load(f)
    if figures.get("violations") or figures.get("errors"):
        sys.exit(f"{name}: violations or errors: {figures.get('violations')} {figures.get('errors')}")
    with open(log_path, errors="replace") as f:
        return figures, f.read()


def run_round(args, round_index, builds, wanted, results):
    for label, parley in builds:
        def note(key, value):
            results.setdefault(key, {}).setdefault(label, []).append(value)

        tag = f"r{round_index}-{label}"
        if wanted & {1, 2, 3}:
            load = load_average()
            stdio, _ = bench(args, args.harness, f"{parley} app-server --store memory",
                             ["--threads", str(10000 // args.scale), "--mix", "decline=1"], f"{tag}-stdio")
            note("1. stdio declined: server CPU per thread-turn (µs)",
                 stdio["server_cpu_s"] * 1e6 / stdio["turns_completed"])
            note("   stdio declined: wall (s)", stdio["wall_s"])
            note("   stdio: answer -> resolved p50 / p99 (ms)",
                 (stdio["answer_to_resolved_ms"]["p50"], stdio["answer_to_resolved_ms"]["p99"]))
            note("   load average at the start", load)
        if wanted & {2, 3}:
            port = free_port()
            url = f"ws://127.0.0.1:{port}"
            ws, _ = bench(args, args.harness,
                          f"{parley} app-server --store memory --listen {url}",
                          ["--connect", url, "--connections", "100", "--threads", str(10000 // args.scale),
                           "--mix", "decline=1"], f"{tag}-ws")
            note("2. WebSocket declined: wall (s)", ws["wall_s"])
            if wanted & {1}:
                note("2. WebSocket wall / stdio wall", ws["wall_s"] / stdio["wall_s"])
            note("   WebSocket declined: server CPU per thread-turn (µs)",
                 ws["server_cpu_s"] * 1e6 / ws["turns_completed"])
            note("3. WebSocket: answer -> resolved p50 / p99 (ms)",
                 (ws["answer_to_resolved_ms"]["p50"], ws["answer_to_resolved_ms"]["p99"]))
        if 4 in wanted:
            say = "mock: say " + " ".join(f"w{i}" for i in range(1, 201))
            env = dict(os.environ, PARLEY_BIN=parley, MOCK_BIN=args.mock,
                       MOCK_ARGS="--threads=6000 --keep-alive=0")
            stream, log = bench(args, args.harness,
                                f"{HERE}/parley_with_mock.sh --store memory",
                                ["--prompt", say, "--threads", str(5000 // args.scale)], f"{tag}-stream", env)
            mock = re.search(r"mock cpu_s=([0-9.]+)", log)
            if not mock or not stream["agent_message_deltas"]:
                sys.exit(f"{tag}-stream: no mock CPU in the log or no deltas")
            parley_cpu = stream["server_cpu_s"] - float(mock.group(1))
            note("4. streaming: parley CPU per delta (µs)",
                 parley_cpu * 1e6 / stream["agent_message_deltas"])
            note("   streaming: wall (s)", stream["wall_s"])
        if 5 in wanted:
            rss = {}
            for threads in (1000 // args.scale, 100000 // args.scale):
                idle, _ = bench(args, args.harness, f"{parley} app-server --store memory",
                                ["--threads", str(threads), "--turns", "0",
                                 "--concurrency", "2000"], f"{tag}-idle{threads}")
                rss[threads] = idle["server_peak_rss_kb"]
            note("5. memory per idle loaded thread (KB of 1,000 bytes)", (rss[max(rss)] - rss[min(rss)]) / (max(rss) - min(rss)) * 1.024)
            note("   peak RSS, 100,000 idle threads (MB)", rss[max(rss)] / 1024)


def summary(values):
    if isinstance(values[0], tuple):
        return " / ".join(summary([v[i] for v in values]) for i in range(len(values[0])))
    middle = statistics.median(values)
    digits = 2 if middle < 10 else (1 if middle < 100 else 0)
    return f"{middle:.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="append", required=True, metavar="NAME=DIR")
    parser.add_argument("--harness", required=True)
    parser.add_argument("--mock", help="parley-mock-model (default: beside the harness)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--figures", default="1,2,3,4,5")
    parser.add_argument("--scale", type=int, default=1,
                        help="divide every thread count by this (a quick check of the script)")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "issue23-figures"))
    args = parser.parse_args()
    args.harness = os.path.abspath(args.harness)
    args.mock = os.path.abspath(args.mock or os.path.join(os.path.dirname(args.harness),
                                                          "parley-mock-model"))
    os.makedirs(args.out, exist_ok=True)
    builds = []
    for spec in args.build:
        label, _, folder = spec.partition("=")
        builds.append((label, parley_of(folder)))
    wanted = {int(f) for f in args.figures.split(",")}
    results = {}
    for round_index in range(1, args.rounds + 1):
        run_round(args, round_index, builds, wanted, results)
        print(f"round {round_index} of {args.rounds} done", file=sys.stderr)
    labels = [label for label, _ in builds]
    print(f"| figure (medians of {args.rounds} alternated rounds [range]) | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for key, by_label in results.items():
        print(f"| {key} | " + " | ".join(summary(by_label[label]) for label in labels) + " |")
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
