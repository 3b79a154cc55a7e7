"""Puppet's UNCLOSED_QUOTE message names the text of the scanner's last regex match ("Unclosed quote
after 'x'").  For a string cut off after an interpolation that is whatever the last scan inside the
'${...}' matched (a name, a variable, the end of a quoted string, some whitespace, or nothing);
:func:`scanner_match` reconstructs it from the tokens lexed there.  Only used on that error path.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from puppet_xpp.grammar.lexer_text import BLANKS, NO_REGEX, WS_CHARS, WS_RE

if TYPE_CHECKING:
    from puppet_xpp.grammar.lexer import Engine

_BLANK_RUN = re.compile("[\\r" + BLANKS + "]+")
# token types Puppet scans with a regex of their own text
_SCANNED = frozenset(
    [
        "NUMBER",
        "NAME",
        "WORD",
        "CLASSREF",
        "CASE",
        "CLASS",
        "DEFAULT",
        "DEFINE",
        "IF",
        "ELSIF",
        "ELSE",
        "INHERITS",
        "NODE",
        "AND",
        "OR",
        "UNDEF",
        "BOOLEAN",
        "IN",
        "UNLESS",
        "FUNCTION",
        "TYPE",
        "ATTR",
        "PRIVATE",
        "PLAN",
        "APPLY",
    ]
)


def scanner_match(self: Engine, last: str | tuple[int, int, int, int] | None) -> str | None:
    """The scanner's last match before an UNCLOSED_QUOTE: ``last`` is a string or None (known), or
    (first token index, end token index, expression start, expression end) of an interpolation."""
    if not isinstance(last, tuple):
        return last
    n0, n1, start, close = last
    text = self.text
    toks: list[Any] = self.toks  # lark types positions as optional; every lexed token has them
    pre = {i0: (i1, after) for i0, i1, after in self.preconv}
    m = _BLANK_RUN.match(text, start)
    matched = m.group() if m else None
    cur = m.end() if m else start
    i = n0
    while i < n1:
        if i in pre:
            i, after = pre[i]
            if after is not None:  # the bytes of a multi-byte OTHER character
                matched = _gap(self, cur, after - 1, matched)
                matched = None
                cur = after
            continue
        t = toks[i]
        typ = t.type
        if t.start_pos < cur:
            i += 1
            continue
        matched = _gap(self, cur, t.start_pos, matched)
        cur = t.end_pos
        if typ == "HEREDOC":
            matched = "\n"
        elif typ == "DQPRE":
            nest = 0
            j = i
            while j < n1:
                tt = toks[j].type
                if tt == "DQPRE":
                    nest += 1
                elif tt == "DQPOST":
                    nest -= 1
                    if nest == 0:
                        break
                j += 1
            if j >= n1:
                return None
            t = toks[j]
            cur = t.end_pos
            matched = _quote_match(self, t.start_pos, t.end_pos)
            i = j
        elif typ == "STRING":
            matched = _quote_match(self, t.start_pos + 1, t.end_pos)
        elif typ == "REGEX":
            raw = text[t.start_pos : t.end_pos]
            matched = "/" if "/" in raw[1:-1] else raw
        elif typ == "VARIABLE":
            raw = text[t.start_pos : t.end_pos]
            matched = raw if raw != "$" else None
        elif typ in _SCANNED:
            matched = text[t.start_pos : t.end_pos]
        elif typ == "OTHER":
            matched = None
        elif typ == "DIV":
            prev = toks[i - 1].type if i > n0 else None
            if prev not in NO_REGEX:
                matched = None
        i += 1
    return _gap(self, cur, close, matched)


def _gap(self: Engine, a: int, b: int, matched: str | None) -> str | None:
    text = self.text
    i = a
    while i < b:
        c = text[i]
        if c == "\n" or text.startswith("/*", i):
            if c == "\n":
                i += 1
            else:
                j = text.find("*/", i + 2)
                i = b if j < 0 else j + 2
            m = _BLANK_RUN.match(text, i)
            matched = m.group() if m else None
            if m:
                i = m.end()
        elif c in WS_CHARS:
            i = _end(WS_RE.match(text, i), i)
            matched = None
        elif c == "#":
            j = text.find("\n", i)
            i = b if j < 0 else j
            matched = None
        else:
            break
    return matched


def _end(m: re.Match[str] | None, i: int) -> int:
    return m.end() if m is not None else i


def _quote_match(self: Engine, s0: int, end: int) -> str:
    text: str = self.text
    j = end - 1
    while j > s0 and text[j - 1] == "\\":
        j -= 1
    return text[j - 1 if j > s0 else s0 : end]
