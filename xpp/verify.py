"""Well-formedness check of ``.xpp`` documents (``puppet-xpp --verify``).

:func:`verify_bytes` returns a list of problems (empty when the document is well formed):

* the envelope (PRFC-23 grammar, ``document-type=xpp``, ``version=1``);
* the payload: a valid Pcore stream holding an ``Xpp::ParseResult`` (or a bare ``Program``); every AST
  object has an attribute count within its type's bounds and attribute values of the declared Pcore types
  (both checked by the reader, :mod:`xpp.pcore`, which is driven by the AST table);
* the Locator: its ``line_index`` is the one its ``string`` gives (line starts after each LF);
* every positioned node refers to the Program's Locator and lies inside the source
  (``0 <= offset``, ``0 <= length``, ``offset + length <= byte size``); no node is contained twice;
* ``Program.definitions`` are nodes of the body (the same objects, as Puppet's reference attribute);
* diagnostics: known keys, a severity of ``error``/``warning``/``deprecation``, an issue code, a message,
  a file equal to the Locator's, offsets inside the source, and ``line``/``pos`` agreeing with the Locator.

:func:`verify_file` reads a file first.  Neither raises for bad input.
"""

from __future__ import annotations

from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.ast_base import line_starts
from puppet_xpp.xpp.sources import read_or_raise

__all__ = ["verify_bytes", "verify_file", "Summary"]

SEVERITIES = ("error", "warning", "deprecation")
MAX_PROBLEMS = 20


class Summary:
    """What a well-formed document holds (for the OK line)."""

    def __init__(self) -> None:
        self.fmt: str | None = None
        self.nodes = 0
        self.definitions = 0
        self.diagnostics = 0
        self.has_program = False
        self.file: str | None = None

    def __str__(self) -> str:
        if not self.has_program:
            what = "no program"
        else:
            what = f"program of {self.nodes} nodes, {self.definitions} definitions"
        return f"{self.fmt}, {what}, {self.diagnostics} diagnostics"


def verify_file(path: str, summary: Summary | None = None) -> list[str]:
    try:
        data = read_or_raise(path)
    except OSError as e:
        return [f"cannot read: {e.strerror or e}"]
    return verify_bytes(data, summary)


def verify_bytes(data: bytes, summary: Summary | None = None) -> list[str]:
    from puppet_xpp.xpp.envelope import unwrap
    from puppet_xpp.xpp.pcore import XppFormatError
    from puppet_xpp.xpp.result import read_payload

    summary = summary if summary is not None else Summary()
    try:
        fmt, _params, payload = unwrap(data)
    except XppFormatError as e:
        return [f"envelope: {e}"]
    summary.fmt = fmt
    try:
        program, records = read_payload(payload, fmt)
    except XppFormatError as e:
        return [f"payload: {e}"]
    except RecursionError:  # pragma: no cover - the reader is iterative
        return ["payload: nested too deeply"]
    problems: list[str] = []
    loc = None
    if program is not None:
        summary.has_program = True
        loc = program.locator
        _check_program(program, problems, summary)
    summary.diagnostics = len(records)
    _check_diagnostics(records, loc, problems)
    if len(problems) > MAX_PROBLEMS:
        n = len(problems) - MAX_PROBLEMS
        problems = problems[:MAX_PROBLEMS] + [f"... and {n} more problems"]
    return problems


def _where(node: ast.Positioned, loc: ast.Locator, size: int) -> str:
    try:
        if 0 <= node.offset <= size:
            return f"{node._name} at line {loc.line_for_offset(node.offset)} (offset {node.offset})"
    except Exception:
        pass
    return f"{node._name} (offset {node.offset})"


def _check_program(program: ast.Program, problems: list[str], summary: Summary) -> None:
    loc = program.locator
    summary.file = loc.file
    data = loc.string.encode("utf-8", "surrogateescape")
    size = len(data)
    expect = line_starts(data)
    got = loc.line_index or []  # never None once read (the reader computes a missing index)
    if got != expect:
        first = next(
            (i for i, (a, b) in enumerate(zip(got, expect)) if a != b),
            min(len(got), len(expect)),
        )
        problems.append(
            f"Locator.line_index is inconsistent with the source text ({len(got)} "
            f"entries, the text has {len(expect)} lines; first difference at entry {first})"
        )
    seen: set[int] = set()
    stack: list[ast.Positioned] = [program.body] if program.body is not None else []
    nodes = 0
    while stack:
        n = stack.pop()
        if id(n) in seen:
            problems.append(f"{_where(n, loc, size)} is contained twice in the tree")
            continue
        seen.add(id(n))
        nodes += 1
        if n.locator is not loc:
            if n.locator != loc:
                problems.append(f"{_where(n, loc, size)} refers to another Locator (file {n.locator.file!r})")
        off, ln = n.offset, n.length
        if off < 0 or ln < 0 or off + ln > size:
            problems.append(f"{n._name} position {off}+{ln} is outside the source ({size} bytes)")
        for f in n._child_fields:
            v = getattr(n, f)
            if isinstance(v, list):
                stack.extend(reversed(v))
            elif v is not None:
                stack.append(v)
    summary.nodes = nodes
    summary.definitions = len(program.definitions)
    for k, d in enumerate(program.definitions):
        if id(d) not in seen:
            problems.append(
                f"Program.definitions[{k}] ({d._name} {getattr(d, 'name', '')!s}) is not a node of the body"
            )


_KEYS = frozenset(
    ("severity", "issue_code", "message", "arguments", "file", "offset", "length", "line", "pos")
)


def _check_diagnostics(records: list[dict[str, Any]], loc: ast.Locator | None, problems: list[str]) -> None:
    size = len(loc.string.encode("utf-8", "surrogateescape")) if loc is not None else None
    seen: set[int] = set()  # the reader admits no shared records; checked anyway, in one pass
    for k, r in enumerate(records):
        what = f"diagnostic {k}"
        if id(r) in seen:
            problems.append(f"{what} is the same object as an earlier diagnostic")
            continue
        seen.add(id(r))
        extra = set(r) - _KEYS
        if extra:
            problems.append(f"{what}: unknown keys {sorted(extra)}")
        sev = r.get("severity")
        if sev not in SEVERITIES:
            problems.append(f"{what}: severity {sev!r} is not one of {', '.join(SEVERITIES)}")
        code = r.get("issue_code")
        if type(code) is not str or not code:
            problems.append(f"{what}: issue_code must be a non-empty string")
        if type(r.get("message")) is not str:
            problems.append(f"{what}: message must be a string")
        if "arguments" in r and type(r["arguments"]) is not dict:
            problems.append(f"{what}: arguments must be a hash")
        file = r.get("file")
        if file is not None and type(file) is not str:
            problems.append(f"{what}: file must be a string")
        elif loc is not None and file not in (None, loc.file):
            problems.append(f"{what}: file {file!r} is not the Locator's file {loc.file!r}")
        ints = {}
        for key in ("offset", "length", "line", "pos"):
            v = r.get(key)
            if v is not None and (type(v) is not int or v < 0):
                problems.append(f"{what}: {key} must be a non-negative integer or undef")
                v = None
            ints[key] = v
        off, ln = ints["offset"], ints["length"] or 0
        if off is not None and size is not None and loc is not None:
            if off + ln > size:
                problems.append(f"{what}: position {off}+{ln} is outside the source ({size} bytes)")
            elif ints["line"] is not None:
                line, pos = loc.line_for_offset(off), loc.pos_on_line(off)
                if (ints["line"], ints["pos"]) != (line, pos):
                    problems.append(
                        f"{what}: line/pos {ints['line']}:{ints['pos']} do not match offset {off} "
                        f"({line}:{pos})"
                    )
