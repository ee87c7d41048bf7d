#!/usr/bin/env python3
"""What parley-sandbox adds to each command: the median wall time of N runs
of `/bin/true` directly and through the launcher in each mode.

Usage: sandbox_cost.py PATH/TO/parley-sandbox [RUNS]   (bench/README.md)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

launcher = os.path.abspath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
work = tempfile.mkdtemp(prefix="sandbox-cost-", dir=os.getcwd())
variants = {
    "/bin/true directly": ["/bin/true"],
    "danger-full-access": [launcher, "--mode", "danger-full-access", "--", "/bin/true"],
    "read-only": [launcher, "--mode", "read-only", "--", "/bin/true"],
    "workspace-write": [launcher, "--mode", "workspace-write", "--writable", work, "--",
                        "/bin/true"],
    "workspace-write + network on": [launcher, "--mode", "workspace-write", "--writable", work,
                                     "--network", "on", "--", "/bin/true"],
    "workspace-write + --max-processes": [launcher, "--mode", "workspace-write", "--writable",
                                          work, "--max-processes", "64", "--", "/bin/true"],
}
samples = {name: [] for name in variants}
for _ in range(runs):  # interleaved, so drift hits every variant alike
    for name, argv in variants.items():
        start = time.perf_counter()
        subprocess.run(argv, cwd=work, check=True)
        samples[name].append((time.perf_counter() - start) * 1e6)
os.rmdir(work)
base = statistics.median(samples["/bin/true directly"])
print(f"{'variant':38} {'median µs':>10} {'p90 µs':>8} {'added µs':>9}")
for name, values in samples.items():
    values.sort()
    median = statistics.median(values)
    print(f"{name:38} {median:10.0f} {values[int(len(values) * 0.9)]:8.0f} {median - base:9.0f}")
