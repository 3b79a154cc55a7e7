"""Editor features over an analysed file (no pygls imports): document symbols, folding ranges,
semantic tokens, hover, go-to-definition, completion.  Everything works on the Program the parser
recovered, so the valid parts of a file with syntax errors keep their features.

The functions take anything shaped like :class:`Analysed` (server/analysis/document.py's Analysis,
or the lighter view the workspace indexer builds per file) and return plain tuples/dicts in LSP
shapes ((line, col) pairs), which server/lsp/ converts.  They keep no state between calls: what a
request reuses (the node extents of one Program) lives in a :class:`NodeLocator` its caller holds.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from typing import Any, Protocol, cast

from puppet_xpp.grammar import ast
from puppet_xpp.server.analysis import tables

# ----------------------------------------------------------------------------------------------- what the features read


class PositionedToken(Protocol):
    """A lexer token as the features read it (grammar/lexer.py's tokens: byte positions)."""

    @property
    def type(self) -> str: ...
    @property
    def value(self) -> Any: ...
    @property
    def start_pos(self) -> int: ...
    @property
    def end_pos(self) -> int: ...


class Lines(Protocol):
    """Byte offsets <-> LSP (line, column) of one text (server/analysis/document.py's LineIndex)."""

    @property
    def starts(self) -> Sequence[int]: ...
    def line_of(self, offset: int) -> int: ...
    def line_bytes(self, line: int) -> bytes: ...
    def position(self, offset: int) -> tuple[int, int]: ...
    def range(self, offset: int, length: int) -> tuple[tuple[int, int], tuple[int, int]]: ...


class Analysed(Protocol):
    """What the features read of an analysed file: its bytes, tokens, line index and Program."""

    @property
    def data(self) -> bytes: ...
    @property
    def tokens(self) -> Sequence[PositionedToken]: ...
    @property
    def lines(self) -> Lines: ...
    @property
    def program(self) -> ast.Program | None: ...


DEFINITIONS = (
    ast.HostClassDefinition,
    ast.ResourceTypeDefinition,
    ast.FunctionDefinition,
    ast.TypeAlias,
    ast.NodeDefinition,
    ast.TypeDefinition,
)

# LSP SymbolKind numbers
SK_MODULE, SK_CLASS, SK_METHOD, SK_PROPERTY, SK_FIELD, SK_FUNCTION, SK_VARIABLE = 2, 5, 6, 7, 8, 12, 13
SK_OBJECT, SK_STRUCT, SK_TYPEPARAM, SK_INTERFACE = 19, 23, 26, 11

KIND_NAMES: dict[type[ast.Node], str] = {
    ast.HostClassDefinition: "class",
    ast.ResourceTypeDefinition: "define",
    ast.FunctionDefinition: "function",
    ast.PlanDefinition: "plan",
    ast.TypeAlias: "type",
    ast.NodeDefinition: "node",
    ast.TypeDefinition: "type",
}

# a document symbol: {name, detail, kind, range: (offset, length), selection: (offset, length), children}
DocumentSymbol = dict[str, Any]


def symbol_kind(node: ast.Node) -> int:
    t = type(node)
    if t is ast.HostClassDefinition:
        return SK_CLASS
    if t is ast.ResourceTypeDefinition:
        return SK_STRUCT
    if t is ast.PlanDefinition:
        return SK_METHOD
    if t is ast.FunctionDefinition:
        return SK_FUNCTION
    if t in (ast.TypeAlias, ast.TypeDefinition):
        return SK_TYPEPARAM
    if t is ast.NodeDefinition:
        return SK_MODULE
    return SK_OBJECT


def kind_name(node: ast.Node) -> str:
    return KIND_NAMES.get(type(node), type(node).__name__)  # the generated classes are named as Puppet's


# ----------------------------------------------------------------------------------------------- helpers


def kids(node: ast.Node) -> Iterator[ast.Positioned]:
    """A node's children; below a Program's body every node is positioned."""
    return cast("Iterator[ast.Positioned]", node.children())


def src(an: Analysed, node: ast.Positioned | None) -> str:
    if node is None or node.offset is None:
        return ""
    return an.data[node.offset : node.offset + max(0, node.length)].decode("utf-8", "replace")


def expr_text(an: Analysed, node: ast.Positioned | None) -> str:
    """The source text of an expression from its whole subtree: Puppet positions some nodes (a type
    alias's ``AccessExpression``) with length 0 at another place, so the node's own span is not its
    text.  Closing brackets after the last child are included."""
    if node is None:
        return ""
    lo, hi = 1 << 62, -1
    stack = [node]
    while stack:
        n = stack.pop()
        if n.offset is not None and n.length > 0:
            lo = min(lo, n.offset)
            hi = max(hi, n.offset + n.length)
        stack.extend(kids(n))
    if hi < 0:
        return src(an, node)
    toks = an.tokens
    i = bisect.bisect_left(toks, lo, key=lambda t: t.start_pos)
    depth = 0
    end = hi
    # (by index from ``i``: a slice ``toks[i:]`` copies the rest of the file's tokens on every call,
    # and the index takes two or three per parameter: quadratic in the file)
    for k in range(i, len(toks)):
        t = toks[k]
        if t.start_pos >= hi and depth <= 0:
            break
        if t.type in ("LBRACK", "LISTSTART", "LBRACE", "SELBRACE", "LPAREN", "WSLPAREN"):
            depth += 1
        elif t.type in ("RBRACK", "RBRACE", "RPAREN"):
            depth -= 1
        end = max(end, t.end_pos)
    return an.data[lo:end].decode("utf-8", "replace")


def name_span(an: Analysed, node: ast.Positioned) -> tuple[int, int]:
    """(offset, length) of a definition's name token (falls back to the node's start)."""
    toks = an.tokens
    if not toks or node.offset is None:
        return node.offset or 0, 0
    if type(node) is ast.NodeDefinition:  # its names (`default` too), never a name in its body
        hs = [h for h in node.host_matches or () if h.offset is not None and h.length > 0]
        if hs:
            return hs[0].offset, hs[-1].offset + hs[-1].length - hs[0].offset
    i = bisect.bisect_left(toks, node.offset, key=lambda t: t.start_pos)
    end = node.offset + max(node.length, 0)
    want = getattr(node, "name", None)
    for k in range(i, min(len(toks), i + 12)):
        t = toks[k]
        if t.start_pos >= end:
            break
        if t.type in ("NAME", "WORD", "CLASSREF", "STRING") and (
            want is None
            or str(t.value).lower().lstrip(":") == str(want).lower().lstrip(":").split("::")[-1]
            or str(t.value).lower().lstrip(":") == str(want).lower().lstrip(":")
        ):
            return t.start_pos, t.end_pos - t.start_pos
    return node.offset, 0


def leading_comment(data: bytes, offset: int) -> str:
    """The `#` comment block right above the line of `offset` (puppet-strings docs)."""
    ls = data.rfind(b"\n", 0, offset) + 1
    lines = []
    pos = ls
    while pos > 0:
        prev_end = pos - 1
        prev_start = data.rfind(b"\n", 0, prev_end) + 1
        line = data[prev_start:prev_end].strip()
        if line.startswith(b"#"):
            lines.append(line[1:].decode("utf-8", "replace"))
            pos = prev_start
        else:
            break
    lines.reverse()
    out = []
    for x in lines:
        out.append(x[1:] if x.startswith(" ") else x)
    return "\n".join(out).strip()


def param_docs(doc: str) -> dict[str, str]:
    """@param NAME text (puppet-strings), continuation lines included."""
    out: dict[str, str] = {}
    cur = None
    for line in doc.splitlines():
        m = re.match(r"\s*@param\s+(?:\[[^\]]*\]\s*)?\$?(\w+)\s*(.*)", line) if "@param" in line else None
        if m:
            cur = m.group(1)
            out[cur] = m.group(2).strip()
        elif cur and line.startswith((" ", "\t")) and not line.strip().startswith("@"):
            out[cur] = (out[cur] + " " + line.strip()).strip()
        else:
            cur = None
    return out


def summary_of(doc: str) -> str:
    text = []
    for line in doc.splitlines():
        s = line.strip()
        if s.startswith("@summary"):
            return s[len("@summary") :].strip()
        if s.startswith("@"):
            break
        text.append(s)
    return " ".join(x for x in text if x).strip()


def statements_of(body: ast.Positioned | None) -> list[ast.Positioned]:
    if body is None:
        return []
    if type(body) is ast.BlockExpression or type(body) is ast.ApplyBlockExpression:
        return list(body.statements)
    return [body]


# id(node) -> (lo, hi)
Extents = dict[int, tuple[int, int]]


def extents(program: ast.Program | None) -> Extents:
    """id(node) -> (lo, hi): the byte range covered by a node and everything below it (Puppet's own
    positions do not always cover the children, e.g. an assignment is positioned at its operator)."""
    out: Extents = {}
    if program is None or program.body is None:
        return out
    # iterative post-order
    stack: list[tuple[ast.Positioned, bool]] = [(program.body, False)]
    while stack:
        n, done = stack.pop()
        if done:
            lo = n.offset if n.offset is not None else 1 << 62
            hi = n.offset + max(n.length, 0) if n.offset is not None else -1
            if n.length == 0:
                lo, hi = 1 << 62, -1  # bare nodes: only their children count
            for c in n.children():
                e = out.get(id(c))
                if e is not None:
                    if e[0] < lo:
                        lo = e[0]
                    if e[1] > hi:
                        hi = e[1]
            if hi < 0 and n.offset is not None:
                lo, hi = n.offset, n.offset + max(n.length, 0)
            out[id(n)] = (lo, hi)
        else:
            stack.append((n, True))
            for c in kids(n):
                stack.append((c, False))
    return out


class NodeLocator:
    """The nodes under a byte offset of one Program.  The extents of all its nodes (one pass over
    the whole tree: 1-5 ms on the corpus's largest manifests) are computed on the first question and
    kept for the next ones, so a request that asks several (hover: the reference, then the variable's
    definition) pays once.  Whoever holds the Program's version holds the locator and drops it with
    that version; nothing is kept between requests at module level."""

    __slots__ = ("program", "_extents")

    def __init__(self, program: ast.Program | None) -> None:
        self.program = program
        self._extents: Extents | None = None

    def extents(self) -> Extents:
        if self._extents is None:
            self._extents = extents(self.program)
        return self._extents

    def path(self, off: int) -> list[ast.Positioned]:
        """Nodes whose subtree covers byte offset `off`, outermost first (an identifier's end counts)."""
        path: list[ast.Positioned] = []
        program = self.program
        if program is None or program.body is None:
            return path
        ext = self.extents()
        cur: ast.Positioned | None = program.body
        while cur is not None:
            path.append(cur)
            best: tuple[ast.Positioned, tuple[int, int]] | None = None
            for c in kids(cur):
                e = ext.get(id(c))
                if e is not None and e[0] <= off <= e[1]:
                    if best is None or (e[1] - e[0]) < (best[1][1] - best[1][0]):
                        best = (c, e)
            cur = best[0] if best else None
        return path


def node_path(
    program: ast.Program | None, off: int, locator: NodeLocator | None = None
) -> list[ast.Positioned]:
    """Nodes whose subtree covers byte offset `off`, outermost first (an identifier's end counts).
    ``locator``: one the caller keeps for this Program (else the extents are computed for this call)."""
    return (locator if locator is not None and locator.program is program else NodeLocator(program)).path(off)


# ----------------------------------------------------------------------------------------------- symbols


def document_symbols(an: Analysed) -> list[DocumentSymbol]:
    """[{name, detail, kind, range:(off,len), selection:(off,len), children}]"""
    prog = an.program
    if prog is None or prog.body is None:
        return []
    return _symbols_in(an, statements_of(prog.body) if type(prog.body) is not ast.Nop else [])


def _symbols_in(an: Analysed, stmts: Sequence[ast.Positioned]) -> list[DocumentSymbol]:
    out = []
    for s in stmts:
        out.extend(_symbols_of(an, s))
    return out


def _symbols_of(an: Analysed, s: ast.Positioned) -> list[DocumentSymbol]:
    if isinstance(s, DEFINITIONS):
        name = (
            s.name if not isinstance(s, ast.NodeDefinition) else " ".join(src(an, h) for h in s.host_matches)
        )
        params: list[DocumentSymbol] = []
        for p in getattr(s, "parameters", []) or []:
            detail = src(an, p.type_expr) if p.type_expr is not None else ""
            params.append(
                {
                    "name": "$" + p.name,
                    "detail": detail,
                    "kind": SK_PROPERTY,
                    "range": (p.offset, p.length),
                    "selection": (p.offset, p.length),
                    "children": [],
                }
            )
        params.extend(_symbols_in(an, statements_of(getattr(s, "body", None))))
        return [
            {
                "name": name,
                "detail": kind_name(s),
                "kind": symbol_kind(s),
                "range": (s.offset, s.length),
                "selection": name_span(an, s),
                "children": params,
            }
        ]
    if type(s) is ast.ResourceExpression:
        tn = s.type_name
        tname = getattr(tn, "value", None) if hasattr(tn, "value") else src(an, tn)
        out = []
        for b in s.bodies:
            title = src(an, b.title) if b.title is not None else ""
            out.append(
                {
                    "name": f"{tname} {title}".strip(),
                    "detail": "resource",
                    "kind": SK_OBJECT,
                    "range": (s.offset, s.length),
                    "selection": (tn.offset, tn.length),
                    "children": [],
                }
            )
        return out
    if type(s) is ast.AssignmentExpression and type(s.left_expr) is ast.VariableExpression:
        v = s.left_expr
        return [
            {
                "name": "$" + getattr(v.expr, "value", ""),
                "detail": "variable",
                "kind": SK_VARIABLE,
                "range": (v.offset, max(v.length, s.offset + s.length - v.offset)),
                "selection": (v.offset, v.length),
                "children": [],
            }
        ]
    found: list[DocumentSymbol] = []
    if type(s) is ast.IfExpression or type(s) is ast.UnlessExpression:
        found.extend(_symbols_in(an, statements_of(s.then_expr)))
        found.extend(_symbols_in(an, statements_of(s.else_expr)))
    elif type(s) is ast.CaseExpression:
        for o in s.options:
            found.extend(_symbols_in(an, statements_of(o.then_expr)))
    elif type(s) is ast.BlockExpression:
        found.extend(_symbols_in(an, s.statements))
    elif (
        type(s) is ast.CallNamedFunctionExpression or type(s) is ast.CallMethodExpression
    ) and s.lambda_ is not None:
        found.extend(_symbols_in(an, statements_of(getattr(s.lambda_, "body", None))))
    return found


# ----------------------------------------------------------------------------------------------- folding


def folding_ranges(an: Analysed) -> list[tuple[int, int, str | None]]:
    """[(start_line, end_line, kind)] kind: None | 'comment' | 'region'."""
    lines = an.lines
    out: list[tuple[int, int, str | None]] = []
    stack: list[PositionedToken] = []
    for t in an.tokens:
        ty = t.type
        if ty in ("LBRACE", "SELBRACE", "LBRACK", "LISTSTART", "LPAREN", "WSLPAREN"):
            stack.append(t)
        elif ty in ("RBRACE", "RBRACK", "RPAREN"):
            if stack:
                o = stack.pop()
                a = lines.line_of(o.start_pos)
                b = lines.line_of(t.start_pos)
                if b - 1 > a:
                    out.append((a, b - 1, None))
        elif ty in ("STRING", "DQPOST") and t.end_pos > t.start_pos:
            a = lines.line_of(t.start_pos)
            b = lines.line_of(max(t.start_pos, t.end_pos - 1))
            if b > a:
                out.append((a, b, None))
    # comment blocks and regions
    starts = lines.starts
    run = None
    regions: list[int] = []
    for ln in range(len(starts)):
        s = lines.line_bytes(ln).strip()
        if s.startswith(b"#"):
            low = s[1:].strip().lower()
            if low.startswith(b"region"):
                regions.append(ln)
            elif low.startswith(b"endregion") and regions:
                out.append((regions.pop(), ln, "region"))
            if run is None:
                run = ln
        else:
            if run is not None and ln - 1 > run:
                out.append((run, ln - 1, "comment"))
            run = None
    if run is not None and len(starts) - 1 > run:
        out.append((run, len(starts) - 1, "comment"))
    return sorted(set(out))


# ----------------------------------------------------------------------------------------------- semantic tokens

TOKEN_TYPES = [
    "keyword",
    "variable",
    "string",
    "number",
    "regexp",
    "comment",
    "type",
    "class",
    "function",
    "property",
    "parameter",
    "operator",
]
TOKEN_MODIFIERS = ["declaration", "defaultLibrary"]
_TT = {n: i for i, n in enumerate(TOKEN_TYPES)}
_KW = frozenset(
    (
        "IF",
        "ELSE",
        "ELSIF",
        "UNLESS",
        "CASE",
        "DEFAULT",
        "UNDEF",
        "CLASS",
        "DEFINE",
        "INHERITS",
        "NODE",
        "FUNCTION",
        "TYPE",
        "ATTR",
        "PRIVATE",
        "PLAN",
        "APPLY",
        "AND",
        "OR",
        "IN",
        "BOOLEAN",
    )
)
_COMMENT = re.compile(rb"#[^\n]*|/\*[\s\S]*?\*/")


def semantic_tokens(an: Analysed) -> list[int]:
    """The LSP relative-encoded integer array (multi-line tokens split per line)."""
    toks = an.tokens
    items: list[tuple[int, int, int, int]] = []  # (offset, length, type, modifiers)
    n = len(toks)
    bodies = _heredoc_bodies(an)
    for k, t in enumerate(toks):
        ty = t.type
        o, e = t.start_pos, t.end_pos
        if bodies and ty in ("STRING", "DQPRE", "DQMID", "DQPOST"):
            e = _heredoc_text_end(an.data, toks, k, bodies, e)
        if e <= o:
            continue
        kind: str | None = None
        mods = 0
        if ty in _KW:
            kind = "keyword"
        elif ty == "VARIABLE":
            kind = "variable"
        elif ty in ("STRING", "DQPRE", "DQMID", "DQPOST"):
            kind = "string"
        elif ty == "NUMBER":
            kind = "number"
        elif ty == "REGEX":
            kind = "regexp"
        elif ty == "CLASSREF":
            kind = "type"
        elif ty in ("NAME", "WORD"):
            nxt = toks[k + 1].type if k + 1 < n else None
            prv = toks[k - 1].type if k > 0 else None
            if prv in ("CLASS", "DEFINE", "FUNCTION", "PLAN", "NODE"):
                kind, mods = "class", 1
            elif nxt in ("FARROW", "PARROW"):
                kind = "property"
            elif nxt in ("LBRACE",) and prv not in ("DOT",):
                kind = "type"  # a resource type (`file { ... }`), also when a function has its name
            elif nxt in ("LPAREN",) or str(t.value) in tables.FUNCTIONS and prv not in ("DOT",):
                kind = "function"
                if str(t.value) in tables.FUNCTIONS:
                    mods = 2
            elif prv == "DOT":
                kind = "function"
            elif nxt in ("LBRACE",):
                kind = "type"
        if kind is not None:
            items.append((o, e - o, _TT[kind], mods))
    # comments in the gaps
    data = an.data
    for m in _COMMENT.finditer(data):
        s = m.start()
        if _inside_token(toks, s):
            continue
        items.append((s, m.end() - s, _TT["comment"], 0))
    items.sort()
    out: list[int] = []
    lines = an.lines
    pl = pc = 0
    last_end = -1
    for o, ln, tt, mods in items:
        if o < last_end:
            continue
        last_end = o + ln
        seg_start = o
        end = o + ln
        while seg_start < end:
            line = lines.line_of(seg_start)
            line_end = lines.starts[line + 1] - 1 if line + 1 < len(lines.starts) else len(data)
            seg_end = min(end, line_end)
            if seg_end > seg_start:
                l0, c0 = lines.position(seg_start)
                _l1, c1 = lines.position(seg_end)
                dl = l0 - pl
                dc = c0 - pc if dl == 0 else c0
                out.extend((dl, dc, c1 - c0, tt, mods))
                pl, pc = l0, c0
            seg_start = seg_end + 1
    return out


_HEREDOC_TAG = re.compile(rb'@\(\s*"?([^":/)]+?)"?\s*(?::[^/)]*)?(?:/[^)]*)?\)')


def _heredoc_bodies(an: Analysed) -> list[tuple[int, int]]:
    """[(start, end)] byte ranges of heredoc texts (from the line after ``@(TAG)`` to the end-tag line)."""
    out: list[tuple[int, int]] = []
    data = an.data
    pos = 0
    for t in an.tokens:
        if t.type != "HEREDOC":
            continue
        m = _HEREDOC_TAG.match(data, t.start_pos)
        if m is None:
            continue
        start = data.find(b"\n", max(t.end_pos, pos)) + 1
        if start <= 0:
            continue
        end_tag = re.compile(
            rb"^[ \t]*\|?[ \t]*-?[ \t]*" + re.escape(m.group(1).strip()) + rb"[ \t]*\r?$", re.M
        )
        me = end_tag.search(data, start)
        if me is None:
            continue
        out.append((start, me.start()))
        pos = me.end()
    return out


def _heredoc_text_end(
    data: bytes, toks: Sequence[PositionedToken], k: int, bodies: list[tuple[int, int]], e: int
) -> int:
    """A heredoc text token's end in the source: its token length is that of the text after the
    margin was removed, so it would stop short; it runs to the next token (an interpolation) or the
    end-tag line instead."""
    o = toks[k].start_pos
    for bs, be in bodies:
        if bs <= o < be:
            end = be
            if k + 1 < len(toks) and o < toks[k + 1].start_pos < be:
                end = toks[k + 1].start_pos
                if data[end - 2 : end] == b"${":
                    end -= 2
            return max(e, end)
    return e


def _inside_token(toks: Sequence[PositionedToken], off: int) -> bool:
    # tokens are mostly sorted by position (heredoc text tokens are the exception): check neighbours
    i = bisect.bisect_right(toks, off, key=lambda t: t.start_pos)
    for k in range(max(0, i - 3), min(len(toks), i + 1)):
        t = toks[k]
        if t.start_pos <= off < t.end_pos:
            return True
    return False


# ----------------------------------------------------------------------------------------------- scopes


def _var_name(v: ast.Node) -> str | None:
    e = getattr(v, "expr", None)
    return getattr(e, "value", None) if e is not None else None


Scope = ast.NamedDefinition | ast.LambdaExpression | ast.NodeDefinition


def scope_chain(path: Sequence[ast.Positioned]) -> list[Scope]:
    """Scope-opening nodes on a node path (innermost last)."""
    return [n for n in path if isinstance(n, (ast.NamedDefinition, ast.LambdaExpression, ast.NodeDefinition))]


# a variable's defining node: the Parameter, or the VariableExpression assigned
VariableDefinition = ast.Parameter | ast.VariableExpression


def visible_variables(
    an: Analysed, off: int, locator: NodeLocator | None = None
) -> dict[str, VariableDefinition]:
    """name -> defining node (Parameter or the VariableExpression assigned) visible at `off`."""
    prog = an.program
    out: dict[str, VariableDefinition] = {}
    if prog is None:
        return out
    path = node_path(prog, off, locator)
    # top scope assignments
    for s in statements_of(prog.body) if prog.body is not None and type(prog.body) is not ast.Nop else []:
        _collect_assignments(s, out, off)
    for sc in scope_chain(path):
        for p in getattr(sc, "parameters", None) or []:
            out[p.name] = p
        body = getattr(sc, "body", None)
        for s in statements_of(body):
            _collect_assignments(s, out, off)
    return out


def _collect_assignments(s: ast.Positioned, out: dict[str, VariableDefinition], off: int) -> None:
    stack = [s]
    while stack:
        n = stack.pop()
        t = type(n)
        if type(n) is ast.AssignmentExpression:
            left = n.left_expr
            if type(left) is ast.VariableExpression and n.offset <= off:
                nm = _var_name(left)
                if nm and nm not in out:
                    out[nm] = left
            elif type(left) is ast.LiteralList:
                for v in left.values:
                    if type(v) is ast.VariableExpression and n.offset <= off:
                        nm = _var_name(v)
                        if nm and nm not in out:
                            out[nm] = v
            stack.append(n.right_expr)
        elif isinstance(n, (ast.NamedDefinition, ast.LambdaExpression, ast.NodeDefinition)):
            continue  # own scope
        elif t in (
            ast.BlockExpression,
            ast.IfExpression,
            ast.UnlessExpression,
            ast.CaseExpression,
            ast.CaseOption,
        ):
            stack.extend(kids(n))


# ----------------------------------------------------------------------------------------------- references


# what a name refers to: (kind, name, node) with kind in 'class' | 'define' | 'function' | 'type' |
# 'resource_type' | 'variable' | 'class_or_define'
Reference = tuple[str, str, ast.Positioned]


def reference_at(an: Analysed, off: int, locator: NodeLocator | None = None) -> Reference | None:
    """What the identifier at `off` refers to: (kind, name, node) with kind in
    'class' | 'define' | 'function' | 'type' | 'resource_type' | 'variable' | 'class_or_define', or None."""
    prog = an.program
    if prog is None:
        return None
    path = node_path(prog, off, locator)
    if not path:
        return None
    node = path[-1]
    parent = path[-2] if len(path) > 1 else None
    if type(node) is ast.QualifiedName and type(parent) is ast.VariableExpression:
        node, parent = parent, (path[-3] if len(path) > 2 else None)
    if type(node) is ast.VariableExpression:
        return ("variable", _var_name(node) or "", node)
    if type(node) is ast.QualifiedName:
        if type(parent) is ast.CallNamedFunctionExpression:
            if parent.functor_expr is node:
                return ("function", node.value, node)
            fn = getattr(parent.functor_expr, "value", "")
            if fn in ("include", "contain", "require", "class"):
                return ("class", node.value.lstrip(":"), node)
        if type(parent) is ast.ResourceExpression and parent.type_name is node:
            if node.value == "class":
                return ("class", node.value, node)
            return ("class_or_define", node.value.lstrip(":"), node)
        return ("class_or_define", node.value.lstrip(":"), node)
    if type(node) is ast.LiteralString:
        # class { 'name': }  /  include 'name'
        for anc in reversed(path[:-1]):
            if type(anc) is ast.ResourceExpression:
                if getattr(anc.type_name, "value", "") == "class":
                    return ("class", node.value.lstrip(":"), node)
                break
            if type(anc) is ast.CallNamedFunctionExpression:
                if getattr(anc.functor_expr, "value", "") in ("include", "contain", "require"):
                    return ("class", node.value.lstrip(":"), node)
                break
            if (
                type(anc) is ast.AccessExpression
                and type(anc.left_expr) is ast.QualifiedReference
                and anc.left_expr.cased_value.lower() == "class"
            ):
                return ("class", node.value.lstrip(":"), node)
        return None
    if type(node) is ast.QualifiedReference:
        return ("type", node.cased_value.lstrip(":"), node)
    return None


def local_definition(
    an: Analysed, ref: Reference, off: int, locator: NodeLocator | None = None
) -> VariableDefinition | None:
    """The Parameter / assigned VariableExpression a local variable reference resolves to."""
    kind, name, _node = ref
    if kind != "variable" or "::" in name:
        return None
    return visible_variables(an, off, locator).get(name)


# ----------------------------------------------------------------------------------------------- completion

_VAR_PREFIX = re.compile(r"\$((?:::)?(?:[a-z_]\w*::)*\w*)$")
_WORD_PREFIX = re.compile(r"((?:::)?[A-Za-z_][\w:]*)$")


def completion_context(an: Analysed, off: int) -> tuple[str, str, str | None]:
    """(context, prefix, resource type or None) at byte offset `off`."""
    line_start = an.data.rfind(b"\n", 0, off) + 1
    before = an.data[line_start:off].decode("utf-8", "replace")
    m = _VAR_PREFIX.search(before)
    if m:
        return "variable", m.group(1), None
    m = _WORD_PREFIX.search(before)
    prefix = m.group(1) if m else ""
    rtype = enclosing_resource_type(an.data, off - len(prefix.encode()))
    if rtype is not None:
        return "attribute", prefix, rtype
    return "general", prefix, None


def unquoted_back(data: bytes, off: int, limit: int = 20000) -> Iterator[tuple[int, bytes]]:
    """(offset, character) of each character before ``off``, last first, that is outside a string
    literal (a quote escaped by a backslash does not end one), at most ``limit`` bytes back: the one
    rule of the text scans below, which read what the parser may not have (a half-typed body)."""
    in_str: bytes | None = None
    i = off - 1
    stop = max(0, off - limit)
    while i >= stop:
        c = data[i : i + 1]
        if in_str:
            if c == in_str and data[i - 1 : i] != b"\\":
                in_str = None
        elif c in (b"'", b'"'):
            in_str = c
        else:
            yield i, c
        i -= 1


def enclosing_resource_type(data: bytes, off: int) -> str | None:
    """`type {` ... `:` ... <off> with the brace unclosed: the resource type name, else None (a text
    scan, not the AST: the body being typed is often one the parser dropped)."""
    depth = 0
    seen_colon = False
    for i, c in unquoted_back(data, off):
        if c in (b"}", b"]", b")"):
            depth += 1
        elif c in (b"[", b"("):
            if depth == 0:
                return None
            depth -= 1
        elif c == b"{":
            if depth == 0:
                if not seen_colon:
                    return None
                m = re.search(rb"((?:::)?[a-z][\w:]*|[A-Z][\w:]*)\s*$", data[max(0, i - 200) : i])
                if m:
                    name = m.group(1).decode()
                    if name in ("if", "else", "elsif", "unless", "case", "node", "class") and name != "class":
                        return None
                    return name.lower().lstrip(":")
                return None
            depth -= 1
        elif c == b":" and depth == 0 and data[i - 1 : i] != b":" and data[i + 1 : i + 2] != b":":
            seen_colon = True
        elif c == b";" and depth == 0:
            seen_colon = True
    return None


# ----------------------------------------------------------------------------------------------- signature help


def string_start(data: bytes, off: int) -> int | None:
    """The offset of the opening quote of the string literal ``off`` is inside (scanned from the start
    of its line: a call's arguments are typed on one), else None."""
    i = data.rfind(b"\n", 0, off) + 1
    quote: bytes | None = None
    start = 0
    while i < off:
        c = data[i : i + 1]
        if quote is not None:
            if c == b"\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in (b"'", b'"'):
            quote, start = c, i
        elif c == b"#":
            return None  # a comment to the end of the line
        i += 1
    return start if quote is not None else None


def argument_start(data: bytes, off: int) -> int:
    """Where the argument being typed at ``off`` starts when ``off`` is inside a string, hash or array
    literal of it (``f('a', 'b|``, ``g({ |``, ``h([1, |``): the opening quote or bracket of the
    outermost such literal, so the call around it is found as at that literal's first character;
    else ``off``.  A ``{`` that opens a block (a lambda's, a resource body's) ends the search."""
    q = string_start(data, off)
    if q is not None:
        off = q
    depth = 0
    for i, c in unquoted_back(data, off):
        if c in (b")", b"]", b"}"):
            depth += 1
        elif c in (b"[", b"{") and depth == 0:
            before = data[max(0, i - 40) : i].rstrip()
            if c == b"{" and not (before.endswith((b"(", b",", b"[", b"{", b"=>"))):
                return off  # a block, not a hash
            off = i
        elif c in (b"[", b"{", b"("):
            if depth == 0:  # (the call's own parenthesis)
                return off
            depth -= 1
        elif c == b";" and depth == 0:
            return off
    return off


def doc_markdown(doc: str) -> str:
    """A puppet-strings doc comment as hover Markdown: ``@summary`` as its text, ``@param`` as a list item."""
    out = []
    for line in doc.splitlines():
        s = line.strip()
        if s.startswith("@summary"):
            out.append(s[len("@summary") :].strip())
        elif s.startswith("@param"):
            parts = s.split(None, 2)
            out.append(f"- `{parts[1] if len(parts) > 1 else ''}` {parts[2] if len(parts) > 2 else ''}")
        else:
            out.append(line)
    return "\n".join(out).strip()
