"""The project configuration: the one reader of ``[tool.puppet-xpp]`` (``pyproject.toml``) or
``.puppet-xpp.toml``, asked alike by the command line, the compiler and the language server.

Where it is found (:func:`find_config_file`): from the file or directory checked upward, the nearest
directory holding ``.puppet-xpp.toml``, or a ``pyproject.toml`` with a ``[tool.puppet-xpp]`` table (the
former wins in one directory); the search stops at the repository's root (the directory holding
``.git``).  ``.puppet-xpp.toml`` holds the keys at its top (or under ``[tool.puppet-xpp]`` too, so one
text can be moved between the two files)::

    level = "8"                      # the language level (grammar.levels: 8, 7, 7.23)
    strict = "error"                 # off | warning | error (default: the level's)
    modulepath = ["site-modules", "modules"]   # replaces the module path found (as --modulepath)
    exclude = ["/examples/legacy/", "*_old.pp"]  # gitignore-style, relative to this file's directory

    [lint]                           # [tool.puppet-xpp.lint] in pyproject.toml
    disable = ["140chars"]           # --no-140chars-check
    enable = ["parameter_documentation"]   # a check that is off by default
    only = []                        # --only-checks
    fail-on-warnings = false
    error-level = "all"              # all | warning | error

What the command line or the editor's explicit settings say wins over it: each entry point passes its
own values and asks :class:`ProjectConfig` only for what the user left unsaid.  Relative paths are
relative to the file's directory.  A file that cannot be used gives :class:`ProjectError` (its path,
the line and what is wrong), never a traceback; :func:`project_for` keeps that error in the
configuration it returns so that one bad file costs no other file its result.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from puppet_xpp.grammar.levels import LEVELS, STRICT_LEVELS
from puppet_xpp.xpp.sources import read_or_raise

__all__ = [
    "CONFIG_FILE",
    "PYPROJECT",
    "TABLE",
    "LintOptions",
    "ProjectConfig",
    "ProjectError",
    "find_config_file",
    "load_project",
    "project_for",
]

CONFIG_FILE = ".puppet-xpp.toml"
PYPROJECT = "pyproject.toml"
TABLE = ("tool", "puppet-xpp")
_KEYS = ("level", "strict", "modulepath", "exclude", "lint")
_LINT_KEYS = ("disable", "enable", "only", "fail-on-warnings", "error-level")
_ERROR_LEVELS = ("all", "warning", "error")
_MAX_DEPTH = 64


class ProjectError(Exception):
    """A project configuration file that cannot be used: ``path:line: what``."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True)
class LintOptions:
    """The ``lint`` table: puppet-lint's options, read before the command line's (which win)."""

    disable: tuple[str, ...] = ()
    enable: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    fail_on_warnings: bool | None = None
    error_level: str | None = None
    lines: tuple[tuple[str, int | None], ...] = ()  # (key, line) of each key set, for messages

    def line_of(self, option: str) -> int | None:
        """The line of the key an option of :meth:`arguments` comes from."""
        key = (
            "disable"
            if option.startswith("--no-")
            else "only"
            if option.startswith("--only-checks")
            else "fail-on-warnings"
            if option == "--fail-on-warnings"
            else "error-level"
            if option.startswith("--error-level")
            else "enable"
        )
        return dict(self.lines).get(key)

    def arguments(self) -> list[str]:
        """As puppet-lint's command-line options (``--no-NAME-check``, ``--NAME-check``...)."""
        out = [f"--no-{name}-check" for name in self.disable]
        out.extend(f"--{name}-check" for name in self.enable)
        if self.only:
            out.append("--only-checks=" + ",".join(self.only))
        if self.fail_on_warnings:
            out.append("--fail-on-warnings")
        if self.error_level is not None:
            out.append(f"--error-level={self.error_level}")
        return out


@dataclass(frozen=True)
class ProjectConfig:
    """One project's settings (all None/empty: no file, or the defaults)."""

    path: str | None = None  # the file read
    level: str | None = None
    strict: str | None = None
    modulepath: tuple[str, ...] | None = None  # absolute directories
    exclude: tuple[str, ...] = ()  # gitignore-style patterns relative to ``root``
    lint: LintOptions = field(default_factory=LintOptions)
    error: ProjectError | None = None  # the file could not be used (the settings above are empty)

    @property
    def root(self) -> str | None:
        """The directory the file's relative paths and patterns are relative to."""
        return os.path.dirname(self.path) if self.path else None

    def excludes(self) -> list[tuple[str, str]]:
        """``exclude`` as (directory, pattern) pairs (:func:`xpp.walk.walk`'s form)."""
        return [(self.root, p) for p in self.exclude] if self.root else []


def _table(data: dict[str, Any], pyproject: bool) -> dict[str, Any] | None:
    t: Any = data
    for key in TABLE:
        if not isinstance(t, dict) or key not in t:
            return None if pyproject else {k: v for k, v in data.items() if k != "tool"}
        t = t[key]
    return t if isinstance(t, dict) else None


def _read(path: str) -> tuple[str, dict[str, Any]]:
    import tomllib  # (here: only a project with a configuration file needs it; ~2.5 ms of every start)

    try:
        raw = read_or_raise(path)
    except OSError as e:
        raise ProjectError(path, None, f"cannot read: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
        return text, tomllib.loads(text)
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ProjectError(path, line, "not valid UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e)) or "invalid TOML"
        raise ProjectError(path, int(m.group(1)) if m else None, f"invalid TOML: {message}") from None


_tables: dict[str, tuple[tuple[int, int], bool]] = {}


def _has_table(path: str) -> bool:
    """Whether the ``pyproject.toml`` at ``path`` has our table (read once per change of the file)."""
    try:
        st = os.stat(path)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        return False
    hit = _tables.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        _text, data = _read(path)
        found = _table(data, True) is not None
    except ProjectError:  # a broken pyproject.toml naming our table is ours: reading it says why
        try:
            found = b"puppet-xpp" in read_or_raise(path)
        except OSError:
            found = False
    _tables[path] = (stamp, found)
    return found


def find_config_file(start: str) -> str | None:
    """The project configuration for ``start`` (a file or directory), or None."""
    d = os.path.abspath(start)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    for _ in range(_MAX_DEPTH):
        own = os.path.join(d, CONFIG_FILE)
        if os.path.isfile(own):
            return own
        py = os.path.join(d, PYPROJECT)
        if os.path.isfile(py) and _has_table(py):
            return py
        parent = os.path.dirname(d)
        if parent == d or os.path.exists(os.path.join(d, ".git")):
            return None
        d = parent
    return None


def _line_of(text: str, key: str, table: str | None) -> int | None:
    """The line where ``key`` is set (in ``[table]`` when given), for messages; else the table's."""
    lines = text.split("\n")
    header = None
    if table:
        pattern = re.compile(r"^\s*\[\s*" + re.escape(table).replace(r"\-", "-").replace(r"\.", r"\s*\.\s*"))
        for i, line in enumerate(lines):
            if pattern.match(line):
                header = i
                break
    start = 0 if header is None else header + 1
    key_pattern = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
    for i in range(start, len(lines)):
        if header is not None and i > header and lines[i].lstrip().startswith("["):
            break
        if key_pattern.match(lines[i]):
            return i + 1
    return None if header is None else header + 1


def _strings(value: Any, path: str, line: int | None, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProjectError(path, line, f"'{key}' must be a list of strings")
    return tuple(value)


def load_project(path: str) -> ProjectConfig:
    """Read the project configuration file ``path``.  Raises :class:`ProjectError`."""
    path = os.path.abspath(path)
    text, data = _read(path)
    pyproject = os.path.basename(path) == PYPROJECT
    table = _table(data, pyproject)
    prefix = "tool.puppet-xpp" if pyproject or "tool" in data else None
    if table is None:
        return ProjectConfig(path)
    base = os.path.dirname(path)

    def line(key: str, sub: str | None = None) -> int | None:
        name = ".".join(x for x in (prefix, sub) if x) or None
        return _line_of(text, key, name)

    for key in table:
        if key not in _KEYS:
            raise ProjectError(path, line(key), f"unknown key '{key}' (known: {', '.join(_KEYS)})")
    level = table.get("level")
    if isinstance(level, (int, float)) and not isinstance(level, bool):
        level = str(level)  # level = 8 or 7.23
    if level is not None and level not in LEVELS:
        raise ProjectError(path, line("level"), f"'level' must be one of {', '.join(LEVELS)}")
    strict = table.get("strict")
    if strict is not None and strict not in STRICT_LEVELS:
        raise ProjectError(path, line("strict"), f"'strict' must be one of {', '.join(STRICT_LEVELS)}")
    modulepath = None
    if "modulepath" in table:
        value = table["modulepath"]
        if isinstance(value, str):
            value = [e for e in value.split(os.pathsep) if e]
        entries = _strings(value, path, line("modulepath"), "modulepath")
        modulepath = tuple(os.path.normpath(os.path.join(base, os.path.expanduser(e))) for e in entries)
    exclude = _strings(table.get("exclude", []), path, line("exclude"), "exclude")
    lint = LintOptions()
    if "lint" in table:
        lint_table = table["lint"]
        if not isinstance(lint_table, dict):
            raise ProjectError(path, line("lint"), "'lint' must be a table")
        for key in lint_table:
            if key not in _LINT_KEYS:
                raise ProjectError(
                    path, line(key, "lint"), f"unknown lint key '{key}' (known: {', '.join(_LINT_KEYS)})"
                )
        fail = lint_table.get("fail-on-warnings")
        if fail is not None and not isinstance(fail, bool):
            raise ProjectError(
                path, line("fail-on-warnings", "lint"), "'fail-on-warnings' must be true or false"
            )
        error_level = lint_table.get("error-level")
        if error_level is not None and error_level not in _ERROR_LEVELS:
            raise ProjectError(
                path, line("error-level", "lint"), f"'error-level' must be one of {', '.join(_ERROR_LEVELS)}"
            )
        names = {
            k: _strings(lint_table.get(k, []), path, line(k, "lint"), k)
            for k in ("disable", "enable", "only")
        }
        lines = tuple((k, line(k, "lint")) for k in lint_table)
        lint = LintOptions(names["disable"], names["enable"], names["only"], fail, error_level, lines)
    return ProjectConfig(path, level, strict, modulepath, exclude, lint)


_cache: dict[str, tuple[tuple[int, int], ProjectConfig]] = {}


def project_for(start: str) -> ProjectConfig:
    """The project configuration that applies to ``start`` (a file or directory): the file found
    upward, read once per change of the file; an empty configuration when there is none; an empty
    one carrying :attr:`ProjectConfig.error` when it cannot be used."""
    path = find_config_file(start)
    if path is None:
        return ProjectConfig()
    try:
        st = os.stat(path)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (0, 0)
    hit = _cache.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        config = load_project(path)
    except ProjectError as e:
        config = ProjectConfig(path, error=e)
    _cache[path] = (stamp, config)
    return config
