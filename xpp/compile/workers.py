"""A small process pool for ``--compile`` that notices when a worker dies, and costs little to run.

``multiprocessing.Pool.imap_unordered`` never learns that a task was lost when its worker is killed
(``kill -9``, the OOM killer, a segfault in an extension): the caller waits for ever.  Here the parent
knows which items each worker holds (it hands them out a chunk at a time, and a worker answers a chunk
at once when it is done with it, chunks in the order it got them); a worker that dies is seen as the end
of its result pipe, and is replaced.  The chunk it was working on holds the item that killed it, if one
did: each of its items is handed out again alone (answered as soon as it is done), so an item that
kills its worker again is the one that comes back as lost -- the caller reports it as failed and goes on
-- and the others are answered (a worker killed from outside, by the OOM killer or ``kill -9``, loses
nothing); the chunks it had not started are handed out again.

    for kind, item, value in run_pool(fn, items, n, initializer, initargs, chunk):
        kind == "done": value is fn(item);  kind == "lost": value is a reason (str)

Workers are forked (``os.fork``: they share the parent's imported modules and loaded parser tables) and
start with ``initializer``.  The pool is plain pipes, ``poll`` and ``pickle`` rather than
:mod:`multiprocessing`: a cold ``--compile`` is a short-lived process, and multiprocessing's imports,
per-wait selectors and per-worker bootstrap were a measurable part of its CPU (issue 12 item 6).  Each
worker has a task pipe (chunks of keys: the items' indexes in ``items``, which every worker has from
the fork -- an item is never pickled, only its answer; end of file: stop) and a result pipe (one frame of
``(key, value)`` pairs per chunk: a frame per item was a pickle and a write for each of ~1,650 files, ~12
ms of a cold compile's workers, issue 31 item 5).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

_HEADER = struct.Struct("!I")  # frame: length, then the pickle (answers) or the keys (tasks)
_KEY = struct.Struct("!I")  # a task: an item's index
_NAP = 0.01  # seconds between two looks at the workers' answers
_READ = 1 << 16  # bytes read from a result pipe at once (a pipe's default capacity)

# the parent's ends of every live worker's pipes: a newly forked worker closes them, so each pipe has
# exactly one writer and a worker's death shows as the end of its result pipe
_PARENT_FDS: set[int] = set()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _frame(obj: Any) -> bytes:
    body = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def _keys_frame(keys: list[int]) -> bytes:
    return _HEADER.pack(len(keys) * _KEY.size) + b"".join(map(_KEY.pack, keys))


def _serve(
    tasks_fd: int,
    results_fd: int,
    items: list[Any],
    fn: Callable[[Any], Any],
    init: Callable[..., None] | None,
    args: Any,
) -> int:
    """The worker's loop: read a chunk of keys, answer each item; end of the task pipe: exit status 0."""
    if init is not None:
        init(*args)
    with os.fdopen(tasks_fd, "rb") as tasks:
        while True:
            head = tasks.read(_HEADER.size)
            if len(head) < _HEADER.size:
                return 0
            (size,) = _HEADER.unpack(head)
            body = tasks.read(size)
            if len(body) < size:
                return 0
            # the chunk's answers in one frame, once it is done (a death before that: see run_pool)
            _write_all(results_fd, _frame([(key, fn(items[key])) for (key,) in _KEY.iter_unpack(body)]))


class _Worker:
    def __init__(
        self,
        items: list[Any],
        fn: Callable[[Any], Any],
        init: Callable[..., None] | None,
        args: tuple[Any, ...],
    ):
        task_r, task_w = os.pipe()
        res_r, res_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered may be written twice
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops us
                for fd in _PARENT_FDS | {task_w, res_r}:
                    os.close(fd)
                code = _serve(task_r, res_w, items, fn, init, args)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            except BaseException:  # noqa: BLE001 - reported by the parent as a worker that exited
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(res_w)
        os.set_blocking(task_w, False)  # the parent never blocks on a worker that is busy answering
        self.pid = pid
        self.tasks = task_w
        self.results = res_r
        _PARENT_FDS.update((task_w, res_r))
        self.buf = bytearray()  # answers received, not yet complete
        self.out = bytearray()  # tasks not yet taken by the pipe
        self.held: dict[int, Any] = {}  # key -> item handed out, not yet answered (in hand-out order)
        self.chunks: deque[list[int]] = deque()  # the keys of each chunk handed out, not yet answered

    def give(self, chunk: list[tuple[int, Any]]) -> None:
        """Hand out ``chunk`` of (key, item) (what the pipe does not take now waits in ``out``: see
        :meth:`flush`); the worker is sent the keys only."""
        for key, item in chunk:
            self.held[key] = item
        self.chunks.append([key for key, _item in chunk])
        self.out += _keys_frame(self.chunks[-1])
        self.flush()

    def flush(self) -> None:
        """Write what the task pipe takes without waiting.  A worker that is gone is noticed by the end
        of its result pipe, so a failed write is only dropped here."""
        try:
            while self.out:
                del self.out[: os.write(self.tasks, self.out)]
        except BlockingIOError:
            pass
        except OSError:
            self.out.clear()

    def answers(self, data: bytes) -> Iterator[tuple[int, Any]]:
        """The (key, value) pairs of the complete frames received so far (a frame answers the first
        chunk not yet answered, whole)."""
        buf = self.buf
        buf += data
        pos = 0
        while len(buf) - pos >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buf, pos)
            end = pos + _HEADER.size + size
            if len(buf) < end:
                break
            frame = pickle.loads(memoryview(buf)[pos + _HEADER.size : end])
            pos = end
            if self.chunks:
                self.chunks.popleft()
            yield from frame
        del buf[:pos]

    def close(self, kill: bool = False) -> int:
        """Close our ends (a waiting worker then exits), kill it when asked; its wait status."""
        self.stop(kill)
        return self.reap()

    def stop(self, kill: bool = False) -> None:
        for fd in (self.tasks, self.results):
            if fd in _PARENT_FDS:  # (once: the number may be reused after)
                _PARENT_FDS.discard(fd)
                os.close(fd)
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass

    def reap(self) -> int:
        while True:
            try:
                return os.waitpid(self.pid, 0)[1]
            except ChildProcessError:
                return 0
            except InterruptedError:
                continue


def _reason(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
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
    queue = deque(enumerate(items))
    # the items of a chunk whose worker died on it: each handed out alone, answered as soon as it is done
    suspects: deque[tuple[int, Any]] = deque()
    alone: set[int] = set()  # the keys handed out alone so (a death on one of them: that item is lost)
    poller = select.poll()
    workers: dict[int, _Worker] = {}  # result fd -> worker
    writing: dict[int, _Worker] = {}  # task fd -> worker with tasks the pipe has not taken yet

    def start() -> _Worker:
        w = _Worker(items, fn, initializer, initargs)
        workers[w.results] = w
        poller.register(w.results, select.POLLIN)
        return w

    def feed(w: _Worker) -> None:
        # a second chunk queued behind the one being worked on: a worker never waits for us
        while (suspects or queue) and len(w.held) <= chunk:
            if suspects:
                alone.add(suspects[0][0])
                w.give([suspects.popleft()])
            else:
                w.give([queue.popleft() for _ in range(min(chunk, len(queue)))])
        pending(w)

    def pending(w: _Worker) -> None:
        if w.out and w.tasks not in writing:
            writing[w.tasks] = w
            poller.register(w.tasks, select.POLLOUT)
        elif not w.out and w.tasks in writing:
            del writing[w.tasks]
            poller.unregister(w.tasks)

    try:
        for _ in range(max(1, min(n, len(items)))):
            feed(start())
        full = False
        while any(w.held for w in workers.values()):
            # Answers are read in batches: between two looks the parent sleeps a little, so it wakes
            # ~100 times a second instead of once per item, and a worker, which has a chunk queued
            # behind the one it works on, never waits for it (nor, unless a pipe was full, for us).
            if not full:
                time.sleep(_NAP)
            full = False
            replace = 0  # workers gone in this look (replaced after it: no descriptor number reused in it)
            for fd, _event in poller.poll():
                if fd in writing:
                    w = writing[fd]
                    w.flush()
                    pending(w)
                    continue
                if fd not in workers:  # (the task pipe of a worker gone in this look)
                    continue
                w = workers[fd]
                try:
                    data = os.read(fd, _READ)
                except OSError:
                    data = b""
                if data:
                    full = full or len(data) == _READ
                    for key, value in w.answers(data):
                        yield "done", w.held.pop(key), value
                    feed(w)
                    continue
                # end of the result pipe: the worker is gone
                poller.unregister(fd)
                del workers[fd]
                w.out.clear()
                pending(w)
                status = w.close()
                if w.chunks:
                    # the chunk it was on: alone, the item that killed it; else each item goes again alone
                    first = w.chunks.popleft()
                    if len(first) == 1 and first[0] in alone:
                        yield "lost", w.held[first[0]], _reason(status)
                    else:
                        suspects.extend((key, w.held[key]) for key in first)
                    # the chunks it had not started: handed out again
                    queue.extendleft(reversed([(key, w.held[key]) for keys in w.chunks for key in keys]))
                replace += 1
            for _ in range(min(replace, len(queue) + len(suspects))):
                feed(start())
    finally:
        for w in workers.values():  # all told to stop (or killed) first, then all waited for
            w.stop(kill=bool(w.held))
        for w in workers.values():
            w.reap()
