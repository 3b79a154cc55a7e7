"""Quick fixes for the parser's and validator's findings (no pygls here), offered only where the fix is
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

Offsets are UTF-8 byte offsets into the analysed text, as the diagnostics' are.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

from puppet_xpp.grammar.check import CheckConfig, check
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.parser import parse
from puppet_xpp.server.analysis.document import Analysis

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
