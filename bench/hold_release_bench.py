#!/usr/bin/env python3
"""A reading client's turn times while another client's stream is held
(issue 22): the provider's cap is 1, a stdio client starts a long streaming
turn and stops reading (its stream is held in the one slot) and a WebSocket
client that reads runs turns one after the other; the slow client reads
again SLOW_READS_AFTER seconds later. With stream_hold_release_ms 0 (as
before the release) the reading client's first turn waits for the slow
client; with a release it waits the grace. Each run is ctest
`hold_release`'s run() (tests/transport/hold_release_test.py), with the
checks left out.

Usage: hold_release_bench.py PARLEY [--releases MS,MS,...] [--turns N]
       [--slow-reads-after S]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "transport"))
import hold_release_test  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parley")
    ap.add_argument("--releases", default="0,5000,300",
                    help="stream_hold_release_ms values; 0: never (as before)")
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--slow-reads-after", type=float, default=10.0)
    a = ap.parse_args()
    for ms in [int(x) for x in a.releases.split(",")]:
        figures = hold_release_test.run(a.parley, release_ms=ms, turns=a.turns,
                                        slow_reads_after_s=a.slow_reads_after)
        print("stream_hold_release_ms=%d" % ms, json.dumps(figures), flush=True)


if __name__ == "__main__":
    sys.exit(main())
