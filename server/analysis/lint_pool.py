"""Where the language server runs lint: one child process, so that puppet-lint's checks (a full pass
over the text, ~80 ms on a large manifest) run next to the analysis worker instead of in front of it.
The parse and validator diagnostics of a keystroke therefore never wait for lint, and lint does not
share the analysis thread's GIL either.

``await LintPool().run(fn, *args)`` (the session holds the pool) calls a module-level function of server.analysis.lint (its arguments and
result are plain data) in the child. The child is started on first use (``spawn``: the server has
threads, so no ``fork``), its stdin and stdout are pointed at /dev/null (the server's are the LSP
stream), it exits when the server is gone (killed included), and if it cannot be started or dies, it
is started again once; after that lint runs in a thread of the server (slower typing, same results)
and the log says why.

The child runs at a lower CPU priority (``os.nice(LINT_NICE)``): on a machine with few cores a lint of
a large manifest (a full pass, run again at least every ``server.lsp.lint.LINT_MAX_WAIT`` while typing goes
on) would otherwise take a core the next keystroke's analysis needs, and that analysis is what the
user waits for; a lint result can wait. (A lint in a thread of the server, the fallback, keeps the
server's priority: the niceness is set in the child only.)
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

log = logging.getLogger("puppet-xpp.lsp")
R = TypeVar("R")

MAX_FAILURES = 2  # after this many broken children, lint runs in-process
LINT_NICE = 10  # added to the child's niceness


def _watch_parent(parent: int) -> None:
    """Child: exit when the server is gone (killed: the child's own end of its request queue would keep
    it waiting forever)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _child_init(parent: int) -> None:
    """Child initializer: a lower CPU priority than the server's (see above; set by the thread that then
    runs the lint calls, as Linux keeps a niceness per thread), off the LSP stream (nothing it prints
    may reach the client, and it never reads the client's messages), a watch on the server, and the
    lint modules imported once."""
    try:
        os.nice(LINT_NICE)
    except OSError:  # not allowed here: lint at the server's priority
        pass
    fd = os.open(os.devnull, os.O_RDWR)
    os.dup2(fd, 0)
    os.dup2(fd, 1)
    os.close(fd)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    import puppet_xpp.server.analysis.lint  # noqa: F401


class LintPool:
    """The lint child of one language server session (started on first use)."""

    def __init__(self) -> None:
        self.pool: ProcessPoolExecutor | None = None
        self.failures = 0  # broken children so far

    def executor(self) -> ProcessPoolExecutor | None:
        """The child's executor (started now if need be), or None once lint runs in-process."""
        if self.pool is None and self.failures < MAX_FAILURES:
            ctx = multiprocessing.get_context("spawn")
            self.pool = ProcessPoolExecutor(
                max_workers=1, mp_context=ctx, initializer=_child_init, initargs=(os.getpid(),)
            )
        return self.pool

    def broken(self, why: BaseException) -> None:
        self.failures += 1
        log.error(
            "lint process failed (%r)%s",
            why,
            "; lint runs in-process now" if self.failures >= MAX_FAILURES else "",
        )
        self.shutdown()

    async def run(self, fn: Callable[..., R], *args: Any) -> R:
        """``fn(*args)`` in the lint process (or, once that failed twice, in a thread)."""
        loop = asyncio.get_running_loop()
        pool = self.executor()
        if pool is not None:
            try:
                return await loop.run_in_executor(pool, fn, *args)
            except (BrokenProcessPool, OSError) as e:
                self.broken(e)
                return await self.run(fn, *args)
        return await asyncio.to_thread(fn, *args)

    def shutdown(self) -> None:
        """Stop the child (the server is exiting, or the child broke)."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None
