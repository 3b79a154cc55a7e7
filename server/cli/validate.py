"""``puppet-xpp --validate PATH... [--modulepath DIRS] [--manifest PATH] [--puppet-version 8|7|7.23]
[--strict LEVEL] [--tasks] [--format text|json]``: syntax check and static validation of manifests and
templates.

PATH is a file or a directory (searched recursively for ``.pp`` and ``.epp`` files, in sorted order).
``.epp`` files are parsed as templates.  Each file's environment, module path and main manifest come from
its location (:mod:`xpp.environment`, as for ``--compile`` and the language server) unless
``--modulepath``/``--manifest`` are given; files in a module's ``plans/`` directory are validated in
tasks mode (as are all files with ``--tasks``).  ``--puppet-version`` selects the language level
(:mod:`grammar.levels`; default 8, whose default ``strict`` is ``error``).  Parsing and validation are
:func:`grammar.check.check`'s, as for every other consumer.  Every diagnostic of every file is reported
(lexer warnings and syntax errors first, then the validator's, in Puppet's order).  The exit status is 2
when a file could not be handled (missing, unreadable, not a regular file, over the size limit, or an
internal error: one ``INTERNAL_ERROR`` diagnostic for that file, traceback with ``--debug``; the other
files are still validated), else 1 when any error was reported, else 0.

Text output follows ``puppet parser validate`` (:mod:`server.cli.output`): per file, warnings first, then
errors::

    Warning: The key 'a' is declared more than once (file: x.pp, line: 2, column: 14)
    Error: This Literal Integer has no effect. ... (file: x.pp, line: 1, column: 11)

``--format json`` writes one line per file, in the order the files were given/found:
``{"file": F, "diagnostics": [{"severity", "code", "message", "line", "column", "offset", "length"}]}``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TextIO

from puppet_xpp.grammar import levels
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.server.cli.output import FAILURE_CODES, Shown, diagnostic_lines
from puppet_xpp.xpp.sources import shown

if TYPE_CHECKING:
    from puppet_xpp.grammar.ast import Locator

__all__ = ["FileDiagnostics", "add_arguments", "collect_files", "main", "run", "validate_file"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--validate`` options (the mode's flag is the command line's: :mod:`server.cli.main`)."""
    group = parser.add_argument_group(
        "validate", "Syntax check and static validation (Puppet 8 / OpenVox 8 rules, or 7 / 7.23)."
    )
    group.add_argument(
        "paths", metavar="PATH", nargs="*", help="files or directories (recursively: *.pp, *.epp)"
    )
    group.add_argument(
        "--modulepath",
        metavar="DIRS",
        default=None,
        help=f"module path ('{os.pathsep}'-separated) for the module-location checks",
    )
    group.add_argument(
        "--manifest",
        metavar="PATH",
        default=None,
        help="the environment's main manifest (file or directory): exempt from location checks",
    )
    levels.add_cli_arguments(group)
    group.add_argument("--tasks", action="store_true", help="validate in tasks (Bolt plan) mode")
    group.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    group.add_argument(
        "--debug", action="store_true", help="print the traceback of an internal error (INTERNAL_ERROR)"
    )


def collect_files(paths: Iterable[str]) -> list[str]:
    """The files to validate: files as given, directories searched recursively (sorted) for .pp/.epp."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            seen = set()
            for root, dirs, files in os.walk(p, followlinks=True):
                real = os.path.realpath(root)
                if real in seen:  # a symlink cycle, or a directory reached twice through links
                    dirs[:] = []
                    continue
                seen.add(real)
                dirs.sort()
                for f in files:
                    if f.endswith((".pp", ".epp")):
                        found.append(os.path.join(root, f))
            out.extend(sorted(found))
        else:
            out.append(p)
    return out


@dataclasses.dataclass
class FileDiagnostics:
    """What validating one file gave: its diagnostics and the locator that places them (None when the
    file was not parsed)."""

    diagnostics: list[Diagnostic]
    locator: Locator | None = None

    def position(self, d: Diagnostic) -> tuple[int | None, int | None]:
        """Line and column of ``d`` (a heredoc checker's logged diagnostic knows its own)."""
        if self.locator is None:
            return None, None
        return d.line_col(self.locator)


def validate_file(
    path: str,
    *,
    strict: str | None = None,
    tasks: bool = False,
    modulepath: list[str] | None = None,
    manifest: str | None = None,
    debug: TextIO | None = None,
    puppet_version: str | None = None,
) -> FileDiagnostics:
    """Parse and validate one file.  Never raises: a file that cannot be read gives one diagnostic
    (xpp.sources), a failure inside puppet-xpp gives INTERNAL_ERROR (its traceback goes to ``debug``,
    a writable stream, when given).  ``modulepath``/``manifest`` None: the file's environment's
    (xpp.environment.file_context); ``puppet_version``: the language level."""
    from puppet_xpp.grammar.check import check
    from puppet_xpp.xpp.environment import file_context
    from puppet_xpp.xpp.sources import format_traceback, internal_error, read_source

    src = read_source(path)
    if src.diagnostic is not None:
        return FileDiagnostics([src.diagnostic])
    assert src.text is not None
    try:
        context = file_context(path, tasks=tasks, modulepath=modulepath, manifest=manifest)
        # the name recorded is the path as given, as `puppet parser validate` names it (in messages too:
        # ILLEGAL_DEFINITION_LOCATION quotes it); the context's path is the absolute one
        config = dataclasses.replace(context.check_config(level=puppet_version, strict=strict), file=path)
        result = check(src.text, config)
        return FileDiagnostics(result.diagnostics, result.locator)
    except Exception as e:  # one file's failure never costs another's result
        if debug is not None:
            debug.write(format_traceback(e))
        return FileDiagnostics([internal_error(e, path)])


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from puppet_xpp.grammar.validator.syntax import LoggedDiagnostic

    paths: list[str] = list(args.paths)
    if not paths:
        err.write("puppet-xpp --validate: no PATH given\n")
        return 2
    modulepath = None if args.modulepath is None else [d for d in args.modulepath.split(os.pathsep) if d]
    any_error = False
    failed = False
    for path in collect_files(paths):
        result = validate_file(
            path,
            strict=args.strict,
            tasks=args.tasks,
            modulepath=modulepath,
            manifest=args.manifest,
            debug=err if args.debug else None,
            puppet_version=args.puppet_version,
        )
        diagnostics = result.diagnostics
        if any(d.severity == "error" for d in diagnostics):
            any_error = True
        if any(d.code in FAILURE_CODES for d in diagnostics):
            failed = True
        if args.format == "json":
            items = []
            for d in diagnostics:
                line, column = result.position(d)
                items.append(
                    {
                        "severity": d.severity,
                        "code": d.code,
                        "message": shown(d.message),
                        "line": line,
                        "column": column,
                        "offset": d.offset,
                        "length": d.length,
                    }
                )
            out.write(json.dumps({"file": shown(path), "diagnostics": items}, ensure_ascii=False) + "\n")
        else:
            rows = [
                Shown(d.severity, d.message, *result.position(d), logged=isinstance(d, LoggedDiagnostic))
                for d in diagnostics
            ]
            out.writelines(line + "\n" for line in diagnostic_lines(path, rows))
    out.flush()
    return 2 if failed else 1 if any_error else 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``puppet-xpp --validate ARGV...`` for a caller holding an argument list (tests, scripts)."""
    from puppet_xpp.server import cli

    return cli.main(["--validate", *(sys.argv[1:] if argv is None else argv)], out, err)
