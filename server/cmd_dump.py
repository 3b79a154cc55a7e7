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

from puppet_xpp.grammar import pn
from puppet_xpp.grammar.parser import parse
from puppet_xpp.xpp import XppFormatError


def _args(argv):
    ap = argparse.ArgumentParser(
        prog="puppet-xpp --dump", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("--format", choices=("json", "pn", "jsonl", "tree"), default="json")
    ap.add_argument("--pretty", action="store_true", help="indent pn/json output")
    ap.add_argument("--tasks", action="store_true", help="parse in tasks mode (plan/apply keywords)")
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
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    res = parse(text, path, tasks=tasks)
    return res.program, res.diagnostics, res.locator


def tree_lines(node, locator, depth=0, out=None, label=""):
    from puppet_xpp.grammar import ast as A

    out = [] if out is None else out
    pad = "  " * depth
    if isinstance(node, A.Node) and node._name != "Program":
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
    a = _args(argv)
    out = sys.stdout
    status = 0
    chunks = []
    for path in a.files:
        try:
            program, diags, locator = load(path, a.tasks)
        except OSError as e:
            print(f"Error: {path}: {e.strerror}", file=sys.stderr)
            status = 2
            continue
        except XppFormatError as e:
            print(f"Error: {path}: not a readable .xpp file: {e}", file=sys.stderr)
            status = 2
            continue
        errors = [d for d in diags if d.severity == "error"]
        if errors:
            status = max(status, 1)
        if a.format == "jsonl":
            data = pn.to_data(pn.transform(program)) if program is not None else None
            rec = {"file": path, "pn": data, "diagnostics": [d.to_json(locator) for d in diags]}
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            continue
        for d in diags:
            line, col = d.line_col(locator)
            where = f" (file: {path}, line: {line}, column: {col})" if line else f" (file: {path})"
            print(f"{d.severity.capitalize()}: {d.message}{where}", file=sys.stderr)
        if program is None or (errors and not path.endswith(".xpp")):
            continue  # like `puppet parser dump`: nothing on stdout for a source with errors
        if a.format == "json":
            data = pn.to_data(pn.transform(program))
            chunks.append(json.dumps(data, indent=2, ensure_ascii=False) if a.pretty else pn.to_json(data))
        elif a.format == "pn":
            head = f"--- {path}"
            chunks.append(head + pn.to_text(pn.transform(program), a.pretty))
        else:
            chunks.append("\n".join(tree_lines(program, locator)) + "\n")
    if a.format != "jsonl" and chunks:
        out.write("".join(chunks) + ("\n" if a.format != "tree" else ""))
    return status
