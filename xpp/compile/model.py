"""The compile's data: options, the level in effect, jobs, per-file and per-environment results, events.

These are plain dataclasses so that they cross the worker processes' pipes as they are (pickled): a job
goes to a worker and its :class:`FileResult` comes back, field by field, never as a tuple read by
position.  The language level and ``strict`` are resolved once (:meth:`Validation.of`, from
:mod:`grammar.levels`) and carried from there on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from puppet_xpp.grammar import levels

if TYPE_CHECKING:
    from puppet_xpp.grammar.issues import Diagnostic
    from puppet_xpp.xpp.environment import Environment

__all__ = [
    "CompileError",
    "SourceRefused",
    "Options",
    "Validation",
    "Job",
    "DiagnosticRow",
    "FileResult",
    "EnvResult",
    "Events",
    "NoEvents",
    "counts",
]


class CompileError(Exception):
    """A usage or environment problem that stops the compile of an environment (exit status 2)."""


class SourceRefused(OSError):
    """:func:`xpp.compile.document.compile_file`: the source is not read (see :mod:`xpp.sources`);
    ``diagnostic`` says why."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


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
    exclude: tuple[str, ...] = ()  # --exclude: gitignore-style patterns relative to ENVDIR (xpp.walk)
    chown: bool | None = None  # None: when running as root
    max_source_bytes: int | None = None  # None: xpp.sources.max_bytes() (environment or default)
    wait: bool = True  # another compile of the environment holds its lock: wait (else CompileError)
    debug: bool = False  # an internal error's traceback goes into the file's message

    def validation(self) -> Validation:
        """The language level and ``strict`` these options ask for, defaults applied."""
        return Validation.of(self.puppet_version, self.strict)


@dataclass(frozen=True)
class Validation:
    """The language level and ``strict`` a compile validates at (what each ``.xpp`` records)."""

    level: str  # "8" | "7" | "7.23"
    strict: str  # "off" | "warning" | "error"

    @classmethod
    def of(cls, puppet_version: str | None, strict: str | None) -> Validation:
        """Defaults from :mod:`grammar.levels` (an explicit ``strict`` wins over the level's)."""
        name = levels.level(puppet_version).name
        return cls(name, levels.resolve_strict(name, strict))


@dataclass(frozen=True)
class Job:
    src: str  # absolute path of the source, as reached (symlinks not resolved)
    display: str  # the source path for messages (below ENVDIR as given, else absolute)
    out: str  # absolute path of the .xpp
    rel: str  # out path relative to .xpp/modules, '/'-separated
    recorded: str  # the file name recorded in the .xpp
    module: str
    tasks: bool


class DiagnosticRow(NamedTuple):
    """One diagnostic as the compile reports it (and keeps it in its state file, as a JSON array)."""

    severity: str
    code: str
    message: str
    line: int | None
    column: int | None
    logged: bool  # a message Puppet logs without a position in the file (a lexer warning)


def counts(rows: list[DiagnosticRow]) -> tuple[int, int]:
    """(errors, warnings) among ``rows`` (deprecations count as warnings)."""
    errors = sum(1 for r in rows if r.severity == "error")
    warnings = sum(1 for r in rows if r.severity in ("warning", "deprecation"))
    return errors, warnings


@dataclass
class FileResult:
    job: Job
    status: str  # compiled | up to date | failed (I/O, internal error, lost worker) | unreadable
    errors: int = 0
    warnings: int = 0
    diagnostics: list[DiagnosticRow] = field(default_factory=list)
    message: str = ""  # I/O problem
    src_stat: list[int] | None = None
    xpp_stat: list[int] | None = None
    written: bool = False  # the .xpp was (re)written (a compile giving the same bytes is not)

    def set_diagnostics(self, rows: list[DiagnosticRow]) -> None:
        self.diagnostics = rows
        self.errors, self.warnings = counts(rows)


@dataclass
class EnvResult:
    env: Environment
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


class Events(Protocol):
    """What :func:`xpp.compile.run.compile_environment` tells its caller while it runs."""

    def start(self, env: Environment, total: int, todo: int) -> None:
        """The plan is made: ``total`` files, ``todo`` of them to check or compile."""

    def progress(self, done: int, todo: int, result: FileResult) -> None:
        """A file needing work is done (completion order)."""

    def file(self, result: FileResult) -> None:
        """Every file's result, in plan order."""

    def removed(self, path: str) -> None:
        """An ``.xpp`` no source maps to any more was removed."""

    def waiting(self, env: Environment) -> None:
        """Another compile holds the environment's lock: this one waits."""


class NoEvents:
    """The default event sink: tells nobody."""

    def start(self, env: Environment, total: int, todo: int) -> None:
        pass

    def progress(self, done: int, todo: int, result: FileResult) -> None:
        pass

    def file(self, result: FileResult) -> None:
        pass

    def removed(self, path: str) -> None:
        pass

    def waiting(self, env: Environment) -> None:
        pass
