"""One file of an environment: its ``.xpp`` written exactly as ``--compile ENVDIR`` writes it.

:func:`compile_saved` is the language server's one call into the compiler (``.xpp`` on save): it plans
the one file saved (:func:`xpp.compile.planning.plan_file`, not the whole environment), reads it as
``--compile`` does (:func:`xpp.sources.read_source` as the environment's owner when run as root, so a
link to a root-only manifest is refused as ``--compile`` refuses it), compiles it
(:func:`xpp.compile.document.source_document`) and writes it with the tree's safety rules, modes and owner
(:func:`write_job`).
"""

from __future__ import annotations

import os

from puppet_xpp.xpp.compile import tree as output_tree
from puppet_xpp.xpp.compile import writes
from puppet_xpp.xpp.compile.document import source_document
from puppet_xpp.xpp.compile.model import CompileError, Job, Options, SourceRefused, Validation
from puppet_xpp.xpp.compile.planning import detect_environment, plan_file
from puppet_xpp.xpp.environment import Environment

__all__ = ["write_job", "compile_saved"]


def write_job(
    env: Environment,
    job: Job,
    data: bytes,
    opts: Options | None = None,
    *,
    src_stat: os.stat_result | None = None,
) -> bool:
    """Write ``data`` as the .xpp of ``job`` with the safety rules, modes and owner of
    :func:`xpp.compile.run.compile_environment`.  Returns False when the file already holds these bytes
    (not rewritten).  ``src_stat``: the stat of the source as read (its mode bounds the ``.xpp``'s;
    default: looked up).  Raises CompileError (a refused symbolic link) or OSError."""
    from puppet_xpp.xpp.sources import narrowed_mode

    opts = opts or Options()
    owner = output_tree.owner_for(env, opts)
    tree = output_tree.OutputTree(env, opts, owner)
    tree.check_root(output_tree.module_dirs(env))
    try:
        tree.ensure_dir(os.path.dirname(job.out))
        anchored = tree.open()
        rel = "modules/" + job.rel
        if anchored.read(rel) == data:
            return False
        src_st = src_stat
        if src_st is None:
            try:
                src_st = os.stat(job.src)
            except OSError:
                src_st = None
        mode = narrowed_mode(opts.file_mode, src_st, owner[1] if owner else os.getegid())
        try:
            anchored.write(rel, data, mode=mode, owner=owner)
        except writes.UnsafePath as e:
            raise CompileError(str(e)) from None
        return True
    finally:
        tree.close()


def compile_saved(env_root: str, path: str, *, level: str | None, strict: str | None) -> str | None:
    """Write the .xpp of the one file ``path`` of the environment at ``env_root`` exactly as
    ``--compile ENVDIR`` would (same planning rules, safety rules, modes and owner).

    Returns the .xpp written (or already holding these bytes), or None when ``path`` is not a file
    ``--compile`` writes (outside every module of the environment).  Raises CompileError (the
    environment cannot be compiled, a refused link), SourceRefused or OSError."""
    from puppet_xpp.grammar.check import CheckConfig
    from puppet_xpp.xpp.sources import read_source

    env = detect_environment(env_root)
    job = plan_file(env, path)
    if job is None:
        return None
    opts = Options()
    # read as --compile reads it: as the environment's owner when root (a link to a file they cannot
    # read is refused, never copied into an .xpp they can read)
    source = read_source(job.src, job.display, as_user=output_tree.owner_for(env, opts))
    if source.text is None:
        assert source.diagnostic is not None  # a source not read has the diagnostic saying why
        _drop(env, job, opts)
        raise SourceRefused(source.diagnostic)
    validation = Validation.of(level, strict)
    config = CheckConfig(
        file=job.recorded,
        tasks=job.tasks,
        level=validation.level,
        strict=validation.strict,
        modulepath=tuple(env.modulepath),
        manifest=env.manifest,
        location=job.src,
    )
    data, _rows = source_document(source, config, "msgpack")
    write_job(env, job, data, opts, src_stat=source.stat)
    return job.out


def _drop(env: Environment, job: Job, opts: Options) -> None:
    """Remove ``job``'s ``.xpp`` (as ``--compile`` does for a source it cannot read: whatever it holds
    cannot be checked against the source), through the tree's safety rules; nothing when that fails."""
    tree = output_tree.OutputTree(env, opts, output_tree.owner_for(env, opts))
    try:
        tree.check_root(output_tree.module_dirs(env))
        if os.path.isdir(env.xpp_root):
            tree.open().unlink("modules/" + job.rel)
    except (OSError, CompileError):
        pass
    finally:
        tree.close()
