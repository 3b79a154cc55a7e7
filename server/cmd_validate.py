"""``puppet-xpp --validate PATH... [--modulepath DIRS] [--manifest PATH] [--strict LEVEL] [--tasks]
[--format text|json]``: syntax check and static validation of manifests and templates.

PATH is a file or a directory (searched recursively for ``.pp`` and ``.epp`` files, in sorted order).
``.epp`` files are parsed as templates; files below a ``plans`` directory are validated in tasks mode
(as are all files with ``--tasks``).  Every diagnostic of every file is reported (lexer warnings and
syntax errors first, then the validator's, in Puppet's order).  The exit status is 1 when any error was
reported, else 0.

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

STRICT_LEVELS = ("off", "warning", "error")


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
    parser.add_argument(
        "--strict",
        choices=STRICT_LEVELS,
        default="warning",
        help="severity of DUPLICATE_KEY: off, warning (Puppet 7 default) or error",
    )
    parser.add_argument("--tasks", action="store_true", help="validate in tasks (Bolt plan) mode")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="puppet-xpp --validate", description="Syntax check and static validation (Puppet 7 rules)."
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


def _in_plans_dir(path: str) -> bool:
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    return "plans" in parts[:-1]


def validate_file(path: str, *, strict="warning", tasks=False, modulepath=(), manifest=None):
    """Parse and validate one file: (diagnostics, locator or None). Unreadable files give one error."""
    from puppet_xpp.grammar.issues import Diagnostic
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return [Diagnostic.make("NO_SUCH_FILE_OR_DIRECTORY", None, 0, {"file": path}, file=path)], None
    except OSError as e:
        return [
            Diagnostic.make(
                "UNREADABLE_FILE", None, 0, {"file": path, "reason": e.strerror or str(e)}, file=path
            )
        ], None
    text = data.decode("utf-8", "surrogateescape")
    epp = path.endswith(".epp")
    tasks = tasks or _in_plans_dir(path)
    res = parse(text, file=path, epp=epp, tasks=tasks)
    diags = list(res.diagnostics)
    if res.program is not None:
        diags.extend(
            validate(
                res.program, strict=strict, tasks=tasks, file=path, modulepath=modulepath, manifest=manifest
            )
        )
    return diags, res.locator


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
    modulepath = [d for d in (ns.modulepath or "").split(os.pathsep) if d]
    any_error = False
    for path in collect_files(paths):
        diags, locator = validate_file(
            path, strict=ns.strict, tasks=ns.tasks, modulepath=modulepath, manifest=ns.manifest
        )
        if any(d.severity == "error" for d in diags):
            any_error = True
        if ns.format == "json":
            items = []
            for d in diags:
                line, col = _line_col(d, locator)
                items.append(
                    {
                        "severity": d.severity,
                        "code": d.code,
                        "message": d.message,
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
                    out.write(f"{kind}: {d.message}{_location(where, line, col)}\n")
    out.flush()
    return 1 if any_error else 0


def run(argv=None, out=None) -> int:
    """Run with command-line arguments (without the program name); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ns = _parser().parse_args(argv)
    return run_args(ns, out)


main = run

if __name__ == "__main__":
    sys.exit(run())
