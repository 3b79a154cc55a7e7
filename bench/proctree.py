"""A process, the processes under it and what they hold, read from Linux's /proc: the one reading of the
process tree that the benchmarks (bench/bench_index.py: the memory and CPU of the server and its children)
and the tests (tests/lsp/test_memory.py, test_lint_pool.py, test_index_parallel.py, test_index_cache.py: which
children the server has, and their memory) share.

A plain module beside the benchmarks, importing nothing of the project: a benchmark run as a script imports
it as ``proctree`` (its directory is the script's), a test as ``bench.proctree`` (the repository is on the
tests' path).  Linux only, as those readers are.

Children are listed from every thread's ``/proc/PID/task/TID/children`` (a process's children are filed under
the thread that started them); a thread or process that ends while it is read is skipped, not an error.
"""

from __future__ import annotations

import os


def children(pid: int) -> list[int]:
    """The children of ``pid``, zombies (ended, not yet reaped) included."""
    out: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(c) for c in f.read().split())
        except OSError:  # (the thread ended)
            pass
    return out


def tree(pid: int) -> list[int]:
    """``pid`` and every process under it, parents before their children."""
    pids = [pid]
    k = 0
    while k < len(pids):
        try:
            pids.extend(children(pids[k]))
        except OSError:  # (the process ended)
            pass
        k += 1
    return pids


def stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (which may hold spaces and parentheses):
    index 0 is the state, 11 and 12 the user and system CPU in clock ticks, 13 and 14 those of the reaped
    children (proc(5)'s fields 3.. counted from 0)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def alive(pid: int) -> bool:
    """``pid`` exists and has not ended (a zombie has)."""
    try:
        return stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user + system CPU seconds of ``pid``, of the children it reaped)."""
    fields = stat_fields(pid)
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def status(pid: int) -> dict[str, str]:
    """``/proc/PID/status`` as a mapping (``VmRSS`` -> ``"92160 kB"``)."""
    with open(f"/proc/{pid}/status") as f:
        return {k: v.strip() for k, _, v in (line.partition(":") for line in f)}


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM: the resident memory now and at its peak) of ``pid`` in MB (0 for a value absent)."""
    values = status(pid)
    return _mb(values.get("VmRSS")), _mb(values.get("VmHWM"))


def pss_mb(pid: int) -> float:
    """The proportional set size of ``pid`` in MB (its shared pages divided among their sharers)."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cmdline(pid: int) -> str:
    """The command line of ``pid``, its arguments joined by spaces."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode("utf-8", "replace")


def _mb(value: str | None) -> float:
    return int(value.split()[0]) / 1024 if value else 0.0
