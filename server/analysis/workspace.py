"""The language server's settings, and the environment of an open file.

The environment model and the plan rule are :mod:`xpp.environment`'s (shared with ``--validate``,
``--dump`` and ``--compile``, so every entry point treats a file alike); this module only turns the
client's settings into that model's inputs.  The project configuration (:mod:`xpp.project`:
``.puppet-xpp.toml`` or ``[tool.puppet-xpp]``, found from each file upward) gives the defaults under
the editor's settings: the level, ``strict`` and module path the client did not set explicitly
(:attr:`Settings.explicit`) are the project's, as the command line's unsaid options are.  No pygls
imports here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.levels import DEFAULT_LEVEL, LEVELS, STRICT_LEVELS
from puppet_xpp.xpp import environment
from puppet_xpp.xpp.environment import (
    Environment,
    FileContext,
    NotAnEnvironment,
    find_environment,
    is_plan_file,
    load_environment,
)

__all__ = [
    "Settings",
    "LintSettings",
    "check_config_for",
    "level_and_strict",
    "Environment",
    "FileContext",
    "file_context",
    "environment_at",
    "find_environment",
    "in_plans_dir",
    "index_roots",
]


@dataclass(frozen=True)
class LintSettings:
    """Lint's settings (key ``lint``): ``enabled`` (diagnostics and quick fixes; formatting stays
    available) and ``rcPath`` (a ``.puppet-lint.rc`` to use instead of the nearest one)."""

    enabled: bool = True
    rc_path: str | None = None

    @classmethod
    def from_dict(cls, d: Any, base: LintSettings | None = None) -> LintSettings:
        """From a client settings object (``{"lint": {"enabled", "rcPath"}}``, or the whole
        configuration with a ``puppet`` section); unknown keys and bad values are ignored."""
        s = base or LintSettings()
        if not isinstance(d, dict):
            return s
        if isinstance(d.get("puppet"), dict):
            d = d["puppet"]
        lint_d = d.get("lint")
        if not isinstance(lint_d, dict):
            return s
        enabled = lint_d.get("enabled", s.enabled)
        rc = lint_d.get("rcPath", lint_d.get("rc_path", s.rc_path))
        return LintSettings(
            enabled if isinstance(enabled, bool) else s.enabled,
            os.path.expanduser(rc) if isinstance(rc, str) and rc else None,
        )


@dataclass
class Settings:
    """User settings (``initializationOptions`` / ``workspace/configuration`` section ``puppet``)."""

    modulepath: tuple[str, ...] = ()  # extra module directories (absolute, or relative to the workspace root)
    strict: str | None = None  # severity of DUPLICATE_KEY: off | warning | error (None: the level's)
    tasks: bool = False  # parse every file in tasks (Bolt plan) mode
    xpp_on_save: bool = True  # write the .xpp of a saved file into its environment's .xpp tree
    puppet_version: str = DEFAULT_LEVEL  # language level: 8 | 7 | 7.23 (grammar.levels)
    # lint is on by default (puppet-lint's default checks, as the Puppet VS Code extension runs them)
    lint: LintSettings = field(default_factory=LintSettings)
    # the settings the client gave explicitly (modulepath, strict, puppet_version): they win over the
    # project configuration; the others are the project's, else the defaults above
    explicit: frozenset[str] = frozenset()

    @classmethod
    def from_dict(cls, d: Any, base: Settings | None = None, root: str | None = None) -> Settings:
        """Settings from a client dict (camelCase or snake_case keys; unknown keys and values ignored)."""
        s = Settings(**vars(base)) if base is not None else Settings()
        if not isinstance(d, dict):
            return s
        if isinstance(d.get("puppet"), dict):  # a whole configuration object
            d = d["puppet"]
        s.lint = LintSettings.from_dict(d, s.lint)
        mp = d.get("modulepath", d.get("modulePath"))
        if isinstance(mp, str):
            mp = [p for p in mp.split(os.pathsep) if p]
        if isinstance(mp, (list, tuple)):
            out: list[str] = []
            for p in mp:
                if isinstance(p, str) and p:
                    p = os.path.expanduser(p)
                    if not os.path.isabs(p) and root:
                        p = os.path.join(root, p)
                    out.append(os.path.normpath(p))
            s.modulepath = tuple(out)
            s.explicit |= {"modulepath"}
        if "strict" in d:
            st = d.get("strict")
            if st is None or (isinstance(st, str) and st in STRICT_LEVELS):
                s.strict = st
                s.explicit = s.explicit - {"strict"} if st is None else s.explicit | {"strict"}
        pv = d.get("puppetVersion", d.get("puppet_version"))
        if isinstance(pv, (int, float)) and not isinstance(pv, bool):
            pv = str(pv)  # a JSON number 8 or 7.23
        if isinstance(pv, str) and pv in LEVELS:
            s.puppet_version = pv
            s.explicit |= {"puppet_version"}
        t = d.get("tasks")
        if isinstance(t, bool):
            s.tasks = t
        x = d.get("xppOnSave", d.get("xpp_on_save"))
        if isinstance(x, bool):
            s.xpp_on_save = x
        return s


def environment_at(root: str) -> Environment | None:
    """The environment rooted at ``root``, or None when ``root`` is not an environment directory."""
    try:
        return load_environment(root)
    except NotAnEnvironment:
        return None


def index_roots(roots: Iterable[str], modulepath: Iterable[str]) -> list[str]:
    """The directories the workspace index covers: the workspace folders ``roots``, each folder's
    environment module path, and the configured ``modulepath`` -- existing directories, each once, none
    inside another.  The session's rule (server/lsp/session.py), and the start-up front's when it reads
    the index cache before the server is loaded (server/lsp/startup.py): one rule, the same roots."""
    out: list[str] = []
    for r in roots:
        out.append(r)
        env = environment_at(r) or find_environment(os.path.join(r, "x.pp"))
        for d in env.modulepath if env is not None else ():
            out.append(d)
    out.extend(modulepath)
    seen: set[str] = set()
    res: list[str] = []
    for d in out:
        d = os.path.abspath(d)
        if d not in seen and os.path.isdir(d) and not any(d.startswith(s + os.sep) for s in seen):
            seen.add(d)
            res.append(d)
    return res


def in_plans_dir(path: str) -> bool:
    """The plan rule (xpp.environment.is_plan_file) for a file, with its environment found from its path.
    A file is a plan only under a directory named ``plans`` (its module's or its environment's), so a
    path without one is answered without looking for its environment (a walk up its directories,
    ~5% of indexing a workspace)."""
    if f"{os.sep}plans{os.sep}" not in os.path.abspath(path):
        return False
    return is_plan_file(path, find_environment(path))


def file_context(path: str | None, settings: Settings, roots: Iterable[str] = ()) -> FileContext:
    """Environment, module path and modes of a file (``path`` None: an untitled buffer).  ``roots`` is
    accepted for the callers' sake; the environment comes from the file's own location, as for the
    command line.  A module path set explicitly in the editor is added to the one found, and the
    project configuration's module path is then not used."""
    return environment.file_context(
        path,
        tasks=settings.tasks,
        extra_modulepath=settings.modulepath,
        project_modulepath="modulepath" not in settings.explicit,
    )


def level_and_strict(context: FileContext, settings: Settings) -> tuple[str, str | None]:
    """The language level and ``strict`` for a file: the editor's explicit settings, else the project
    configuration's, else the defaults."""
    level, strict = context.level_and_strict(
        settings.puppet_version if "puppet_version" in settings.explicit else None,
        settings.strict if "strict" in settings.explicit else None,
    )
    return level or DEFAULT_LEVEL, strict


def check_config_for(path: str | None, settings: Settings) -> CheckConfig:
    """How the language server parses and validates the file at ``path`` (an open document, a quick
    fix's candidate text): its context at the level and ``strict`` of the settings (see
    :func:`level_and_strict`)."""
    context = file_context(path, settings)
    level, strict = level_and_strict(context, settings)
    return context.check_config(level=level, strict=strict)
