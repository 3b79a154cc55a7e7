"""``puppet-xpp --validate PATH... [--modulepath DIRS] [--manifest PATH] [--puppet-version 8|7|7.23]
[--strict LEVEL] [--tasks] [--deep] [--format text|json|sarif|junit|github|codeclimate] [--stdin-filename PATH]``:
syntax check and static validation of manifests and
templates.

PATH is a file or a directory (searched recursively for ``.pp`` and ``.epp`` files, in sorted order, by
the one walk of :mod:`xpp.walk`: PDK's default ignores -- ``spec/fixtures/``, ``pkg/``, ``vendor/``,
hidden directories... --, ``.pdkignore``/``.gitignore`` patterns, the project configuration's
``exclude`` and each ``--exclude PATTERN`` (gitignore-style, relative to the directory given) are
skipped; a file named on the command line never is).  The project configuration (:mod:`xpp.project`:
``.puppet-xpp.toml`` or ``[tool.puppet-xpp]`` in ``pyproject.toml``) gives the level, ``strict`` and
module path the command line leaves unsaid; a configuration that cannot be used stops the run (status
2) with its path and line.
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

On a terminal (:mod:`server.cli.terminal`) each diagnostic is followed by its source line and a caret
under the column, ``Error:``/``Warning:`` coloured (``NO_COLOR``/``FORCE_COLOR`` honoured).

``--format json`` writes one line per file, in the order the files were given/found:
``{"file": F, "diagnostics": [{"severity", "code", "message", "line", "column", "offset", "length"}]}``.
``--format sarif|junit|github|codeclimate`` writes every file's diagnostics in that format once all are
validated (:mod:`server.cli.formats`: the writers ``--lint`` and ``--compile`` use too).

``--deep`` adds the deep checks (:mod:`server.analysis.deep`: unknown classes, resource types, functions
and parameters, missing required parameters, wrong arity, literals of the wrong type, duplicate
declarations, unknown variables -- what a catalog compile would stop, where the file's environment and
module path prove it), after the file's validation diagnostics, in Puppet's words (a module missing
from the module path: one note at the first file that names it): on a text line as
``Error: MESSAGE (file: F, line: L[, column: C])`` (a note as ``Notice:``); in JSON with ``"source":
"puppet-xpp-deep"``; in the other formats as the tool ``puppet-xpp-deep``.  A deep finding of severity
error makes the exit status 1.  Without ``--deep`` the output is the validator's alone.

PATH ``-`` reads the manifest from standard input; ``--stdin-filename PATH`` names the file it stands
for: its location rules, environment and the name in diagnostics are that path's (default ``<stdin>``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO, cast

from puppet_xpp.grammar import levels
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.server.analysis.deep.codes import DEEP_SOURCE
from puppet_xpp.server.cli.findings import VALIDATE_TOOL, Finding, severity_of
from puppet_xpp.server.cli.formats import FORMATS, writer
from puppet_xpp.server.cli.output import FAILURE_CODES, Shown, diagnostic_lines, location
from puppet_xpp.server.cli.stdin import STDIN, STDIN_DISPLAY, read_stdin
from puppet_xpp.server.cli.terminal import Style, caret_lines, is_terminal, terminal_width, use_colour
from puppet_xpp.xpp.sources import Source, shown

if TYPE_CHECKING:
    from puppet_xpp.grammar.ast import Locator, Program
    from puppet_xpp.grammar.check import CheckConfig
    from puppet_xpp.server.analysis.deep import Finding as DeepFinding
    from puppet_xpp.server.analysis.deep.worlds import WorldCache
    from puppet_xpp.server.analysis.symbols import Sym
    from puppet_xpp.xpp.environment import FileContext

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
    group.add_argument(
        "--deep",
        action="store_true",
        help="also report what a catalog compile would stop (unknown classes, types, functions, parameters...)",
    )
    group.add_argument(
        "--exclude",
        metavar="PATTERN",
        action="append",
        default=[],
        help="skip what a directory walk finds matching PATTERN (gitignore-style; repeatable)",
    )
    group.add_argument(
        "--format", choices=("text", "json", *FORMATS), default="text", help="output format (default text)"
    )
    group.add_argument(
        "--stdin-filename",
        metavar="PATH",
        default=None,
        help="with PATH '-': the file the standard input stands for (location rules, names in diagnostics)",
    )
    group.add_argument(
        "--debug", action="store_true", help="print the traceback of an internal error (INTERNAL_ERROR)"
    )


def collect_files(paths: Iterable[str], exclude: Sequence[str] = ()) -> list[str]:
    """The files to validate: files as given, directories walked (:func:`xpp.walk.walk`, sorted) for
    .pp/.epp, skipping what it skips, the project configuration's ``exclude`` and ``exclude``
    (gitignore-style patterns relative to the directory given)."""
    from puppet_xpp.xpp.project import project_for
    from puppet_xpp.xpp.walk import walk

    out: list[str] = []
    for p in paths:
        if p == STDIN:
            out.append(p)
        elif os.path.isdir(p):
            patterns = [(p, pattern) for pattern in exclude] + project_for(p).excludes()
            found = [
                os.path.join(p, os.path.relpath(f.path, os.path.abspath(p)))
                for f in walk(p, (".pp", ".epp"), exclude=patterns)
            ]
            out.extend(sorted(found))
        else:
            out.append(p)
    return out


@dataclasses.dataclass
class DeepPending:
    """A file's parse kept for its deep checks, which run once every file of the run has been read
    (its own definitions are part of the world)."""

    program: object
    context: FileContext
    tasks: bool
    symbols: list[Sym]  # its own definitions (a file outside the loaded directories sees them too)


@dataclasses.dataclass
class FileDiagnostics:
    """What validating one file gave: its diagnostics and the locator that places them (None when the
    file was not parsed)."""

    diagnostics: list[Diagnostic]
    locator: Locator | None = None
    text: str | None = None  # the source as read (for the source line under a diagnostic on a terminal)
    deep: list[DeepFinding] = dataclasses.field(default_factory=list)  # with --deep
    # with --deep, until the run's worlds are complete: what the deep checks of this file need
    pending: DeepPending | None = None

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
    source: Source | None = None,
    worlds: WorldCache | None = None,
) -> FileDiagnostics:
    """Parse and validate one file.  Never raises: a file that cannot be read gives one diagnostic
    (xpp.sources), a failure inside puppet-xpp gives INTERNAL_ERROR (its traceback goes to ``debug``,
    a writable stream, when given).  ``modulepath``/``manifest`` None: the file's environment's
    (xpp.environment.file_context); ``puppet_version``: the language level; ``source``: the source as
    read already (standard input), standing for ``path``; ``worlds``: the run's deep-check worlds
    (``--deep``): then the file is parsed once for its validation and its index entries (the tokens
    kept: the entries' type texts), which the worlds record, and a program parsed without a syntax
    error is kept in ``pending`` for :func:`deep_check` (the validation is the same: ``check`` is
    that parse and that validator)."""
    from puppet_xpp.grammar.check import check
    from puppet_xpp.xpp.environment import file_context
    from puppet_xpp.xpp.sources import format_traceback, internal_error, read_source

    src = read_source(path) if source is None else source
    if src.diagnostic is not None:
        return FileDiagnostics([src.diagnostic])
    assert src.text is not None
    try:
        context = file_context(path, tasks=tasks, modulepath=modulepath, manifest=manifest)
        # the name recorded is the path as given, as `puppet parser validate` names it (in messages too:
        # ILLEGAL_DEFINITION_LOCATION quotes it); the context's path is the absolute one
        config = dataclasses.replace(context.check_config(level=puppet_version, strict=strict), file=path)
        if worlds is not None:
            return _parse_for_deep(src.text, config, context, worlds)
        result = check(src.text, config)
        return FileDiagnostics(result.diagnostics, result.locator, src.text)
    except Exception as e:  # one file's failure never costs another's result
        if debug is not None:
            debug.write(format_traceback(e))
        return FileDiagnostics([internal_error(e, path)])


def _parse_for_deep(
    text: str, config: CheckConfig, context: FileContext, worlds: WorldCache
) -> FileDiagnostics:
    """:func:`validate_file`'s ``--deep`` parse: the validation of ``check`` and the file's index
    entries from one parse."""
    from puppet_xpp.grammar.check import checker, parse
    from puppet_xpp.grammar.gcpause import paused
    from puppet_xpp.server.analysis.document import Analysis, LineIndex
    from puppet_xpp.server.analysis.index import symbols_of

    symbols: list[Sym] = []
    with paused():  # (as check(): no collection while the tree is made; the tokens dropped inside)
        res = parse(text, config.file, epp=config.epp, tasks=config.tasks)
        parsed = res.program is not None and not any(d.severity == "error" for d in res.diagnostics)
        if parsed and context.path is not None and context.path.endswith(".pp"):
            data = text.encode("utf-8", "surrogateescape")
            an = Analysis(None, text, data, res.program, res.tokens, res.locator, [], [], LineIndex(data))
            symbols = symbols_of(an, context.path)
            worlds.add_file(context.path, symbols, cast("Program", res.program))
        res.tokens = []
        validation = list(checker(config).validate(res.program)) if res.program is not None else []
    result = FileDiagnostics([*res.diagnostics, *validation], cast("Locator | None", res.locator), text)
    if not parsed:
        return result
    result.pending = DeepPending(res.program, context, config.tasks, symbols)
    return result


def once_per_module(found: list[DeepFinding], noted: set[str]) -> list[DeepFinding]:
    """A file's deep findings without the notes of a missing module an earlier file's note named."""
    out = []
    for f in found:
        module = f.data.get("module") if f.code == "DEEP_MISSING_MODULE" else None
        if isinstance(module, str):
            if module in noted:
                continue
            noted.add(module)
        out.append(f)
    return out


def deep_check(path: str, result: FileDiagnostics, worlds: WorldCache, debug: TextIO | None = None) -> None:
    """Add the deep findings of a file :func:`validate_file` kept a parse of (a failure: the file's
    INTERNAL_ERROR, as any other; a bug inside one statement's check -- server/analysis/deep/internal.py
    -- an INTERNAL_ERROR at that statement, the file's other findings kept; the traceback to ``debug``)."""
    from puppet_xpp.server.analysis.deep import deep_findings
    from puppet_xpp.server.analysis.deep.internal import is_internal
    from puppet_xpp.xpp.sources import format_traceback, internal_error

    pending, result.pending = result.pending, None
    if pending is None:
        return
    try:
        world = worlds.world_for(pending.context)
        world.local = pending.symbols
        try:
            found = deep_findings(pending, path, world, tasks=pending.tasks)
        finally:
            world.local = []
    except Exception as e:  # one file's failure never costs another's result
        if debug is not None:
            debug.write(format_traceback(e))
        result.diagnostics.append(internal_error(e, path))
        return
    result.deep = [f for f in found if not is_internal(f)]
    for f in found:
        if is_internal(f):
            if debug is not None:
                debug.write(str(f.data.get("traceback", "")))
            result.diagnostics.append(deep_internal_error(f, path))


def deep_internal_error(f: DeepFinding, path: str) -> Diagnostic:
    """The ``INTERNAL_ERROR`` of a bug inside the deep check of one statement, at that statement (its
    reason names the check: ``in the deep check of this resource: ...``)."""
    args = dict(f.args)
    return Diagnostic.make(
        "INTERNAL_ERROR",
        f.offset,
        f.length,
        {"type": args["type"], "reason": f"in the deep check of this {args['what']}: {args['reason']}"},
        file=shown(path),
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The run; with ``--deep`` the cyclic collector is held off for all of it: every file's program is
    kept until the deep checks (their definitions must all be known first), and each collection the
    parses' allocations start would traverse every program kept so far, to free nothing (a parse makes
    no cycles; reference counting frees what is dropped).  Measured by bench/bench_deep_cli.py."""
    if not args.deep:
        return _run(args, out, err)
    from puppet_xpp.grammar.gcpause import paused

    with paused(freeze=False):
        return _run(args, out, err)


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths: list[str] = list(args.paths)
    if not paths:
        err.write("puppet-xpp --validate: no PATH given\n")
        return 2
    if paths.count(STDIN) > 1:
        err.write("puppet-xpp --validate: standard input ('-') can be read once\n")
        return 2
    modulepath = None if args.modulepath is None else [d for d in args.modulepath.split(os.pathsep) if d]
    from puppet_xpp.xpp.project import project_for

    for given in paths:  # a project configuration that cannot be used: its path and line, nothing run
        problem = project_for(args.stdin_filename or os.getcwd() if given == STDIN else given).error
        if problem is not None:
            err.write(f"puppet-xpp --validate: {problem}\n")
            return 2
    any_error = False
    failed = False
    findings: list[Finding] = []
    names: list[str] = []
    terminal = args.format == "text" and is_terminal(out)
    style = Style(args.format == "text" and use_colour(out))
    worlds = None
    if args.deep:
        from puppet_xpp.server.analysis.deep.worlds import WorldCache

        worlds = WorldCache(args.puppet_version)
    results = _results(args, modulepath, err, worlds)
    noted: set[str] = set()  # the missing modules a note named already (one note per run)
    for path, result in results:
        if worlds is not None:
            deep_check(path, result, worlds, err if args.debug else None)
            result.deep = once_per_module(result.deep, noted)
        diagnostics = result.diagnostics
        if any(d.severity == "error" for d in diagnostics) or any(f.severity == "error" for f in result.deep):
            any_error = True
        if any(d.code in FAILURE_CODES for d in diagnostics):
            failed = True
        if args.format in FORMATS:
            names.append(path)
            findings.extend(file_findings(path, result))
        elif args.format == "json":
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
            items.extend(deep_json(result))
            out.write(json.dumps({"file": shown(path), "diagnostics": items}, ensure_ascii=False) + "\n")
        else:
            out.writelines(text_lines(path, result, style, terminal_width(out) if terminal else None))
            out.writelines(deep_lines(path, result, style))
    if args.format in FORMATS:
        writer(args.format)(findings, names, out)
    out.flush()
    return 2 if failed else 1 if any_error else 0


def _results(
    args: argparse.Namespace, modulepath: list[str] | None, err: TextIO, worlds: WorldCache | None
) -> Iterator[tuple[str, FileDiagnostics]]:
    """Each file's name and validation, as they are made; with ``--deep`` all are made before the first
    is given (every file's definitions are in the worlds before any deep check)."""
    made = (
        _validated(given, args, modulepath, err, worlds) for given in collect_files(args.paths, args.exclude)
    )
    return iter(list(made)) if worlds is not None else made


def _validated(
    given: str, args: argparse.Namespace, modulepath: list[str] | None, err: TextIO, worlds: WorldCache | None
) -> tuple[str, FileDiagnostics]:
    source = None
    path = given
    if given == STDIN:
        path = args.stdin_filename or STDIN_DISPLAY
        source = read_stdin(path)
    result = validate_file(
        path,
        strict=args.strict,
        tasks=args.tasks,
        modulepath=modulepath,
        manifest=args.manifest,
        debug=err if args.debug else None,
        puppet_version=args.puppet_version,
        source=source,
        worlds=worlds,
    )
    return path, result


def file_findings(path: str, result: FileDiagnostics) -> list[Finding]:
    """One file's diagnostics as findings (a heredoc checker's logged diagnostic has no position in
    the file: it is placed on the file alone)."""
    from puppet_xpp.grammar.validator.syntax import LoggedDiagnostic

    found = []
    for d in result.diagnostics:
        line, column = (None, None) if isinstance(d, LoggedDiagnostic) else result.position(d)
        found.append(
            Finding(path, line, column, severity_of(d.severity), d.code, shown(d.message), VALIDATE_TOOL)
        )
    for f in result.deep:
        line, column = deep_position(result, f)
        found.append(Finding(path, line, column, f.severity, f.code, shown(f.message), DEEP_SOURCE))
    return found


def deep_position(result: FileDiagnostics, f: DeepFinding) -> tuple[int | None, int | None]:
    """Puppet's line and column of a deep finding (no column where Puppet reports none)."""
    if result.locator is None:
        return None, None
    line, column = f.line_col(result.locator)
    return line, column if f.column_reported else None


def deep_json(result: FileDiagnostics) -> list[dict[str, str | int | None]]:
    """The deep findings of one file as ``--format json`` items (``source``: the deep checks)."""
    items: list[dict[str, str | int | None]] = []
    for f in result.deep:
        line, column = deep_position(result, f)
        items.append(
            {
                "severity": f.severity,
                "code": f.code,
                "message": shown(f.message),
                "line": line,
                "column": column,
                "offset": f.offset,
                "length": f.length,
                "source": DEEP_SOURCE,
            }
        )
    return items


def deep_lines(path: str, result: FileDiagnostics, style: Style) -> list[str]:
    """The deep findings of one file as Puppet-style lines after its validation's (warnings, then
    errors, then notes)."""
    display = shown(path)
    out = []
    for word, severity in (("Warning", "warning"), ("Error", "error"), ("Notice", "note")):
        for f in result.deep:
            if f.severity == severity:
                line, column = deep_position(result, f)
                out.append(
                    style.diagnostic(f"{word}: {shown(f.message)}{location(display, line, column)}") + "\n"
                )
    return out


def text_lines(path: str, result: FileDiagnostics, style: Style, width: int | None) -> list[str]:
    """Puppet's lines for one file; on a terminal (``width`` given) each is coloured and followed by
    its source line with a caret under the column."""
    from puppet_xpp.grammar.validator.syntax import LoggedDiagnostic

    rows = [
        Shown(d.severity, d.message, *result.position(d), logged=isinstance(d, LoggedDiagnostic))
        for d in result.diagnostics
    ]
    lines = diagnostic_lines(path, rows)
    if width is None:  # not a terminal: Puppet's lines (coloured only when FORCE_COLOR asks)
        return [style.diagnostic(line) + "\n" for line in lines]
    # diagnostic_lines orders warnings before errors: the rows in the same order
    ordered = [r for r in rows if r.severity in ("warning", "deprecation")] + [
        r for r in rows if r.severity == "error"
    ]
    source = (result.text or "").split("\n")
    out = []
    for line, row in zip(lines, ordered):
        out.append(style.diagnostic(line) + "\n")
        if not row.logged and row.line is not None and row.column is not None and row.line <= len(source):
            out.extend(x + "\n" for x in caret_lines(source[row.line - 1], row.column, style, width))
    return out


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``puppet-xpp --validate ARGV...`` for a caller holding an argument list (tests, scripts)."""
    from puppet_xpp.server import cli

    return cli.main(["--validate", *(sys.argv[1:] if argv is None else argv)], out, err)
