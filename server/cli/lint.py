"""``puppet-xpp --lint PATH... [--fix] [--format text|json] [--fail-on-warnings] [puppet-lint options]``:
puppet-lint's checks (``lint``) on manifests.

PATH is a file or a directory (searched recursively for ``*.pp``, sorted, hidden directories skipped).
Options are puppet-lint's (``--no-NAME-check``, ``--NAME-check`` for a check that is off by default,
``--only-checks a,b``, ``--relative``, ``--with-filename``, ``--with-context``, ``--show-ignored``,
``--error-level``, ``--log-format``, ``--ignore-paths``, ``-c FILE``, ``--no-config``), read after the rc
files ``/etc/puppet-lint.rc``, ``~/.puppet-lint.rc`` and ``./.puppet-lint.rc``.

Text output is puppet-lint's default (``WARNING: message on line N (check: name)``, the path in front
when more than one file is linted). ``--format json`` writes one line per file:
``{"file": F, "problems": [{"check", "kind", "message", "line", "column", "reason"?}]}``.
Exit status as puppet-lint's: 1 when an error was found (or a warning, with ``--fail-on-warnings``), when
an option is invalid, or when a file cannot be read; else 0.

``--fix`` rewrites a file (temporary file + rename) only when fixing changed it and it has no syntax error.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
from collections.abc import Iterator
from typing import TextIO

from puppet_xpp.lint.config import LintConfig, UsageError, load_config
from puppet_xpp.lint.core import Problem
from puppet_xpp.lint.run import LintResult, lint

__all__ = ["USAGE", "add_arguments", "run"]

USAGE = "usage: puppet-xpp --lint PATH... [--fix] [--format text|json] [--fail-on-warnings] [options]"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Nothing for argparse to read: ``--lint`` takes the rest of the command line (server.cli.main),
    puppet-lint's options and the paths, which :func:`lint.config.load_config` reads in their order
    after the rc files, as puppet-lint does."""
    parser.add_argument_group("lint", (__doc__ or "").strip())


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    arguments = [a for a in args.rest if a != "--lint"]
    fmt = "text"
    if "--format" in arguments:
        k = arguments.index("--format")
        if k + 1 >= len(arguments) or arguments[k + 1] not in ("text", "json"):
            err.write(f"puppet-xpp --lint: --format takes text or json\n{USAGE}\n")
            return 1
        fmt = arguments[k + 1]
        del arguments[k : k + 2]
    if "-h" in arguments or "--help" in arguments:
        out.write((__doc__ or "").strip() + "\n")
        return 0
    try:
        cfg, paths = load_config(arguments)
    except UsageError as e:
        err.write(f"puppet-lint: {e}\n{USAGE}\n")
        return 1
    if fmt == "json":
        cfg.json = True
    if not paths:
        err.write(f"puppet-xpp --lint: no file specified\n{USAGE}\n")
        return 1
    files = list(_files(paths))
    if len(files) > 1:
        cfg.with_filename = True
    status = 0
    for f in files:
        if any(fnmatch.fnmatchcase(f, p) for p in cfg.ignore_paths):
            continue
        status = max(status, _one(f, cfg, out, err))
    return status


def _files(paths: list[str]) -> Iterator[str]:
    for p in paths:
        if not os.path.isdir(p):
            yield p
            continue
        found: list[str] = []
        for d, dirs, names in os.walk(p):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            found.extend(os.path.join(d, n) for n in names if n.endswith(".pp") and not n.startswith("."))
        yield from sorted(found)


def _one(path: str, cfg: LintConfig, out: TextIO, err: TextIO) -> int:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        problem = Problem("io", "error", f"cannot read {path}: {e.strerror or e}", 0, 0)
        _report(path, [problem], cfg, out)
        return 1
    text = data.decode("utf-8", "surrogateescape")
    result = lint(text, path=path, enabled=cfg.enabled, fix=cfg.fix, relative=cfg.relative)
    for w in result.warnings:
        err.write(f"{w}\n")
    _report(path, result.problems, cfg, out)
    if result.syntax_error:
        err.write("Try running `puppet parser validate <file>`\n")
    if cfg.fix and result.fixed is not None and result.fixed != text:
        try:
            _write(path, result.fixed.encode("utf-8", "surrogateescape"))
        except OSError as e:
            err.write(f"puppet-xpp --lint: cannot write {path}: {e.strerror or e}\n")
            return 1
    return _status(result, cfg)


def _status(result: LintResult, cfg: LintConfig) -> int:
    kinds = {p.kind for p in result.problems}
    return 1 if "error" in kinds or ("warning" in kinds and cfg.fail_on_warnings) else 0


def _write(path: str, data: bytes) -> None:
    """The fixed text, by the one rule for files puppet-xpp writes (``write_output``: atomic for a
    regular file, through a symbolic link to its target, mode kept)."""
    from puppet_xpp.xpp.compile.writes import write_output

    write_output(path, data)


def _shown(p: Problem, cfg: LintConfig) -> bool:
    if p.kind == "ignored" and not cfg.show_ignored:
        return False
    return p.kind == "fixed" or cfg.error_level in ("all", p.kind)


def _report(path: str, problems: list[Problem], cfg: LintConfig, out: TextIO) -> None:
    """One file's problems as puppet-lint prints them (``--log-format``, ``--with-context`` ...), or one
    JSON line."""
    shown = [p for p in problems if _shown(p, cfg)]
    if cfg.json:
        record = {"file": path, "problems": [p.as_json() for p in shown]}
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        return
    fmt = cfg.log_format or (
        ("%{path} - " if cfg.with_filename else "") + "%{KIND}: %{message} on line %{line} (check: %{check})"
    )
    lines = None
    for p in shown:
        fields = {
            "path": path,
            "fullpath": os.path.abspath(path),
            "filename": os.path.basename(path),
            "line": str(p.line),
            "column": str(p.column),
            "kind": p.kind,
            "KIND": p.kind.upper(),
            "check": p.check,
            "message": p.message,
        }
        out.write(_format(fmt, fields) + "\n")
        if p.kind == "ignored" and p.reason is not None:
            out.write(f"  {p.reason}\n")
        if cfg.with_context and p.kind != "fixed" and p.line > 0:
            if lines is None:
                with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                    lines = fh.read().split("\n")
            context = lines[p.line - 1].strip() if p.line <= len(lines) else ""
            offset = next((k for k, c in enumerate(context) if not c.isspace()), 1)
            out.write(f"\n  {context}\n")
            out.write("^".rjust(p.column + 2 - offset) + "\n\n")


def _format(fmt: str, fields: dict[str, str]) -> str:
    out = fmt
    for k, v in fields.items():
        out = out.replace("%{" + k + "}", v)
    return out
