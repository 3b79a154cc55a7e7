"""Batch compile: the ``.xpp`` tree of a whole Puppet environment (PRFC-23 layout), incrementally.

This is the engine behind ``puppet-xpp --compile [ENVDIR...]`` (the command line, progress display and
report are in :mod:`server.cli.compile`).

Environment (:func:`detect_environment`): the one model in :mod:`xpp.environment` (``environment.conf``,
``modulepath`` with ``$basemodulepath``, ``manifest``, the plan rule), as Puppet reads a directory
environment.  A ``modulepath`` given by the caller replaces the environment's.

* modules: the directories of each modulepath entry whose name is a valid module name
  (``[a-z][a-z0-9_]*``).  When a name occurs more than once only the first is compiled; later ones are
  reported and skipped, as is a module named ``environment`` (reserved).

What is compiled (:func:`plan`): every ``.pp`` below each module's ``manifests/``, ``functions/``,
``types/`` and ``plans/`` (plans in tasks mode, by :func:`xpp.environment.is_plan_file`), and the environment's own manifest (file or directory)
and its ``functions/``, ``types/``, ``plans/`` as the reserved module ``environment``.  Output paths and
recorded file names come from :func:`xpp.layout.xpp_target`, the bytes from
:func:`xpp.layout.compile_source` (both shared with the language server's ``.xpp``-on-save, so the bytes
are identical).  A manifest outside the environment directory goes to
``.xpp/modules/environment/manifests/<name>``.

Safety: nothing is written outside ``ENVDIR/.xpp`` or inside a module directory.  ``.xpp`` itself and
every directory below it must be real directories (a symbolic link there is refused with a message),
and every write goes through directory descriptors opened from ``.xpp`` down without following links
(:class:`xpp.writes.AnchoredTree`), so a link swapped in during the run cannot redirect it; writes are
atomic (temporary file in the target directory + rename), so a killed run leaves only complete files.
Sources are read by :func:`xpp.sources.read_source` (regular files only, a size limit, as the
environment owner when running as root; an ``.xpp`` is never more readable than its source).  One
compile per environment at a time (``.xpp/compile.lock``).  A failure on one file (internal error, a
worker process that died) is that file's result; the others go on.

Incremental: ``ENVDIR/.xpp/compile-state.json`` records, per output, the stat of the source and of the
``.xpp`` written, plus a fingerprint of the settings and of the compiler's own code.  A file whose two
stats match is up to date without being read.  Otherwise, unless ``force``, the existing ``.xpp`` is read
and its embedded source (the Locator string), recorded name and encoding are compared with the source:
equal means up to date (the source is the authority, not the time stamps).  A recompiled file whose
bytes equal the existing ``.xpp`` is not rewritten.  ``.xpp`` files that no source maps to any more are
removed (and directories left empty), as are all temporary files left by killed runs (the lock holder
is the only writer).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat as _stat
import sys
import time
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from puppet_xpp.xpp import layout, writes
from puppet_xpp.xpp.environment import (
    MODULE_NAME,
    SOURCE_DIRS,
    Environment,
    NotAnEnvironment,
    is_plan_file,
    load_environment,
)

if TYPE_CHECKING:
    from puppet_xpp.grammar.issues import Diagnostic
    from puppet_xpp.xpp.sources import Source

__all__ = [
    "CompileError",
    "Options",
    "EnvLayout",
    "Job",
    "FileResult",
    "EnvResult",
    "detect_environment",
    "plan",
    "compile_environment",
    "compile_file",
    "write_job",
    "STATE_FILE",
    "MODULE_NAME",
]

ENV_DIRS = ("functions", "types", "plans")
STATE_FILE = "compile-state.json"
STATE_VERSION = 1
TMP_MAX_AGE = 600.0  # seconds: leftover temporary files older than this are removed
_TMP_NAME = re.compile(r"\..+\.xpp\..+\.tmp\Z")


class CompileError(Exception):
    """A usage or environment problem that stops the compile of an environment (exit status 2)."""


@dataclass
class Options:
    fmt: str = "msgpack"
    force: bool = False
    jobs: int = 0  # 0: number of cores
    file_mode: int = 0o644
    dir_mode: int = 0o755
    runtime_root: str | None = None  # where ENVDIR lives at run time (recorded names become absolute)
    strict: str | None = None  # None: the language level's default (grammar.levels)
    puppet_version: str | None = None  # language level 8 | 7 | 7.23 (None: the default, 8)
    basemodulepath: str | None = None
    modulepath: str | None = None  # replaces the environment's modulepath
    chown: bool | None = None  # None: when running as root
    max_source_bytes: int | None = None  # None: xpp.sources.max_bytes() (environment or default)
    wait: bool = True  # another compile of the environment holds its lock: wait (else CompileError)
    debug: bool = False  # an internal error's traceback goes into the file's message


@dataclass
class Job:
    src: str  # absolute path of the source, as reached (symlinks not resolved)
    display: str  # the source path for messages (below ENVDIR as given, else absolute)
    out: str  # absolute path of the .xpp
    rel: str  # out path relative to .xpp/modules, '/'-separated
    recorded: str  # the file name recorded in the .xpp
    module: str
    tasks: bool


@dataclass
class FileResult:
    job: Job
    status: str  # compiled | up to date | failed (I/O, internal error, lost worker) | unreadable
    errors: int = 0
    warnings: int = 0
    # rows: [severity, code, message, line, column, logged]
    diagnostics: list[list[Any]] = field(default_factory=list)
    message: str = ""  # I/O problem
    src_stat: list[int] | None = None
    xpp_stat: list[int] | None = None
    written: bool = False  # the .xpp was (re)written (a compile giving the same bytes is not)


@dataclass
class EnvResult:
    env: EnvLayout
    files: list[FileResult] = field(default_factory=list)  # in plan order
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    removed: list[str] = field(default_factory=list)  # removed .xpp paths
    io_errors: list[str] = field(default_factory=list)  # problems not tied to one file (exit status 2)
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for r in self.files if r.status == status)

    @property
    def with_errors(self) -> int:
        return sum(1 for r in self.files if r.errors)

    @property
    def failed(self) -> int:
        """Files that could not be handled (unreadable, refused, not written, internal error): exit 2."""
        return sum(1 for r in self.files if r.status in ("failed", "unreadable"))


# ------------------------------------------------------------------------------------------------------
# environment


# The model of an environment is xpp.environment's (shared with --validate, --dump, --compile FILE and
# the language server); EnvLayout stays as this module's name for it.
EnvLayout = Environment


def detect_environment(
    envdir: str, *, basemodulepath: str | None = None, modulepath: str | None = None
) -> EnvLayout:
    """The environment at ``envdir``.  Raises :class:`CompileError` when it is not an environment."""
    try:
        return load_environment(envdir, basemodulepath=basemodulepath, modulepath=modulepath)
    except NotAnEnvironment as e:
        raise CompileError(str(e)) from None


# ------------------------------------------------------------------------------------------------------
# planning


def _walk_pp(top: str, skip: Container[str] = ()) -> Iterator[tuple[str, str | None]]:
    """``.pp`` files below ``top`` (sorted, symlinks followed, each directory once), plus problems:
    yields (path, None) for files and (path, reason) for entries that cannot be used."""
    seen: set[tuple[int, int]] = set()
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            st = os.stat(d)
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            yield d, f"cannot read directory: {e.strerror}"
            continue
        subdirs: list[str] = []
        for entry in entries:
            p = entry.path
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if p not in skip and entry.name != layout.XPP_DIR:
                    subdirs.append(p)
                continue
            if not entry.name.endswith(".pp"):
                continue
            if entry.is_symlink() and not os.path.exists(p):
                yield p, "broken symbolic link"
                continue
            yield p, None
        stack.extend(reversed(subdirs))


def _display(env: EnvLayout, src: str) -> str:
    if src.startswith(env.root + os.sep):
        rel = src[len(env.root) + 1 :]
        return rel if env.display in (".", "./") else os.path.join(env.display, rel)
    return src


def _recorded(env: EnvLayout, src: str, target_recorded: str, runtime_root: str | None) -> str:
    if runtime_root and src.startswith(env.root + os.sep):
        return runtime_root.rstrip("/") + "/" + target_recorded
    return target_recorded


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def plan(env: EnvLayout, runtime_root: str | None = None) -> tuple[list[Job], list[tuple[str, str]]]:
    """(jobs, skipped): what to compile in ``env``; skipped is a list of (path, reason)."""
    jobs: list[Job] = []
    skipped: list[tuple[str, str]] = []
    seen_out: dict[str, str] = {}
    target_of = layout.xpp_targets(env.root, env.modulepath)
    out_base = env.out_base
    out_prefix = out_base + os.sep

    def add(src: str, module: str, fallback_rel: str | None) -> None:
        tasks = is_plan_file(src, env)  # the one plan rule (xpp.environment)
        t = target_of(src)
        if t is not None and t.module == module:
            out, recorded = t.out_path, t.recorded
        else:  # the main manifest outside the environment: environment/manifests/...
            assert fallback_rel is not None  # (walk gives it for the manifest directory)
            out = os.path.join(out_base, module, layout._xpp_name(fallback_rel))
            recorded = layout._recorded(env.root, src)
        out = os.path.normpath(out)
        if not out.startswith(out_prefix):
            skipped.append((src, f"its .xpp {out} would be outside {out_base}; refused"))
            return
        if out in seen_out:
            skipped.append((src, f"maps to the same .xpp as {seen_out[out]}; skipped"))
            return
        if not _utf8(recorded):
            skipped.append((src, "its file name is not valid UTF-8 (an .xpp records it as text); skipped"))
            return
        seen_out[out] = src
        rel = out[len(out_prefix) :].replace(os.sep, "/")
        jobs.append(
            Job(src, _display(env, src), out, rel, _recorded(env, src, recorded, runtime_root), module, tasks)
        )

    def walk(top: str, module: str, fallback_base: str | None = None) -> None:
        for p, problem in _walk_pp(top, skip=env.modulepath):
            if problem is not None:
                skipped.append((p, problem))
                continue
            fallback = os.path.join("manifests", os.path.relpath(p, fallback_base)) if fallback_base else None
            add(p, module, fallback)

    # the environment's own files: the main manifest (file or directory), functions/, types/, plans/
    man = env.manifest
    if os.path.isdir(man):
        walk(man, layout.ENV_MODULE, fallback_base=man)
    elif os.path.isfile(man):
        if man.endswith(".pp"):
            add(man, layout.ENV_MODULE, os.path.join("manifests", os.path.basename(man)))
    elif os.path.lexists(man):
        skipped.append((man, "the manifest is not a file or directory"))
    for d in ENV_DIRS:
        p = os.path.join(env.root, d)
        if os.path.isdir(p) and p != man:
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
            mdir = os.path.join(d, name)
            if not MODULE_NAME.match(name):
                continue  # Puppet ignores directories that are not module names
            if name == layout.ENV_MODULE:
                skipped.append(
                    (mdir, f"module name '{name}' is reserved for the environment's own files; skipped")
                )
                continue
            if name in first:
                skipped.append(
                    (mdir, f"duplicate module '{name}': {first[name]} comes first on the modulepath; skipped")
                )
                continue
            first[name] = mdir
            for sub in SOURCE_DIRS:
                p = os.path.join(mdir, sub)
                if os.path.isdir(p):
                    walk(p, name)
    return jobs, skipped


# ------------------------------------------------------------------------------------------------------
# output tree safety


def _is_within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


class _Tree:
    """The ``.xpp`` tree of an environment, written only through directory descriptors
    (:class:`xpp.writes.AnchoredTree`: no component is followed if it is a symbolic link, so a directory
    swapped for a link during a run makes that file fail, never escape the tree)."""

    def __init__(self, env: EnvLayout, opts: Options, owner: tuple[int, int] | None) -> None:
        self.env = env
        self.dir_mode = opts.dir_mode
        self.owner = owner
        self.anchored: writes.AnchoredTree | None = None

    def check_root(self, module_dirs: Iterable[str]) -> None:
        root = self.env.xpp_root
        if os.path.islink(root):
            raise CompileError(
                f"refusing to write: {root} is a symbolic link (to {os.readlink(root)}); the "
                ".xpp tree must be a real directory of the environment"
            )
        if os.path.lexists(root) and not os.path.isdir(root):
            raise CompileError(f"refusing to write: {root} exists and is not a directory")
        real_env = os.path.realpath(self.env.root)
        real_root = os.path.join(real_env, layout.XPP_DIR)
        for m in module_dirs:
            rm = os.path.realpath(m)
            if _is_within(real_root, rm):
                raise CompileError(f"refusing to write: {root} would be inside the module directory {m}")

    def open(self) -> writes.AnchoredTree:
        """The anchored tree (``.xpp`` created when missing); CompileError when it is unsafe."""
        if self.anchored is None:
            try:
                self.anchored = writes.AnchoredTree(
                    self.env.xpp_root, dir_mode=self.dir_mode, owner=self.owner
                )
            except writes.UnsafePath as e:
                raise CompileError(str(e)) from None
            except OSError as e:
                raise CompileError(f"cannot open {self.env.xpp_root}: {e.strerror or e}") from None
        return self.anchored

    def rel(self, path: str) -> str:
        """``path`` (below the .xpp root) relative to it, '/'-separated; CompileError outside."""
        root = self.env.xpp_root
        rel = os.path.relpath(path, root)
        if rel == "." or not _is_within(path, root) or ".." in rel.split(os.sep):
            raise CompileError(f"refusing to write outside {root}: {path}")
        return rel.replace(os.sep, "/")

    def ensure_dir(self, d: str) -> None:
        """Create directory ``d`` (below the .xpp root) and its parents; OSError/CompileError."""
        tree = self.open()
        if d == self.env.xpp_root:
            return
        try:
            tree.dir_fd(self.rel(d), create=True)
        except writes.UnsafePath as e:
            raise CompileError(str(e)) from None

    def close(self) -> None:
        if self.anchored is not None:
            self.anchored.close()
            self.anchored = None


# ------------------------------------------------------------------------------------------------------
# state (incremental compile)


def _stat_sig(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _xpp_sig(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


_CODE_FP: str | None = None


def code_fingerprint() -> str:
    """Changes whenever the compiler's code (grammar/, xpp/) changes."""
    global _CODE_FP
    if _CODE_FP is None:
        h = hashlib.sha256()
        base = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for pkg in ("grammar", "xpp"):
            d = os.path.join(base, pkg)
            try:
                names = sorted(n for n in os.listdir(d) if n.endswith((".py", ".lark")))
            except OSError:
                names = []
            for n in names:
                try:
                    st = os.stat(os.path.join(d, n))
                except OSError:
                    continue
                h.update(f"{pkg}/{n}:{st.st_size}:{st.st_mtime_ns};".encode())
        _CODE_FP = h.hexdigest()[:32]
    return _CODE_FP


def _level(opts: Options) -> tuple[str, str]:
    """(language level, strict) in effect for ``opts`` (an explicit strict wins over the level's)."""
    from puppet_xpp.grammar import levels

    name = levels.level(opts.puppet_version).name
    return name, levels.resolve_strict(name, opts.strict)


def settings_fingerprint(env: EnvLayout, opts: Options) -> str:
    level, strict = _level(opts)
    blob = json.dumps(
        {
            "code": code_fingerprint(),
            "fmt": opts.fmt,
            "strict": strict,
            "puppet_version": level,
            "modulepath": list(env.modulepath),
            "manifest": env.manifest,
            "runtime_root": opts.runtime_root,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _load_state(tree: writes.AnchoredTree) -> dict[str, Any]:
    """The state file, read through the anchored tree (a link there is not followed)."""
    try:
        data = tree.read(STATE_FILE)
        st = json.loads(data) if data is not None else None
        if type(st) is dict and st.get("version") == STATE_VERSION and type(st.get("files")) is dict:
            return st
    except (OSError, ValueError):
        pass
    return {"version": STATE_VERSION, "fingerprint": None, "files": {}}


# ------------------------------------------------------------------------------------------------------
# one file (runs in a worker process)

_W: dict[str, Any] = {}  # worker settings: fmt, strict, modulepath, manifest, file_mode, owner, check


def _init_worker(settings: dict[str, Any]) -> None:
    _W.clear()
    _W.update(settings)
    if settings.get("pdeathsig"):
        _die_with_parent(settings.get("parent"))


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


def _die_with_parent(parent: int | None = None) -> None:
    """Linux: a worker is killed when the compiling process dies (e.g. SIGKILL), instead of lingering
    (also when the parent died before this ran: then ``parent`` is no longer our parent)."""
    prctl = _prctl()
    if prctl is None:
        return
    try:
        import signal

        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # pragma: no cover - best effort
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def _diag_rows(diags: Iterable[Any], locator: Any) -> list[list[Any]]:
    from puppet_xpp.grammar.validator_syntax import LoggedDiagnostic

    rows: list[list[Any]] = []
    for d in diags:
        line, col = d.line_col(locator) if locator is not None else (None, None)
        rows.append([d.severity, d.code, d.message, line, col, isinstance(d, LoggedDiagnostic)])
    return rows


def _record_rows(records: Iterable[dict[str, Any]]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for r in records:
        logged = r.get("offset") is None and r.get("line") is not None
        rows.append(
            [
                r.get("severity") or "error",
                r.get("issue_code") or "",
                r.get("message") or "",
                r.get("line"),
                r.get("pos"),
                logged,
            ]
        )
    return rows


def _counts(rows: Iterable[Sequence[Any]]) -> tuple[int, int]:
    e = sum(1 for r in rows if r[0] == "error")
    w = sum(1 for r in rows if r[0] in ("warning", "deprecation"))
    return e, w


def _worker_tree() -> writes.AnchoredTree:
    t: writes.AnchoredTree | None = _W.get("tree")
    if t is None:
        t = _W["tree"] = writes.AnchoredTree(_W["xpp_root"], dir_mode=_W["dir_mode"], owner=_W["owner"])
    return t


def _existing_is_current(data: bytes | None, text: str, recorded: str, fmt: str) -> list[list[Any]] | None:
    """The diagnostic rows of the existing .xpp ``data`` when it holds exactly this source (the Locator
    string), recorded name and encoding; else None."""
    if data is None:
        return None
    from puppet_xpp.xpp.envelope import unwrap
    from puppet_xpp.xpp.result import XppFormatError, read_payload

    try:
        got_fmt, _params, payload = unwrap(data)
        if got_fmt != fmt:
            return None
        program, records = read_payload(payload, got_fmt)
    except XppFormatError:
        return None
    if program is None:
        return None  # diagnostics only: no embedded source to compare with
    loc = program.locator
    if loc.string != text or loc.file != recorded:
        return None
    return _record_rows(records)


def source_xpp(
    src: Source,
    recorded: str,
    *,
    abs_path: str,
    tasks: bool,
    strict: str,
    modulepath: Iterable[str],
    manifest: str | None,
    fmt: str,
    puppet_version: str | None = None,
) -> tuple[bytes, list[list[Any]]]:
    """(xpp bytes, diagnostic rows) of a source read by :func:`xpp.sources.read_source` whose text may be
    used (an INVALID_ENCODING source gets an .xpp holding only that diagnostic, as Puppet rejects it)."""
    if src.diagnostic is not None:
        from puppet_xpp.grammar.ast import make_locator

        loc = make_locator("", recorded)
        return layout.write_program(None, [src.diagnostic], loc, recorded, fmt=fmt), _diag_rows(
            [src.diagnostic], loc
        )
    info: dict[str, Any] = {}
    assert src.text is not None  # the callers compile only a source that was read
    data = layout.compile_source(
        src.text,
        recorded,
        abs_path=abs_path,
        epp=False,
        tasks=tasks,
        strict=strict,
        modulepath=modulepath,
        manifest=manifest,
        fmt=fmt,
        info=info,
        puppet_version=puppet_version,
    )
    return data, _diag_rows(info["diagnostics"], info["locator"])


def compile_job(job: Job) -> FileResult:
    """Compile one file (in a worker, settings from :func:`_init_worker`).  Never raises: a failure inside
    puppet-xpp becomes the file's INTERNAL_ERROR (status "failed", nothing written)."""
    from puppet_xpp.xpp.sources import format_traceback, internal_error, narrowed_mode, read_source

    try:
        return _compile_job(job, read_source, narrowed_mode)
    except Exception as e:
        fr = FileResult(job, "failed")
        fr.diagnostics = _diag_rows([internal_error(e, job.display)], None)
        fr.errors = 1
        if _W.get("debug"):
            fr.message = format_traceback(e)
        try:
            _worker_tree().unlink("modules/" + job.rel)  # whatever it holds is not this source's
        except (OSError, KeyError):
            pass
        return fr


def _compile_job(
    job: Job, read_source: Callable[..., Source], narrowed_mode: Callable[..., int]
) -> FileResult:
    w = _W
    fr = FileResult(job, "compiled")
    rel = "modules/" + job.rel
    tree = _worker_tree()
    src = read_source(job.src, job.display, limit=w.get("max_bytes"), as_user=w["owner"])
    if src.text is None:
        fr.status = "unreadable"
        fr.errors = 1
        fr.diagnostics = _diag_rows([src.diagnostic], None)
        try:
            tree.unlink(rel)  # whatever it holds cannot be checked against the source
        except OSError:
            pass
        return fr
    assert src.stat is not None  # read_source sets it whenever the text was read
    fr.src_stat = _stat_sig(src.stat)
    # nothing to read in a directory this run created (a cold compile: saves a failing open per file)
    existing = None if os.path.dirname(rel) in w.get("fresh", ()) else tree.read(rel)
    if w.get("check") and src.diagnostic is None:
        rows = _existing_is_current(existing, src.text, job.recorded, w["fmt"])
        if rows is not None:
            fr.status = "up to date"
            fr.diagnostics = rows
            fr.errors, fr.warnings = _counts(rows)
            try:
                fr.xpp_stat = _xpp_sig(tree.stat(rel))
            except OSError:
                fr.xpp_stat = None
            return fr
    out_bytes, fr.diagnostics = source_xpp(
        src,
        job.recorded,
        abs_path=job.src,
        tasks=job.tasks,
        strict=w["strict"],
        modulepath=w["modulepath"],
        manifest=w["manifest"],
        fmt=w["fmt"],
        puppet_version=w.get("puppet_version"),
    )
    fr.errors, fr.warnings = _counts(fr.diagnostics)
    owner = w["owner"]
    mode = narrowed_mode(w["file_mode"], src.stat, owner[1] if owner else os.getegid())
    try:
        if existing == out_bytes:  # identical bytes: not rewritten
            st = tree.stat(rel)
            if _stat.S_IMODE(st.st_mode) != mode:
                tree.chmod(rel, mode)
        else:
            st = tree.write(rel, out_bytes, mode=mode, owner=owner)
            fr.written = True
        fr.xpp_stat = _xpp_sig(st)
    except OSError as e:
        fr.status = "failed"
        fr.message = f"cannot write {job.out}: {e.strerror or e}"
    return fr


def _work(item: tuple[int, Job]) -> tuple[int, tuple[Any, ...]]:
    i, job = item
    fr = compile_job(job)
    return i, _payload(fr)


def _payload(fr: FileResult) -> tuple[Any, ...]:
    return (
        fr.status,
        fr.errors,
        fr.warnings,
        fr.diagnostics,
        fr.message,
        fr.src_stat,
        fr.xpp_stat,
        fr.written,
    )


# ------------------------------------------------------------------------------------------------------
# the environment


def _owner_for(env: EnvLayout, opts: Options) -> tuple[int, int] | None:
    """(uid, gid) to give the files (root: ENVDIR's owner), or None (ours; nothing to change)."""
    chown = opts.chown if opts.chown is not None else (hasattr(os, "geteuid") and os.geteuid() == 0)
    if not chown:
        return None
    st = os.stat(env.root)
    if (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()):
        return None  # already ours: no chown, no change of user to read sources
    return st.st_uid, st.st_gid


def _module_dirs(env: EnvLayout) -> list[str]:
    out: list[str] = []
    for d in env.modulepath:
        try:
            out.extend(e.path for e in os.scandir(d) if e.is_dir() and MODULE_NAME.match(e.name))
        except OSError:
            continue
    return out


class _Events:
    """Default no-op event sink; see :func:`compile_environment`."""

    def start(self, env: EnvLayout, total: int, todo: int) -> None:
        pass

    def progress(self, done: int, todo: int, result: FileResult) -> None:
        pass

    def file(self, result: FileResult) -> None:
        pass

    def removed(self, path: str) -> None:
        pass


LOCK_FILE = "compile.lock"


def _lock(tree: writes.AnchoredTree, env: EnvLayout, opts: Options, events: Any) -> int:
    """Take the environment's compile lock (``.xpp/compile.lock``, ``flock``): one compile per environment
    at a time.  Busy: wait (telling ``events.waiting`` once) or, with ``wait=False``, CompileError."""
    import fcntl

    try:
        fd = os.open(
            LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=tree.root_fd
        )
    except OSError as e:
        raise CompileError(
            f"cannot open {os.path.join(env.xpp_root, LOCK_FILE)}: {e.strerror or e}"
        ) from None
    try:
        st = os.fstat(fd)
        if _stat.S_IMODE(st.st_mode) != opts.file_mode & 0o666:
            os.fchmod(fd, opts.file_mode & 0o666)  # holds nothing: the tree's file mode
        owner = tree.owner
        if owner is not None and (st.st_uid, st.st_gid) != tuple(owner):
            os.fchown(fd, *owner)
    except OSError:
        pass
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        pass
    if not opts.wait:
        os.close(fd)
        raise CompileError(
            f"{env.display}: another compile of this environment is running (lock "
            f"{os.path.join(env.xpp_root, LOCK_FILE)} held); not waiting (--no-wait)"
        )
    getattr(events, "waiting", lambda env: None)(env)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def compile_environment(env: EnvLayout, opts: Options, events: Any = None) -> EnvResult:
    """Compile ``env`` incrementally.

    ``events`` (optional) receives ``start(env, total, todo)``, ``progress(done, todo, FileResult)`` as
    each file needing work completes, ``file(FileResult)`` for every file in plan order,
    ``removed(path)``, and ``waiting(env)`` when another compile holds the environment's lock.  Raises
    :class:`CompileError` when the output tree is unsafe (or locked, with ``opts.wait`` False)."""
    t0 = time.monotonic()
    events = events or _Events()
    res = EnvResult(env)
    owner = _owner_for(env, opts)
    tree = _Tree(env, opts, owner)
    tree.check_root(_module_dirs(env))
    anchored = tree.open()
    lock_fd = _lock(anchored, env, opts, events)
    try:
        return _compile_locked(env, opts, events, res, owner, tree, t0)
    finally:
        tree.close()
        os.close(lock_fd)  # releases the lock


def _compile_locked(
    env: EnvLayout,
    opts: Options,
    events: Any,
    res: EnvResult,
    owner: tuple[int, int] | None,
    tree: _Tree,
    t0: float,
) -> EnvResult:
    anchored = tree.anchored
    assert anchored is not None  # compile_environment opened it
    jobs, skipped = plan(env, opts.runtime_root)
    res.skipped = skipped
    state_path = os.path.join(env.xpp_root, STATE_FILE)
    state = _load_state(anchored)
    fp = settings_fingerprint(env, opts)
    same_settings = state.get("fingerprint") == fp
    old_files = state["files"] if same_settings and not opts.force else {}

    # cheap stat check first
    results: list[FileResult | None] = [None] * len(jobs)
    todo: list[int] = []
    for i, job in enumerate(jobs):
        ent = old_files.get(job.rel)
        if ent is not None and ent.get("src") == job.src and ent.get("recorded") == job.recorded:
            s_sig: list[int] | None
            x_sig: list[int] | None
            try:
                s_sig = _stat_sig(os.stat(job.src))
                x_sig = _xpp_sig(anchored.stat("modules/" + job.rel))
            except OSError:
                s_sig = x_sig = None
            if s_sig == ent.get("s") and x_sig == ent.get("x"):
                rows = ent.get("diags") or []
                fr = FileResult(job, "up to date", diagnostics=rows, src_stat=s_sig, xpp_stat=x_sig)
                fr.errors, fr.warnings = _counts(rows)
                results[i] = fr
                continue
        todo.append(i)
    events.start(env, len(jobs), len(todo))

    # output directories, created in this process (a refusal is reported for each file below it)
    runnable: list[int] = []
    dirs: dict[str, str | None] = {}  # directory -> why it could not be created (None: it is there)
    for i in todo:
        job = jobs[i]
        d = os.path.dirname(job.out)
        if d not in dirs:
            try:
                tree.ensure_dir(d)
                dirs[d] = None
            except CompileError as e:
                dirs[d] = str(e)
            except OSError as e:
                dirs[d] = f"cannot create {d}: {e.strerror or e}"
        why = dirs[d]
        if why is None:
            runnable.append(i)
        else:
            results[i] = FileResult(job, "failed", message=why)
    anchored.forget()  # the workers open their own descriptors

    # an existing .xpp is trusted when its embedded source is this source, unless the settings changed
    # since the last run (or --force): then it is recompiled (identical bytes are not rewritten)
    settings = {
        "fmt": opts.fmt,
        "strict": _level(opts)[1],
        "puppet_version": _level(opts)[0],
        "modulepath": tuple(env.modulepath),
        "manifest": env.manifest,
        "file_mode": opts.file_mode,
        "dir_mode": opts.dir_mode,
        "owner": owner,
        "xpp_root": env.xpp_root,
        "max_bytes": opts.max_source_bytes,
        "debug": opts.debug,
        "check": not opts.force and (same_settings or state.get("fingerprint") is None),
        "fresh": frozenset(anchored.created),
    }
    reported = 0

    def flush() -> None:
        nonlocal reported
        while reported < len(jobs) and results[reported] is not None:
            events.file(results[reported])
            reported += 1

    done = 0
    for i, payload in _run(jobs, runnable, settings, opts):
        results[i] = FileResult(jobs[i], *payload)
        done += 1
        events.progress(done, len(runnable), results[i])
        flush()
    flush()
    res.files = cast("list[FileResult]", results)  # every job has its result now

    # stale outputs, temporary files left by killed runs (we hold the lock: all of them), empty directories
    res.removed = _sweep(anchored, env, {j.rel for j in jobs}, events)

    files: dict[str, dict[str, Any]] = {}
    for fr in res.files:
        if fr.status in ("compiled", "up to date") and fr.src_stat and fr.xpp_stat:
            files[fr.job.rel] = {
                "src": fr.job.src,
                "recorded": fr.job.recorded,
                "s": fr.src_stat,
                "x": fr.xpp_stat,
                "diags": fr.diagnostics,
            }
    new_state = {"version": STATE_VERSION, "fingerprint": fp, "files": files}
    if new_state != state:
        try:
            anchored.write(
                STATE_FILE,
                json.dumps(new_state, separators=(",", ":")).encode(),
                mode=opts.file_mode,
                owner=owner,
            )
        except OSError as e:
            res.io_errors.append(f"cannot write {state_path}: {e.strerror or e}")
    res.seconds = time.monotonic() - t0
    return res


def _run(
    jobs: list[Job], idx: list[int], settings: dict[str, Any], opts: Options
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Yield (plan index, result payload) for the jobs at ``idx``, compiled by worker processes; a job
    whose worker died is reported failed (:mod:`xpp.workers`)."""
    if not idx:
        return
    n = opts.jobs or os.cpu_count() or 1
    n = max(1, min(n, len(idx)))
    # import and load the parser before forking: the workers share it
    import puppet_xpp.grammar.validator  # noqa: F401
    import puppet_xpp.xpp.result  # noqa: F401
    import puppet_xpp.xpp.sources  # noqa: F401
    from puppet_xpp.grammar.parser import tables

    tables()
    items = [(i, jobs[i]) for i in idx]
    # Parsing allocates many objects that are freed by reference counting; the default GC thresholds
    # make the collector run thousands of times over the parser tables (and, after fork, touch their
    # pages: copy-on-write).  Freeze what exists now and collect less often while compiling.
    import gc

    old_threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*_GC_THRESHOLD)
    try:
        if n == 1 or len(idx) < 4 or not hasattr(os, "fork"):
            _init_worker(dict(settings))
            try:
                for item in items:
                    yield _work(item)
            finally:
                t = _W.pop("tree", None)
                if t is not None:
                    t.close()
            return
        yield from _run_pool(items, n, settings)
    finally:
        gc.set_threshold(*old_threshold)
        gc.unfreeze()


_GC_THRESHOLD = (50_000, 20, 20)


def _run_pool(
    items: list[tuple[int, Job]], n: int, settings: dict[str, Any]
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    from puppet_xpp.xpp.workers import run_pool

    _prctl()  # looked up once here, not in every worker
    if settings["check"] and any(
        os.path.dirname("modules/" + j.rel) not in settings["fresh"] for _, j in items
    ):
        from puppet_xpp.xpp.pcore_fast import prepare

        prepare()  # existing .xpp files will be read: generate the reader once, before forking
    chunk = max(1, min(16, len(items) // (n * 8)))
    for kind, (i, job), value in run_pool(
        _work, items, n, _init_worker, (dict(settings, pdeathsig=True, parent=os.getpid()),), chunk
    ):
        if kind == "done":
            yield value
        else:
            yield i, _payload(FileResult(job, "failed", message=f"{job.display}: not compiled: {value}"))


def _sweep(tree: writes.AnchoredTree, env: EnvLayout, expected: set[str], events: Any) -> list[str]:
    """Remove .xpp files no source maps to, every temporary file (the caller holds the lock, so none is
    being written) and directories left empty, below ``.xpp/modules``, through directory descriptors
    (``os.fwalk`` does not follow links)."""
    removed: list[str] = []
    try:
        base_fd = tree.dir_fd("modules")
    except OSError:
        return removed
    for d, dirs, files, dfd in os.fwalk(".", dir_fd=base_fd, topdown=False, follow_symlinks=False):
        rel_d = "" if d == "." else d[2:]
        for f in files:
            rel = f"{rel_d}/{f}" if rel_d else f
            if f.endswith(".xpp") and rel not in expected:
                try:
                    st = os.stat(f, dir_fd=dfd, follow_symlinks=False)
                    if not _stat.S_ISREG(st.st_mode) and not _stat.S_ISLNK(st.st_mode):
                        continue
                    os.unlink(f, dir_fd=dfd)
                except OSError:
                    continue
                p = os.path.join(env.out_base, rel)
                removed.append(p)
                events.removed(p)
            elif _TMP_NAME.match(f):
                try:
                    os.unlink(f, dir_fd=dfd)
                except OSError:
                    pass
        for sub in dirs:
            try:
                os.rmdir(sub, dir_fd=dfd)  # fails unless empty
            except OSError:
                pass
    return removed


def write_job(env: EnvLayout, job: Job, data: bytes, opts: Options | None = None) -> bool:
    """Write ``data`` as the .xpp of ``job`` with the safety rules, modes and owner of
    :func:`compile_environment` (for a single file, e.g. the language server's .xpp-on-save).  Returns
    False when the file already holds these bytes (not rewritten).  Raises CompileError (a refused symbolic
    link) or OSError."""
    from puppet_xpp.xpp.sources import narrowed_mode

    opts = opts or Options()
    owner = _owner_for(env, opts)
    tree = _Tree(env, opts, owner)
    tree.check_root(_module_dirs(env))
    try:
        tree.ensure_dir(os.path.dirname(job.out))
        anchored = tree.open()
        rel = "modules/" + job.rel
        if anchored.read(rel) == data:
            return False
        try:
            src_st: os.stat_result | None = os.stat(job.src)
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


# ------------------------------------------------------------------------------------------------------
# one file, outside an environment (``--compile FILE.pp -o OUT.xpp``)


class SourceRefused(OSError):
    """:func:`compile_file`: the source is not read (see :mod:`xpp.sources`); ``diagnostic`` says why."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def compile_file(
    src: str,
    recorded: str,
    *,
    fmt: str = "msgpack",
    tasks: bool = False,
    strict: str | None = None,
    modulepath: Iterable[str] = (),
    manifest: str | None = None,
    max_bytes: int | None = None,
    puppet_version: str | None = None,
) -> tuple[bytes, list[list[Any]]]:
    """(xpp bytes, diagnostic rows) of one file; :class:`SourceRefused` (an OSError) when it is not read
    (missing, unreadable, not a regular file, over the size limit)."""
    from puppet_xpp.xpp.sources import read_source

    source = read_source(src, limit=max_bytes)
    if source.text is None:
        assert source.diagnostic is not None  # a source not read has the diagnostic saying why
        raise SourceRefused(source.diagnostic)
    level, strict = _level(Options(strict=strict, puppet_version=puppet_version))
    return source_xpp(
        source,
        recorded,
        abs_path=os.path.abspath(src),
        tasks=tasks,
        strict=strict,
        modulepath=modulepath,
        manifest=manifest,
        fmt=fmt,
        puppet_version=level,
    )


# ------------------------------------------------------------------------------------------------------
# one saved file of an environment (the language server's .xpp on save)


def compile_saved(env_root: str, path: str, *, level: str | None, strict: str | None) -> str | None:
    """Write the .xpp of the one file ``path`` of the environment at ``env_root`` exactly as
    ``--compile ENVDIR`` would (same planning rules, safety rules, modes and owner).

    Returns the .xpp written (or already holding these bytes), or None when ``path`` is not a file
    ``--compile`` writes (outside every module of the environment).  Raises CompileError (the
    environment cannot be compiled, a refused link), SourceRefused or OSError."""
    env = detect_environment(env_root)
    jobs, _skipped = plan(env)
    job = next((j for j in jobs if os.path.abspath(j.src) == os.path.abspath(path)), None)
    if job is None:
        return None
    data, _rows = compile_file(
        job.src,
        job.recorded,
        tasks=job.tasks,
        strict=strict,
        puppet_version=level,
        modulepath=env.modulepath,
        manifest=env.manifest,
    )
    write_job(env, job, data)
    return job.out
