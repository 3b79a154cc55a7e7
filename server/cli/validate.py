"""``puppet-xpp --validate PATH... [--modulepath DIRS] [--manifest PATH] [--puppet-version 8|7|7.23]
[--strict LEVEL] [--tasks] [--format text|json]``: syntax check and static validation of manifests and
templates.

PATH is a file or a directory (searched recursively for ``.pp`` and ``.epp`` files, in sorted order).
``.epp`` files are parsed as templates.  Each file's environment, module path and main manifest come from
its location (:mod:`xpp.environment`, as for ``--compile`` and the language server) unless
``--modulepath``/``--manifest`` are given; files in a module's ``plans/`` directory are validated in
tasks mode (as are all files with ``--tasks``).  ``--puppet-version`` selects the language level
(:mod:`grammar.levels`; default 8, whose default ``strict`` is ``error``).  Every diagnostic of every file is reported (lexer warnings and
syntax errors first, then the validator's, in Puppet's order).  The exit status is 2 when a file could not
be handled (missing, unreadable, not a regular file, over the size limit, or an internal error: one
``INTERNAL_ERROR`` diagnostic for that file, traceback with ``--debug``; the other files are still
validated), else 1 when any error was reported, else 0.

Text output follows ``puppet parser validate``: per file, warnings first, then errors::

    Warning: The key 'a' is declared more than once (file: x.pp, line: 2, column: 14)
    Error: This Literal Integer has no effect. ... (file: x.pp, line: 1, column: 11)

``--format json`` writes one line per file, in the order the files were given/found:
``{"file": F, "diagnostics": [{"severity", "code", "message", "line", "column", "offset", "length"}]}``.

Entry points: ``main(argv)`` / ``run(argv)`` (argv without the program name; a leading ``--validate`` is
accepted), or ``add_arguments(parser)`` + ``run_args(namespace)`` to embed the options in another parser.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from puppet_xpp.grammar import levels
from puppet_xpp.xpp.sources import shown

# diagnostics that mean "this file could not be handled" (exit status 2), not "the manifest has errors"
FAILURE_CODES = frozenset({"NO_SUCH_FILE_OR_DIRECTORY", "UNREADABLE_FILE", "INTERNAL_ERROR"})


def add_arguments(parser: argparse.ArgumentParser, *, with_paths: bool = True) -> None:
    """Add the validate options to ``parser`` (``--validate PATH...`` plus the settings)."""
    if with_paths:
        parser.add_argument(
            "--validate",
            dest="validate",
            metavar="PATH",
            nargs="+",
            action="extend",
            help="validate these files / directories (recursively: *.pp, *.epp)",
        )
    parser.add_argument(
        "--modulepath",
        metavar="DIRS",
        default=None,
        help=f"module path ('{os.pathsep}'-separated) for the module-location checks",
    )
    parser.add_argument(
        "--manifest",
        metavar="PATH",
        default=None,
        help="the environment's main manifest (file or directory): exempt from location checks",
    )
    levels.add_cli_arguments(parser)
    parser.add_argument("--tasks", action="store_true", help="validate in tasks (Bolt plan) mode")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument(
        "--debug", action="store_true", help="print the traceback of an internal error (INTERNAL_ERROR)"
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="puppet-xpp --validate",
        description="Syntax check and static validation (Puppet 8 / OpenVox 8 rules, or 7 / 7.23).",
    )
    p.add_argument("paths", metavar="PATH", nargs="*", help="files or directories")
    add_arguments(p)
    return p


def collect_files(paths) -> list[str]:
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


def validate_file(
    path: str,
    *,
    strict=None,
    tasks=False,
    modulepath=None,
    manifest=None,
    debug=None,
    puppet_version=None,
):
    """Parse and validate one file: (diagnostics, locator or None).  Never raises: a file that cannot be
    read gives one diagnostic (xpp.sources), a failure inside puppet-xpp gives INTERNAL_ERROR (its
    traceback goes to ``debug``, a writable stream, when given).  ``modulepath``/``manifest`` None: the
    file's environment's (xpp.environment.file_context); ``puppet_version``: the language level."""
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate
    from puppet_xpp.xpp.sources import format_traceback, internal_error, read_source

    src = read_source(path)
    if src.diagnostic is not None:
        return [src.diagnostic], None
    assert src.text is not None
    try:
        from puppet_xpp.xpp.environment import file_context

        ctx = file_context(path, tasks=tasks, modulepath=modulepath, manifest=manifest)
        epp, tasks, modulepath, manifest = path.endswith(".epp"), ctx.tasks, ctx.modulepath, ctx.manifest
        res = parse(src.text, file=path, epp=epp, tasks=tasks)
        diags = list(res.diagnostics)
        if res.program is not None:
            diags.extend(
                validate(
                    res.program,
                    strict=strict,
                    tasks=tasks,
                    file=path,
                    modulepath=modulepath,
                    manifest=manifest,
                    level=puppet_version,
                )
            )
        return diags, res.locator
    except Exception as e:  # one file's failure never costs another's result
        if debug is not None:
            debug.write(format_traceback(e))
        return [internal_error(e, path)], None


def _location(path, line, col) -> str:
    if not path:  # logged while checking a pp/epp heredoc: Puppet gives the heredoc-relative position only
        return f" (line: {line}, column: {col})" if line is not None else ""
    if line is None:
        return f" (file: {path})"
    if col is None:
        return f" (file: {path}, line: {line})"
    return f" (file: {path}, line: {line}, column: {col})"


def _line_col(d, locator):
    if locator is None:
        return None, None
    return d.line_col(locator)


def run_args(ns, out=None) -> int:
    from puppet_xpp.grammar.validator_syntax import LoggedDiagnostic

    out = out or sys.stdout
    paths = list(getattr(ns, "paths", None) or []) + list(getattr(ns, "validate", None) or [])
    if not paths:
        print("puppet-xpp --validate: no PATH given", file=sys.stderr)
        return 2
    modulepath = None if ns.modulepath is None else [d for d in ns.modulepath.split(os.pathsep) if d]
    level = getattr(ns, "puppet_version", None)
    any_error = False
    failed = False
    debug = sys.stderr if getattr(ns, "debug", False) else None
    for path in collect_files(paths):
        diags, locator = validate_file(
            path,
            strict=ns.strict,
            tasks=ns.tasks,
            modulepath=modulepath,
            manifest=ns.manifest,
            debug=debug,
            puppet_version=level,
        )
        if any(d.severity == "error" for d in diags):
            any_error = True
        if any(d.code in FAILURE_CODES for d in diags):
            failed = True
        path = shown(path)
        if ns.format == "json":
            items = []
            for d in diags:
                line, col = _line_col(d, locator)
                items.append(
                    {
                        "severity": d.severity,
                        "code": d.code,
                        "message": shown(d.message),
                        "line": line,
                        "column": col,
                        "offset": d.offset,
                        "length": d.length,
                    }
                )
            out.write(json.dumps({"file": path, "diagnostics": items}, ensure_ascii=False) + "\n")
        else:
            warnings = [d for d in diags if d.severity in ("warning", "deprecation")]
            errors = [d for d in diags if d.severity == "error"]
            for kind, group in (("Warning", warnings), ("Error", errors)):
                for d in group:
                    line, col = _line_col(d, locator)
                    where = "" if isinstance(d, LoggedDiagnostic) else path
                    out.write(f"{kind}: {shown(d.message)}{_location(where, line, col)}\n")
    out.flush()
    return 2 if failed else 1 if any_error else 0


def run(argv=None, out=None) -> int:
    """Run with command-line arguments (without the program name); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ns = _parser().parse_args(argv)
    return run_args(ns, out)


main = run

if __name__ == "__main__":
    sys.exit(run())
