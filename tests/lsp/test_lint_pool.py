"""The lint child process (server/analysis/lint_pool.py) runs at a lower CPU priority than the server, so that
on a machine with few cores the keystroke analysis wins over a running lint; the fallback, lint in a
thread of the server, keeps the server's priority."""

from __future__ import annotations

import asyncio
import os

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
