"""The per-file work of ``--compile ENVDIR`` and the worker processes that do it.

:func:`run_jobs` hands each :class:`WorkItem` to a :class:`Worker` -- in this process for a few files or
one job, else in forked worker processes (:mod:`xpp.compile.workers`, which notices a worker that dies)
-- and yields each file's :class:`FileResult` as it completes.  What a worker needs is one frozen
:class:`WorkerSettings` (the level and ``strict`` already resolved); the worker's own state (the
descriptors of its ``.xpp`` tree) lives in its :class:`Worker` object, copied into each process by the
fork.

One file (:meth:`Worker.compile_job`): read the source (:func:`xpp.sources.read_source`); when the
existing ``.xpp`` is current for it (:func:`xpp.compile.current.is_current`: the source digest and
settings its envelope records) it is up to date, with the diagnostics the state recorded for it (or, if
the ``.xpp`` changed since, the ones it holds); else compile (:mod:`xpp.compile.document`) and write,
unless the bytes are the same.  A failure inside puppet-xpp becomes the file's INTERNAL_ERROR, never the
end of the run.
"""

from __future__ import annotations

import gc
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.gcpause import GC_THRESHOLD
from puppet_xpp.xpp.compile import document, writes
from puppet_xpp.xpp.compile.current import is_current
from puppet_xpp.xpp.compile.model import DiagnosticRow, FileResult, Job, Validation
from puppet_xpp.xpp.compile.state import Entry, source_signature, xpp_signature
from puppet_xpp.xpp.compile.tree import MODULES_FRESH, make_dir
from puppet_xpp.xpp.sources import format_traceback, internal_error, max_bytes, narrowed_mode, read_source

__all__ = ["WorkerSettings", "WorkItem", "Worker", "run_jobs", "GC_THRESHOLD"]


@dataclass(frozen=True)
class WorkerSettings:
    """Everything a worker needs besides its jobs (the same for every file of a run)."""

    fmt: str
    validation: Validation
    modulepath: tuple[str, ...]
    manifest: str | None
    file_mode: int
    dir_mode: int
    owner: tuple[int, int] | None
    xpp_root: str
    max_bytes: int | None
    debug: bool
    check: bool  # an existing .xpp may be kept when it is current (not --force, same settings)
    fresh: frozenset[str] = frozenset()  # directories (relative to .xpp) this run created: nothing to read

    @property
    def cold(self) -> bool:
        """This run created ``.xpp/modules``: nothing below it to read, and each worker creates the
        directories it writes into (:func:`xpp.compile.tree.make_dir`)."""
        return MODULES_FRESH in self.fresh

    def may_exist(self, rel: str) -> bool:
        """Whether ``rel`` (below ``.xpp``) may exist: not in a directory this run created."""
        return not self.cold and os.path.dirname(rel) not in self.fresh

    def config(self, job: Job) -> CheckConfig:
        """How ``job``'s source is parsed and validated (the module-location rules judge its real path)."""
        return CheckConfig(
            file=job.recorded,
            tasks=job.tasks,
            level=self.validation.level,
            strict=self.validation.strict,
            modulepath=self.modulepath,
            manifest=self.manifest,
            location=job.src,
        )


@dataclass(frozen=True)
class WorkItem:
    index: int  # the job's place in the plan
    job: Job
    known: Entry | None = (
        None  # the state's record of this output (its diagnostics, if the .xpp is unchanged)
    )


# A FileResult as a worker sends it back: its fields but the job, which the compiling process has (the
# job's paths were most of each pickle, made in a worker and read in the compiling process), and its
# diagnostic rows as plain tuples (a named tuple is pickled by a reference to its class: two to three
# times the cost of the whole answer, at each end)
Answer = tuple[str, int, int, list[tuple[Any, ...]], str, list[int] | None, list[int] | None, bool]


def _result(job: Job, answer: Answer) -> FileResult:
    status, errors, warnings, rows, message, src_stat, xpp_stat, written = answer
    return FileResult(
        job,
        status,
        errors=errors,
        warnings=warnings,
        diagnostics=[DiagnosticRow._make(row) for row in rows],
        message=message,
        src_stat=src_stat,
        xpp_stat=xpp_stat,
        written=written,
    )


class Worker:
    """Compiles jobs with one run's settings; opens its own ``.xpp`` tree descriptors on first use."""

    def __init__(self, settings: WorkerSettings, parent: int | None = None) -> None:
        self.settings = settings
        self.parent = parent  # in a worker process: the compiling process (the worker dies with it)
        self.tree: writes.AnchoredTree | None = None
        # what every file of the run shares, resolved once (not per file): the size limit in force
        # (else read from the process's environment for each source), the group the .xpp files get
        self.limit = max_bytes(settings.max_bytes)
        self.gid = settings.owner[1] if settings.owner else os.getegid()

    def start(self) -> None:
        """In a new worker process (forked): die with the compiling process."""
        _die_with_parent(self.parent)

    def anchored(self) -> writes.AnchoredTree:
        if self.tree is None:
            s = self.settings
            self.tree = writes.AnchoredTree(s.xpp_root, dir_mode=s.dir_mode, owner=s.owner)
        return self.tree

    def close(self) -> None:
        if self.tree is not None:
            self.tree.close()
            self.tree = None

    def work(self, item: WorkItem) -> FileResult:
        """One item's result (looked up on the class at each call: a test may replace compile_job)."""
        return self.compile_job(item.job, item.known)

    def answer(self, item: WorkItem) -> Answer:
        """The pool's function: :meth:`work`'s result as it crosses the result pipe (:data:`Answer`)."""
        r = self.work(item)
        rows = [tuple(row) for row in r.diagnostics]
        return (r.status, r.errors, r.warnings, rows, r.message, r.src_stat, r.xpp_stat, r.written)

    def compile_job(self, job: Job, known: Entry | None = None) -> FileResult:
        """Compile one file.  Never raises: a failure inside puppet-xpp becomes the file's INTERNAL_ERROR
        (status "failed", nothing written)."""
        try:
            return self._compile(job, known)
        except Exception as e:
            result = FileResult(job, "failed")
            result.set_diagnostics(document.diagnostic_rows([internal_error(e, job.display)], None))
            if self.settings.debug:
                result.message = format_traceback(e)
            try:
                self.anchored().unlink("modules/" + job.rel)  # whatever it holds is not this source's
            except OSError:
                pass
            return result

    def _compile(self, job: Job, known: Entry | None) -> FileResult:
        settings = self.settings
        result = FileResult(job, "compiled")
        rel = "modules/" + job.rel
        tree = self.anchored()
        if settings.cold:  # (else the compiling process made it before the workers started)
            why = make_dir(tree, os.path.dirname(rel), os.path.dirname(job.out))
            if why is not None:
                result.status = "failed"
                result.message = why
                return result
        source = read_source(job.src, job.display, limit=self.limit, as_user=settings.owner)
        if source.text is None:
            assert source.diagnostic is not None  # a source not read has the diagnostic saying why
            result.status = "unreadable"
            result.set_diagnostics(document.diagnostic_rows([source.diagnostic], None))
            try:
                tree.unlink(rel)  # whatever it holds cannot be checked against the source
            except OSError:
                pass
            return result
        assert source.stat is not None  # read_source sets it whenever the text was read
        result.src_stat = source_signature(source.stat)
        # nothing to read in a directory this run created (a cold compile: saves a failing open per file)
        existing = tree.read(rel) if settings.may_exist(rel) else None
        if settings.check and source.diagnostic is None and existing is not None:
            if self._keep_current(result, existing, source.text, known):
                return result
        data, rows = document.source_document(source, settings.config(job), settings.fmt)
        result.set_diagnostics(rows)
        owner = settings.owner
        mode = narrowed_mode(settings.file_mode, source.stat, self.gid)
        try:
            if existing == data:  # identical bytes: not rewritten
                st = tree.stat(rel)
                if stat.S_IMODE(st.st_mode) != mode:
                    tree.chmod(rel, mode)
            else:
                st = tree.write(rel, data, mode=mode, owner=owner)
                result.written = True
            result.xpp_stat = xpp_signature(st)
        except OSError as e:
            result.status = "failed"
            result.message = f"cannot write {job.out}: {e.strerror or e}"
        return result

    def _keep_current(self, result: FileResult, existing: bytes, text: str, known: Entry | None) -> bool:
        """Whether the existing ``.xpp`` is current for ``text``; if so ``result`` is made "up to date"
        with its diagnostics: the ones the state recorded when the ``.xpp`` is the one it recorded, else
        the ones the file holds."""
        from puppet_xpp.xpp.envelope import unwrap
        from puppet_xpp.xpp.result import XppFormatError, read_payload

        job = result.job
        validation = self.settings.validation
        wanted = {"puppet_version": validation.level, "strict": validation.strict, "tasks": job.tasks}
        try:
            fmt, params, payload = unwrap(existing)
        except XppFormatError:
            return False
        if fmt != self.settings.fmt or not is_current(params, text, wanted):
            return False
        try:
            signature: list[int] | None = xpp_signature(self.anchored().stat("modules/" + job.rel))
        except OSError:
            signature = None
        if known is not None and signature is not None and known.xpp_stat == signature:
            rows = known.diagnostics
        else:
            try:
                program, records = read_payload(payload, fmt)
            except XppFormatError:
                return False
            names = {program.locator.file} if program is not None else {r.get("file") for r in records}
            if names != {job.recorded}:
                return False  # recorded under another name (e.g. another --runtime-root)
            rows = document.record_rows(records)
        result.status = "up to date"
        result.set_diagnostics(rows)
        result.xpp_stat = signature
        return True


def _run_here(worker: Worker, items: list[WorkItem]) -> Iterator[tuple[WorkItem, FileResult]]:
    try:
        for item in items:
            yield item, worker.work(item)
    finally:
        worker.close()


def run_jobs(
    items: list[WorkItem], jobs: int, settings: WorkerSettings
) -> Iterator[tuple[WorkItem, FileResult]]:
    """(item, result) for every item, in completion order, compiled by ``jobs`` worker processes (0: one
    per core; this process itself for one job or few files).  A job whose worker died is reported
    failed (:mod:`xpp.compile.workers`)."""
    if not items:
        return
    n = jobs or os.cpu_count() or 1
    n = max(1, min(n, len(items)))
    # import and load the parser before forking: the workers share it
    import puppet_xpp.grammar.validator  # noqa: F401
    import puppet_xpp.xpp.result  # noqa: F401
    import puppet_xpp.xpp.sources  # noqa: F401
    from puppet_xpp.grammar.parser import prepare

    prepare()
    old_threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        if n == 1 or len(items) < 4 or not hasattr(os, "fork"):
            yield from _run_here(Worker(settings), items)
        else:
            yield from _run_pool(items, n, settings)
    finally:
        gc.set_threshold(*old_threshold)
        gc.unfreeze()


def _run_pool(
    items: list[WorkItem], n: int, settings: WorkerSettings
) -> Iterator[tuple[WorkItem, FileResult]]:
    from puppet_xpp.xpp.compile.workers import run_pool

    _prctl()  # looked up once here, not in every worker
    if settings.check and any(
        item.known is None and settings.may_exist("modules/" + item.job.rel) for item in items
    ):
        from puppet_xpp.xpp.pcore.fast import prepare

        prepare()  # existing .xpp files may be read: generate the reader once, before forking
    chunk = max(1, min(16, len(items) // (n * 8)))
    worker = Worker(settings, parent=os.getpid())
    for kind, item, value in run_pool(worker.answer, items, n, worker.start, (), chunk):
        if kind == "done":
            yield item, _result(item.job, value)
        else:
            job = item.job
            yield item, FileResult(job, "failed", message=f"{job.display}: not compiled: {value}")


_PRCTL: list[Callable[..., int] | None] = []  # libc's prctl, looked up once (in the parent, before forking)


def _prctl() -> Callable[..., int] | None:
    if not _PRCTL:
        fn: Callable[..., int] | None = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).prctl
            except Exception:  # pragma: no cover - best effort
                fn = None
        _PRCTL.append(fn)
    return _PRCTL[0]


def _die_with_parent(parent: int | None) -> None:
    """Linux: a worker is killed when the compiling process dies (e.g. SIGKILL), instead of lingering
    (also when the parent died before this ran: then ``parent`` is no longer our parent)."""
    if parent is None:
        return
    prctl = _prctl()
    if prctl is None:
        return
    try:
        import signal

        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # pragma: no cover - best effort
        pass
    if os.getppid() != parent:
        os._exit(1)
