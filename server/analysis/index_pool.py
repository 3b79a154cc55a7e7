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
"""

from __future__ import annotations

import os
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


class IndexPool:
    """The worker processes of one indexing (``with IndexPool(n) as pool``), started at once."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.failed = ""  # why the pool stopped, when a caller or the start said so
        self.workers: Workers | None = None
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
        try:
            future: Future[list[Result]] = self.workers.submit(index_files, list(paths))
            return future
        except OSError as e:  # ChildDied: the pool broke or was closed
            self.failed = self.failed or str(e) or type(e).__name__
            return None

    def submit(self, paths: Sequence[str]) -> list[tuple[list[str], Future[list[Result]] | None]]:
        """Every chunk of ``paths`` sent to the workers at once, in order: (chunk, its future or None)."""
        chunks = [list(paths[k : k + CHUNK_FILES]) for k in range(0, len(paths), CHUNK_FILES)]
        return [(chunk, self.submit_one(chunk)) for chunk in chunks]
