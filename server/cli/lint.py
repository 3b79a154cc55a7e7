"""``puppet-xpp --lint PATH... [puppet-lint options] [--format FORMAT] [--stdin-filename PATH]``:
puppet-lint's checks (``lint``) on manifests, with puppet-lint 3.0.1's command line.

Every option of ``puppet-lint`` 3.0.1 is accepted with its meaning (``--no-NAME-check``, ``--NAME-check``
for a check that is off by default, ``--only-checks a,b``, ``--ignore-paths``, ``--relative``,
``--with-filename``, ``--with-context``, ``--show-ignored``, ``--fail-on-warnings``, ``--error-level``,
``--log-format``, ``-f``/``--fix``, ``--json``, ``--sarif``, ``--list-checks``, ``--version``, ``-c FILE``,
``--no-config``; ``-l``/``--load`` and ``--load-from-puppet`` name Ruby plugins, which are not loaded: a
warning says so), read after the rc files ``/etc/puppet-lint.rc``, ``~/.puppet-lint.rc`` and
``./.puppet-lint.rc``, as puppet-lint reads them.  PATH as puppet-lint takes it: a directory (the first
PATH; its ``*.pp`` files, recursively, sorted, hidden ones skipped) or files.  A directory is walked by
:mod:`xpp.walk` (the walk every mode shares, in puppet-lint's glob order): PDK's default ignores
(``spec/fixtures/``, ``pkg/``, ``vendor/``...), ``.pdkignore``/``.gitignore`` patterns, the project
configuration's ``exclude`` and each ``--exclude PATTERN`` (gitignore-style, relative to the directory)
are skipped.  The project configuration's ``[lint]`` table (:mod:`xpp.project`) gives puppet-lint
options read after the rc files and before the command line's, which win.

Output: puppet-lint's text (``WARNING: message on line N (check: name)``, the path in front when more
than one file is linted; GitHub annotations after each line when ``GITHUB_ACTION`` is set, as
puppet-lint does), ``--json`` and ``--sarif`` exactly as puppet-lint prints them
(:mod:`server.cli.lint_report`).  ``--format json`` writes one line per file:
``{"file": F, "problems": [{"check", "kind", "message", "line", "column", "reason"?}]}``;
``--format sarif|junit|github|codeclimate`` the shared writers' formats (:mod:`server.cli.formats`).

Exit status as puppet-lint's: 1 when an error was found (or a warning, with ``--fail-on-warnings``), when
an option is invalid, when no file is given or a file does not exist; else 0.

``--fix`` rewrites a file (temporary file + rename, its mode and owner kept) only when fixing changed it and
it has no syntax error; never through a symbolic link, into a file with another hard link, or outside the
directory linted (a message says so and the exit status is 1).  Files are read by the one source-reading
rule (:mod:`xpp.sources`): a FIFO, a device or a file over the size limit is an ``io`` error, never read;
as root, a file is read as the owner of its directory.
PATH ``-`` lints standard input as the file ``--stdin-filename`` names (its layout check, ignore paths;
default ``<stdin>``); with ``--fix`` the fixed manifest goes to standard output and the report to
standard error.
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
from puppet_xpp.lint.run import LintResult, all_checks, lint
from puppet_xpp.server.cli.findings import LINT_TOOL, Finding, severity_of
from puppet_xpp.server.cli.formats import FORMATS, writer
from puppet_xpp.server.cli.formats.github import escape_data
from puppet_xpp.server.cli.lint_report import FileProblems, json_report, sarif_report
from puppet_xpp.server.cli.stdin import STDIN, STDIN_DISPLAY, read_stdin

__all__ = ["USAGE", "add_arguments", "run"]

USAGE = "usage: puppet-xpp --lint PATH... [puppet-lint options] [--format FORMAT] [--stdin-filename PATH]"
TRY_HELP = "puppet-lint: try 'puppet-lint --help' for more information"
PUPPET_LINT_VERSION = "3.0.1"  # the command line this mode follows
TEXT_FORMATS = ("text", "json")
# the help as plain text (the docstring's ``literal`` marks are for the documentation tools)
HELP = (__doc__ or "").replace("``", "").replace(":mod:", "").strip()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Nothing for argparse to read: ``--lint`` takes the rest of the command line (server.cli.main),
    puppet-lint's options and the paths, which :func:`lint.config.load_config` reads in their order
    after the rc files, as puppet-lint does."""
    parser.add_argument_group("lint", HELP)


class Run:
    """One ``--lint`` run: the settings, where it writes, and what it gathers for the reports printed
    at the end (puppet-lint's ``--json``/``--sarif``, the shared formats)."""

    def __init__(self, cfg: LintConfig, fmt: str, out: TextIO, err: TextIO) -> None:
        self.cfg = cfg
        self.fmt = fmt
        self.out = out
        self.err = err
        self.reported: list[FileProblems] = []
        self.findings: list[Finding] = []
        self.names: list[str] = []
        self.tree: str | None = None  # the directory linted (--fix writes nothing outside it)

    @property
    def gathers(self) -> bool:
        """Whether the report is printed at the end (not file by file)."""
        return self.cfg.sarif or self.cfg.json or self.fmt in FORMATS

    def report(self, path: str, problems: list[Problem], text: str | None) -> None:
        shown_problems = [p for p in problems if _shown(p, self.cfg)]
        if self.fmt in FORMATS:
            self.names.append(path)
            self.findings.extend(
                Finding(path, p.line, p.column, severity_of(p.kind), p.check, p.message, LINT_TOOL)
                for p in shown_problems
            )
        elif self.cfg.sarif or self.cfg.json:
            context = None
            if self.cfg.with_context:
                lines = (text or "").split("\n")
                context = [
                    lines[p.line - 1].strip() if 0 < p.line <= len(lines) else "" for p in shown_problems
                ]
            self.reported.append(FileProblems(path, shown_problems, context))
        else:
            _report(path, shown_problems, self.cfg, self.out, text, self.fmt == "json")

    def finish(self, first_path: str) -> None:
        if self.fmt in FORMATS:
            writer(self.fmt)(self.findings, self.names, self.out)
        elif self.cfg.sarif:
            self.out.write(sarif_report(self.reported, first_path))
        elif self.cfg.json:
            self.out.write(json_report(self.reported))


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    arguments = [a for a in args.rest if a != "--lint"]
    fmt = "text"
    if "--format" in arguments:
        k = arguments.index("--format")
        if k + 1 >= len(arguments) or arguments[k + 1] not in (*TEXT_FORMATS, *FORMATS):
            err.write(f"puppet-xpp --lint: --format takes {'|'.join((*TEXT_FORMATS, *FORMATS))}\n{USAGE}\n")
            return 1
        fmt = arguments[k + 1]
        del arguments[k : k + 2]
    excludes: list[str] = []
    while "--exclude" in arguments[: arguments.index("--") if "--" in arguments else len(arguments)]:
        k = arguments.index("--exclude")
        if k + 1 >= len(arguments):
            err.write(f"puppet-xpp --lint: --exclude takes a PATTERN\n{USAGE}\n")
            return 1
        excludes.append(arguments[k + 1])
        del arguments[k : k + 2]
    from puppet_xpp.xpp.project import project_for

    first = next((a for a in arguments if not a.startswith("-")), None)
    project = project_for(first if first not in (None, STDIN) else os.getcwd())
    if project.error is not None:
        err.write(f"puppet-xpp --lint: {project.error}\n")
        return 1
    project_options = project.lint.arguments()
    for option in project_options:  # each checked alone: the message names its key's line
        try:
            load_config([option])
        except UsageError as e:
            err.write(f"puppet-xpp --lint: {project.path}:{project.lint.line_of(option)}: lint: {e}\n")
            return 1
    arguments = project_options + arguments
    if "-h" in arguments or "--help" in arguments:
        out.write(HELP + "\n")
        return 0
    from puppet_xpp.server.analysis.lint import read_rc  # the one way rc files are read

    try:
        cfg, paths = load_config(arguments, read=read_rc)
    except UsageError as e:  # puppet-lint's words, on its stream (standard output)
        out.write(f"puppet-lint: {e}\n{TRY_HELP}\n")
        return 1
    if cfg.version:
        from puppet_xpp import __version__

        out.write(f"puppet-lint {PUPPET_LINT_VERSION} (puppet-xpp {__version__})\n")
        return 0
    if cfg.list_checks:
        out.write("".join(f"{c.name}\n" for c in all_checks()))
        return 0
    for plugin in cfg.plugins:
        err.write(
            f"puppet-xpp --lint: {plugin}: Ruby plugins are not loaded (puppet-xpp runs its own checks)\n"
        )
    if fmt == "json":
        cfg.json = False  # our one-line-per-file JSON (puppet-lint's is --json)
    if not paths:
        out.write(f"puppet-lint: no file specified\n{TRY_HELP}\n")
        return 1
    files = list(_files(paths, excludes))
    if len(files) > 1:
        cfg.with_filename = True
    lint_run = Run(cfg, fmt, out, err)
    if paths[0] != STDIN and os.path.isdir(paths[0]):
        lint_run.tree = paths[0]
    status = 0
    for f in files:
        name = (cfg.stdin_filename or STDIN_DISPLAY) if f == STDIN else f
        if any(fnmatch.fnmatchcase(name, p) for p in cfg.ignore_paths):
            continue
        one = _one(f, name, lint_run)
        if one is None:  # puppet-lint stops at a file that does not exist
            out.write(f"puppet-lint: no file specified or specified file does not exist\n{TRY_HELP}\n")
            return 1
        status = max(status, one)
    lint_run.finish(paths[0])
    return status


def _files(paths: list[str], exclude: list[str]) -> Iterator[str]:
    """The files puppet-lint lints: the first PATH's ``*.pp`` when it is a directory, else the PATHs."""
    first = paths[0]
    if first == STDIN or not os.path.isdir(first):
        yield from paths
        return
    yield from _manifests(first, exclude)


def _manifests(directory: str, exclude: list[str]) -> Iterator[str]:
    """``DIR/**/*.pp`` in the order puppet-lint's glob gives them (each directory's entries sorted by
    name, a subdirectory's files in its place, symbolic links to directories not entered), less what
    the one walk skips (:func:`xpp.walk.walk`: hidden entries among them, as puppet-lint's glob)."""
    from puppet_xpp.xpp.project import project_for
    from puppet_xpp.xpp.walk import walk

    patterns = [(directory, p) for p in exclude] + project_for(directory).excludes()
    top = os.path.abspath(directory)
    for found in walk(directory, (".pp",), exclude=patterns, follow_links=False):
        yield os.path.join(directory, os.path.relpath(found.path, top))


def _read(given: str, name: str) -> tuple[str, os.stat_result | None] | Problem | None:
    """The manifest's text and the stat of what was read, or the ``io`` problem that stands for it
    (None: the file does not exist, which ends puppet-lint's run).  Files and standard input are read by
    the one reading rule (:mod:`xpp.sources`: regular files only, the size limit; as root, as the owner
    of the file's directory); undecodable bytes are kept (puppet-lint reads files as they are)."""
    if given == STDIN:
        src = read_stdin(name)
        if src.text is None:
            assert src.diagnostic is not None
            return Problem("io", "error", src.diagnostic.message, 0, 0)
        return src.text, None
    if not os.path.lexists(given):
        return None
    from puppet_xpp.xpp.sources import directory_owner, read_bytes

    raw = read_bytes(given, as_user=directory_owner(given))
    if raw.data is None:
        assert raw.diagnostic is not None  # a file not read has the diagnostic saying why
        return Problem("io", "error", raw.diagnostic.message, 0, 0)
    return raw.data.decode("utf-8", "surrogateescape"), raw.stat


def _one(given: str, name: str, lint_run: Run) -> int | None:
    """Lint one file; its exit status (None: it does not exist)."""
    cfg, err = lint_run.cfg, lint_run.err
    read = _read(given, name)
    if read is None:
        return None
    if isinstance(read, Problem):
        lint_run.report(name, [read], None)
        return 1
    text, read_stat = read
    result = lint(text, path=name, enabled=cfg.enabled, fix=cfg.fix, relative=cfg.relative)
    for w in result.warnings:
        err.write(f"{w}\n")
    to_stdout = given == STDIN and cfg.fix
    if to_stdout:  # the fixed manifest is the output: the report goes to standard error
        saved, lint_run.out = lint_run.out, err
        lint_run.report(name, result.problems, text)
        lint_run.out = saved
    else:
        lint_run.report(name, result.problems, text)
    if result.syntax_error:
        err.write("Try running `puppet parser validate <file>`\n")
    if cfg.fix and result.fixed is not None and to_stdout:
        lint_run.out.write(result.fixed)
    elif cfg.fix and result.fixed is not None and result.fixed != text:
        try:
            assert read_stat is not None  # a file (not standard input) was read
            _write(given, result.fixed.encode("utf-8", "surrogateescape"), read_stat, lint_run.tree)
        except OSError as e:
            err.write(f"puppet-xpp --lint: cannot write {given}: {e.strerror or e}\n")
            return 1
    return _status(result, cfg)


def _status(result: LintResult, cfg: LintConfig) -> int:
    kinds = {p.kind for p in result.problems}
    return 1 if "error" in kinds or ("warning" in kinds and cfg.fail_on_warnings) else 0


def _write(path: str, data: bytes, read: os.stat_result, tree: str | None) -> None:
    """The fixed text, by the one rule for rewriting a source (``rewrite_source``: the file that was read,
    temporary file + rename, its mode and owner kept; never through a symbolic link, into a file with
    another hard link, or outside the directory linted)."""
    from puppet_xpp.xpp.compile.writes import rewrite_source

    rewrite_source(path, data, read, within=tree)


def _shown(p: Problem, cfg: LintConfig) -> bool:
    if p.kind == "ignored" and not cfg.show_ignored:
        return False
    return p.kind == "fixed" or cfg.error_level in ("all", p.kind)


def _report(
    path: str, shown: list[Problem], cfg: LintConfig, out: TextIO, text: str | None, json_lines: bool
) -> None:
    """One file's problems as puppet-lint prints them (``--log-format``, ``--with-context``, GitHub
    annotations when ``GITHUB_ACTION`` is set ...), or one JSON line (``--format json``)."""
    github = "GITHUB_ACTION" in os.environ
    if json_lines:
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
                lines = (text or "").split("\n")
            context = lines[p.line - 1].strip() if p.line <= len(lines) else ""
            offset = next((k for k, c in enumerate(context) if not c.isspace()), 1)
            out.write(f"\n  {context}\n")
            out.write("^".rjust(p.column + 2 - offset) + "\n\n")
        if github:
            message = escape_data(p.message)
            out.write(
                f"\n::{p.kind} file={path},line={p.line},col={p.column}::{message} (check: {p.check})\n"
            )


def _format(fmt: str, fields: dict[str, str]) -> str:
    out = fmt
    for k, v in fields.items():
        out = out.replace("%{" + k + "}", v)
    return out
