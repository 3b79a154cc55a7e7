"""`puppet-xpp --dump`: print the parse result of `.pp`/`.epp` files (or `.xpp` files) in readable form.

Formats:
  json   what `puppet parser dump --format json FILE` prints (PN as JSON data)
  pn     what `puppet parser dump --format pn FILE` prints (with Puppet's `--- FILE` header)
  jsonl  one JSON line per file: {"file", "pn", "diagnostics": [...]}
  tree   an indented tree of AST nodes with their positions (line:column, byte offset+length)

FILE ``-`` reads standard input; ``--stdin-filename PATH`` names the file it stands for (its plan rule,
the name in the dump and in diagnostics).

Exit status: 0, 1 when a source has errors, 2 when a file could not be handled (missing, unreadable, not a
regular file, too large, not a readable .xpp, or an internal error: reported for that file as
INTERNAL_ERROR, traceback with --debug).  Output is written file by file, so a failure on one file never
loses what was printed for the others.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Sequence
from typing import Any, TextIO, cast

from puppet_xpp.grammar import ast, levels, pn
from puppet_xpp.grammar.ast_table import TypeInfo, describe
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.server.cli.output import FAILURE_CODES, location
from puppet_xpp.server.cli.stdin import STDIN, STDIN_DISPLAY, read_stdin
from puppet_xpp.xpp import XppFormatError
from puppet_xpp.xpp.sources import Source, read_or_raise

__all__ = ["add_arguments", "load", "main", "run", "tree_lines"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("dump", (__doc__ or "").split("\n\nExit status")[0])
    group.add_argument("files", nargs="+", metavar="FILE")
    group.add_argument("--format", choices=("json", "pn", "jsonl", "tree"), default="json")
    group.add_argument("--pretty", action="store_true", help="indent pn/json output")
    group.add_argument(
        "--tasks",
        action="store_true",
        help="parse in tasks mode (plan/apply keywords); files in a module's plans/ always are",
    )
    # parsing (and so the dump) is the same at every language level; accepted like the other commands
    levels.add_cli_arguments(group, strict=False)
    group.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    group.add_argument(
        "--stdin-filename",
        metavar="PATH",
        default=None,
        help="with FILE '-': the file the standard input stands for (plan rule, names in the output)",
    )


def load(
    path: str, tasks: bool, source: Source | None = None
) -> tuple[ast.Program | None, list[Diagnostic], ast.Locator]:
    """(program or None, diagnostics, locator) of a source file or of an .xpp file; ``source``: the
    source as read already (standard input), standing for ``path``."""
    if path.endswith(".xpp") and source is None:
        from puppet_xpp.grammar.validator.syntax import LoggedDiagnostic
        from puppet_xpp.xpp.result import read_xpp

        program, records = read_xpp(read_or_raise(path))
        locator = program.locator if program is not None else ast.make_locator("", path)
        diagnostics: list[Diagnostic] = [
            LoggedDiagnostic(
                r.get("issue_code") or "",
                r.get("message") or "",
                r.get("offset"),
                r.get("length") or 0,
                r.get("severity") or "error",
                dict(r.get("arguments") or {}),
                r.get("file") or "",
                r.get("line"),
                r.get("pos"),
            )
            for r in records
        ]
        return program, diagnostics, locator
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.xpp.environment import file_context
    from puppet_xpp.xpp.sources import read_source

    src = read_source(path) if source is None else source
    if src.diagnostic is not None or src.text is None:
        assert src.diagnostic is not None
        return None, [src.diagnostic], ast.make_locator("", path)
    # the plan rule shared with --validate, --compile and the language server (xpp.environment); a dump
    # is the parse alone (no validation), as `puppet parser dump` prints it
    res = parse(src.text, path, tasks=file_context(path, tasks=tasks).tasks)
    # the parser's result is typed loosely (object): its program is a Program, its locator a Locator
    return cast(ast.Program | None, res.program), res.diagnostics, cast(ast.Locator, res.locator)


@functools.cache
def _types() -> dict[str, TypeInfo]:
    return describe()


def tree_lines(
    node: ast.Node, locator: ast.Locator, depth: int = 0, out: list[str] | None = None, label: str = ""
) -> list[str]:
    """The ``tree`` format: one line per node (the Program, then Positioned nodes in containment order)
    with its position and scalar attributes."""
    out = [] if out is None else out
    pad = "  " * depth
    info = _types()[type(node).__name__]
    if isinstance(node, ast.Positioned):
        line, column = locator.line_for_offset(node.offset), locator.pos_on_line(node.offset)
        scalars = [
            f"{f}={getattr(node, f)!r}"
            for f in info.wire
            if f not in ("locator", "offset", "length") and f not in info.child_fields
        ]
        head = f"{pad}{label}{info.name} @{line}:{column} [{node.offset}+{node.length}] {' '.join(scalars)}"
        out.append(head.rstrip())
    else:  # the Program (not Positioned)
        out.append(f"{pad}{label}Program file={locator.file!r}")
    for f in info.child_fields:
        value = getattr(node, f)
        if isinstance(value, list):
            for child in value:
                tree_lines(child, locator, depth + 1, out, f + ": ")
        elif value is not None:
            tree_lines(value, locator, depth + 1, out, f + ": ")
    return out


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from puppet_xpp.xpp.sources import format_traceback, internal_error, shown

    status = 0
    wrote = False
    if args.files.count(STDIN) > 1:
        err.write("puppet-xpp --dump: standard input ('-') can be read once\n")
        return 2
    for given in args.files:
        path, source = given, None
        if given == STDIN:
            path = args.stdin_filename or STDIN_DISPLAY
            source = read_stdin(path)
        name = shown(path)
        try:
            program, diagnostics, locator = load(path, args.tasks, source)
            chunk = _render(args, name, program, diagnostics, locator, err)
        except OSError as e:
            err.write(f"Error: {name}: {e.strerror}\n")
            status = 2
            continue
        except XppFormatError as e:
            err.write(f"Error: {name}: not a readable .xpp file: {e}\n")
            status = 2
            continue
        except Exception as e:  # one file's failure never costs another's result
            if args.debug:
                err.write(format_traceback(e))
            failure = internal_error(e, path)
            diagnostics, chunk = [failure], None
            if args.format == "jsonl":
                record = {"file": name, "pn": None, "diagnostics": [_without_position(failure)]}
                chunk = json.dumps(record) + "\n"
            else:
                err.write(f"Error: {failure.message} (file: {name})\n")
        if any(d.code in FAILURE_CODES for d in diagnostics):
            status = 2
        elif any(d.severity == "error" for d in diagnostics):
            status = max(status, 1)
        if chunk:
            out.write(chunk)
            out.flush()
            wrote = args.format != "jsonl"
    if wrote and args.format != "tree":
        out.write("\n")
    return status


def _without_position(d: Diagnostic) -> dict[str, Any]:
    return {"severity": d.severity, "code": d.code, "message": d.message, "line": None, "column": None}


def _render(
    args: argparse.Namespace,
    path: str,
    program: ast.Program | None,
    diagnostics: list[Diagnostic],
    locator: ast.Locator,
    err: TextIO,
) -> str | None:
    """What --dump prints for one file on ``out`` (its diagnostics go to ``err`` here)."""
    from puppet_xpp.xpp.sources import shown

    if args.format == "jsonl":
        # the PN by pn.to_json (Ruby's notation, integers of any length); the rest by json.dumps
        data = pn.to_json(pn.to_data(pn.transform(program))) if program is not None else "null"
        found = json.dumps([d.to_json(locator) for d in diagnostics], ensure_ascii=False)
        return f'{{"file": {json.dumps(path, ensure_ascii=False)}, "pn": {data}, "diagnostics": {found}}}\n'
    for d in diagnostics:
        line, column = d.line_col(locator)
        err.write(f"{d.severity.capitalize()}: {shown(d.message)}{location(path, line, column)}\n")
    errors = any(d.severity == "error" for d in diagnostics)
    if program is None or (errors and not path.endswith(".xpp")):
        return None  # like `puppet parser dump`: nothing on stdout for a source with errors
    if args.format == "json":
        data = pn.to_data(pn.transform(program))
        return pn.to_json(data, pretty=args.pretty)
    if args.format == "pn":
        return f"--- {path}" + pn.to_text(pn.transform(program), args.pretty)
    return "\n".join(tree_lines(program, locator)) + "\n"


def main(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``puppet-xpp --dump ARGV...`` for a caller holding an argument list (tests, scripts)."""
    from puppet_xpp.server import cli

    return cli.main(["--dump", *argv], out, err)
