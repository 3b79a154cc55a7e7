"""`puppet-xpp --dump`: print the parse result of `.pp`/`.epp` files (or `.xpp` files) in readable form.

Formats:
  json   what `puppet parser dump --format json FILE` prints (PN as JSON data)
  pn     what `puppet parser dump --format pn FILE` prints (with Puppet's `--- FILE` header)
  jsonl  one JSON line per file: {"file", "pn", "diagnostics": [...]}
  tree   an indented tree of AST nodes with their positions (line:column, byte offset+length)
"""

from __future__ import annotations

import argparse
import json
import sys

from puppet_xpp.grammar import levels, pn
from puppet_xpp.grammar.parser import parse
from puppet_xpp.xpp import XppFormatError


def _args(argv):
    ap = argparse.ArgumentParser(
        prog="puppet-xpp --dump", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("--format", choices=("json", "pn", "jsonl", "tree"), default="json")
    ap.add_argument("--pretty", action="store_true", help="indent pn/json output")
    ap.add_argument(
        "--tasks",
        action="store_true",
        help="parse in tasks mode (plan/apply keywords); files in a module's plans/ always are",
    )
    # parsing (and so the dump) is the same at every language level; accepted like the other commands
    levels.add_cli_arguments(ap, strict=False)
    ap.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    return ap.parse_args(argv)


def load(path: str, tasks: bool):
    """(program, diagnostics, locator) of a source file or of an .xpp file."""
    if path.endswith(".xpp"):
        from puppet_xpp.grammar.ast import make_locator
        from puppet_xpp.grammar.validator_syntax import LoggedDiagnostic
        from puppet_xpp.xpp.result import read_xpp

        with open(path, "rb") as f:
            program, records = read_xpp(f.read())
        locator = program.locator if program is not None else make_locator("", path)
        diags = [
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
        return program, diags, locator
    from puppet_xpp.grammar.ast import make_locator
    from puppet_xpp.xpp.sources import read_source

    src = read_source(path)
    if src.diagnostic is not None or src.text is None:
        return None, [src.diagnostic], make_locator("", path)
    from puppet_xpp.xpp.environment import file_context

    # the plan rule shared with --validate, --compile and the language server (xpp.environment)
    res = parse(src.text, path, tasks=file_context(path, tasks=tasks).tasks)
    return res.program, res.diagnostics, res.locator


def tree_lines(node, locator, depth=0, out=None, label=""):
    from puppet_xpp.grammar import ast as A

    out = [] if out is None else out
    pad = "  " * depth
    # the tree holds the Program and Positioned nodes only (Program is not Positioned)
    if isinstance(node, A.Positioned):
        line, col = locator.line_for_offset(node.offset), locator.pos_on_line(node.offset)
        scal = [
            f"{f}={getattr(node, f)!r}"
            for f in node._wire
            if f not in ("locator", "offset", "length") and f not in node._child_fields
        ]
        out.append(
            f"{pad}{label}{node._name} @{line}:{col} [{node.offset}+{node.length}] {' '.join(scal)}".rstrip()
        )
    else:
        out.append(f"{pad}{label}Program file={locator.file!r}")
    for f in node._child_fields:
        v = getattr(node, f)
        if isinstance(v, list):
            for x in v:
                tree_lines(x, locator, depth + 1, out, f + ": ")
        elif v is not None:
            tree_lines(v, locator, depth + 1, out, f + ": ")
    return out


def main(argv) -> int:
    """Exit status: 0, 1 when a source has errors, 2 when a file could not be handled (missing,
    unreadable, not a regular file, too large, not a readable .xpp, or an internal error: reported for
    that file as INTERNAL_ERROR, traceback with --debug).  Output is written file by file, so a failure
    on one file never loses what was printed for the others."""
    from puppet_xpp.server.cli.validate import FAILURE_CODES
    from puppet_xpp.xpp.sources import format_traceback, internal_error, shown

    a = _args(argv)
    out = sys.stdout
    status = 0
    wrote = False
    for path in a.files:
        name = shown(path)
        try:
            program, diags, locator = load(path, a.tasks)
            chunk = _render(a, name, program, diags, locator)
        except OSError as e:
            print(f"Error: {name}: {e.strerror}", file=sys.stderr)
            status = 2
            continue
        except XppFormatError as e:
            print(f"Error: {name}: not a readable .xpp file: {e}", file=sys.stderr)
            status = 2
            continue
        except Exception as e:  # one file's failure never costs another's result
            if a.debug:
                sys.stderr.write(format_traceback(e))
            diags, program, chunk = [internal_error(e, path)], None, None
            if a.format == "jsonl":
                chunk = json.dumps({"file": name, "pn": None, "diagnostics": [_plain(diags[0])]}) + "\n"
            else:
                print(f"Error: {diags[0].message} (file: {name})", file=sys.stderr)
        if any(d.code in FAILURE_CODES for d in diags):
            status = 2
        elif any(d.severity == "error" for d in diags):
            status = max(status, 1)
        if chunk:
            out.write(chunk)
            out.flush()
            wrote = a.format != "jsonl"
    if wrote and a.format != "tree":
        out.write("\n")
    return status


def _plain(d) -> dict:
    return {"severity": d.severity, "code": d.code, "message": d.message, "line": None, "column": None}


def _render(a, path: str, program, diags, locator) -> str | None:
    """What --dump prints for one file on stdout (diagnostics go to stderr here)."""
    from puppet_xpp.xpp.sources import shown

    errors = [d for d in diags if d.severity == "error"]
    if a.format == "jsonl":
        data = pn.to_data(pn.transform(program)) if program is not None else None
        rec = {"file": path, "pn": data, "diagnostics": [d.to_json(locator) for d in diags]}
        return json.dumps(rec, ensure_ascii=False) + "\n"
    for d in diags:
        line, col = d.line_col(locator)
        where = f" (file: {path}, line: {line}, column: {col})" if line else f" (file: {path})"
        print(f"{d.severity.capitalize()}: {shown(d.message)}{where}", file=sys.stderr)
    if program is None or (errors and not path.endswith(".xpp")):
        return None  # like `puppet parser dump`: nothing on stdout for a source with errors
    if a.format == "json":
        data = pn.to_data(pn.transform(program))
        return json.dumps(data, indent=2, ensure_ascii=False) if a.pretty else pn.to_json(data)
    if a.format == "pn":
        return f"--- {path}" + pn.to_text(pn.transform(program), a.pretty)
    return "\n".join(tree_lines(program, locator)) + "\n"
