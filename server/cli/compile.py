"""``puppet-xpp --compile``: write ``.xpp`` files (PRFC-23).

    puppet-xpp --compile [ENVDIR...] [options]          every manifest of each environment (default: .)
    puppet-xpp --compile FILE.pp -o OUT.xpp [options]   one file (recorded file name: FILE as given)

Environment mode writes ``ENVDIR/.xpp/modules/<module>/<path>.xpp`` for every ``.pp`` of each module's
``manifests/``, ``functions/``, ``types/`` and ``plans/`` and for the environment's own manifest(s),
``functions/``, ``types/`` and ``plans/`` (module ``environment``); see :mod:`xpp.compile` and
``docs/compile.md``.  It is incremental: only files whose source changed are compiled again.

Output: diagnostics in the ``--validate`` text format on stdout (warnings, then errors, per file; on a
terminal coloured and followed by the source line and a caret, :mod:`server.cli.terminal`), a progress
line on stderr only when it is a terminal (never wider than the terminal; none with ``--quiet``), then one
summary line per environment::

    production: compiled 12, up to date 901, removed 1, with errors 2 (0.84 s)

``--format sarif|junit|github|codeclimate`` writes the diagnostics of every file in that format on stdout
instead (the summary lines then go to stderr; the ``.xpp`` files are written in msgpack), by the writers
``--validate`` and ``--lint`` use (:mod:`server.cli.formats`).  ``--report FILE`` writes the per-file
results as JSON, or in one of those formats with ``--report-format`` (default: the ``--format`` given
when it is one of them, else json).

``--deep`` adds the deep checks' findings (:mod:`server.analysis.deep`: what Puppet reports only when it
compiles a catalog -- unknown classes, resource types, functions and parameters, missing required
parameters, wrong arity and literal types, duplicate resources, unknown variables) of every manifest of
the run, up to date or not, to the report: after each environment's diagnostics in the text output (as
``--validate --deep`` prints them), with the tool ``puppet-xpp-deep`` in the other formats, and as each
file's ``deep`` list in the JSON report.  It never changes what is written into an ``.xpp``.

Exit status: 0 clean, 1 errors in sources (a deep finding of severity error too, with ``--deep``; an
``.xpp`` holding only the diagnostics is still written),
2 usage, environment or I/O failure (including a refused symbolic link in the ``.xpp`` tree, a source
that is unreadable, not a regular file or over the size limit, an internal error on a file
(``INTERNAL_ERROR``; the other files are still compiled, state and summary written; traceback with
``--debug``), a worker process that died, or another compile holding the lock with ``--no-wait``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from puppet_xpp.grammar import levels
from puppet_xpp.server.cli.findings import VALIDATE_TOOL, Finding, severity_of
from puppet_xpp.server.cli.formats import FORMATS, writer
from puppet_xpp.server.cli.terminal import Style, caret_lines, fit, is_terminal, terminal_width, use_colour
from puppet_xpp.xpp.sources import shown

if TYPE_CHECKING:
    from puppet_xpp.server.cli.validate import FileDiagnostics
    from puppet_xpp.xpp.compile import DiagnosticRow, EnvResult, FileResult
    from puppet_xpp.xpp.environment import Environment

__all__ = ["add_arguments", "run", "main", "parse_mode", "Display"]

DESCRIPTION = __doc__.split("\n\n")[0]


class _UsageError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``--compile``, in an argument group named after the mode."""
    p = parser.add_argument_group("compile", DESCRIPTION + " See docs/compile.md.")
    p.add_argument(
        "paths",
        metavar="ENVDIR|FILE",
        nargs="*",
        help="environment directories (default: the current directory), or one FILE.pp with -o",
    )
    p.add_argument("-o", "--output", metavar="OUT.xpp", help="compile one file to OUT.xpp ('-': stdout)")
    p.add_argument(
        "--format",
        choices=("msgpack", "json", *FORMATS),
        default="msgpack",
        help="msgpack|json: Pcore base encoding of the .xpp files (default msgpack); "
        f"{'|'.join(FORMATS)}: the diagnostics on stdout in that format (.xpp files in msgpack)",
    )
    p.add_argument("--force", action="store_true", help="rebuild every .xpp, even when up to date")
    p.add_argument(
        "--deep",
        action="store_true",
        help="add the deep checks' findings (what a catalog compile reports: unknown classes, types, "
        "functions and parameters, ...) to the report; the .xpp files are the same",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="parallel worker processes (default: number of cores)",
    )
    p.add_argument(
        "--mode",
        default="0644",
        metavar="FILE[,DIR]",
        help="octal permissions of the .xpp files (default 0644) and directories (default: the file "
        "mode with x added where r is set, 0755 for 0644)",
    )
    p.add_argument(
        "--runtime-root",
        metavar="DIR",
        help="the path ENVDIR will have at run time (when compiling a staging copy): recorded "
        "file names become DIR/<path in the environment>",
    )
    p.add_argument(
        "--exclude",
        metavar="PATTERN",
        action="append",
        default=[],
        help="skip what the walk of each ENVDIR finds matching PATTERN (gitignore-style, relative to ENVDIR; repeatable)",
    )
    p.add_argument(
        "--basemodulepath",
        metavar="DIRS",
        help=f"what $basemodulepath expands to in the modulepath ('{os.pathsep}'-separated)",
    )
    p.add_argument(
        "--modulepath",
        metavar="DIRS",
        help="use this modulepath instead of the environment's ($basemodulepath is expanded; "
        "relative entries are relative to the current directory)",
    )
    p.add_argument("--manifest", metavar="PATH", help="single-file mode: the main manifest (location rules)")
    # --puppet-version (also auto: the default, the level of the puppet on PATH), --strict (both in the
    # settings fingerprint)
    levels.add_cli_arguments(p, auto=True)
    p.add_argument("--tasks", action="store_true", help="single-file mode: compile in tasks (Bolt plan) mode")
    p.add_argument("--report", metavar="FILE", help="write the per-file results (JSON, or --report-format)")
    p.add_argument(
        "--report-format",
        choices=("json", *FORMATS),
        default=None,
        help="format of the --report file (default: --format when it is one of "
        f"{'|'.join(FORMATS)}, else json)",
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when another compile of the environment is running, exit 2 instead of waiting for it",
    )
    p.add_argument(
        "--max-source-size",
        type=int,
        default=None,
        metavar="BYTES",
        help="refuse sources larger than this (default: $PUPPET_XPP_MAX_SOURCE_SIZE or 16 MiB)",
    )
    p.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true", help="no progress display and no summary")
    g.add_argument("-v", "--verbose", action="store_true", help="one line per compiled or removed file")


def parse_mode(text: str) -> tuple[int, int]:
    parts = text.split(",")
    if len(parts) > 2:
        raise _UsageError(f"--mode {text!r}: expected FILE[,DIR] octal modes")
    try:
        modes = [int(x, 8) for x in parts]
    except ValueError:
        raise _UsageError(f"--mode {text!r}: not an octal mode") from None
    if any(m < 0 or m > 0o7777 for m in modes):
        raise _UsageError(f"--mode {text!r}: out of range")
    fmode = modes[0]
    dmode = modes[1] if len(parts) == 2 else fmode | ((fmode & 0o444) >> 2)
    return fmode, dmode


# ------------------------------------------------------------------------------------------------------
# output


def _diag_rows(display: str, rows: list[DiagnosticRow]) -> list[tuple[str, DiagnosticRow]]:
    """Puppet's line of each diagnostic (warnings, then errors) with its row."""
    from puppet_xpp.server.cli.output import location

    display = shown(display)
    out: list[tuple[str, DiagnosticRow]] = []
    for kind, severities in (("Warning", ("warning", "deprecation")), ("Error", ("error",))):
        for row in rows:
            if row.severity in severities:
                where = location("" if row.logged else display, row.line, row.column)
                out.append((f"{kind}: {shown(row.message)}{where}", row))
    return out


def findings_of(display: str, rows: list[DiagnosticRow]) -> list[Finding]:
    """One file's diagnostics as findings (the shared formats' records)."""
    return [
        Finding(
            display,
            None if r.logged else r.line,
            None if r.logged else r.column,
            severity_of(r.severity),
            r.code,
            shown(r.message),
            VALIDATE_TOOL,
        )
        for r in rows
    ]


FLUSH_EVERY = 0.1  # seconds between two flushes of the diagnostics when stdout is not a terminal


class Display:
    """Progress line (terminal only), diagnostics, summary: the events of
    :func:`xpp.compile.compile_environment` (:class:`xpp.compile.Events`).  With ``gather`` the
    diagnostics are kept as findings (for a format written at the end) instead of printed; with ``keep``
    they are kept as well as printed (a ``--report`` in one of those formats).  Neither: no finding is
    made (a cold compile of 1,650 files made as many lists of them for nobody)."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        quiet: bool,
        verbose: bool,
        gather: bool = False,
        debug: bool = False,
        keep: bool = True,
    ) -> None:
        self.out = out
        self.err = err
        self.debug = debug  # tracebacks of internal errors on err
        self.quiet = quiet
        self.verbose = verbose
        self.gather = gather
        self.keep = gather or keep  # findings kept for a format written at the end
        self.findings: list[Finding] = []
        self.files: list[str] = []
        self.tty = not quiet and is_terminal(err)
        self.out_tty = not gather and is_terminal(out)
        self.style = Style(not gather and use_colour(out))
        self.bar_shown = False
        self.flushed = 0.0  # when the diagnostics on ``out`` were last flushed (time.monotonic)
        self.todo = 0
        self.last = 0.0
        self.name = ""

    # events of xpp.compile.compile_environment
    def start(self, env: Environment, total: int, todo: int) -> None:
        self.todo = todo
        self.name = _env_name(env)

    def progress(self, done: int, todo: int, result: FileResult) -> None:
        if not self.tty or not todo:
            return
        now = time.monotonic()
        if done == todo or now - self.last > 0.1:
            self.last = now
            self.err.write(
                "\r\033[K" + progress_line(done, todo, shown(result.job.display), terminal_width(self.err))
            )
            self.err.flush()
            self.bar_shown = True

    def file(self, result: FileResult) -> None:
        if not (self.keep or self.verbose or result.diagnostics or result.message):
            return  # nothing to say of it (most files of a compile)
        # kept for a format written at the end (on stdout, or in the --report file)
        if self.keep:
            self.files.append(result.job.display)
            self.findings.extend(findings_of(result.job.display, result.diagnostics))
        if self.keep and result.status == "failed" and result.message:
            self.findings.append(
                Finding(
                    result.job.display,
                    None,
                    None,
                    "error",
                    "INTERNAL_ERROR",
                    shown(result.message),
                    VALIDATE_TOOL,
                )
            )
        if self.verbose and result.status != "up to date":
            same = (
                " (same bytes: not rewritten)" if result.status == "compiled" and not result.written else ""
            )
            self._err(f"{result.status}: {shown(result.job.display)}{same}")
        if self.gather:
            return
        lines = self.lines_of(result.job.display, result.job.src, result.diagnostics)
        if result.status == "failed" and result.message:
            lines.append(self.style.diagnostic(f"Error: {shown(result.message)}"))
        if lines:
            self._clear()
            self.out.write("\n".join(lines) + "\n")
            # on a terminal at once; else (a pipe, a file, a CI log) at most every tenth of a second
            # and before anything on stderr: one write per file with diagnostics was ~800 system calls
            # in a compile of the corpus twice
            now = time.monotonic()
            if self.out_tty or now - self.flushed > FLUSH_EVERY:
                self.out.flush()
                self.flushed = now

    def lines_of(self, display: str, src: str, rows: list[DiagnosticRow]) -> list[str]:
        """Puppet's lines; on a terminal coloured, each with its source line and a caret."""
        pairs = _diag_rows(display, rows)
        if not self.out_tty:
            return [line for line, _row in pairs]
        from puppet_xpp.xpp.sources import read_text

        text = read_text(src, errors="replace")  # the one reading rule: a FIFO or device is not read
        source = [] if text is None else text.split("\n")
        width = terminal_width(self.out)
        out: list[str] = []
        for line, row in pairs:
            out.append(self.style.diagnostic(line))
            if not row.logged and row.line is not None and row.column is not None and row.line <= len(source):
                out.extend(caret_lines(source[row.line - 1], row.column, self.style, width))
        return out

    def removed(self, path: str) -> None:
        if self.verbose:
            self._err(f"removed: {shown(path)}")

    def waiting(self, env: Environment) -> None:
        self._err(f"{shown(_env_name(env))}: another compile of this environment is running; waiting for it")

    # other output
    def note(self, level: str, message: str) -> None:
        self._err(f"{level.capitalize()}: {shown(message)}")

    def summary(self, line: str) -> None:
        self._clear()
        self.out.flush()
        if not self.quiet:
            stream = self.err if self.gather else self.out
            stream.write(line + "\n")
            stream.flush()

    def _clear(self) -> None:
        if self.bar_shown:
            self.out.flush()
            self.err.write("\r\033[K")
            self.err.flush()
            self.bar_shown = False

    def _err(self, text: str) -> None:
        self._clear()
        self.out.flush()  # (the diagnostics written before it come first)
        self.err.write(text + "\n")
        self.err.flush()


def progress_line(done: int, todo: int, name: str, width: int) -> str:
    """``[#####.....] done/todo name``, never wider than ``width - 1`` columns: the bar shrinks on a
    narrow terminal and the file name is cut at the front (its end says most)."""
    room = max(width - 1, 1)
    count = f" {done}/{todo}"
    bar_width = max(5, min(30, (room - len(count)) // 3))
    fill = bar_width * done // todo if todo else bar_width
    head = f"[{'#' * fill}{'.' * (bar_width - fill)}]{count}"
    if len(head) >= room:
        return fit(f"{done}/{todo}", width)
    left = room - len(head) - 1
    if left >= 4:
        head += " " + fit(name, left + 1)
    return head


def _env_name(env: Environment) -> str:
    return env.root if env.display in (".", "./") else env.display


def _summary(r: EnvResult, deep: dict[str, FileDiagnostics] | None = None) -> str:
    """The summary line of an environment (with ``--deep``: how many deep findings its files have)."""
    found = "" if deep is None else f", deep findings {sum(len(x.deep) for x in deep.values())}"
    return (
        f"{shown(_env_name(r.env))}: compiled {r.count('compiled')}, up to date {r.count('up to date')}, "
        f"removed {len(r.removed)}, with errors {r.with_errors}{found} ({r.seconds:.2f} s)"
    )


def _rows_json(rows: list[DiagnosticRow]) -> list[dict[str, Any]]:
    return [
        {"severity": r.severity, "code": r.code, "message": r.message, "line": r.line, "column": r.column}
        for r in rows
    ]


def _env_report(
    r: EnvResult, deep: dict[str, FileDiagnostics] | None = None, files: bool = True
) -> dict[str, Any]:
    """An environment's part of the JSON report (with ``--deep``: each file's ``deep`` findings too;
    without ``files``, when no report is written: no entry per file)."""
    report = _env_files_report(r, files)
    if deep is not None:
        for f, entry in zip(r.files, report["files"]):
            result = deep.get(f.job.display)
            entry["deep"] = _deep_json(result) if result is not None else []
        report["counts"]["deep_errors"] = sum(
            1 for result in deep.values() for x in result.deep if x.severity == "error"
        )
    return report


def _env_files_report(r: EnvResult, files: bool = True) -> dict[str, Any]:
    env = r.env
    return {
        "environment": env.display,
        "root": env.root,
        "modulepath": list(env.modulepath),
        "manifest": env.manifest,
        "seconds": round(r.seconds, 3),
        "counts": {
            "files": len(r.files),
            "compiled": r.count("compiled"),
            "up_to_date": r.count("up to date"),
            "removed": len(r.removed),
            "with_errors": r.with_errors,
            "failed": r.failed,
        },
        "files": [
            {
                "source": f.job.display,
                "path": f.job.src,
                "xpp": f.job.out,
                "recorded": f.job.recorded,
                "module": f.job.module,
                "tasks": f.job.tasks,
                "status": f.status,
                "written": f.written,
                "errors": f.errors,
                "warnings": f.warnings,
                "message": f.message or None,
                "diagnostics": _rows_json(f.diagnostics),
            }
            for f in (r.files if files else [])
        ],
        "skipped": [{"path": p, "reason": why} for p, why in r.skipped],
        "removed": r.removed,
        "io_errors": r.io_errors,
    }


def _shown_all(v: Any) -> Any:
    """The report with every string made valid UTF-8 by the one file-name escaping rule."""
    if isinstance(v, str):
        return shown(v)
    if isinstance(v, dict):
        return {k: _shown_all(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_shown_all(x) for x in v]
    return v


# ------------------------------------------------------------------------------------------------------
# modes


def _compile_envs(a: argparse.Namespace, disp: Display) -> tuple[int, dict[str, Any]]:
    from puppet_xpp.xpp.compile import CompileError, Options, compile_environment, detect_environment

    fmode, dmode = parse_mode(a.mode)
    opts = Options(
        fmt=_encoding(a),
        force=a.force,
        jobs=a.jobs,
        file_mode=fmode,
        dir_mode=dmode,
        runtime_root=a.runtime_root,
        strict=a.strict,
        puppet_version=a.puppet_version,
        basemodulepath=a.basemodulepath,
        modulepath=a.modulepath,
        exclude=tuple(a.exclude),
        max_source_bytes=a.max_source_size,
        wait=not a.no_wait,
        debug=a.debug,
    )
    if a.runtime_root and not os.path.isabs(a.runtime_root):
        raise _UsageError("--runtime-root must be an absolute path")
    if a.jobs < 0:
        raise _UsageError("--jobs must be >= 0")
    status = 0
    reports: list[dict[str, Any]] = []
    t0 = time.monotonic()
    totals: dict[str, int | float] = {
        "compiled": 0,
        "up_to_date": 0,
        "removed": 0,
        "with_errors": 0,
        "failed": 0,
    }
    chosen: dict[str, Any] | None = None
    for envdir in a.paths or ["."]:
        try:
            # the project configuration (xpp.project) gives what the command line leaves unsaid
            env_opts = _with_project(opts, envdir)
            env_opts, chosen = _with_level(env_opts, disp)
            env = detect_environment(envdir, basemodulepath=a.basemodulepath, modulepath=env_opts.modulepath)
            for level, msg in env.notes:
                disp.note(level, f"{envdir}: {msg}")
            r = compile_environment(env, env_opts, disp)
        except CompileError as e:
            disp.note("error", str(e))
            reports.append({"environment": envdir, "error": str(e)})
            status = 2
            continue
        for path, why in r.skipped:
            disp.note("warning", f"{path}: {why}")
        for msg in r.io_errors:
            disp.note("error", msg)
        deep = None
        if a.deep:
            deep = deep_results(
                [(f.job.display, f.job.src, f.job.tasks) for f in r.files if f.status != "failed"],
                env_opts.puppet_version,
                env_opts.strict,
                list(env.modulepath),
                env.manifest,
                disp,
            )
        disp.summary(_summary(r, deep))
        rep = _env_report(r, deep, files=bool(a.report))
        reports.append(rep)
        for k in totals:
            totals[k] += rep["counts"][k]
        if r.io_errors or r.failed or _deep_failed(deep):
            status = 2
        elif (r.with_errors or _deep_errors(deep)) and status == 0:
            status = 1
    totals["seconds"] = round(time.monotonic() - t0, 3)
    report: dict[str, Any] = {"version": 1, "environments": reports, "summary": totals}
    if chosen is not None:
        report["puppet_version"] = chosen
    return status, report


_noted: set[str] = set()


def _with_level(opts: Any, disp: Display) -> tuple[Any, dict[str, Any]]:
    """``opts`` with the language level resolved: the one given (command line, project configuration),
    else the level of the ``puppet`` on PATH (:mod:`xpp.compile.installed`, asked once per process; a
    note on stderr when there is none and the default level is used), and how it was chosen (for the
    report)."""
    import dataclasses

    if opts.puppet_version not in (None, levels.AUTO):
        return opts, {"level": opts.puppet_version, "source": "given"}
    from puppet_xpp.xpp.compile.installed import detect

    found = detect()
    if found.note is not None and found.note not in _noted:
        _noted.add(found.note)
        disp.note("notice", f"--puppet-version auto: {found.note}")
    return dataclasses.replace(opts, puppet_version=found.level), found.report()


def _with_project(opts: Any, envdir: str) -> Any:
    """``opts`` with the project configuration's level, ``strict`` and module path where the command
    line gave none (:mod:`xpp.project`); CompileError when the configuration cannot be used."""
    import dataclasses

    from puppet_xpp.xpp.compile.model import CompileError
    from puppet_xpp.xpp.project import project_for

    project = project_for(envdir)
    if project.error is not None:
        raise CompileError(str(project.error))
    modulepath = opts.modulepath
    if modulepath is None and project.modulepath is not None:
        modulepath = os.pathsep.join(project.modulepath)
    return dataclasses.replace(
        opts,
        puppet_version=opts.puppet_version if opts.puppet_version is not None else project.level,
        strict=opts.strict if opts.strict is not None else project.strict,
        modulepath=modulepath,
    )


def _compile_one(a: argparse.Namespace, disp: Display) -> tuple[int, dict[str, Any]]:
    from puppet_xpp.xpp.compile import SourceRefused, compile_file
    from puppet_xpp.xpp.compile.writes import OutputRefused, write_output
    from puppet_xpp.xpp.environment import expand_modulepath, file_context, split_path
    from puppet_xpp.xpp.sources import format_traceback, internal_error

    if len(a.paths) != 1:
        raise _UsageError("-o needs exactly one FILE.pp")
    src: str = a.paths[0]
    if os.path.isdir(src):
        raise _UsageError(f"{src} is a directory (-o compiles one file)")
    fmode, _dmode = parse_mode(a.mode)
    given = None
    if a.modulepath is not None:
        given = expand_modulepath(split_path(a.modulepath), os.getcwd(), a.basemodulepath, [])
    # the file's environment, module path and plan rule, as for --validate, --dump and the language server
    ctx = file_context(os.path.abspath(src), tasks=a.tasks, modulepath=given, manifest=a.manifest)
    if ctx.project.error is not None:
        disp.note("error", str(ctx.project.error))
        return 2, {"version": 1, "file": shown(src), "error": str(ctx.project.error)}
    puppet_version, strict = ctx.level_and_strict(a.puppet_version, a.strict)
    if puppet_version in (None, levels.AUTO):
        from puppet_xpp.xpp.compile.installed import detect

        found = detect()
        if found.note is not None:
            disp.note("notice", f"--puppet-version auto: {found.note}")
        puppet_version = found.level
    t0 = time.monotonic()
    try:
        data, rows = compile_file(
            src,
            src,
            fmt=_encoding(a),
            tasks=ctx.tasks,
            strict=strict,
            puppet_version=puppet_version,
            modulepath=ctx.modulepath,
            manifest=ctx.manifest,
            max_bytes=a.max_source_size,
            namespace=ctx.namespace,
        )
    except SourceRefused as e:
        disp.note("error", str(e))
        return 2, {"version": 1, "file": shown(src), "error": str(e)}
    except OSError as e:
        disp.note("error", f"Could not read file '{src}': {e.strerror or e}")
        return 2, {"version": 1, "file": shown(src), "error": e.strerror or str(e)}
    except Exception as e:  # an internal failure is reported, never a traceback (unless --debug)
        if a.debug:
            disp.err.write(format_traceback(e))
        d = internal_error(e, src)
        disp.out.write(f"Error: {d.message} (file: {shown(src)})\n")
        return 2, {"version": 1, "file": shown(src), "error": d.message}
    disp.files.append(src)
    disp.findings.extend(findings_of(src, rows))
    lines = [] if disp.gather else disp.lines_of(src, src, rows)
    if lines:
        disp.out.write("\n".join(lines) + "\n")
        disp.out.flush()
    deep = None
    if a.deep:
        deep = deep_results(
            [(src, src, ctx.tasks)], puppet_version, strict, list(ctx.modulepath), ctx.manifest, disp
        )
    out_dir = os.path.dirname(a.output) or "."
    if a.output != "-" and not os.path.isdir(out_dir):
        disp.note("error", f"cannot write {a.output}: no such directory {out_dir}")
        return 2, {"version": 1, "file": src, "error": f"no such directory {out_dir}"}
    try:
        if a.output == "-":
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            write_output(a.output, data, mode=fmode, sources=(src,))
    except OutputRefused as e:
        disp.note("error", str(e))
        return 2, {"version": 1, "file": shown(src), "error": str(e)}
    except OSError as e:
        why = f"cannot write {a.output}: {e.strerror or e}"
        disp.note("error", why)
        return 2, {"version": 1, "file": shown(src), "error": why}
    errors = sum(1 for r in rows if r.severity == "error")
    rep = {
        "version": 1,
        "file": src,
        "xpp": a.output,
        "recorded": src,
        "errors": errors,
        "warnings": sum(1 for r in rows if r.severity in ("warning", "deprecation")),
        "diagnostics": _rows_json(rows),
        "seconds": round(time.monotonic() - t0, 3),
    }
    if deep is not None:
        result = deep.get(src)
        rep["deep"] = _deep_json(result) if result is not None else []
    return (2 if _deep_failed(deep) else 1 if errors or _deep_errors(deep) else 0), rep


# ------------------------------------------------------------------------------------------------------
# --deep


def deep_results(
    files: list[tuple[str, str, bool]],
    level: str | None,
    strict: str | None,
    modulepath: list[str],
    manifest: str | None,
    disp: Display,
) -> dict[str, FileDiagnostics]:
    """``--deep``: the deep findings of the manifests ``files`` ((display, path, tasks) each) of one
    environment (its module path and main manifest), by display name, as ``--validate --deep`` makes
    them (server/cli/validate.py: each file parsed once for its definitions, the deep checks run once
    every file of the run is in the worlds); shown as the run shows findings (printed after the
    environment's diagnostics, or kept for the format written at the end)."""
    from puppet_xpp.server.analysis.deep import DEEP_SOURCE
    from puppet_xpp.server.analysis.deep.worlds import WorldCache
    from puppet_xpp.server.cli.output import location
    from puppet_xpp.server.cli.validate import deep_check, deep_lines, deep_position, validate_file

    worlds = WorldCache(level)
    results: dict[str, FileDiagnostics] = {}
    for display, path, tasks in files:
        if not path.endswith(".pp"):
            continue
        results[display] = validate_file(
            path,
            strict=strict,
            tasks=tasks,
            modulepath=modulepath,
            manifest=manifest,
            puppet_version=level,
            worlds=worlds,
        )
    lines: list[str] = []
    for display, result in results.items():
        deep_check(display, result, worlds, disp.err if disp.debug else None)
        result.diagnostics = [d for d in result.diagnostics if d.code == "INTERNAL_ERROR"]
        for f in result.deep:
            line, column = deep_position(result, f)
            disp.findings.append(
                Finding(display, line, column, f.severity, f.code, shown(f.message), DEEP_SOURCE)
            )
        for d in result.diagnostics:  # (a bug of the deep checks: at its statement, else the file's)
            line, column = result.position(d)
            disp.findings.append(
                Finding(display, line, column, "error", d.code, shown(d.message), DEEP_SOURCE)
            )
            where = location(shown(display), line, column)
            lines.append(disp.style.diagnostic(f"Error: {shown(d.message)}{where}") + "\n")
        lines.extend(deep_lines(display, result, disp.style))
    if lines and not disp.gather:
        disp._clear()
        disp.out.writelines(lines)
        disp.out.flush()
    return results


def _deep_errors(deep: dict[str, FileDiagnostics] | None) -> bool:
    """A deep finding of severity error in ``deep``."""
    if not deep:
        return False
    return any(any(f.severity == "error" for f in result.deep) for result in deep.values())


def _deep_failed(deep: dict[str, FileDiagnostics] | None) -> bool:
    """A bug of the deep checks in ``deep`` (an ``INTERNAL_ERROR``: exit status 2, as any other)."""
    if not deep:
        return False
    return any(result.diagnostics for result in deep.values())


def _deep_json(result: FileDiagnostics) -> list[dict[str, Any]]:
    """A file's ``deep`` list in the JSON report: its findings, then the bugs of its deep checks
    (``INTERNAL_ERROR``, at the statement whose check failed)."""
    from puppet_xpp.server.analysis.deep import DEEP_SOURCE
    from puppet_xpp.server.cli.validate import deep_json

    failed = [
        {**d.to_json(result.locator), "message": shown(d.message), "source": DEEP_SOURCE}
        for d in result.diagnostics
    ]
    return [*deep_json(result), *failed]


def _encoding(a: argparse.Namespace) -> str:
    """The .xpp encoding: ``--format`` when it names one, else msgpack."""
    return "msgpack" if a.format in FORMATS else str(a.format)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``--compile`` with the options :func:`add_arguments` parsed: the exit status."""
    import gc

    from puppet_xpp.grammar.gcpause import GC_THRESHOLD

    # A compile imports the compiler, plans and reports, making tens of thousands of objects that live
    # until it ends and no cyclic garbage worth a collection: the default thresholds ran ~10 young
    # collections over them (5 ms of a cold compile's ~100 ms before its workers start).  The workers
    # run with the same thresholds (xpp.compile.work.run_jobs).
    threshold = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        status = _run(args, out, err)
    finally:
        gc.set_threshold(*threshold)
    if _is_the_command(out, err):
        _end_now(status, out, err)  # (returns only when something is left for main to report)
    return status


# The module run as the program when this process is the puppet-xpp command: ``python -m puppet_xpp``,
# ``python -m puppet_xpp.server.cli.compile`` (the console script's __main__ has no spec: see below)
_COMMAND_MODULES = ("puppet_xpp.__main__", "puppet_xpp.server.cli.compile")
_CONSOLE_SCRIPT = "puppet-xpp"


def _is_the_command(out: TextIO, err: TextIO) -> bool:
    """Whether this process is the ``puppet-xpp --compile`` command itself, writing to its own standard
    output and error -- not a program that calls :func:`run` or ``main`` (a test, an editor plugin), whose
    process must go on."""
    if getattr(out, "stream", out) is not sys.stdout or getattr(err, "stream", err) is not sys.stderr:
        return False
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None:
        return spec.name in _COMMAND_MODULES
    return os.path.basename(sys.argv[0]) == _CONSOLE_SCRIPT


def _end_now(status: int, out: TextIO, err: TextIO) -> None:
    """End the process with ``status`` once everything it wrote is out, without the interpreter's
    teardown.

    By then every file the compile wrote is closed (``.xpp`` files, state, report: temporary file and
    rename) and nothing is left to do but free memory: the interpreter's teardown of the compiling
    process (a full collection and the release of every module, the plan and the results) took ~20 ms
    of CPU, a tenth of what the compiling process spends (issue 31 item 5).  The atexit handlers still
    run (a coverage tool's, logging's).  Returns, leaving the end to ``main``, when a stream cannot be
    flushed (``main`` reports it and exits 2, or 0 for a closed pipe) or when a thread other than this
    one runs (the interpreter would wait for it)."""
    import atexit
    import threading

    if threading.active_count() != 1:
        return
    for stream in (out, err):
        try:
            stream.flush()
        except (OSError, ValueError):
            return
        if getattr(stream, "failure", None) is not None:  # (main's OutputGuard: a failed write)
            return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):  # (what an atexit handler wrote)
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    report_format = args.report_format or (args.format if args.format in FORMATS else "json")
    gather = args.format in FORMATS
    if gather and args.output == "-":
        err.write("puppet-xpp --compile: -o - writes the .xpp on stdout: no --format for diagnostics there\n")
        return 2
    keep = bool(args.report) and report_format in FORMATS  # findings written at the end
    disp = Display(out, err, args.quiet, args.verbose, gather=gather, debug=args.debug, keep=keep)
    try:
        if args.output is not None:
            status, report = _compile_one(args, disp)
        else:
            status, report = _compile_envs(args, disp)
    except _UsageError as e:
        err.write(f"puppet-xpp --compile: {e}\n")
        return 2
    if gather:
        writer(args.format)(disp.findings, disp.files, out)
        out.flush()
    if args.report:
        import io

        from puppet_xpp.xpp.compile.writes import write_output

        report["exit_code"] = status
        try:
            if report_format in FORMATS:
                buffer = io.StringIO()
                writer(report_format)(disp.findings, disp.files, buffer)
                text = buffer.getvalue()
            else:
                text = json.dumps(_shown_all(report), indent=1, ensure_ascii=False) + "\n"
            write_output(args.report, text.encode("utf-8"), sources=tuple(args.paths))
        except OSError as e:
            disp.note("error", f"cannot write {args.report}: {e.strerror or e}" if e.strerror else str(e))
            status = 2
    return status


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``--compile`` alone (the arguments after ``--compile``), with its own parser: for tests and
    ``python -m puppet_xpp.server.cli.compile``."""
    parser = argparse.ArgumentParser(prog="puppet-xpp --compile", description=DESCRIPTION)
    add_arguments(parser)
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    return run(args, out or sys.stdout, err or sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
