"""Quick fixes for the parser's, the validator's and the deep checks' findings (no pygls here), offered only where the fix is
unambiguous and proven: each candidate text is parsed (and validated) again, and a fix is offered only
when that gets past the finding.

* ``SYNTAX_ERROR`` at a token that follows a complete value: a missing ``,`` (between attributes, hash
  entries, array elements, arguments or parameters) or a missing ``;`` (between resource bodies). Both
  are tried; the one that lets the parse get further wins; when neither or both get past the token,
  nothing is offered.
* ``PARSE_QUOTED_NAME`` (``class 'foo' {}``): the name without its quotes.
* ``RESERVED_WORD`` (Puppet: "must be quoted if intended to be a String value"): the word quoted.

Not offered, and why: a trailing ``,`` in a parameter list is accepted by Puppet 7.23 and OpenVox 8
(nothing to fix); a quoted ``'true'`` given to a Boolean parameter is not a static finding of Puppet
(puppet-lint's ``quoted_booleans`` check and its fix cover quoted booleans).

The deep checks' findings (server/analysis/deep) have theirs too: did-you-mean and a missing
parameter added (:func:`deep_fixes`, below).

Offsets are UTF-8 byte offsets into the analysed text, as the diagnostics' are.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.ast_base import walk as ast_walk
from puppet_xpp.grammar.check import CheckConfig, check
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.parser import parse
from puppet_xpp.server.analysis.document import Analysis
from puppet_xpp.server.analysis.symbols import Sym

if TYPE_CHECKING:  # (the deep checks' analysis is imported by their first check, not with lint's fixes)
    from puppet_xpp.server.analysis.deep.finding import Finding
    from puppet_xpp.server.analysis.deep.world import Answers

ByteEdit = tuple[int, int, str]  # (start, end, new text) in bytes of the analysed text
FIXABLE = ("SYNTAX_ERROR", "PARSE_QUOTED_NAME", "RESERVED_WORD")
_NAME = re.compile(r"\A(?:::)?[a-z][a-z0-9_]*(?:::[a-z][a-z0-9_]*)*\Z")
_SEPARATORS = ((",", "Insert missing ','"), (";", "Insert missing ';'"))


@dataclass
class Fix:
    title: str
    edit: ByteEdit
    diagnostic: Diagnostic  # the finding it fixes


def _first_error(data: bytes, config: CheckConfig, validate: bool, after: int) -> int | None:
    """Byte offset of the first error at or after ``after`` of a full parse (and validation) of
    ``data``; None: none there (errors before it are the text's own, which the edit cannot change)."""
    text = data.decode("utf-8", "surrogateescape")
    if validate:
        diags = check(text, config).diagnostics
    else:
        diags = parse(text, config.file, epp=config.epp, tasks=config.tasks).diagnostics
    offs = [d.offset for d in diags if d.severity == "error" and d.offset is not None and d.offset >= after]
    return min(offs) if offs else None


def _reach(data: bytes, config: CheckConfig, edit: ByteEdit, validate: bool) -> float:
    """How far (in the original text's offsets) a parse of the edited text gets before an error."""
    a, b, new = edit
    nd = data[:a] + new.encode() + data[b:]
    err = _first_error(nd, config, validate, a)
    if err is None:
        return float("inf")
    shift = len(new.encode()) - (b - a)
    return err - shift if err >= a + len(new.encode()) else err


def _missing_separator(data: bytes, tokens: list[Any], config: CheckConfig, d: Diagnostic) -> Fix | None:
    off = d.offset or 0
    i = bisect.bisect_left(tokens, off, key=lambda t: t.start_pos)
    if i == 0 or i >= len(tokens) or tokens[i].start_pos != off:
        return None
    prev = tokens[i - 1]
    if prev.type in ("COMMA", "SEMIC", "LBRACE", "LBRACK", "LISTSTART", "LPAREN", "WSLPAREN", "COLON"):
        return None
    past = tokens[i].end_pos
    reach = {sep: _reach(data, config, (prev.end_pos, prev.end_pos, sep), False) for sep, _ in _SEPARATORS}
    best = max(reach.values())
    winners = [(sep, title) for sep, title in _SEPARATORS if reach[sep] == best]
    if best <= past or len(winners) != 1:
        return None
    sep, title = winners[0]
    return Fix(title, (prev.end_pos, prev.end_pos, sep), d)


def _unquote_name(data: bytes, config: CheckConfig, d: Diagnostic) -> Fix | None:
    off, n = d.offset or 0, d.length or 0
    raw = data[off : off + n].decode("utf-8", "surrogateescape")
    if len(raw) < 2 or raw[0] not in "'\"" or raw[-1] != raw[0] or not _NAME.match(raw[1:-1]):
        return None
    edit = (off, off + n, raw[1:-1])
    if _reach(data, config, edit, True) <= off + n:
        return None
    return Fix(f"Remove the quotes: {raw[1:-1]}", edit, d)


def _quote_word(data: bytes, config: CheckConfig, d: Diagnostic) -> Fix | None:
    off, n = d.offset or 0, d.length or 0
    word = data[off : off + n].decode("utf-8", "surrogateescape")
    if not word.isidentifier():
        return None
    edit = (off, off + n, f"'{word}'")
    if _reach(data, config, edit, True) <= off + n:
        return None
    return Fix(f"Quote the reserved word: '{word}'", edit, d)


def quick_fixes(an: Analysis, config: CheckConfig, start: int, end: int) -> list[Fix]:
    """Fixes for the analysis' diagnostics that touch bytes ``start``..``end`` (a code action's range)."""
    out = []
    for d in an.diagnostics:
        if d.code not in FIXABLE or d.offset is None or d.severity != "error":
            continue
        if d.offset > end or d.offset + max(d.length or 0, 1) < start:
            continue
        fix = None
        if d.code == "SYNTAX_ERROR":
            fix = _missing_separator(an.data, an.tokens, config, d)
        elif d.code == "PARSE_QUOTED_NAME":
            fix = _unquote_name(an.data, config, d)
        elif d.code == "RESERVED_WORD":
            fix = _quote_word(an.data, config, d)
        if fix is not None:
            out.append(fix)
    return out


# ----------------------------------------------------------------------------------------------- deep findings
#
# Quick fixes for the deep checks' findings (server/analysis/deep: a Finding's ``data``):
#
# * did-you-mean, for a class, resource type or function name that exists nowhere and a parameter a
#   class, define or resource type does not have: the name replaced by each suggestion (the names that
#   exist within a small edit distance, closest first: the finding's ``suggestions``); a parameter's
#   arrows realigned when its length changes, as puppet-lint's arrow_alignment wants them;
# * a missing required parameter: an attribute ``name => <placeholder>,`` added to the resource body,
#   indented as its attributes are, arrows aligned.  The placeholder is a value of the parameter's type
#   (so the fix does not trade the missing value for a wrong-type finding) that reads as a TODO: the
#   string 'TODO' where the type takes it, else the first value of an Enum, 0, false, [] or {} followed
#   by a ``# TODO`` comment on a line of its own.

_PLACEHOLDERS = ("'TODO'", "0", "false", "[]", "{}")
_RANGE_LOW = re.compile(r"\A\s*(?:Integer|Float|Numeric)\s*\[\s*(-?[0-9][0-9.]*)")
_ENUM_FIRST = re.compile(r"\A\s*Enum\s*\[\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[a-z][a-z0-9_]*)")


@dataclass
class DeepFix:
    title: str
    edits: list[ByteEdit]  # (start, end, new text), in order, not overlapping
    finding: Finding  # the finding it fixes


def deep_fixes(
    an: Analysis, findings: list[Finding], start: int, end: int, answers: Answers
) -> list[DeepFix]:
    """Fixes for the deep ``findings`` of the analysis that touch bytes ``start``..``end`` (a code
    action's range); ``answers``: the world the findings came from (the missing parameters' types)."""
    out: list[DeepFix] = []
    for f in findings:
        if f.offset > end or f.offset + max(f.length, 1) < start:
            continue
        try:
            if f.code in ("DEEP_UNKNOWN_CLASS", "DEEP_UNKNOWN_RESOURCE_TYPE", "DEEP_UNKNOWN_FUNCTION"):
                out.extend(_rename_name(an, f))
            elif f.code in ("DEEP_UNKNOWN_PARAMETER", "DEEP_UNKNOWN_ATTRIBUTE"):
                out.extend(_rename_parameter(an, f))
            elif f.code == "DEEP_MISSING_PARAMETER":
                fix = _add_parameter(an, f, answers)
                if fix is not None:
                    out.append(fix)
        except Exception:  # a fix that cannot be made is not offered (never cost the other actions)
            continue
    return out


def _suggested(f: Finding) -> list[str]:
    near = f.data.get("suggestions")
    return [s for s in near if isinstance(s, str) and s] if isinstance(near, list) else []


def _rename_name(an: Analysis, f: Finding) -> list[DeepFix]:
    """A misspelt class, type or function name: its first occurrence as a whole name in the finding's
    extent (after a leading ``::``, in any case, inside quotes or not) replaced by each suggestion, in
    the case it was written in (a resource type ``Foo::Bar`` stays capitalised)."""
    name = f.data.get("name")
    near = _suggested(f)
    if not isinstance(name, str) or not near:
        return []
    bare = name.lstrip(":")
    pattern = re.compile(
        rb"(?<![A-Za-z0-9_:])(?:::)?(" + re.escape(bare.encode()) + rb")(?![A-Za-z0-9_]|::[A-Za-z])", re.I
    )
    m = pattern.search(an.data, f.offset, f.offset + max(f.length, len(bare)))
    if m is None:
        return []
    written = m.group(1).decode("utf-8", "surrogateescape")
    out = []
    for s in near:
        new = _cased_like(s, written)
        out.append(DeepFix(f"Did you mean '{new}'?", [(m.start(1), m.end(1), new)], f))
    return out


def _cased_like(name: str, written: str) -> str:
    """``name`` in the case ``written`` uses: each segment capitalised when the written one's first is."""
    if written[:1].isupper():
        return "::".join(seg[:1].upper() + seg[1:] for seg in name.split("::"))
    return name


def _resource_at(an: Analysis, offset: int) -> ast.ResourceExpression | None:
    for node in reversed(an.node_locator.path(offset)):
        if type(node) is ast.ResourceExpression and node.offset == offset:
            return node
    program = an.program
    if program is None:
        return None
    for each in ast_walk(program):
        if type(each) is ast.ResourceExpression and each.offset == offset:
            return each
    return None


def _rename_parameter(an: Analysis, f: Finding) -> list[DeepFix]:
    """A parameter the resource does not have: its name replaced by each suggestion (arrows realigned)."""
    param, at = f.data.get("param"), f.data.get("offset")
    near = _suggested(f)
    if not isinstance(param, str) or not isinstance(at, int) or not near:
        return []
    if an.data[at : at + len(param.encode())] != param.encode():
        return []
    expr = _resource_at(an, f.offset)
    body = None
    if expr is not None:
        body = next((b for b in expr.bodies if any(op.offset == at for op in _named_ops(b))), None)
    out = []
    for s in near:
        if body is None:
            edits = [(at, at + len(param.encode()), s)]
        else:
            edits = _aligned(an.data, _named_ops(body), {at: s}, None)
        out.append(DeepFix(f"Did you mean '{s}'?", edits, f))
    return out


def _named_ops(body: ast.ResourceBody) -> list[ast.AttributeOperation]:
    return [op for op in body.operations if type(op) is ast.AttributeOperation]


def _line_start(data: bytes, offset: int) -> int:
    return data.rfind(b"\n", 0, offset) + 1


def _indent_of(data: bytes, offset: int) -> bytes:
    s = _line_start(data, offset)
    i = s
    while i < len(data) and data[i : i + 1] in (b" ", b"\t"):
        i += 1
    return data[s:i]


def _arrow_of(data: bytes, op: ast.AttributeOperation) -> tuple[int, int] | None:
    """(end of the name, start of the arrow) of an attribute written ``name <spaces> =>``."""
    name_end = op.offset + len(op.attribute_name.encode())
    i = name_end
    while i < len(data) and data[i : i + 1] in (b" ", b"\t"):
        i += 1
    return (name_end, i) if data[i : i + 2] in (b"=>", b"+>") else None


def _aligned(
    data: bytes,
    ops: list[ast.AttributeOperation],
    renamed: dict[int, str],
    added: str | None,
) -> list[ByteEdit]:
    """The edits that rename the attributes at ``renamed``'s offsets and realign the arrows of ``ops``
    (each on a line of its own: puppet-lint's arrow_alignment, one space after the longest name,
    ``added`` a name about to join them) when they are aligned."""
    edits: list[ByteEdit] = []
    lines = [_line_start(data, op.offset) for op in ops]
    own_lines = len(set(lines)) == len(lines) and len(ops) + (added is not None) > 1
    names = {op.offset: renamed.get(op.offset, op.attribute_name) for op in ops}
    widest = max([len(n) for n in names.values()] + ([len(added)] if added is not None else []))
    for op in ops:
        arrow = _arrow_of(data, op)
        new_name = renamed.get(op.offset)
        name_end = op.offset + len(op.attribute_name.encode())
        if not own_lines or arrow is None:
            if new_name is not None:
                edits.append((op.offset, name_end, new_name))
            continue
        gap = " " * (widest - len(names[op.offset]) + 1)
        if new_name is not None:
            edits.append((op.offset, arrow[1], new_name + gap))
        elif data[arrow[0] : arrow[1]] != gap.encode():
            edits.append((arrow[0], arrow[1], gap))
    return sorted(edits)


def _placeholder(type_text: str, answers: Answers) -> str:
    """A value of the type ``type_text`` that reads as a TODO (see above)."""
    from puppet_xpp.grammar.check import parse as parse_text
    from puppet_xpp.server.analysis.deep import typecheck

    candidates = list(_PLACEHOLDERS)
    texts = [type_text or ""]
    resolved = typecheck.alias_resolver(answers)(texts[0].strip())
    if resolved:  # (a type alias: its type's first value or lower bound)
        texts.append(resolved)
    for text in texts:
        m = _ENUM_FIRST.match(text)
        if m is not None:
            first = m.group(1)
            candidates.insert(1, first if first[0] in "'\"" else f"'{first}'")
        m = _RANGE_LOW.match(text)
        if m is not None:
            candidates.insert(1, m.group(1))
    for c in candidates:
        program: Any = parse_text(f"notice({c})").program
        call = program.body if program is not None else None
        args = getattr(call, "arguments", None)
        if not args:
            continue
        if typecheck.mismatch(type_text, args[0], answers) is None:
            return c
    return "'TODO'"


def _add_parameter(an: Analysis, f: Finding, answers: Answers) -> DeepFix | None:
    """A missing required parameter added to the resource body that lacks it."""
    name = f.data.get("param")
    if not isinstance(name, str):
        return None
    expr = _resource_at(an, f.offset)
    if expr is None:
        return None  # (include/contain/require: the value must come from Hiera; nothing to add here)
    bodies = [b for b in expr.bodies if type(b.title) is not ast.LiteralDefault]
    bodies = [b for b in bodies if all(op.attribute_name != name for op in _named_ops(b))]
    if len(bodies) != 1:
        return None
    body = bodies[0]
    if any(type(op) is not ast.AttributeOperation for op in body.operations):
        return None  # (an attributes splat: the value may be in it)
    sym = _declared(f, expr, answers)
    type_text = ""
    if sym is not None:
        type_text = next((p.type for p in sym.params if p.name == name), "")
    value = _placeholder(type_text, answers)
    todo = "" if value == "'TODO'" else " # TODO"
    data = an.data
    ops = _named_ops(body)
    title = body.title
    if title is None:
        return None
    title_end = title.offset + title.length
    colon = data.find(b":", title_end)
    if colon < 0:
        return None
    if ops:
        last = ops[-1]
        last_end = last.offset + last.length
        after = data[last_end:].lstrip(b" \t")
        comma = after[:1] == b","
        multi = _line_start(data, ops[0].offset) != _line_start(data, colon)
        if multi:
            indent = _indent_of(data, ops[0].offset).decode()
            edits = _aligned(data, ops, {}, name)
            widest = max([len(op.attribute_name) for op in ops] + [len(name)])
            insert_at = last_end + (len(data[last_end:]) - len(after)) + 1 if comma else last_end
            line = f"\n{indent}{name}{' ' * (widest - len(name) + 1)}=> {value},{todo}"
            edits.append((insert_at, insert_at, ("" if comma else ",") + line))
        else:
            edits = [(last_end, last_end, f", {name} => {value}")]
    else:
        outer = _indent_of(data, expr.offset).decode()
        close = data.find(b"}", colon)
        if close < 0:
            return None
        between = data[colon + 1 : close]
        if between.strip(b" \t\r\n;"):
            return None
        inner = outer + "  "
        edits = [(colon + 1, close, f"\n{inner}{name} => {value},{todo}\n{outer}")]
    return DeepFix(f"Add the missing parameter '{name}' ({value})", sorted(edits), f)


def _declared(f: Finding, expr: ast.ResourceExpression, answers: Answers) -> Sym | None:
    """The class or define a resource expression declares (its parameters' types)."""
    type_name = getattr(expr.type_name, "value", None)
    if not isinstance(type_name, str):
        return None
    if type_name.lower() == "class":
        title = next((b.title for b in expr.bodies if type(b.title) is not ast.LiteralDefault), None)
        value = getattr(title, "value", None)
        return answers.find_class(value) if isinstance(value, str) else None
    return answers.find_define(type_name)
