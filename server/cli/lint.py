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

import fnmatch
import json
import os
import sys
from collections.abc import Iterator

from puppet_xpp.lint.config import LintConfig, UsageError, load_config
from puppet_xpp.lint.core import Problem
from puppet_xpp.lint.run import LintResult, lint

USAGE = "usage: puppet-xpp --lint PATH... [--fix] [--format text|json] [--fail-on-warnings] [options]"


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--lint"]
    fmt = "text"
    if "--format" in args:
        k = args.index("--format")
        if k + 1 >= len(args) or args[k + 1] not in ("text", "json"):
            print(f"puppet-xpp --lint: --format takes text or json\n{USAGE}", file=sys.stderr)
            return 1
        fmt = args[k + 1]
        del args[k : k + 2]
    if "-h" in args or "--help" in args:
        print((__doc__ or "").strip())
        return 0
    try:
        cfg, paths = load_config(args)
    except UsageError as e:
        print(f"puppet-lint: {e}\n{USAGE}", file=sys.stderr)
        return 1
    if fmt == "json":
        cfg.json = True
    if not paths:
        print(f"puppet-xpp --lint: no file specified\n{USAGE}", file=sys.stderr)
        return 1
    files = list(_files(paths))
    if len(files) > 1:
        cfg.with_filename = True
    status = 0
    for f in files:
        if any(fnmatch.fnmatchcase(f, p) for p in cfg.ignore_paths):
            continue
        status = max(status, _one(f, cfg))
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


def _one(path: str, cfg: LintConfig) -> int:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        problem = Problem("io", "error", f"cannot read {path}: {e.strerror or e}", 0, 0)
        _report(path, [problem], cfg)
        return 1
    text = data.decode("utf-8", "surrogateescape")
    result = lint(text, path=path, enabled=cfg.enabled, fix=cfg.fix, relative=cfg.relative)
    for w in result.warnings:
        print(w, file=sys.stderr)
    _report(path, result.problems, cfg)
    if result.syntax_error:
        print("Try running `puppet parser validate <file>`", file=sys.stderr)
    if cfg.fix and result.fixed is not None and result.fixed != text:
        try:
            _write(path, result.fixed.encode("utf-8", "surrogateescape"))
        except OSError as e:
            print(f"puppet-xpp --lint: cannot write {path}: {e.strerror or e}", file=sys.stderr)
            return 1
    return _status(result, cfg)


def _status(result: LintResult, cfg: LintConfig) -> int:
    kinds = {p.kind for p in result.problems}
    return 1 if "error" in kinds or ("warning" in kinds and cfg.fail_on_warnings) else 0


def _write(path: str, data: bytes) -> None:
    """The fixed text, by the one rule for files puppet-xpp writes (xpp.writes.write_output: atomic for a
    regular file, through a symbolic link to its target, mode kept)."""
    from puppet_xpp.xpp.writes import write_output

    write_output(path, data)


def _shown(p: Problem, cfg: LintConfig) -> bool:
    if p.kind == "ignored" and not cfg.show_ignored:
        return False
    return p.kind == "fixed" or cfg.error_level in ("all", p.kind)


def _report(path: str, problems: list[Problem], cfg: LintConfig) -> None:
    shown = [p for p in problems if _shown(p, cfg)]
    if cfg.json:
        out = {"file": path, "problems": [p.as_json() for p in shown]}
        print(json.dumps(out, ensure_ascii=False))
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
        print(_format(fmt, fields))
        if p.kind == "ignored" and p.reason is not None:
            print(f"  {p.reason}")
        if cfg.with_context and p.kind != "fixed" and p.line > 0:
            if lines is None:
                with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                    lines = fh.read().split("\n")
            ctx = lines[p.line - 1].strip() if p.line <= len(lines) else ""
            offset = next((k for k, c in enumerate(ctx) if not c.isspace()), 1)
            print(f"\n  {ctx}")
            print("^".rjust(p.column + 2 - offset) + "\n")


def _format(fmt: str, fields: dict[str, str]) -> str:
    out = fmt
    for k, v in fields.items():
        out = out.replace("%{" + k + "}", v)
    return out
