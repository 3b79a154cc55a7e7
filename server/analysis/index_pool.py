"""A cold workspace index on every core (issue 31 item 2): the files the index cache does not have are
read, parsed (manifests) or read by tree-sitter (Ruby), and turned into index entries and references in
worker processes; the server merges what they send back (no pygls here).

Why processes: indexing is CPU-bound Python, and threads share one interpreter lock.  Each worker does
for a file exactly what the serial indexing does (:func:`server.analysis.index_cache.fresh_entry`, the
reference index's hook on the same parse) and sends the entry back as the index cache's record
(:func:`~server.analysis.index_cache.encode_entry`), so the serial and the parallel index are the same
by construction -- and tests/lsp/test_index_parallel.py compares them on the corpus.

* Only when it pays: at least :data:`MIN_FILES` files to index and more than one core (:func:`workers`);
  a small workspace or a second start (the cache answers) never starts a process.  The server's own
  analysis thread indexes too, from the other end of the list (server/lsp/indexing.py), so the
  workers' start-up is never waited for.
* Workers are fresh interpreters (server/analysis/child_process.py: the server has threads, no
  ``fork``; no multiprocessing, whose resource tracker would outlive the indexing), their standard input
  and output on /dev/null (the server's are the LSP stream), and stopped when the indexing ends: the
  server's memory after indexing is the server's alone.
* One file's failure is that file's: the worker reports it and the server indexes it itself.  A worker
  that dies (killed, out of memory) breaks the pool: the files not done yet are indexed serially
  (:class:`IndexPool` says so in ``broken``); the result is the same, only slower.
* Started early when the start-up front asks (:func:`prestart`, when it reads ``initialize``): the workers
  start while the server is still importing (~0.5 s) and index the first files of the workspace folders
  meanwhile; the indexing's :class:`IndexPool` adopts them and hands out what they already did.  Not on
  a second start (the index cache has these folders), nor when not adopted within :data:`ADOPT_WITHIN`.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from puppet_xpp.server.analysis.child_process import Workers

ENV = "PUPPET_XPP_INDEX_WORKERS"
# fewer files to index than this: no worker process (its start, ~0.4 s of CPU, would cost more than
# the server's thread takes for them)
MIN_FILES = 200
# files per task sent to a worker (fewer round trips; small enough to keep both workers busy to the end)
CHUNK_FILES = 24

# seconds the workers started early wait for the indexing to adopt them (then they are stopped)
ADOPT_WITHIN = 30.0

# what a worker sends back per file: (path, the entry's record or None, why it was not read or None,
# failed: indexing it raised -- the server indexes it itself)
Result = tuple[str, "tuple[Any, ...] | None", "str | None", bool]


def workers() -> int:
    """The worker processes an indexing uses besides the server's own analysis thread:
    ``PUPPET_XPP_INDEX_WORKERS`` when set (0: none, the benchmark's anchor), else one less than the
    cores this process may run on, at most 3."""
    env = os.environ.get(ENV, "").strip()
    if env.isdigit():
        return min(int(env), 16)
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(0, min(n, 4) - 1)


def worker_init() -> None:
    """Worker: the indexing modules imported once, before the first chunk."""
    from puppet_xpp.server.analysis import index_cache, references, ruby_index  # noqa: F401


def index_files(paths: Sequence[str]) -> list[Result]:
    """Worker: the index cache's entries of ``paths``, each file on its own (a failure is that file's)."""
    from puppet_xpp.server.analysis.index_cache import encode_entry, fresh_entry
    from puppet_xpp.server.analysis.references import RefIndex, feed
    from puppet_xpp.xpp.sources import read_bytes

    out: list[Result] = []
    for path in paths:
        try:
            raw = read_bytes(path)
            if raw.data is None or raw.stat is None:
                why = raw.diagnostic.message if raw.diagnostic is not None else None
                out.append((path, None, why, False))
                continue
            refs = RefIndex()
            entry = fresh_entry(path, raw.data, raw.stat, (feed(refs),), refs)
            out.append((path, encode_entry(entry), None, False))
        except Exception:
            out.append((path, None, None, True))
    return out


# ----------------------------------------------------------------------------------------------- early start


class Early:
    """Workers started before the server was loaded, indexing ``files`` from the front, ``2 n`` chunks
    in flight, until an :class:`IndexPool` adopts them (or :data:`ADOPT_WITHIN` passes)."""

    def __init__(self, n: int, files: list[str]) -> None:
        self.workers = Workers(n, f"{__name__}:worker_init", name="puppet-xpp-index")
        self.chunks = deque(files[k : k + CHUNK_FILES] for k in range(0, len(files), CHUNK_FILES))
        self.by_path: dict[str, Future[list[Result]]] = {}
        self.lock = threading.Lock()
        self.feeding = True
        self.timer = threading.Timer(ADOPT_WITHIN, self.expire)
        self.timer.daemon = True
        self.timer.start()
        for _ in range(2 * n):
            self.feed()

    def feed(self, _done: object = None) -> None:
        with self.lock:
            if not self.feeding or not self.chunks:
                return
            chunk = self.chunks.popleft()
            try:
                future: Future[list[Result]] = self.workers.submit(index_files, chunk)
            except OSError:
                self.feeding = False
                return
            for path in chunk:
                self.by_path[path] = future
        future.add_done_callback(self.feed)

    def adopt(self) -> bool:
        """Stop indexing ahead (the chunks sent stay); False when already stopped (expired)."""
        self.timer.cancel()
        with self.lock:
            adopted, self.feeding = self.feeding, False
        return adopted

    def expire(self) -> None:
        global early_workers
        with early_lock:
            if early_workers is self:
                early_workers = None
        if self.adopt():
            self.workers.close()


early_workers: Early | None = None  # workers started early, not adopted yet
early_lock = threading.Lock()
pool_made = False  # an IndexPool was made: too late to start early


def prestart(folders: Sequence[str]) -> None:
    """Start the indexing workers now (the start-up front, at ``initialize``, with the workspace
    folders): returns at once, a thread does the rest, see :func:`start_early`."""
    if not folders or workers() == 0:
        return
    roots = [os.path.abspath(f) for f in folders]
    threading.Thread(target=start_early, args=(roots,), name="puppet-xpp-index-early", daemon=True).start()


def start_early(roots: list[str]) -> Early | None:
    """The early workers on ``roots`` (kept for the next :class:`IndexPool`), or None when they would not
    pay: a workspace of fewer than :data:`MIN_FILES` files, an index cache naming these roots (a second
    start), an indexing already begun.  Never raises (an early start is a nicety)."""
    global early_workers
    try:
        n = workers()
        if n == 0 or pool_made or cached(roots):
            return None
        from puppet_xpp.server.analysis.index import workspace_files

        files = workspace_files(roots)
        if len(files) < MIN_FILES:
            return None
        with early_lock:
            if pool_made or early_workers is not None:
                return None
            early = early_workers = Early(n, files)
        return early
    except Exception:
        return None


def cached(roots: list[str]) -> bool:
    """An index cache of a workspace holding every one of ``roots`` exists (its header line read)."""
    from puppet_xpp.server.analysis.index_cache import cache_dir

    directory = cache_dir()
    if directory is None:
        return False
    try:
        names = [n for n in os.listdir(directory) if n.endswith(".json")]
    except OSError:
        return False
    for name in names:
        try:
            with open(os.path.join(directory, name), "rb") as f:
                header = json.loads(f.readline(1 << 20))
        except (OSError, ValueError):
            continue
        held = header.get("roots") if type(header) is dict else None
        if type(held) is list and all(r in held for r in roots):
            return True
    return False


def _combined(parts: list[Future[list[Result]]], wanted: set[str]) -> Future[list[Result]]:
    """One future of the results of ``wanted`` among those of ``parts``, never taken back (cancelled):
    its parts are running or done."""
    out: Future[list[Result]] = Future()
    out.set_running_or_notify_cancel()
    left = [len(parts)]
    lock = threading.Lock()

    def done(_part: object) -> None:
        with lock:
            left[0] -= 1
            if left[0]:
                return
        try:
            results = [r for part in parts for r in part.result() if r[0] in wanted]
        except BaseException as e:  # a worker died: the caller indexes these files itself
            out.set_exception(e)
            return
        out.set_result(results)

    for part in parts:
        part.add_done_callback(done)
    return out


# ----------------------------------------------------------------------------------------------- the pool


class IndexPool:
    """The worker processes of one indexing (``with IndexPool(n) as pool``): those started early
    (:func:`prestart`) when there are, else ``n`` started at once."""

    def __init__(self, n: int) -> None:
        global early_workers, pool_made
        self.n = n
        self.failed = ""  # why the pool stopped, when a caller or the start said so
        self.workers: Workers | None = None
        self.early: dict[str, Future[list[Result]]] = {}  # what the early workers did or are doing
        with early_lock:
            early, early_workers, pool_made = early_workers, None, True
        if early is not None and early.adopt():
            self.workers, self.early = early.workers, early.by_path
            return
        try:
            self.workers = Workers(n, f"{__name__}:worker_init", name="puppet-xpp-index")
        except OSError as e:  # (no executable, no process left)
            self.failed = str(e) or type(e).__name__

    @property
    def broken(self) -> str:
        """Why the pool stopped (a worker died or could not start), "" while it works."""
        return self.failed or (self.workers.broken if self.workers is not None else "")

    @broken.setter
    def broken(self, why: str) -> None:
        self.failed = why

    def __enter__(self) -> IndexPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.workers is not None:
            self.workers.close()

    def pids(self) -> list[int]:
        """The worker processes' ids (tests, benchmarks)."""
        return [c.pid for c in self.workers.children] if self.workers is not None else []

    def submit_one(self, paths: Sequence[str]) -> Future[list[Result]] | None:
        """``paths`` sent to a worker: their future, or None when the pool cannot take them (a worker
        could not start, or died: ``broken`` says why)."""
        if self.broken or self.workers is None:
            return None
        parts: dict[int, Future[list[Result]]] = {}
        rest = []
        for path in paths:
            early = self.early.pop(path, None)
            if early is None or early.cancelled():
                rest.append(path)
            else:
                parts[id(early)] = early
        if rest:
            try:
                future: Future[list[Result]] = self.workers.submit(index_files, rest)
            except OSError as e:  # ChildDied: the pool broke or was closed
                self.failed = self.failed or str(e) or type(e).__name__
                return None
            if not parts:
                return future
            parts[id(future)] = future
        return _combined(list(parts.values()), set(paths))

    def submit(self, paths: Sequence[str]) -> list[tuple[list[str], Future[list[Result]] | None]]:
        """Every chunk of ``paths`` sent to the workers at once, in order: (chunk, its future or None)."""
        chunks = [list(paths[k : k + CHUNK_FILES]) for k in range(0, len(paths), CHUNK_FILES)]
        return [(chunk, self.submit_one(chunk)) for chunk in chunks]
