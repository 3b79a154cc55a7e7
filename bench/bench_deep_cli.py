#!/usr/bin/env python3
"""``puppet-xpp --validate --deep`` next to plain ``--validate`` on the same files, in one run (issue 30
item 6: the deep run must take at most 2x the plain one).

    python bench/bench_deep_cli.py [--rounds N] [PATH...]

PATH: files or directories; default: the Debian module corpus (/usr/share/puppet/modules).  Each round
runs both commands as fresh processes (what a user or CI pays: start-up, imports and the built-ins' data
included), plain first then deep, alternating so that a change of the machine's load falls on both; the
CPU time (user + system) of each process is read from the children's resource usage, wall time beside
it.  Prints each round, then the median of each mode and their ratio, with the load average (CPU time
is the figure that counts on a shared machine: wall time follows the load).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

CORPUS = "/usr/share/puppet/modules"


def measure(command: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``command`` (its output discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    paths = args.paths or [CORPUS]
    base = [sys.executable, "-m", "puppet_xpp", "--validate"]
    plain: list[float] = []
    deep: list[float] = []
    measure(base + paths)  # (a first run: the files in the page cache for both)
    for round_number in range(args.rounds):
        p_cpu, p_wall = measure(base + paths)
        d_cpu, d_wall = measure(base + ["--deep"] + paths)
        plain.append(p_cpu)
        deep.append(d_cpu)
        print(
            f"round {round_number + 1}: plain {p_cpu:.2f} s CPU ({p_wall:.2f} s wall), "
            f"--deep {d_cpu:.2f} s CPU ({d_wall:.2f} s wall), ratio {d_cpu / p_cpu:.2f}, "
            f"load {os.getloadavg()[0]:.1f}"
        )
    p_median, d_median = statistics.median(plain), statistics.median(deep)
    print(
        f"median: plain {p_median:.2f} s CPU, --deep {d_median:.2f} s CPU, "
        f"ratio {d_median / p_median:.2f} (limit 2.0), load {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
