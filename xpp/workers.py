"""A small process pool for ``--compile`` that notices when a worker dies.

``multiprocessing.Pool.imap_unordered`` never learns that a task was lost when its worker is killed
(``kill -9``, the OOM killer, a segfault in an extension): the caller waits for ever.  Here the parent
knows which items each worker holds (it hands them out a chunk at a time and each result names its
item), and waits on the workers' pipes *and* their process sentinels together; a worker that dies is
replaced, and the items it held come back as lost, so the caller can report them as failed and go on.

    for kind, item, value in run_pool(fn, items, n, initializer, initargs, chunk):
        kind == "done": value is fn(item);  kind == "lost": value is a reason (str)

Workers are forked (they share the parent's loaded parser tables) and start with ``initializer``.
"""

from __future__ import annotations

import multiprocessing as mp
from collections import deque
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any


def _serve(
    conn: Connection, fn: Callable[[Any], Any], init: Callable[..., None] | None, args: tuple[Any, ...]
) -> None:
    if init is not None:
        init(*args)
    while True:
        try:
            chunk = conn.recv()
        except EOFError:
            return
        if chunk is None:
            return
        for key, item in chunk:
            conn.send((key, fn(item)))


class _Worker:
    def __init__(
        self, ctx: Any, fn: Callable[[Any], Any], init: Callable[..., None] | None, args: tuple[Any, ...]
    ):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, fn, init, args), daemon=True)
        self.proc.start()
        child.close()
        self.held: dict[int, Any] = {}  # key -> item handed out, not yet answered

    def give(self, chunk: list[tuple[int, Any]]) -> None:
        for key, item in chunk:
            self.held[key] = item
        self.conn.send(chunk)

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def _reason(proc: Any) -> str:
    code = proc.exitcode
    if code is not None and code < 0:
        try:
            import signal

            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"the worker process compiling it died (killed by {name})"
    return f"the worker process compiling it exited unexpectedly (status {code})"


def run_pool(
    fn: Callable[[Any], Any],
    items: list[Any],
    n: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    chunk: int = 1,
) -> Iterator[tuple[str, Any, Any]]:
    """Yield ("done", item, fn(item)) or ("lost", item, reason) once for every item, in completion order."""
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    queue = deque(enumerate(items))
    workers = [_Worker(ctx, fn, initializer, initargs) for _ in range(max(1, min(n, len(items))))]

    def feed(w: _Worker) -> None:
        part = [queue.popleft() for _ in range(min(chunk, len(queue)))]
        if part:
            w.give(part)

    try:
        for w in workers:
            feed(w)
        while any(w.held for w in workers):
            busy = [w for w in workers if w.held]
            wait([w.conn for w in busy] + [w.proc.sentinel for w in busy])
            for w in busy:
                closed = False
                while w.held and w.conn.poll():
                    try:
                        key, value = w.conn.recv()
                    except (EOFError, OSError):
                        closed = True
                        break
                    yield "done", w.held.pop(key), value
                if closed:
                    w.proc.join(5)
                if w.held and not w.proc.is_alive():
                    w.proc.join()
                    why = _reason(w.proc)
                    for item in w.held.values():
                        yield "lost", item, why
                    w.held.clear()
                    w.conn.close()
                    k = workers.index(w)
                    w = workers[k] = _Worker(ctx, fn, initializer, initargs)
                if not w.held:
                    feed(w)
    finally:
        for w in workers:
            if w.proc.is_alive():
                w.stop()
            else:
                w.proc.join()
                w.conn.close()
