"""What ``--compile`` compiles in an environment, and where each ``.xpp`` goes.

Environment (:func:`detect_environment`): the one model in :mod:`xpp.environment` (``environment.conf``,
``modulepath`` with ``$basemodulepath``, ``manifest``, the plan rule), as Puppet reads a directory
environment.  A ``modulepath`` given by the caller replaces the environment's.

* modules: the directories of each modulepath entry whose name is a valid module name
  (``[a-z][a-z0-9_]*``).  When a name occurs more than once only the first is compiled; later ones are
  reported and skipped, as is a module named ``environment`` (reserved).

What is compiled (:func:`plan`): every ``.pp`` below each module's ``manifests/``, ``functions/``,
``types/`` and ``plans/`` (plans in tasks mode, by :func:`xpp.environment.is_plan_file`), and the
environment's own manifest (file or directory) and its ``functions/``, ``types/``, ``plans/`` as the
reserved module ``environment``.  Output paths and recorded file names come from
:func:`xpp.compile.layout.xpp_targets`.  The main manifest outside the environment directory and its
module path (``manifest = /srv/shared/site.pp``) is still the environment's: it goes to
``.xpp/modules/environment/manifests/<file name>`` (a manifest directory: ``manifests/<path inside
it>``), where the runtime looks for the environment's configured manifest (docs/xpp-format.md).  A
file that is not the configured manifest and lies outside both (``puppet apply /tmp/x.pp``) has no
place in the layout: it is never compiled, and the runtime parses it without a word.

:func:`plan_file` answers the same question for one file without walking the environment (the language
server's ``.xpp`` on save).

Walking (:func:`walk_pp`) is :func:`xpp.walk.walk`'s, the one walk every entry point uses: PDK's default
ignores, ``.pdkignore``/``.gitignore`` patterns and the project configuration's ``exclude``
(:mod:`xpp.project`, found from the environment's directory) skip files below the directories the
environment names; those directories themselves (a module's ``manifests/``, the main manifest) are
always walked, as Puppet loads them whatever a ``.gitignore`` says of them (``/modules/`` in a control
repository whose modules r10k installs).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Iterable, Iterator

from puppet_xpp.xpp.compile import layout
from puppet_xpp.xpp.compile.model import CompileError, Job
from puppet_xpp.xpp.environment import (
    MODULE_NAME,
    SOURCE_DIRS,
    Environment,
    NotAnEnvironment,
    is_module_dir,
    is_plan_file,
    load_environment,
)
from puppet_xpp.xpp.project import project_for
from puppet_xpp.xpp.walk import Probe, reached, walk

__all__ = ["ENV_DIRS", "detect_environment", "plan", "plan_file", "walk_pp"]

ENV_DIRS = ("functions", "types", "plans")
_PLANS_DIR = os.sep + "plans" + os.sep  # in the path of every plan (xpp.environment.is_plan_file)


def detect_environment(
    envdir: str, *, basemodulepath: str | None = None, modulepath: str | None = None
) -> Environment:
    """The environment at ``envdir``.  Raises :class:`CompileError` when it is not an environment -- a
    module checked out on its own is not one (metadata.json and no environment.conf): with its
    ``manifests/`` it would pass for one, and its ``.xpp`` tree would be written inside the module
    directory, where Puppet never reads it (its files are compiled with an environment whose modulepath
    holds it)."""
    root = os.path.abspath(envdir)
    if is_module_dir(root) and not os.path.isfile(os.path.join(root, "environment.conf")):
        raise CompileError(
            f"{envdir}: a module (metadata.json), not an environment: .xpp files are never written inside "
            "a module directory; compile the environment whose modulepath holds it"
        )
    try:
        return load_environment(envdir, basemodulepath=basemodulepath, modulepath=modulepath)
    except NotAnEnvironment as e:
        raise CompileError(str(e)) from None


def walk_pp(
    top: str,
    skip: Iterable[str] = (),
    exclude: Iterable[tuple[str, str]] = (),
    probe: Probe | None = None,
) -> Iterator[tuple[str, str | None]]:
    """``.pp`` files below ``top`` (sorted, symlinks followed, each directory once), plus problems:
    yields (path, None) for files and (path, reason) for entries that cannot be used; the paths are
    absolute and normalized (``top`` made so, then entry names joined).  Directories in
    ``skip``, ``.xpp`` directories and what :mod:`xpp.walk` skips (``exclude``: its (directory,
    pattern) pairs) are not entered.  ``probe``: the look-ups above ``top`` shared by the walks of one
    plan (:class:`xpp.walk.Probe`)."""
    for found in walk(
        top, (".pp",), exclude=exclude, skip_dirs=skip, files_first=True, problems=True, probe=probe
    ):
        yield found.path, found.problem


def _display(env: Environment, src: str) -> str:
    if src.startswith(env.root + os.sep):
        rel = src[len(env.root) + 1 :]
        return rel if env.display in (".", "./") else os.path.join(env.display, rel)
    return src


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


class _Planner:
    """Turns a source reached by the plan's walk into its :class:`Job` (or a reason to skip it)."""

    def __init__(self, env: Environment, runtime_root: str | None) -> None:
        self.env = env
        self.runtime_root = runtime_root
        self.target_of: Callable[[str], layout.XppTarget | None] = layout.xpp_targets(
            env.root, env.modulepath
        )
        # for the paths of the plan's walks (absolute and normalized: see walk_pp)
        self.walked_target_of = layout.xpp_targets(env.root, env.modulepath, normalized=True)
        self.out_base = env.out_base
        self.out_prefix = self.out_base + os.sep

    def job(self, src: str, module: str, fallback_rel: str | None, walked: bool = False) -> Job | str:
        """The job of ``src`` reached as a file of ``module`` (``fallback_rel``: its path in the module
        ``environment`` when it lies outside the environment), or why it is skipped.  ``walked``: ``src``
        is a path of the plan's walk (absolute and normalized)."""
        env = self.env
        # the one plan rule (xpp.environment): a plan lies in a plans/ directory, so a walked path
        # without one is not asked (the rule's look-ups were a fifth of the plan)
        tasks = (not walked or _PLANS_DIR in src) and is_plan_file(src, env)
        target = (self.walked_target_of if walked else self.target_of)(src)
        # the main manifest (fallback_rel given) inside the environment or a module keeps its place there
        if target is not None and (target.module == module or fallback_rel is not None):
            out, recorded, module = target.out_path, target.recorded, target.module
            if not walked:
                out = os.path.normpath(out)  # (made of a normalized path: already normalized)
        else:  # the main manifest outside the environment and its modules: environment/manifests/...
            assert fallback_rel is not None  # (walk gives it for the manifest directory)
            out = os.path.join(self.out_base, module, layout.xpp_name(fallback_rel))
            recorded = layout.recorded_name(env.root, src)
            out = os.path.normpath(out)
        if not out.startswith(self.out_prefix):
            return f"its .xpp {out} would be outside {self.out_base}; refused"
        if not _utf8(recorded):
            return "its file name is not valid UTF-8 (an .xpp records it as text); skipped"
        if self.runtime_root and src.startswith(env.root + os.sep):
            recorded = self.runtime_root.rstrip("/") + "/" + recorded
        rel = out[len(self.out_prefix) :].replace(os.sep, "/")
        return Job(src, _display(env, src), out, rel, recorded, module, tasks)


def _manifest_fallback(path: str, base: str | None) -> str | None:
    return os.path.join("manifests", os.path.relpath(path, base)) if base else None


def plan(
    env: Environment, runtime_root: str | None = None, exclude: Iterable[str] = ()
) -> tuple[list[Job], list[tuple[str, str]]]:
    """(jobs, skipped): what to compile in ``env``; skipped is a list of (path, reason).  ``exclude``
    (``--exclude``) adds gitignore-style patterns relative to the environment to the project
    configuration's."""
    planner = _Planner(env, runtime_root)
    excludes = [(env.root, pattern) for pattern in exclude] + project_for(env.root).excludes()
    probe = Probe()  # (the directories above the walks' tops, looked at once for the whole plan)
    jobs: list[Job] = []
    skipped: list[tuple[str, str]] = []
    seen_out: dict[str, str] = {}

    def add(src: str, module: str, fallback_rel: str | None, walked: bool = False) -> None:
        job = planner.job(src, module, fallback_rel, walked)
        if isinstance(job, str):
            skipped.append((src, job))
        elif seen_out.get(job.out) == src:
            pass  # the main manifest lying in a module: reached again by the module's walk
        elif job.out in seen_out:
            skipped.append((src, f"maps to the same .xpp as {seen_out[job.out]}; skipped"))
        else:
            seen_out[job.out] = src
            jobs.append(job)

    def walk(top: str, module: str, fallback_base: str | None = None) -> None:
        for p, problem in walk_pp(top, skip=env.modulepath, exclude=excludes, probe=probe):
            if problem is not None:
                skipped.append((p, problem))
                continue
            add(p, module, _manifest_fallback(p, fallback_base), walked=True)

    # the environment's own files: the main manifest (file or directory), functions/, types/, plans/
    manifest = env.manifest
    if os.path.isdir(manifest):
        walk(manifest, layout.ENV_MODULE, fallback_base=manifest)
    elif os.path.isfile(manifest):
        if manifest.endswith(".pp"):
            add(manifest, layout.ENV_MODULE, os.path.join("manifests", os.path.basename(manifest)))
    elif os.path.lexists(manifest):
        skipped.append((manifest, "the manifest is not a file or directory"))
    for d in ENV_DIRS:
        p = os.path.join(env.root, d)
        if os.path.isdir(p) and p != manifest:
            walk(p, layout.ENV_MODULE)

    # modules: the first occurrence of a name wins
    first: dict[str, str] = {}
    for d in env.modulepath:
        try:
            names = sorted(e.name for e in os.scandir(d) if e.is_dir())
        except FileNotFoundError:
            continue
        except NotADirectoryError:
            skipped.append((d, "modulepath entry is not a directory"))
            continue
        except OSError as e:
            skipped.append((d, f"cannot read modulepath directory: {e.strerror}"))
            continue
        for name in names:
            module_dir = os.path.join(d, name)
            if not MODULE_NAME.match(name):
                continue  # Puppet ignores directories that are not module names
            if name == layout.ENV_MODULE:
                skipped.append(
                    (module_dir, f"module name '{name}' is reserved for the environment's own files; skipped")
                )
                continue
            if name in first:
                skipped.append(
                    (
                        module_dir,
                        f"duplicate module '{name}': {first[name]} comes first on the modulepath; skipped",
                    )
                )
                continue
            first[name] = module_dir
            # one listing of the module answers which source directories it has and the walks'
            # look-ups there (its .git, metadata.json, pattern files)
            try:
                with os.scandir(module_dir) as it:
                    entries = list(it)
            except OSError:
                entries = None
            if entries is None:
                subs = [sub for sub in SOURCE_DIRS if os.path.isdir(os.path.join(module_dir, sub))]
            else:
                probe.listing(module_dir, entries)
                kinds = {e.name: e for e in entries}
                subs = [sub for sub in SOURCE_DIRS if sub in kinds and _is_dir(kinds[sub])]
            for sub in subs:
                walk(os.path.join(module_dir, sub), name)
    return jobs, skipped


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # (links followed, as os.path.isdir)
    except OSError:
        return False


def _reached(path: str, top: str, skip: Container[str]) -> bool:
    """:func:`walk_pp` from ``top`` reaches the ``.pp`` file ``path``: it lies below ``top`` and no
    directory between them is skipped (a modulepath entry, an ``.xpp`` directory, what
    :func:`xpp.walk.reached` says the walk skips)."""
    if not path.startswith(top.rstrip(os.sep) + os.sep) or not path.endswith(".pp"):
        return False
    directory = os.path.dirname(path)
    while directory != top and len(directory) > len(top):
        if directory in skip or os.path.basename(directory) == layout.XPP_DIR:
            return False
        directory = os.path.dirname(directory)
    if not reached(path, top, exclude=project_for(path).excludes()):
        return False
    return os.path.isfile(path)


def _owner(env: Environment, path: str) -> tuple[str, str | None] | None:
    """(module, manifest fallback path) of the first walk of :func:`plan` that reaches ``path``."""
    manifest = env.manifest
    if os.path.isdir(manifest):
        if _reached(path, manifest, env.modulepath):
            return layout.ENV_MODULE, _manifest_fallback(path, manifest)
    elif path == manifest and manifest.endswith(".pp") and os.path.isfile(manifest):
        return layout.ENV_MODULE, os.path.join("manifests", os.path.basename(manifest))
    for d in ENV_DIRS:
        top = os.path.join(env.root, d)
        if top != manifest and os.path.isdir(top) and _reached(path, top, env.modulepath):
            return layout.ENV_MODULE, None
    earlier: list[str] = []  # modulepath entries before the one holding the file
    for d in env.modulepath:
        prefix = d.rstrip(os.sep) + os.sep
        if path.startswith(prefix):
            parts = path[len(prefix) :].split(os.sep)
            name = parts[0]
            if (
                len(parts) >= 3
                and parts[1] in SOURCE_DIRS
                and MODULE_NAME.match(name)
                and name != layout.ENV_MODULE
                and not any(os.path.isdir(os.path.join(e, name)) for e in earlier)  # the first wins
                and _reached(path, os.path.join(d, name, parts[1]), env.modulepath)
            ):
                return name, None
        earlier.append(d)
    return None


def plan_file(env: Environment, path: str, runtime_root: str | None = None) -> Job | None:
    """The job :func:`plan` makes for the one file ``path`` (None: ``plan`` compiles no such file, or
    skips it), found from the path alone: nothing else of the environment is read."""
    src = os.path.abspath(path)
    owner = _owner(env, src)
    if owner is None:
        return None
    job = _Planner(env, runtime_root).job(src, *owner)
    return None if isinstance(job, str) else job
