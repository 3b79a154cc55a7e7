"""Where the language server runs lint: one child process, so that puppet-lint's checks (a full pass
over the text, ~80 ms on a large manifest) run next to the analysis worker instead of in front of it.
The parse and validator diagnostics of a keystroke therefore never wait for lint, and lint does not
share the analysis thread's GIL either.

``await LintPool().run(fn, *args)`` (the session holds the pool) calls a module-level function of
server.analysis.lint (its arguments and result are plain data) in the child. The child
(server/analysis/child_process.py: a fresh interpreter, not a fork, as the server has threads) is
started on first use with only the lint modules imported, its stdin and stdout on /dev/null (the
server's are the LSP stream); it exits when the server is gone (killed included: its request pipe
ends). If it cannot be started or dies, it is started again once; after that lint runs in a thread of
the server (slower typing, same results) and the log says why.

The child runs at a lower CPU priority (``LINT_NICE`` added to its niceness): on a machine with few
cores a lint of a large manifest (a full pass, run again at least every ``server.lsp.lint.LINT_MAX_WAIT``
while typing goes on) would otherwise take a core the next keystroke's analysis needs, and that
analysis is what the user waits for; a lint result can wait. (A lint in a thread of the server, the
fallback, keeps the server's priority: the niceness is set in the child only.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from puppet_xpp.server.analysis.child_process import ChildDied, Workers

log = logging.getLogger("puppet-xpp.lsp")
R = TypeVar("R")

MAX_FAILURES = 2  # after this many broken children, lint runs in-process
LINT_NICE = 10  # added to the child's niceness


# what the child imports before the first request (only that: not this module, whose asyncio would
# cost the child a few MB)
CHILD_INIT = "puppet_xpp.server.analysis.lint"


class LintPool:
    """The lint child of one language server session (started on first use)."""

    def __init__(self) -> None:
        self.pool: Workers | None = None
        self.failures = 0  # broken children so far

    def executor(self) -> Workers | None:
        """The child (started now if need be), or None once lint runs in-process."""
        while self.pool is None and self.failures < MAX_FAILURES:
            try:
                self.pool = Workers(1, CHILD_INIT, nice=LINT_NICE, name="puppet-xpp-lint")
            except OSError as e:  # (could not start: no executable, no process left)
                self.broken(e)
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
        pool = self.executor()
        if pool is not None:
            try:
                result: R = await asyncio.wrap_future(pool.submit(fn, *args))
                return result
            except ChildDied as e:
                if self.pool is pool:
                    self.broken(e)
                return await self.run(fn, *args)
        return await asyncio.to_thread(fn, *args)

    def shutdown(self) -> None:
        """Stop the child (the server is exiting, or the child broke)."""
        if self.pool is not None:
            pool, self.pool = self.pool, None
            pool.close()
