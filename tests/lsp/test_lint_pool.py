"""The lint child process (server/analysis/lint_pool.py, server/analysis/child_process.py) runs at a lower
CPU priority than the server, so that on a machine with few cores the keystroke analysis wins over a
running lint; the fallback, lint in a thread of the server, keeps the server's priority.  A call's
exception comes back as itself, a killed child is replaced once (then lint runs in the server), the
child exits when its server is killed, and lint starts no process but the child."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bench import proctree
from puppet_xpp.server.analysis import lint_pool


def test_lint_child_is_nicer_than_the_server() -> None:
    ours = os.nice(0)
    pool = lint_pool.LintPool()
    try:
        child = asyncio.run(pool.run(os.nice, 0))
        assert child == min(ours + lint_pool.LINT_NICE, 19)
        assert os.nice(0) == ours
        pool.shutdown()
        pool.failures = lint_pool.MAX_FAILURES  # the child broke twice: lint in a thread
        assert asyncio.run(pool.run(os.nice, 0)) == ours
    finally:
        pool.shutdown()


def test_a_call_in_the_child_raises_its_exception_here() -> None:
    pool = lint_pool.LintPool()
    try:
        with pytest.raises(FileNotFoundError):
            asyncio.run(pool.run(os.stat, "/nonexistent/puppet-xpp"))
        assert asyncio.run(pool.run(os.getpid)) != os.getpid()  # (the child answers again)
        assert pool.failures == 0
    finally:
        pool.shutdown()


def test_a_killed_child_is_started_again_then_lint_runs_here() -> None:
    pool = lint_pool.LintPool()
    try:
        first = asyncio.run(pool.run(os.getpid))
        os.kill(first, signal.SIGKILL)
        # the call the dead child held fails over to a new child
        second = asyncio.run(pool.run(os.getpid))
        assert second not in (first, os.getpid()) and pool.failures == 1
        os.kill(second, signal.SIGKILL)
        assert asyncio.run(pool.run(os.getpid)) == os.getpid()  # twice: in a thread of the server
        assert pool.failures == lint_pool.MAX_FAILURES
    finally:
        pool.shutdown()


# a "server" that starts its lint child, says the child's pid, and is killed
_PARENT = """
import asyncio, os, signal, sys
from bench import proctree
from puppet_xpp.server.analysis import lint_pool
pool = lint_pool.LintPool()
print(asyncio.run(pool.run(os.getpid)), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_child_exits_when_the_server_is_killed() -> None:
    done = subprocess.run([sys.executable, "-c", _PARENT], capture_output=True, text=True, timeout=60)
    child = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and proctree.alive(child):
        time.sleep(0.05)
    assert not proctree.alive(child)


# a "server" that starts its lint child and lists its own children while the child runs and after the
# pool is shut down: in a process of its own, since a pytest worker has children of other tests
_CHILDREN = """
import asyncio, json, os
from bench import proctree
from puppet_xpp.server.analysis import lint_pool
from tests.lsp.test_lint_pool import _children
pool = lint_pool.LintPool()
child = asyncio.run(pool.run(os.getpid))
running = _children(os.getpid())
pool.shutdown()
print(json.dumps([child, running, _children(os.getpid())]), flush=True)
"""


def test_no_process_but_the_child() -> None:
    """Lint starts one process (multiprocessing's spawn started a resource tracker too, ~15 MB)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run(
        [sys.executable, "-c", _CHILDREN], capture_output=True, text=True, timeout=60, cwd=root
    )
    assert done.returncode == 0, done.stderr
    child, running, after = json.loads(done.stdout)
    assert running == [child]
    assert after == []


def _children(pid: int) -> list[int]:
    """The children of ``pid`` that have not ended."""
    return [c for c in proctree.children(pid) if proctree.alive(c)]
