"""The token stream the lint checks walk: our lexer's tokens, re-cut to the shape puppet-lint's checks see.

puppet-lint's checks are defined over its own token stream, which differs from Puppet's Lexer2 stream in
ways that decide what a check reports: whitespace, newlines, indentation and comments are tokens;
single- and double-quoted strings are different types, each with its raw (unescaped) text; ``$a[1]`` and
``$a-b`` are one VARIABLE; a name directly followed by ``(`` is a FUNCTION_NAME; ``Integer``, ``String``...
are TYPE tokens; string interpolations and heredoc bodies are split into PRE/MID/POST segments. Positions
are lines and 1-based character columns counted the way puppet-lint counts them (from each token's
rendered text, which is what makes its columns after an unenclosed ``$var`` what they are).

How the stream is built: our lexer (``grammar.lexer.Lexer``) finds every code token and its span; the
spans between tokens hold only trivia (blanks, newlines, comments), which become the formatting tokens;
the text of a code token is cut into puppet-lint's token kinds by the rules in ``_WORD_RULES``; a string
literal's inside is split into segments the way puppet-lint does (its rules for ``${``, ``$name``, ``\\"``),
and the code of each ``${...}`` is lexed by our lexer again. A text our lexer rejects yields a
:class:`LexProblem` (puppet-lint's "Syntax error") instead of tokens.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from puppet_xpp.grammar.lexer import Lexer
from puppet_xpp.lint.strings import BLANK_CHARS, Slurper

# token types that carry no code (puppet-lint's "formatting tokens")
FORMATTING = frozenset({"WHITESPACE", "NEWLINE", "COMMENT", "MLCOMMENT", "SLASH_COMMENT", "INDENT"})

# reserved words: a NAME spelled like one becomes a token of the upper-cased type
KEYWORDS = frozenset(
    "case class default define import if elsif else inherits node and or undef false true in unless "
    "function type attr private".split()
)

_TYPE_NAMES = (
    "Integer|Float|Boolean|Regexp|String|Array|Hash|Resource|Class|Collection|Scalar|Numeric|"
    "CatalogEntry|Data|Tuple|Struct|Optional|NotUndef|Variant|Enum|Pattern|Any|Callable|Type|Runtime|"
    "Undef|Default|Sensitive"
)
_NAME = r"((?:(?:::)?[_a-z0-9][-\w]*)(?:::[a-z0-9][-\w]*)*)"
# word tokens, in the order puppet-lint tries them (a NUMBER starts with a digit, so the word boundary
# puppet-lint requires before it always holds)
_WORD_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pat, re.ASCII))
    for name, pat in (
        ("TYPE", rf"({_TYPE_NAMES})\b"),
        ("CLASSREF", r"(((::)?[A-Z][-\w]*)+)"),
        ("NUMBER", r"((?:0[xX][0-9A-Fa-f]+|0?\d+(?:\.\d+)?(?:[eE]-?\d+)?))\b"),
        ("FUNCTION_NAME", _NAME + r"(?=\()"),
        ("NAME", _NAME),
    )
)
# punctuation: the longest literal wins, which is the order puppet-lint tries them in
_PUNCT: dict[str, str] = {
    "[": "LBRACK", "]": "RBRACK", "{": "LBRACE", "}": "RBRACE", "(": "LPAREN", ")": "RPAREN",
    "==": "ISEQUAL", "=~": "MATCH", "=>": "FARROW", "=": "EQUALS", "+=": "APPENDS", "+>": "PARROW",
    "+": "PLUS", ">=": "GREATEREQUAL", ">>": "RSHIFT", ">": "GREATERTHAN", "<=": "LESSEQUAL",
    "<<|": "LLCOLLECT", "<-": "OUT_EDGE", "<~": "OUT_EDGE_SUB", "<|": "LCOLLECT", "<<": "LSHIFT",
    "<": "LESSTHAN", "!~": "NOMATCH", "!=": "NOTEQUAL", "!": "NOT", "|>>": "RRCOLLECT", "|>": "RCOLLECT",
    "->": "IN_EDGE", "~>": "IN_EDGE_SUB", "-": "MINUS", ",": "COMMA", ".": "DOT", ":": "COLON",
    ";": "SEMIC", "?": "QMARK", "\\": "BACKSLASH", "*": "TIMES", "%": "MODULO", "|": "PIPE",
    "/": "DIV", "@": "AT",
}  # fmt: skip
# Puppet token types whose text is one puppet-lint token of a fixed type
_DIRECT = {
    "COMMA": "COMMA", "LBRACE": "LBRACE", "SELBRACE": "LBRACE", "RBRACE": "RBRACE", "LPAREN": "LPAREN",
    "WSLPAREN": "LPAREN", "RPAREN": "RPAREN", "LBRACK": "LBRACK", "LISTSTART": "LBRACK", "RBRACK": "RBRACK",
    "FARROW": "FARROW", "EQUALS": "EQUALS", "COLON": "COLON", "SEMIC": "SEMIC", "QMARK": "QMARK",
    "IN_EDGE": "IN_EDGE", "IN_EDGE_SUB": "IN_EDGE_SUB", "ISEQUAL": "ISEQUAL", "NOTEQUAL": "NOTEQUAL",
    "MATCH": "MATCH", "NOMATCH": "NOMATCH", "PIPE": "PIPE", "DOT": "DOT",
}  # fmt: skip
# Puppet token types that are a word (name, reference, keyword)
_WORDLIKE = frozenset(
    "NAME CLASSREF BOOLEAN UNDEF DEFAULT CASE CLASS DEFINE IF ELSIF ELSE INHERITS NODE AND OR IN UNLESS "
    "FUNCTION TYPE ATTR PRIVATE".split()
)
_TYPE_SET = frozenset(_TYPE_NAMES.split("|"))
_LOWER_WORDS = _WORDLIKE - {"CLASSREF"}
_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:")
_BLANK = re.compile(f"[{BLANK_CHARS}]+")
_EOL = re.compile(r"\r\n|\r|\n")
_TRIVIA = re.compile(
    rf"(?P<nl>(?P<eol>\r\n|\r|\n)(?P<ind>[{BLANK_CHARS}]+)?)|(?P<ws>[{BLANK_CHARS}]+)"
    r"|(?P<c>#[^\r\n]*)|(?P<sc>//[^\r\n]*)|(?P<ml>/\*.*?(?:\*/|\Z))",
    re.DOTALL,
)
_VARIABLE = re.compile(r"\$((::)?(\w+(-\w+)*::)*\w+(-\w+)*(\[.+?\])*)", re.ASCII)
# the empty alternative first, as Ruby tries its ``\A`` alternative first
_PLAIN_VAR = re.compile(r"\$(::)?(\w+::)*\w+", re.ASCII)


class Tok:
    """One token: puppet-lint's type name, value and raw text, position, and its neighbours."""

    __slots__ = ("type", "value", "raw", "line", "column", "prev", "next", "prev_code", "next_code", "idx")

    def __init__(self, type_: str, value: str, raw: str | None = None, line: int = 0, column: int = 0):
        self.type = type_
        self.value = value
        self.raw = raw
        self.line = line
        self.column = column
        self.prev: Tok | None = None
        self.next: Tok | None = None
        self.prev_code: Tok | None = None
        self.next_code: Tok | None = None
        self.idx = -1  # position in the list, as of the last link()

    def __repr__(self) -> str:
        return f"<Tok {self.type} {self.value!r} @{self.line}:{self.column}>"

    def render(self, *, creating: bool = False) -> str:
        """The token's text in the manifest. ``creating``: as when the token was appended (no next
        token yet), which is what puppet-lint's column counting sees."""
        t = self.type
        v = self.value
        if t == "STRING":
            return f'"{v}"'
        if t == "SSTRING":
            return f"'{v}'"
        if t == "DQPRE":
            return f'"{v}{self._suffix(creating)}'
        if t == "DQPOST":
            return f'{self._prefix()}{v}"'
        if t == "DQMID" or t == "HEREDOC_MID":
            return f"{self._prefix()}{v}{self._suffix(creating)}"
        if t == "VARIABLE":
            pc = self.prev_code
            if pc is not None and pc.type in _INTERP_OPEN:
                return v if self.raw is None else self.raw
            return f"${v}"
        if t == "UNENC_VARIABLE":
            return f"${v}"
        if t == "SLASH_COMMENT":
            # puppet-lint renders it without its "//" (a fix run with slash_comments off turns the
            # comment into code); we keep the comment a comment
            return f"//{v}"
        if t == "NEWLINE":
            return "\n"
        if t == "COMMENT":
            return f"#{v}"
        if t == "REGEX":
            return f"/{v}/"
        if t == "MLCOMMENT" or t == "HEREDOC":
            return self.raw or ""
        if t == "HEREDOC_OPEN":
            return f"@({v})"
        if t == "HEREDOC_PRE":
            return f"{v}{self._suffix(creating)}"
        if t == "HEREDOC_POST":
            return f"{self._prefix()}{self.raw}"
        return v

    def _suffix(self, creating: bool) -> str:
        n = None if creating else self.next
        if n is not None and n.type in ("UNENC_VARIABLE", "DQMID", "DQPOST", "HEREDOC_MID", "HEREDOC_POST"):
            return ""
        return "${"

    def _prefix(self) -> str:
        p = self.prev
        if p is not None and p.type in ("UNENC_VARIABLE", "DQPRE", "DQMID", "HEREDOC_PRE", "HEREDOC_MID"):
            return ""
        return "}"

    def is_interpolated_variable(self) -> bool:
        """Whether this token, first in a ``${...}``, names a variable (puppet-lint's rule)."""
        if self.type == "TYPE" and self.value != "type":
            return False
        return self.type == "NAME" or self.type.lower() in KEYWORDS


class _Fresh(Tok):
    """A token made by the builder: only its type, value and raw text are set here; ``_link_and_number``
    (which every built list goes through) sets the links and the position, so they are stored once."""

    __slots__ = ()

    def __init__(self, type_: str, value: str, raw: str | None = None):
        self.type = type_
        self.value = value
        self.raw = raw


@dataclass
class LexProblem:
    """A text the lint lexer cannot cut into tokens: puppet-lint's "Syntax error"."""

    line: int
    column: int
    reason: str | None = None


class _Fail(Exception):
    def __init__(self, pos: int, reason: str | None = None):
        super().__init__(reason)
        self.pos = pos
        self.reason = reason


def link(tokens: list[Tok]) -> None:
    """Set every token's prev/next and prev_code/next_code links and its position from the list."""
    prev: Tok | None = None
    prev_code: Tok | None = None
    formatting = FORMATTING
    for i, t in enumerate(tokens):
        t.idx = i
        t.prev = prev
        t.next = None
        t.next_code = None
        if prev is not None:
            prev.next = t
        t.prev_code = prev_code
        if t.type not in formatting:
            if prev_code is not None:
                prev_code.next_code = t
            prev_code = t
        prev = t


def unlink(tokens: list[Tok], keep: set[int] | frozenset[int] = frozenset()) -> None:
    """Undo :func:`link` (every neighbour link None) but for the tokens whose id() is in ``keep``: the
    tokens then hold no cycles, and reference counting frees them when the list goes."""
    for t in tokens:
        if keep and id(t) in keep:
            continue
        t.prev = t.next = t.prev_code = t.next_code = None


def _link_and_number(tokens: list[Tok]) -> dict[str, list[int]]:
    """``link`` plus the line and column puppet-lint gives each token, in one pass (the hot path of
    tokenise, on the builder's fresh tokens: every link and position is set here); returns the positions
    of each type."""
    return _number_run(tokens, None, None, 1, 1)[0]


def _number_run(
    tokens: list[Tok], before: Tok | None, before_code: Tok | None, line: int, col: int
) -> tuple[dict[str, list[int]], int, int]:
    """:func:`_link_and_number` of a run of tokens that continues a stream: ``before`` and ``before_code``
    stand for the stream's last token and last code token (only their types are read: a token's
    rendering looks at its neighbours' types), ``line`` and ``col`` where the run starts; returns the
    positions of each type in the run, and the line and column after it."""
    by: dict[str, list[int]] = {}
    start = _Fresh("", "")  # stands before the first token while linking (no None tests in the loop)
    prev: Tok = start if before is None else before
    prev_code: Tok = start if before_code is None else before_code
    formatting = FORMATTING
    simple = _SIMPLE
    for i, t in enumerate(tokens):
        t.idx = i
        t.prev = prev
        prev.next = t
        t.prev_code = prev_code
        ty = t.type
        lst = by.get(ty)
        if lst is None:
            by[ty] = [i]
        else:
            lst.append(i)
        if ty not in formatting:
            prev_code.next_code = t
            prev_code = t
        else:
            t.next_code = None
        prev = t
        t.line = line
        if ty in simple:
            t.column = col
            col += len(t.value)
            continue
        if ty == "NEWLINE":
            t.column = col
            line += 1
            col = 1
            continue
        # the frequent rest, rendered inline (as render(creating=True) does)
        if ty == "COMMENT":  # "#" + a value without line breaks
            t.column = col
            col += len(t.value) + 1
            continue
        if ty == "VARIABLE":
            pc = t.prev_code
            if pc is None or pc.type not in _INTERP_OPEN:  # "$" + a name without line breaks
                t.column = col
                col += len(t.value) + 1
                continue
        elif ty == "SSTRING":
            v = t.value
            if "\n" not in v and "\r" not in v:
                t.column = col
                col += len(v) + 2
                continue
        elif ty == "UNENC_VARIABLE":
            col -= 2
        t.column = col
        text = t.render(creating=True)
        if "\n" in text or "\r" in text:
            parts = _EOL.split(text)
            line += len(parts) - 1
            col = len(parts[-1]) + 1
        else:
            col += len(text)
    prev.next = None
    prev_code.next_code = None
    if tokens:
        if before is None:
            tokens[0].prev = None
        for t in tokens:  # up to the first code token: no code before them
            if t.prev_code is not start:
                break
            t.prev_code = None
    return by, line, col


# the tokens after which a VARIABLE renders as its raw text (the inside of a string's ``${...}``)
_INTERP_OPEN = frozenset({"DQPRE", "DQMID", "HEREDOC_PRE", "HEREDOC_MID"})
# token types rendered as their value, which never holds a line break
_SIMPLE = frozenset(
    "WHITESPACE INDENT CLASSREF TYPE NUMBER FUNCTION_NAME NAME DIV AT".split()
    + list(_PUNCT.values())
    + [k.upper() for k in KEYWORDS]
)


def tokenise(text: str) -> tuple[list[Tok], LexProblem | None]:
    """The lint tokens of ``text`` (linked and numbered), or the reason it cannot be tokenised."""
    toks, problem, _ = tokenise_indexed(text)
    return toks, problem


def tokenise_indexed(text: str) -> tuple[list[Tok], LexProblem | None, dict[str, list[int]]]:
    """:func:`tokenise` plus the positions of each token type (made in the same pass)."""
    try:
        toks = _Builder(text).build()
    except _Fail as f:
        return [], _problem_at(text, f.pos, f.reason), {}
    return toks, None, _link_and_number(toks)


# tokens per run of :func:`tokenise_runs` (a few MB of token objects at a time)
RUN = 16384


def tokenise_runs(text: str, take: Callable[[list[Tok], dict[str, list[int]]], None]) -> LexProblem | None:
    """:func:`tokenise_indexed` a run of tokens at a time, for a text too large to hold one object per
    token (lint.columns keeps them in columns): ``take`` gets each run, linked among itself and numbered
    as part of the whole stream, with the positions of its types relative to the run; the run is then
    unlinked and dropped. Returns the reason the text cannot be tokenised (``take`` may have had runs
    before it: the caller discards them)."""
    state: list[Any] = [None, None, 1, 1]  # the stream's last token, last code token, line, column

    def run(tokens: list[Tok]) -> None:
        if not tokens:
            return
        by, state[2], state[3] = _number_run(tokens, state[0], state[1], state[2], state[3])
        take(tokens, by)
        for before in state[:2]:  # (their links into this run)
            if before is not None:
                before.next = before.next_code = None
        last = tokens[-1]
        state[0] = _Fresh(last.type, last.value, last.raw)  # (its type is all the next run reads)
        code = last if last.type not in FORMATTING else last.prev_code
        if code is not None and code is not state[1]:
            state[1] = _Fresh(code.type, code.value, code.raw)
        for t in tokens:  # the forward links are all the cycles (reference counting frees the rest)
            t.next = t.next_code = None
        tokens.clear()

    builder = _Builder(text)
    builder.sink = run
    try:
        rest = builder.build()
    except _Fail as f:
        return _problem_at(text, f.pos, f.reason)
    run(rest)
    return None


def tokenise_fragment(text: str) -> list[Tok]:
    """Tokens of a piece of code (a fix's inserted text), linked and numbered from the fragment's start;
    raises ValueError if it does not lex."""
    try:
        toks = _Builder(text).build()
    except _Fail as f:
        raise ValueError(f.reason or "syntax error") from None
    _link_and_number(toks)
    return toks


def _problem_at(text: str, pos: int, reason: str | None) -> LexProblem:
    before = text[:pos]
    line = before.count("\n") + 1
    return LexProblem(line, pos - (before.rfind("\n") + 1) + 1, reason)


def _byte_table(text: str) -> tuple[list[int], list[int]]:
    """For a non-ASCII text: the byte offset of each non-ASCII character, and the bytes beyond one per
    character up to and including it; each list starts with a sentinel (-1, 0) so that a byte offset
    ``b`` maps to ``b - extra[bisect_left(starts, b) - 1]``."""
    starts: list[int] = [-1]
    extra: list[int] = [0]
    more = 0
    for m in _NON_ASCII.finditer(text):
        starts.append(m.start() + more)
        more += len(m.group().encode("utf-8", "surrogatepass")) - 1
        extra.append(more)
    return starts, extra


def _char_offsets(text: str) -> Callable[[int], int] | None:
    """byte offset -> char offset (None for ASCII text, where they are equal)."""
    if text.isascii():
        return None
    starts, extra = _byte_table(text)

    def to_char(b: int) -> int:
        return b - extra[bisect_left(starts, b) - 1]

    return to_char


def _char_spans(text: str, ptoks: list[Any]) -> list[tuple[int, int, str]]:
    """(start, end, type) of each lexer token in characters of a non-ASCII text (one table, inline)."""
    starts, extra = _byte_table(text)
    bl = bisect_left
    return [
        (
            t.start_pos - extra[bl(starts, t.start_pos) - 1],
            t.end_pos - extra[bl(starts, t.end_pos) - 1],
            t.type,
        )
        for t in ptoks
    ]


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_SPAN = attrgetter("start_pos", "end_pos", "type")
# a lower-case word without dashes that our lexer makes one NAME (or keyword) token of
_PLAIN_NAME_RE = r"(?:::)?[a-z][a-z0-9_]*(?:::[a-z][a-z0-9_]*)*"
_PLAIN_NAME = re.compile(_PLAIN_NAME_RE, re.ASCII)
# the inside of a double-quoted string made of plain text (no "$", "\", braces) and "${name}"s (a name
# the builder makes one NAME or keyword token of, which puppet-lint's rules make the VARIABLE); and the
# split of such an inside into text, name, text, ..., text
_SIMPLE_DQ = re.compile(rf'((?:[^$\\{{}}"]*\$\{{{_PLAIN_NAME_RE}\}})+[^$\\{{}}"]*)"', re.ASCII)
_SIMPLE_INTERP = re.compile(rf"\$\{{({_PLAIN_NAME_RE})\}}", re.ASCII)


class _Builder:
    def __init__(self, text: str):
        self.text = text
        self.out: list[Tok] = []
        self.heredocs: list[str] = []
        self.eol_from = -1  # the last line-end search: where it started and what it found
        self.eol = -1
        # tokenise_runs: takes (and empties) ``out`` whenever it holds RUN tokens
        self.sink: Callable[[list[Tok]], None] | None = None

    def line_end(self, pos: int) -> int:
        """Where the line holding ``pos`` ends: :func:`_line_end`, remembered, so that the words of one
        long line (a one-line list of 600,000 items) do not each search to its end again."""
        if self.eol_from <= pos <= self.eol:
            return self.eol
        self.eol_from = pos
        self.eol = _line_end(self.text, pos)
        return self.eol

    def build(self) -> list[Tok]:
        text = self.text
        plain = _PLAIN_NAME.fullmatch(text)
        if plain is not None:
            # the code of a "${name}" (most interpolations): one word, no need to lex it
            v = plain.group()
            return [_Fresh(v.upper() if v in KEYWORDS else "NAME", v)]
        masked = text
        for _ in range(10_000):
            lx = Lexer(masked)
            ptoks = lx.tokens()
            table = _char_offsets(masked)
            spans: Iterable[tuple[int, int, str]]
            if table is None:
                spans = map(_SPAN, ptoks)  # byte offsets are character offsets
            else:
                spans = _char_spans(masked, ptoks)
            at = _slash_comment(masked, ptoks, table) if "//" in masked else None
            if at is None:
                if table is None:
                    spans = _drained(ptoks)
                else:
                    ptoks.clear()  # (spans holds what is needed of them)
                break
            # a `//` comment (puppet-lint has them, Puppet does not): our lexer sees a regex or two
            # divisions there; blank it out (same length) and lex again; trivia() makes the comment
            e = _line_end(masked, at)
            if masked[e - 1 : e] == "\r":
                e -= 1
            masked = masked[:at] + " " * (e - at) + masked[e:]
        if lx.error is not None:
            end = len(text) if lx.error.offset is None else lx.error.offset
            at = end if table is None else table(end)
            if lx.error.code == "UNCLOSED_QUOTE" and at > 0:
                # puppet-lint reports an unclosed string at its quote
                raise _Fail(at - 1, "unterminated string" if text[at - 1] == '"' else None)
            raise _Fail(at)
        pos = 0
        append = self.out.append
        direct = _DIRECT
        plain_var = _PLAIN_VAR.fullmatch
        heredocs = self.heredocs
        fresh = _Fresh
        keywords = KEYWORDS
        lower_words = _LOWER_WORDS
        type_set = _TYPE_SET
        out = self.out
        sink = self.sink
        for start, end, ptype in spans:
            if sink is not None and len(out) >= RUN:
                sink(out)
            if start < pos:
                continue  # inside a token already made (a heredoc body, a merged variable...)
            if pos < start:
                c = text[pos]
                if start == pos + 1 and c == " ":
                    append(fresh("WHITESPACE", " "))
                    pos = start
                elif c == "\n" and not heredocs and text.count(" ", pos + 1, start) == start - pos - 1:
                    append(fresh("NEWLINE", "\n"))
                    if start > pos + 1:
                        append(fresh("INDENT", text[pos + 1 : start]))
                    pos = start
                elif text.count(" ", pos, start) == start - pos:  # a run of spaces (alignment)
                    append(fresh("WHITESPACE", text[pos:start]))
                    pos = start
                elif (
                    not heredocs and text.count(" ", pos, start) + text.count("\n", pos, start) == start - pos
                ):
                    # spaces and line ends only (blank lines): what trivia() makes of them
                    lines = text[pos:start].split("\n")
                    if lines[0]:
                        append(fresh("WHITESPACE", lines[0]))
                    for ind in lines[1:]:
                        append(fresh("NEWLINE", "\n"))
                        if ind:
                            append(fresh("INDENT", ind))
                    pos = start
                else:
                    while pos < start:
                        pos = self.trivia(pos, start)
                    if start < pos:
                        continue
            fast = direct.get(ptype)
            if fast is not None:
                append(fresh(fast, text[pos:end]))
                pos = end
                continue
            after = text[end : end + 1]
            if ptype in lower_words:
                if after not in ("-", ".", "("):  # else code() decides (a call, a dashed name...)
                    v = text[pos:end]
                    if v[:1].islower() and v.isascii():
                        append(fresh(v.upper() if v in keywords else "NAME", v))
                        pos = end
                        continue
            elif ptype == "CLASSREF":
                if after not in ("-", "."):
                    v = text[pos:end]
                    if v in type_set:
                        append(fresh("TYPE", v))
                        pos = end
                        continue
                    if v.split("::", 1)[0] not in type_set and not v.startswith("::"):
                        append(fresh("CLASSREF", v))
                        pos = end
                        continue
            elif ptype == "VARIABLE" and after not in ("[", "-") and text[pos] == "$":
                raw = text[pos:end]
                if plain_var(raw):
                    append(fresh("VARIABLE", raw[1:], raw))
                    pos = end
                    continue
            elif ptype == "STRING" and text[pos] == "'":
                append(fresh("SSTRING", text[pos + 1 : end - 1]))
                pos = end
                continue
            pos = self.code(pos, end, ptype)
        n = len(text)
        while pos < n:
            pos = self.trivia(pos, n)
        return self.out

    def add(self, type_: str, value: str, raw: str | None = None) -> None:
        self.out.append(_Fresh(type_, value, raw))

    # -- trivia: blanks, newlines (+ heredoc bodies), comments --------------------------------------
    def trivia(self, pos: int, end: int) -> int:
        text = self.text
        append = self.out.append
        heredocs = self.heredocs
        match = _TRIVIA.match
        fresh = _Fresh
        while pos < end:
            m = match(text, pos, end)
            if m is None:
                return self.code(pos, pos + 1, "OTHER")
            kind = m.lastindex  # _TRIVIA's groups: 1 nl (2 eol, 3 ind), 4 ws, 5 c, 6 sc, 7 ml
            start = pos
            pos = m.end()
            if kind == 1:
                eol, ind = m.group(2, 3)
                append(fresh("NEWLINE", eol))
                if heredocs:
                    # the body may reach past the next code token: the caller skips those
                    return self.heredoc(m.start(3) if ind else pos, heredocs.pop(0))
                if ind:
                    append(fresh("INDENT", ind))
            elif kind == 5:
                append(fresh("COMMENT", text[start + 1 : pos]))
            elif kind == 4:
                append(fresh("WHITESPACE", text[start:pos]))
            elif kind == 6:
                append(fresh("SLASH_COMMENT", text[start + 2 : pos]))
            else:
                raw = m.group()
                v = re.sub(r"\A/\* ?", "", raw)
                v = re.sub(r" ?\*/\Z", "", v)
                v = re.sub(r"^ *\*", "", v, flags=re.M)
                append(fresh("MLCOMMENT", v, raw))
        return pos

    # -- code tokens --------------------------------------------------------------------------------
    def code(self, pos: int, end: int, ptype: str) -> int:
        text = self.text
        if ptype in _WORDLIKE and text[end : end + 1] not in ("-", "."):
            v = text[pos:end]
            if ptype == "CLASSREF":
                if v in _TYPE_SET:
                    self.out.append(_Fresh("TYPE", v))
                    return end
                if v.split("::", 1)[0] not in _TYPE_SET and not v.startswith("::"):
                    self.out.append(_Fresh("CLASSREF", v))
                    return end
            elif v[:1].islower() and v.isascii() and "-" not in v:
                if text[end : end + 1] == "(":
                    self.out.append(_Fresh("FUNCTION_NAME", v))
                else:
                    self.out.append(_Fresh(v.upper() if v in KEYWORDS else "NAME", v))
                return end
        c = text[pos]
        if c == "$" and ptype == "VARIABLE":
            if text[end : end + 1] not in ("[", "-") and _PLAIN_VAR.fullmatch(text, pos, end):
                raw = text[pos:end]  # nothing after it that puppet-lint would take into the name
                self.out.append(_Fresh("VARIABLE", raw[1:], raw))
                return end
            m = _VARIABLE.match(text, pos, self.line_end(pos))
            if m:
                self.add("VARIABLE", m.group(1), "$" + m.group(1))
                return m.end()
        if c == "'":
            self.add("SSTRING", text[pos + 1 : end - 1])
            return end
        if c == '"':
            if ptype == "STRING":
                body = text[pos + 1 : end - 1]
                if "$" not in body and "}" not in body and "\\" not in body:
                    # nothing the string splitter would treat specially: one STRING
                    self.out.append(_Fresh("STRING", body))
                    return end
            return self.dq_string(pos + 1)
        if ptype == "HEREDOC":
            self.add("HEREDOC_OPEN", text[pos + 2 : end - 1])
            self.heredocs.append(text[pos + 2 : end - 1])
            return end
        if ptype == "REGEX":
            self.add("REGEX", text[pos + 1 : end - 1])
            return end
        while pos < end:
            pos = self.word(pos)
        return pos

    def word(self, pos: int) -> int:
        text = self.text
        if text[pos] in _WORD_START:
            end = self.line_end(pos)
            for type_, rx in _WORD_RULES:
                m = rx.match(text, pos, end)
                if m:
                    v = m.group(1)
                    if type_ == "NAME" and v in KEYWORDS:
                        type_ = v.upper()
                    self.add(type_, v)
                    return pos + len(v)
        for n in (3, 2, 1):
            type_p = _PUNCT.get(text[pos : pos + n])
            if type_p is not None:
                self.add(type_p, text[pos : pos + n])
                return pos + n
        raise _Fail(pos)

    # -- strings -------------------------------------------------------------------------------------
    def dq_string(self, start: int) -> int:
        m = _SIMPLE_DQ.match(self.text, start)
        if m is not None:
            # only plain text and "${name}"s: the segments the splitter would make, made directly
            parts = _SIMPLE_INTERP.split(m.group(1))
            add = self.out.append
            add(_Fresh("DQPRE", parts[0]))
            last = len(parts) - 1
            for k in range(1, last, 2):
                add(_Fresh("VARIABLE", parts[k]))
                add(_Fresh("DQMID" if k + 1 < last else "DQPOST", parts[k + 1]))
            return m.end()
        segments, end = Slurper(self.text, start).string()
        if not segments:
            raise _Fail(start - 1, "unterminated string")
        self.segments(segments, "DQPRE", "DQMID", "DQPOST", None)
        return end

    def heredoc(self, start: int, tag: str) -> int:
        segments, end = Slurper(self.text, start).heredoc(tag)
        if not segments:
            return end
        term = segments.pop()[1]
        if len(segments) == 1:
            self.add("HEREDOC", segments[0][1], segments[0][1] + term)
            return end
        self.segments(segments, "HEREDOC_PRE", "HEREDOC_MID", "HEREDOC_POST", term)
        return end

    def segments(self, segs: list[tuple[str, str]], pre: str, mid: str, post: str, term: str | None) -> None:
        if len(segs) == 1:
            self.add("STRING", segs[0][1])
            return
        self.add(pre, segs[0][1])
        for kind, value in segs[1:-1]:
            if kind == "INTERP":
                sub = _Builder(value).build()  # fresh, unlinked tokens: taken as they are
                if sub and sub[0].is_interpolated_variable():
                    sub[0].type = "VARIABLE"
                self.out.extend(sub)
            elif kind == "UNENC_VAR":
                self.add("UNENC_VARIABLE", value[1:] if value.startswith("$") else value)
            else:
                self.add(mid, value)
        last = segs[-1][1]
        self.add(post, last, None if term is None else last + term)


def _drained(ptoks: list[Any]) -> Iterator[tuple[int, int, str]]:
    """The (start, end, type) of each lexer token, each token dropped from the list as it is read: the
    lint tokens made from them never coexist with all of them (a 5 MB one-line list: 150 MB less)."""
    ptoks.reverse()
    pop = ptoks.pop
    span = _SPAN
    while ptoks:
        yield span(pop())


def _slash_comment(text: str, ptoks: list[Any], table: Callable[[int], int] | None) -> int | None:
    """Where the first ``//`` at a code position starts, if any (``table``: byte -> char offsets)."""
    for t in ptoks:
        if t.type in ("DIV", "REGEX"):
            start = t.start_pos if table is None else table(t.start_pos)
            if text.startswith("//", start):
                return start
    return None


def _line_end(text: str, pos: int) -> int:
    e = text.find("\n", pos)
    return len(text) if e < 0 else e
