"""``--compile ENVDIR``: the ``.xpp`` tree of a whole environment, incrementally.

:func:`compile_environment` checks and opens the tree and takes its lock (:mod:`xpp.compile.tree`),
plans (:mod:`xpp.compile.planning`), sorts out the files whose two stats match the state
(:mod:`xpp.compile.state`: up to date without being read), creates the output directories here (in a
cold compile, the one that creates ``.xpp/modules``, the workers create them as they write, in
parallel), lets the workers do the rest (:mod:`xpp.compile.work`), removes what no source maps to any
more and writes the new state.
"""

from __future__ import annotations

import os
import time

from puppet_xpp.xpp.compile import tree as output_tree
from puppet_xpp.xpp.compile.model import (
    CompileError,
    EnvResult,
    Events,
    FileResult,
    NoEvents,
    Options,
)
from puppet_xpp.xpp.compile.planning import plan
from puppet_xpp.xpp.compile.state import (
    STATE_FILE,
    State,
    settings_fingerprint,
    source_signature,
    xpp_signature,
)
from puppet_xpp.xpp.compile.work import WorkerSettings, WorkItem, run_jobs
from puppet_xpp.xpp.compile.writes import AnchoredTree
from puppet_xpp.xpp.environment import Environment

__all__ = ["compile_environment"]


def compile_environment(env: Environment, opts: Options, events: Events | None = None) -> EnvResult:
    """Compile ``env`` incrementally.

    ``events`` (optional, :class:`xpp.compile.model.Events`) receives ``start(env, total, todo)``,
    ``progress(done, todo, FileResult)`` as each file needing work completes, ``file(FileResult)`` for
    every file in plan order, ``removed(path)``, and ``waiting(env)`` when another compile holds the
    environment's lock.  Raises :class:`CompileError` when the output tree is unsafe (or locked, with
    ``opts.wait`` False)."""
    t0 = time.monotonic()
    sink: Events = events if events is not None else NoEvents()
    owner = output_tree.owner_for(env, opts)
    tree = output_tree.OutputTree(env, opts, owner)
    tree.check_root(output_tree.module_dirs(env))
    tree.open()
    lock_fd = output_tree.lock(tree, opts, sink)
    try:
        return _compile_locked(env, opts, sink, owner, tree, t0)
    finally:
        tree.close()
        os.close(lock_fd)  # releases the lock


def _cold(tree: output_tree.OutputTree, anchored: AnchoredTree) -> bool:
    """Whether this run creates ``.xpp/modules`` (now): then nothing below it exists yet."""
    try:
        tree.ensure_dir(tree.env.out_base)
    except (CompileError, OSError):
        return False  # (the directories are then created, and refused, one by one)
    return output_tree.MODULES_FRESH in anchored.created


def _compile_locked(
    env: Environment,
    opts: Options,
    events: Events,
    owner: tuple[int, int] | None,
    tree: output_tree.OutputTree,
    t0: float,
) -> EnvResult:
    anchored = tree.open()
    result = EnvResult(env)
    jobs, result.skipped = plan(env, opts.runtime_root, opts.exclude)
    validation = opts.validation()  # the level and strict in effect, resolved once
    state = State.read(anchored)
    fingerprint = settings_fingerprint(env, opts, validation)
    same_settings = state.fingerprint == fingerprint
    use_state = same_settings and not opts.force

    # cheap stat check first
    results: list[FileResult | None] = [None] * len(jobs)
    todo: list[WorkItem] = []
    for i, job in enumerate(jobs):
        known = state.entry(job.rel) if use_state else None
        if known is not None and (known.src != job.src or known.recorded != job.recorded):
            known = None
        if known is not None:
            try:
                source_stat: list[int] | None = source_signature(os.stat(job.src))
                xpp_stat: list[int] | None = xpp_signature(anchored.stat("modules/" + job.rel))
            except OSError:
                source_stat = xpp_stat = None
            if source_stat == known.source_stat and xpp_stat == known.xpp_stat:
                up_to_date = FileResult(job, "up to date", src_stat=source_stat, xpp_stat=xpp_stat)
                up_to_date.set_diagnostics(known.diagnostics)
                results[i] = up_to_date
                continue
        todo.append(WorkItem(i, job, known))
    events.start(env, len(jobs), len(todo))

    # output directories: when this run creates .xpp/modules (a cold compile), every directory below it
    # is new and the workers create each as they write into it, in parallel (output_tree.MODULES_FRESH);
    # else they are created here, before the workers start.  Either way a refusal is reported for each
    # file below the directory, with the same message.
    runnable: list[WorkItem] = []
    cold = bool(todo) and _cold(tree, anchored)
    if cold:
        runnable = todo
    else:
        dirs: dict[str, str | None] = {}  # directory -> why it could not be created (None: it is there)
        for item in todo:
            d = os.path.dirname(item.job.out)
            if d not in dirs:
                try:
                    tree.ensure_dir(d)
                    dirs[d] = None
                except CompileError as e:
                    dirs[d] = str(e)
                except OSError as e:
                    dirs[d] = output_tree.cannot_create(d, e)
            why = dirs[d]
            if why is None:
                runnable.append(item)
            else:
                results[item.index] = FileResult(item.job, "failed", message=why)
    anchored.forget()  # the workers open their own descriptors

    # an existing .xpp is kept when it is current for its source, unless the settings changed since the
    # last run (or --force): then it is recompiled (identical bytes are not rewritten)
    settings = WorkerSettings(
        fmt=opts.fmt,
        validation=validation,
        modulepath=tuple(env.modulepath),
        manifest=env.manifest,
        file_mode=opts.file_mode,
        dir_mode=opts.dir_mode,
        owner=owner,
        xpp_root=env.xpp_root,
        max_bytes=opts.max_source_bytes,
        debug=opts.debug,
        check=not opts.force and (same_settings or state.fingerprint is None),
        fresh=frozenset(anchored.created),
    )
    reported = 0

    def flush() -> None:
        nonlocal reported
        while reported < len(jobs):
            done_result = results[reported]
            if done_result is None:
                break
            events.file(done_result)
            reported += 1

    done = 0
    for item, file_result in run_jobs(runnable, opts.jobs, settings):
        results[item.index] = file_result
        done += 1
        events.progress(done, len(runnable), file_result)
        flush()
    flush()
    result.files = [r for r in results if r is not None]  # every job has its result now
    assert len(result.files) == len(jobs)

    # stale outputs, temporary files left by killed runs (we hold the lock: all of them), empty directories
    # (after a cold compile that wrote every file there is nothing to sweep: no .xpp that no source
    # maps to, no temporary file -- each was renamed or removed by the worker that made it --, no empty
    # directory -- each was made for a file written into it)
    if not (cold and all(r.status == "compiled" and r.written for r in result.files)):
        result.removed = output_tree.sweep(anchored, env, {j.rel for j in jobs}, events)

    data = State.encode(fingerprint, result.files)
    if data != state.raw:
        try:
            anchored.write(STATE_FILE, data, mode=opts.file_mode, owner=owner)
        except OSError as e:
            result.io_errors.append(
                f"cannot write {os.path.join(env.xpp_root, STATE_FILE)}: {e.strerror or e}"
            )
    result.seconds = time.monotonic() - t0
    return result
