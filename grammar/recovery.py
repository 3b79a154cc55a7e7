"""Where error recovery resumes: the token scans of grammar.parser's recovery, and a memo of them.

After a syntax error the parser looks for the next statement start: inside the innermost open body
(resume_in_block) or at the top level (next_resume).  Each scan walks the tokens after the error with
a small state (the brackets the cut statement left open, or a bracket depth) until it finds one; when
there is none it walks to the end of the text.  In a language server that happens on every keystroke
while a statement is broken (`notice('x', [1, {` typed in a resource body leaves brackets open that
no later token closes): on a 300 KB file, 2 + 2 + 9 ms of scanning per keystroke over tokens that did
not change.

A ScanMemo (kept by grammar.incremental across updates) removes that: each scan records, every
ScanMemo.STEP tokens after the error, its state there, and at its end where it ended.  A later scan
that reaches one of those tokens, unchanged since (the incremental parser drops the entries whose
future an edit touched: ScanMemo.spliced), in the same state would do exactly what that scan did
from there on, so it ends where that one ended.
"""

from __future__ import annotations

import bisect
from typing import Any

OPENERS = frozenset(("LBRACE", "SELBRACE", "LBRACK", "LISTSTART", "LPAREN", "WSLPAREN"))
# Tokens a statement plausibly starts with: where recovery may resume parsing.
STARTERS = frozenset(
    (
        "NAME",
        "VARIABLE",
        "CLASSREF",
        "CLASS",
        "DEFINE",
        "NODE",
        "FUNCTION",
        "TYPE",
        "PLAN",
        "APPLY",
        "IF",
        "UNLESS",
        "CASE",
        "AT",
        "ATAT",
        "STRING",
        "DQPRE",
        "WORD",
        "LISTSTART",
        "LBRACE",
        "WSLPAREN",
        "NOT",
        "HEREDOC",
        "NUMBER",
        "BOOLEAN",
        "UNDEF",
        "DEFAULT",
        "MINUS",
        "REGEX",
    )
)
CLOSERS = frozenset(("RBRACE", "RBRACK", "RPAREN"))

_KIND = {
    "LBRACE": "{",
    "SELBRACE": "{",
    "RBRACE": "{",
    "LBRACK": "[",
    "LISTSTART": "[",
    "RBRACK": "[",
    "LPAREN": "(",
    "WSLPAREN": "(",
    "RPAREN": "(",
}

_NEVER = 1 << 62  # (a token index no scan reaches)


class ScanMemo:
    """Scan states at tokens of one token list, and where each scan from there ended (see the module
    docstring).  ``entries``: token index -> [(token, state, end - index or None (no resume point),
    what the scan returns beside the end)]."""

    STEP = 256  # tokens between two recorded states of a scan
    LIMIT = 4096  # recorded states beyond which the memo starts afresh (a bound over a long session)

    def __init__(self) -> None:
        self.tokens: list[Any] | None = None  # the list the indices are of
        self.entries: dict[int, list[tuple[Any, Any, int | None, Any]]] = {}
        self.keys: list[int] = []  # entries' indices, sorted
        self.size = 0  # recorded states
        self.hits = 0  # scans that ended at a recorded state (for tests and the benchmark)
        # resume_in_block's brackets before the error, counted from a body's first tokens: token index
        # k -> (the token where the count began, token k, the brackets open before k); a later scan
        # from the same token goes on from the last such index at or before its error (Before)
        self.before: dict[int, tuple[Any, Any, tuple[str, ...]]] = {}
        self.before_keys: list[int] = []
        self.counts_taken = 0  # scans that went on from such a count (for tests)

    def use(self, tokens: list[Any]) -> None:
        """A scan of ``tokens`` begins (another list than the last: the memo starts afresh for it)."""
        if self.tokens is not tokens or self.size > self.LIMIT or len(self.before) > self.LIMIT:
            self.tokens = tokens
            self.entries = {}
            self.keys = []
            self.size = 0
            self.before = {}
            self.before_keys = []

    def spliced(self, tokens: list[Any], m0: int, m1_old: int, delta: int) -> None:
        """tokens[m0:m1_old] were replaced (delta tokens more): a state recorded at index k went on over
        tokens k-1, k, ... (the newline before token k is read from token k-1), so only the entries
        after the replaced ones stay, moved."""
        if self.tokens is not tokens:
            return
        keep: dict[int, list[tuple[Any, Any, int | None, Any]]] = {}
        for k, v in self.entries.items():
            if k > m1_old:
                keep[k + delta] = v
        self.entries = keep
        self.keys = sorted(keep)
        self.size = sum(map(len, keep.values()))
        # (a count of brackets up to token k read tokens before k only)
        self.before = {k: v for k, v in self.before.items() if k <= m0}
        self.before_keys = sorted(self.before)

    def counted(self, tokens: list[Any], start: int, err: int) -> tuple[int, list[str]] | None:
        """(k, brackets open before token k) of an earlier count from token ``start`` (still there), at
        the last recorded index k, start < k <= err; None when there is none."""
        if self.tokens is not tokens:
            return None
        keys = self.before_keys
        j = bisect.bisect_right(keys, err)
        first = tokens[start]
        tries = 0
        while j > 0 and tries < 8:
            j -= 1
            k = keys[j]
            if k <= start:
                return None
            s, tok, open_ = self.before[k]
            if s is first and tokens[k] is tok:
                self.counts_taken += 1
                return k, list(open_)
            tries += 1
        return None

    def count(self, tokens: list[Any], start: int, k: int, open_: list[str]) -> None:
        """A count from token ``start`` had ``open_`` open before token k."""
        if self.tokens is not tokens:
            return
        if k not in self.before:
            bisect.insort(self.before_keys, k)
        self.before[k] = (tokens[start], tokens[k], tuple(open_))

    def next_key(self, k: int) -> int:
        """The first recorded index at or after k."""
        keys = self.keys
        j = bisect.bisect_left(keys, k)
        return keys[j] if j < len(keys) else _NEVER

    def find(self, k: int, tok: Any, state: Any) -> tuple[bool, int | None, Any]:
        """(found, where the scan ends, what it returns beside) for a scan at token index k in state."""
        for t, s, off, extra in self.entries.get(k, ()):
            if t is tok and s == state:
                self.hits += 1
                return True, (None if off is None else k + off), extra
        return False, None, None

    def record(self, marks: list[tuple[int, Any, Any]], end: int | None, extra: Any = None) -> None:
        """A scan that passed (index, token, state) ``marks`` ended at ``end``."""
        if not marks:
            return
        entries = self.entries
        for k, tok, state in marks:
            entries.setdefault(k, []).append((tok, state, None if end is None else end - k, extra))
        self.size += len(marks)
        self.keys = sorted(entries)


class _Marks:
    """One scan's use of a ScanMemo: its states are looked up and recorded after the error only
    (``look``, ``mark``: the next token indices where it does either; the scan loop compares them)."""

    __slots__ = ("memo", "marks", "look", "mark")

    def __init__(self, memo: ScanMemo | None, tokens: list[Any], first: int) -> None:
        self.memo = memo
        self.marks: list[tuple[int, Any, Any]] = []
        self.look = self.mark = _NEVER
        if memo is not None:
            memo.use(tokens)
            self.look = memo.next_key(first)
            self.mark = first

    def at(self, k: int, tok: Any, state: Any) -> tuple[bool, int | None, Any]:
        """At token index k (a look or a mark) in state: (found, end, extra) as ScanMemo.find."""
        memo = self.memo
        assert memo is not None
        if k == self.look:
            found = memo.find(k, tok, state)
            if found[0]:
                self.done(found[1], found[2])
                return found
            self.look = memo.next_key(k + 1)
        if k == self.mark:
            self.marks.append((k, tok, state))
            self.mark += ScanMemo.STEP
        return False, None, None

    def done(self, end: int | None, extra: Any = None) -> None:
        if self.memo is not None:
            self.memo.record(self.marks, end, extra)
            self.memo = None


def resume_in_block(
    tokens: list[Any], data: bytes, lbrace: int, err: int, n: int, memo: ScanMemo | None = None
) -> int | None:
    """After an error at token err inside the body opened by the `{` at token index lbrace: the next
    statement start of that body (first on its line, outside every bracket the cut statement opened;
    the error token itself may be one), or the `}` that closes the body.  Brackets are matched by
    kind, so a bracket the cut statement left open does not swallow the body's `}`."""
    open_: list[str] = []
    memo = memo if n == len(tokens) else None
    m = _Marks(memo, tokens, err + 1)
    look, mark = m.look, m.mark
    first = lbrace + 1
    count = _NEVER  # (where the brackets open before the error are recorded)
    if memo is not None and first < err:
        counted = memo.counted(tokens, lbrace, err)
        if counted is not None:
            first, open_ = counted
        count = min(err, first + ScanMemo.STEP)
    for k in range(first, n):
        if k == count:
            assert memo is not None
            memo.count(tokens, lbrace, k, open_)
            count = min(err, k + ScanMemo.STEP) if k < err else _NEVER
        if k == look or k == mark:
            found, end, _ = m.at(k, tokens[k], ("b", tuple(open_)))
            if found:
                return end
            look, mark = m.look, m.mark
        t = tokens[k]
        ty = t.type
        if ty in CLOSERS:
            kind = _KIND[ty]
            if kind in open_:
                while open_.pop() != kind:
                    pass
            elif (
                kind == "{" and k >= err and (not open_ or b"\n" in data[tokens[k - 1].end_pos : t.start_pos])
            ):
                m.done(k)
                return k  # the body's own `}` (with brackets left open, only when it begins a line)
        elif not open_ and k >= err and ty in STARTERS:
            if b"\n" in data[tokens[k - 1].end_pos : t.start_pos]:
                m.done(k)
                return k
        if ty in OPENERS:
            open_.append(_KIND[ty])
    m.done(None)
    return None


def next_resume(
    tokens: list[Any],
    data: bytes,
    scan_from: int,
    depth: int,
    err: int,
    chunk_start: int,
    memo: ScanMemo | None = None,
) -> tuple[int | None, int | None]:
    """Where recovery resumes after a syntax error at token `err`: (token index, bracket depth before
    it), or (None, None).  The candidates are tokens that start a statement, stand first on their line
    and lie either outside all brackets or in the first column (top-level code is rarely indented); the
    error token itself qualifies unless the parse started there.  Scanning starts at `scan_from`, a
    token with `depth` open brackets before it (the language server resumes from a boundary too)."""
    n = len(tokens)
    first = max(scan_from, err if err > chunk_start else err + 1)
    if not any(t.type in STARTERS for t in tokens[first:n]):
        # no candidate after the error (the usual last one: a stray `}` at the end of a file whose
        # body recovery closed early): the scan would count brackets over everything from scan_from
        return None, None
    d = depth
    m = _Marks(memo, tokens, max(err + 1, scan_from))
    look, mark = m.look, m.mark
    for k in range(scan_from, n):
        if k == look or k == mark:
            found, end, d_end = m.at(k, tokens[k], ("t", d))
            if found:
                return (end, d_end) if end is not None else (None, None)
            look, mark = m.look, m.mark
        t = tokens[k]
        ty = t.type
        if ty in CLOSERS:
            d = max(0, d - 1)
        if (k > err or (k == err and err > chunk_start)) and ty in STARTERS:
            s = t.start_pos
            if (k == 0 or b"\n" in data[tokens[k - 1].end_pos : s]) and (
                d == 0 or s == 0 or data[s - 1 : s] == b"\n"
            ):
                m.done(k, d)
                return k, d
        if ty in OPENERS:
            d += 1
    m.done(None)
    return None, None
