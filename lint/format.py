"""Formatting a manifest: every enabled lint fix, then indentation by bracket depth, then arrow alignment.

This is what the editor's "Format Document" does (puppet-lint has no indentation fix of its own). It
works on the lint token stream, so only the blanks at the start of code lines change: text inside
strings, heredocs and comments is never touched, and a manifest with a syntax error is left as it is.
"""

from __future__ import annotations

from puppet_xpp.lint.run import all_checks, lint
from puppet_xpp.lint.tokens import Tok, link, tokenise

INDENT_WIDTH = 2
_OPEN = frozenset({"LBRACE", "LBRACK", "LPAREN"})
_CLOSE = frozenset({"RBRACE", "RBRACK", "RPAREN"})


def format_manifest(text: str, *, path: str | None = None, enabled: set[str] | None = None) -> str:
    """``text`` formatted; ``enabled``: the checks whose fixes apply (default: puppet-lint's defaults)."""
    fixable = {c.name for c in all_checks() if c.fix is not None}
    on = (enabled if enabled is not None else {c.name for c in all_checks() if c.enabled}) & fixable
    fixed = lint(text, path=path, enabled=on, fix=True).fixed
    if fixed is None:
        return text
    out = reindent(fixed)
    for _ in range(3):  # alignment depends on the indentation; it settles in one or two rounds
        aligned = lint(out, path=path, enabled={"arrow_alignment"}, fix=True).fixed
        if aligned is None or aligned == out:
            break
        out = aligned
    return out


# a line that starts with, or follows a line that ends with, one of these continues an expression: it
# keeps a deeper indentation than its brackets give it (aligned operands, chained arrows)
_CONTINUE = frozenset(
    "AND OR IN_EDGE IN_EDGE_SUB OUT_EDGE OUT_EDGE_SUB EQUALS APPENDS FARROW PARROW PLUS MINUS TIMES DIV "
    "MODULO ISEQUAL NOTEQUAL MATCH NOMATCH LESSTHAN GREATERTHAN LESSEQUAL GREATEREQUAL QMARK DOT NOT".split()
)


def reindent(text: str) -> str:
    """Indent every code line by INDENT_WIDTH per level: one level deeper than the line that opened
    the innermost unclosed bracket (a line starting with a closing bracket: that line's level); a line
    continuing an expression keeps a deeper indentation it already has. Blank lines lose their blanks;
    lines inside strings, heredocs and comments keep theirs."""
    return _reindent(text)[0]


def indent_widths(text: str) -> dict[int, int]:
    """The indentation (in spaces) ``reindent`` gives each line it indents, by 1-based line number; a
    blank line gets what code typed on it would get (the editor's indentation after Enter)."""
    return _reindent(text)[1]


def _reindent(text: str) -> tuple[str, dict[int, int]]:
    toks, problem = tokenise(text)
    widths: dict[int, int] = {}
    if problem is not None:
        return text, widths
    out: list[Tok] = []
    stack: list[int] = []  # for each open bracket, the level it gives the lines inside it, minus one
    opened_on: list[int] = []  # ... the line it is on
    kinds: list[str] = []  # ... its type
    titled: list[bool] = []  # ... whether a resource title line (``'x':``) started the current body
    level = 0  # level of the current line
    cur = 0  # level for the brackets opened now: the line's, or less after closing an earlier line's
    line = 0
    line_first = ""  # type of the first code token of the current line
    last_code: Tok | None = None
    at_line_start = True
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if at_line_start:
            at_line_start = False
            j = i + 1 if t.type == "INDENT" else i
            first = toks[j] if j < n else None
            if first is not None and (first.type.startswith("HEREDOC") or j == 0):
                level = cur = stack[-1] + 1 if stack else 0
                continue  # a heredoc body, or the first line: left as it is
            if first is None or first.type == "NEWLINE":
                blank = (stack[-1] + 1 + (1 if titled[-1] else 0)) if stack else 0
                widths[t.line] = INDENT_WIDTH * blank
                i = j  # a blank line: no indentation
                continue
            closing = 0
            k = j
            while k < n and toks[k].type in _CLOSE:
                closing += 1
                k += 1
            if closing:
                level = stack[-min(closing, len(stack))] if stack else 0
            else:
                level = stack[-1] + 1 + (1 if titled and titled[-1] else 0) if stack else 0
            cur = level
            width = INDENT_WIDTH * level
            had = len(t.value) if t.type == "INDENT" else 0
            prev = last_code.type if last_code is not None else None
            continues = (
                first.type in _CONTINUE
                or prev in _CONTINUE
                or (
                    bool(kinds)
                    and kinds[-1] != "LBRACE"
                    and prev not in ("COMMA", "LPAREN", "LBRACK", "LBRACE")
                )
            )
            if continues and had - had % 2 > width:
                width = had - had % 2  # kept, but even (2sp_soft_tabs)
            if width:
                out.append(Tok("INDENT", " " * width))
            widths[first.line] = width
            line_first = first.type
            i = j
            continue
        out.append(t)
        if t.type in _OPEN:
            stack.append(cur)
            opened_on.append(line)
            kinds.append(t.type)
            titled.append(False)
        elif t.type in _CLOSE:
            if stack:
                v = stack.pop()
                kinds.pop()
                titled.pop()
                if opened_on.pop() != line:
                    cur = min(cur, v)
        elif t.type == "NEWLINE":
            at_line_start = True
            if (
                last_code is not None
                and last_code.type == "COLON"
                and titled
                and opened_on[-1] != line
                and line_first not in _CLOSE
            ):
                titled[-1] = True  # a title on a line of its own: its attributes one level deeper
            line += 1
        elif t.type == "SEMIC" and titled:
            titled[-1] = False
        if t.type not in ("WHITESPACE", "NEWLINE", "INDENT", "COMMENT", "MLCOMMENT", "SLASH_COMMENT"):
            last_code = t
        i += 1
    if at_line_start and toks and toks[-1].type == "NEWLINE":  # the empty last line
        blank = (stack[-1] + 1 + (1 if titled[-1] else 0)) if stack else 0
        widths[toks[-1].line + 1] = INDENT_WIDTH * blank
    link(out)
    return "".join(t.render() for t in out), widths
