"""Batch compile: the ``.xpp`` tree of a whole Puppet environment (PRFC-23 layout), incrementally.

This is the engine behind ``puppet-xpp --compile [ENVDIR...]`` (the command line, progress display and
report are in :mod:`server.cmd_compile`).

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
every directory below it must be real directories (a symbolic link there is refused with a message);
writes are atomic (temporary file in the target directory + rename), so a killed run leaves only
complete files.

Incremental: ``ENVDIR/.xpp/compile-state.json`` records, per output, the stat of the source and of the
``.xpp`` written, plus a fingerprint of the settings and of the compiler's own code.  A file whose two
stats match is up to date without being read.  Otherwise, unless ``force``, the existing ``.xpp`` is read
and its embedded source (the Locator string), recorded name and encoding are compared with the source:
equal means up to date (the source is the authority, not the time stamps).  A recompiled file whose
bytes equal the existing ``.xpp`` is not rewritten.  ``.xpp`` files that no source maps to any more are
removed (and directories left empty), as are temporary files left by a killed run (after 10 minutes).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat as _stat
import sys
import time
from dataclasses import dataclass, field

from puppet_xpp.xpp import layout
from puppet_xpp.xpp.environment import (
    MODULE_NAME,
    SOURCE_DIRS,
    Environment,
    NotAnEnvironment,
    expand_modulepath,
    is_plan_file,
    load_environment,
    parse_conf,
    split_path,
)

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
    strict: str = "warning"
    basemodulepath: str | None = None
    modulepath: str | None = None  # replaces the environment's modulepath
    chown: bool | None = None  # None: when running as root


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
    status: str  # compiled | up to date | failed (I/O) | unreadable
    errors: int = 0
    warnings: int = 0
    diagnostics: list = field(default_factory=list)  # [severity, code, message, line, column, logged]
    message: str = ""  # I/O problem
    src_stat: list | None = None
    xpp_stat: list | None = None
    written: bool = False  # the .xpp was (re)written (a compile giving the same bytes is not)


@dataclass
class EnvResult:
    env: EnvLayout
    files: list = field(default_factory=list)  # FileResult, in plan order
    skipped: list = field(default_factory=list)  # (path, reason)
    removed: list = field(default_factory=list)  # removed .xpp paths
    io_errors: list = field(default_factory=list)  # messages (exit status 2)
    seconds: float = 0.0

    def count(self, status):
        return sum(1 for r in self.files if r.status == status)

    @property
    def with_errors(self):
        return sum(1 for r in self.files if r.errors)


# ------------------------------------------------------------------------------------------------------
# environment


# The model of an environment is xpp.environment's (shared with --validate, --dump, --compile FILE and
# the language server); these names stay for the callers of this module.
EnvLayout = Environment
_parse_conf = parse_conf
_split_path = split_path
_expand_modulepath = expand_modulepath


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


def _walk_pp(top: str, skip=()):
    """``.pp`` files below ``top`` (sorted, symlinks followed, each directory once), plus problems:
    yields (path, None) for files and (path, reason) for entries that cannot be used."""
    seen = set()
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
        subdirs = []
        for e in entries:
            p = e.path
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if p not in skip and e.name != layout.XPP_DIR:
                    subdirs.append(p)
                continue
            if not e.name.endswith(".pp"):
                continue
            if e.is_symlink() and not os.path.exists(p):
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


def plan(env: EnvLayout, runtime_root: str | None = None):
    """(jobs, skipped): what to compile in ``env``; skipped is a list of (path, reason)."""
    jobs: list = []
    skipped: list = []
    seen_out: dict = {}
    modulepath = list(env.modulepath)

    def add(src, module, fallback_rel):
        tasks = is_plan_file(src, env)  # the one plan rule (xpp.environment)
        t = layout.xpp_target(env.root, modulepath, src)
        if t is not None and t.module == module:
            out, recorded = t.out_path, t.recorded
        else:  # the main manifest outside the environment: environment/manifests/...
            out = os.path.join(env.out_base, module, layout._xpp_name(fallback_rel))
            recorded = layout._recorded(env.root, src)
        out = os.path.normpath(out)
        if not out.startswith(env.out_base + os.sep):
            skipped.append((src, f"its .xpp {out} would be outside {env.out_base}; refused"))
            return
        if out in seen_out:
            skipped.append((src, f"maps to the same .xpp as {seen_out[out]}; skipped"))
            return
        seen_out[out] = src
        rel = os.path.relpath(out, env.out_base).replace(os.sep, "/")
        jobs.append(
            Job(src, _display(env, src), out, rel, _recorded(env, src, recorded, runtime_root), module, tasks)
        )

    def walk(top, module, fallback_base=None):
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
    first: dict = {}
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
    """Creates directories below ``ENVDIR/.xpp`` and refuses symbolic links anywhere in that tree."""

    def __init__(self, env: EnvLayout, opts: Options, owner):
        self.env = env
        self.dir_mode = opts.dir_mode
        self.owner = owner
        self.ok: set = set()

    def check_root(self, module_dirs) -> None:
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

    def ensure_dir(self, d: str) -> None:
        """Create ``d`` (below the .xpp root) and its parents; OSError/CompileError on a problem."""
        if d in self.ok:
            return
        root = self.env.xpp_root
        if not _is_within(d, root):
            raise CompileError(f"refusing to write outside {root}: {d}")
        rel = os.path.relpath(d, root)
        parts = [] if rel == "." else rel.split(os.sep)
        if ".." in parts:
            raise CompileError(f"refusing to write outside {root}: {d}")
        cur = root
        for part in [None] + parts:
            if part is not None:
                cur = os.path.join(cur, part)
            if cur in self.ok:
                continue
            try:
                st = os.lstat(cur)
            except FileNotFoundError:
                try:
                    os.mkdir(cur, self.dir_mode)
                except FileExistsError:
                    pass
                st = os.lstat(cur)
                if _stat.S_ISDIR(st.st_mode):
                    if self.owner is not None:
                        os.chown(cur, *self.owner)
                    os.chmod(cur, self.dir_mode)  # not subject to the umask
            if _stat.S_ISLNK(st.st_mode):
                raise CompileError(
                    f"refusing to write below {cur}: it is a symbolic link (to {os.readlink(cur)})"
                )
            if not _stat.S_ISDIR(st.st_mode):
                raise CompileError(f"refusing to write below {cur}: not a directory")
            self.ok.add(cur)


# ------------------------------------------------------------------------------------------------------
# state (incremental compile)


def _stat_sig(st) -> list:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _xpp_sig(st) -> list:
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


def settings_fingerprint(env: EnvLayout, opts: Options) -> str:
    blob = json.dumps(
        {
            "code": code_fingerprint(),
            "fmt": opts.fmt,
            "strict": opts.strict,
            "modulepath": list(env.modulepath),
            "manifest": env.manifest,
            "runtime_root": opts.runtime_root,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _load_state(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            st = json.load(f)
        if type(st) is dict and st.get("version") == STATE_VERSION and type(st.get("files")) is dict:
            return st
    except (OSError, ValueError):
        pass
    return {"version": STATE_VERSION, "fingerprint": None, "files": {}}


# ------------------------------------------------------------------------------------------------------
# one file (runs in a worker process)

_W: dict = {}  # worker settings: fmt, strict, modulepath, manifest, file_mode, owner, check


def _init_worker(settings: dict) -> None:
    _W.clear()
    _W.update(settings)
    if settings.get("pdeathsig"):
        _die_with_parent()


def _die_with_parent() -> None:
    """Linux: a worker is killed when the compiling process dies (e.g. SIGKILL), instead of lingering."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # pragma: no cover - best effort
        pass


def _diag_rows(diags, locator) -> list:
    from puppet_xpp.grammar.validator_syntax import LoggedDiagnostic

    rows = []
    for d in diags:
        line, col = d.line_col(locator) if locator is not None else (None, None)
        rows.append([d.severity, d.code, d.message, line, col, isinstance(d, LoggedDiagnostic)])
    return rows


def _record_rows(records) -> list:
    rows = []
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


def _counts(rows):
    e = sum(1 for r in rows if r[0] == "error")
    w = sum(1 for r in rows if r[0] in ("warning", "deprecation"))
    return e, w


def _read_existing(out: str):
    try:
        with open(out, "rb") as f:
            return f.read()
    except OSError:
        return None


def _existing_is_current(data, text: str, recorded: str, fmt: str):
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


def compile_job(job: Job) -> FileResult:
    """Compile one file (in a worker, settings from :func:`_init_worker`)."""
    w = _W
    fr = FileResult(job, "compiled")
    try:
        st = os.stat(job.src)
        with open(job.src, "rb") as f:
            data = f.read()
    except OSError as e:
        fr.status = "unreadable"
        fr.errors = 1
        fr.diagnostics = [
            [
                "error",
                "UNREADABLE_FILE",
                f"Could not read file '{job.display}': {e.strerror or e}",
                None,
                None,
                False,
            ]
        ]
        _remove_quietly(job.out)  # whatever it holds cannot be checked against the source
        return fr
    text = data.decode("utf-8", "surrogateescape")
    fr.src_stat = _stat_sig(st)
    existing = _read_existing(job.out)
    if w.get("check"):
        rows = _existing_is_current(existing, text, job.recorded, w["fmt"])
        if rows is not None:
            fr.status = "up to date"
            fr.diagnostics = rows
            fr.errors, fr.warnings = _counts(rows)
            try:
                fr.xpp_stat = _xpp_sig(os.stat(job.out))
            except OSError:
                fr.xpp_stat = None
            return fr
    info: dict = {}
    out_bytes = layout.compile_source(
        text,
        job.recorded,
        abs_path=job.src,
        epp=False,
        tasks=job.tasks,
        strict=w["strict"],
        modulepath=w["modulepath"],
        manifest=w["manifest"],
        fmt=w["fmt"],
        info=info,
    )
    fr.diagnostics = _diag_rows(info["diagnostics"], info["locator"])
    fr.errors, fr.warnings = _counts(fr.diagnostics)
    try:
        if existing == out_bytes:  # identical bytes: not rewritten
            if _stat.S_IMODE(os.stat(job.out).st_mode) != w["file_mode"]:
                os.chmod(job.out, w["file_mode"])
        else:
            layout.write_atomic(job.out, out_bytes, mode=w["file_mode"], owner=w["owner"])
            fr.written = True
        fr.xpp_stat = _xpp_sig(os.stat(job.out))
    except OSError as e:
        fr.status = "failed"
        fr.message = f"cannot write {job.out}: {e.strerror or e}"
    return fr


def _work(item):
    i, job = item
    fr = compile_job(job)
    return i, (
        fr.status,
        fr.errors,
        fr.warnings,
        fr.diagnostics,
        fr.message,
        fr.src_stat,
        fr.xpp_stat,
        fr.written,
    )


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# ------------------------------------------------------------------------------------------------------
# the environment


def _owner_for(env: EnvLayout, opts: Options):
    chown = opts.chown if opts.chown is not None else (hasattr(os, "geteuid") and os.geteuid() == 0)
    if not chown:
        return None
    st = os.stat(env.root)
    return st.st_uid, st.st_gid


def _module_dirs(env: EnvLayout) -> list:
    out = []
    for d in env.modulepath:
        try:
            out.extend(e.path for e in os.scandir(d) if e.is_dir() and MODULE_NAME.match(e.name))
        except OSError:
            continue
    return out


class _Events:
    """Default no-op event sink; see :func:`compile_environment`."""

    def start(self, env, total, todo):
        pass

    def progress(self, done, todo, result):
        pass

    def file(self, result):
        pass

    def removed(self, path):
        pass


def compile_environment(env: EnvLayout, opts: Options, events=None) -> EnvResult:
    """Compile ``env`` incrementally.

    ``events`` (optional) receives ``start(env, total, todo)``, ``progress(done, todo, FileResult)`` as
    each file needing work completes, ``file(FileResult)`` for every file in plan order, and
    ``removed(path)``.  Raises :class:`CompileError` when the output tree is unsafe."""
    t0 = time.monotonic()
    events = events or _Events()
    res = EnvResult(env)
    owner = _owner_for(env, opts)
    tree = _Tree(env, opts, owner)
    tree.check_root(_module_dirs(env))
    jobs, skipped = plan(env, opts.runtime_root)
    res.skipped = skipped
    state_path = os.path.join(env.xpp_root, STATE_FILE)
    state = _load_state(state_path)
    fp = settings_fingerprint(env, opts)
    same_settings = state.get("fingerprint") == fp
    old_files = state["files"] if same_settings and not opts.force else {}

    # cheap stat check first
    results: list = [None] * len(jobs)
    todo: list = []
    for i, job in enumerate(jobs):
        ent = old_files.get(job.rel)
        if ent is not None and ent.get("src") == job.src and ent.get("recorded") == job.recorded:
            try:
                s_sig = _stat_sig(os.stat(job.src))
                x_sig = _xpp_sig(os.stat(job.out))
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
    runnable = []
    for i in todo:
        job = jobs[i]
        try:
            tree.ensure_dir(os.path.dirname(job.out))
            runnable.append(i)
        except CompileError as e:
            results[i] = FileResult(job, "failed", message=str(e))
        except OSError as e:
            results[i] = FileResult(
                job, "failed", message=f"cannot create {os.path.dirname(job.out)}: {e.strerror or e}"
            )

    # an existing .xpp is trusted when its embedded source is this source, unless the settings changed
    # since the last run (or --force): then it is recompiled (identical bytes are not rewritten)
    settings = {
        "fmt": opts.fmt,
        "strict": opts.strict,
        "modulepath": tuple(env.modulepath),
        "manifest": env.manifest,
        "file_mode": opts.file_mode,
        "owner": owner,
        "check": not opts.force and (same_settings or state.get("fingerprint") is None),
    }
    reported = 0

    def flush():
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
    res.files = results
    res.io_errors = [r.message for r in results if r.status == "failed"]

    # stale outputs, temporary files left by a killed run, empty directories
    res.removed = _sweep(env, {j.out for j in jobs}, events)

    files = {}
    for fr in results:
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
            tree.ensure_dir(env.xpp_root)
            layout.write_atomic(
                state_path,
                json.dumps(new_state, separators=(",", ":")).encode(),
                mode=opts.file_mode,
                owner=owner,
            )
        except CompileError as e:
            res.io_errors.append(str(e))
        except OSError as e:
            res.io_errors.append(f"cannot write {state_path}: {e.strerror or e}")
    res.seconds = time.monotonic() - t0
    return res


def _run(jobs, idx, settings, opts):
    """Yield (plan index, result payload) for the jobs at ``idx``, compiled by worker processes."""
    if not idx:
        return
    n = opts.jobs or os.cpu_count() or 1
    n = max(1, min(n, len(idx)))
    # import and load the parser before forking: the workers share it
    import puppet_xpp.grammar.validator  # noqa: F401
    import puppet_xpp.xpp.result  # noqa: F401
    from puppet_xpp.grammar.parser import tables

    tables()
    items = [(i, jobs[i]) for i in idx]
    if n == 1 or len(idx) < 4:
        _init_worker(dict(settings))
        for item in items:
            yield _work(item)
        return
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    chunk = max(1, min(8, len(items) // (n * 8)))
    with ctx.Pool(n, initializer=_init_worker, initargs=(dict(settings, pdeathsig=True),)) as pool:
        yield from pool.imap_unordered(_work, items, chunksize=chunk)


def _sweep(env: EnvLayout, expected: set, events) -> list:
    removed = []
    base = env.out_base
    if not os.path.isdir(base) or os.path.islink(base):
        return removed
    now = time.time()
    for d, _dirs, files in os.walk(base, topdown=False):
        for f in files:
            p = os.path.join(d, f)
            if f.endswith(".xpp"):
                if p not in expected:
                    try:
                        os.unlink(p)
                    except OSError:
                        continue
                    removed.append(p)
                    events.removed(p)
            elif _TMP_NAME.match(f):
                try:
                    if now - os.lstat(p).st_mtime > TMP_MAX_AGE:
                        os.unlink(p)
                except OSError:
                    pass
        if d != base:
            try:
                if not os.listdir(d) and not os.path.islink(d):
                    os.rmdir(d)
            except OSError:
                pass
    return removed


def write_job(env: EnvLayout, job: Job, data: bytes, opts: Options | None = None) -> bool:
    """Write ``data`` as the .xpp of ``job`` with the safety rules, modes and owner of
    :func:`compile_environment` (for a single file, e.g. the language server's .xpp-on-save).  Returns
    False when the file already holds these bytes (not rewritten).  Raises CompileError (a refused symbolic
    link) or OSError."""
    opts = opts or Options()
    owner = _owner_for(env, opts)
    tree = _Tree(env, opts, owner)
    tree.check_root(_module_dirs(env))
    tree.ensure_dir(os.path.dirname(job.out))
    try:
        with open(job.out, "rb") as f:
            if f.read() == data:
                return False
    except OSError:
        pass
    layout.write_atomic(job.out, data, mode=opts.file_mode, owner=owner)
    return True


# ------------------------------------------------------------------------------------------------------
# one file, outside an environment (``--compile FILE.pp -o OUT.xpp``)


def compile_file(
    src: str,
    recorded: str,
    *,
    fmt: str = "msgpack",
    tasks: bool = False,
    strict: str = "warning",
    modulepath=(),
    manifest=None,
):
    """(xpp bytes, diagnostic rows) of one file; OSError when it cannot be read."""
    with open(src, "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    info: dict = {}
    data = layout.compile_source(
        text,
        recorded,
        abs_path=os.path.abspath(src),
        epp=False,
        tasks=tasks,
        strict=strict,
        modulepath=modulepath,
        manifest=manifest,
        fmt=fmt,
        info=info,
    )
    return data, _diag_rows(info["diagnostics"], info["locator"])
