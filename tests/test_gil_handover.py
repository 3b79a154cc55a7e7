"""The C accelerator's long walks let another thread have the GIL (issue 26 item 12: a huge document's
analysis runs on a thread apart in the language server, and the requests on other documents must not
wait for it).

A thread that wakes from I/O (the server's reader once a request arrives, its worker once a job is
queued) asks for the GIL and waits one switch interval; if the GIL was not passed meanwhile, the
interpreter asks the holder to drop it, and the holder does so where Python code runs.  The C walk that
gives positions to nodes without one (``_accel.fix_positions``, 150-290 ms for a 5 MB manifest) used to
release and take back the GIL every 4,096 nodes instead: each release woke the waiting thread before its
interval ran out, so it never asked, and the walk took the GIL back before the woken thread could --
the thread waited for the whole walk (the server's reader 160 ms, seen with timestamps logged in the
server; tests/lsp/test_huge_document.py failed on it at load 2-3).  Here a thread sleeps while the walk
runs and must run again soon after it wakes, at both the interpreter's default switch interval and the
1 ms the server uses while it analyses a big document apart."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from puppet_xpp.grammar import ast, parser
from tests.huge_shapes import bench_huge

_accel = parser._accel
pytestmark = pytest.mark.skipif(_accel is None, reason="the C accelerator is not built")

# seconds the sleeping thread may run late, beyond its switch interval (the walk: ~0.1 s)
LATE = 0.03


@pytest.fixture(scope="module")
def program() -> object:
    text = bench_huge().SHAPES["classes"](2_000_000)
    result = parser.parse(text)
    assert result.program is not None and not result.diagnostics
    return result.program


def walk_time(program: object) -> float:
    start = time.perf_counter()
    _accel.fix_positions(program, ast.Node, parser.MAX_DEPTH)
    return time.perf_counter() - start


@pytest.mark.parametrize("interval", [0.005, 0.001])
def test_a_thread_waking_during_the_walk_runs_soon(program: object, interval: float) -> None:
    alone = min(walk_time(program) for _ in range(2))
    # the sleeper wakes a quarter into the walk (the walk is repeated until it has woken, at most 4 times)
    nap = max(alone / 4, 0.005)
    late: list[float] = []
    started = threading.Event()

    def sleeper() -> None:
        started.set()
        due = time.perf_counter() + nap
        time.sleep(nap)
        late.append(time.perf_counter() - due)

    old = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        thread = threading.Thread(target=sleeper)
        thread.start()
        started.wait()
        walks = 0
        while not late and walks < 4:
            walk_time(program)
            walks += 1
        thread.join()
    finally:
        sys.setswitchinterval(old)
    assert late, "the sleeping thread never ran"
    assert late[0] <= interval + LATE, (
        f"a thread that woke during the C walk ran {late[0] * 1000:.0f} ms late "
        f"(the walk alone: {alone * 1000:.0f} ms; switch interval {interval * 1000:.0f} ms)"
    )
