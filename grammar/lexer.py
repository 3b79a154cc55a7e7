"""The Puppet 7 lexer (a reimplementation of the behaviour of Puppet's Lexer2, EPP lexer included).

    lx = Lexer(text, epp=False, tasks=False)
    lx.tokens()       # list[Token] for the whole text
    lx.diagnostics    # warnings + at most one hard error (grammar.issues.Diagnostic)
    lx.error          # the hard error or None; the token list ends where it happened

Token types and values are Puppet's (language.md §1.4); ``start_pos``/``end_pos`` are UTF-8 byte
offsets into the source.  Tokens of a heredoc's text carry global offsets computed the way Puppet's
SubLocator maps its nodes (margins included), so that a parser positioning

* a LiteralString at its STRING token,
* a ConcatenatedString from its DQPRE's start to ``concat_end(its DQPOST)``,
* each string segment at its DQPRE/DQMID/DQPOST token,
* the QualifiedName of a ``$x`` VARIABLE token at ``name_start(token)`` (otherwise start + 1),
  with length ``end - start - 1`` in both cases,

reproduces Puppet's model positions.  Puppet maps a node that starts at the first character of a
heredoc's text differently from all others (its end loses the first line's margin).  Two nodes
cannot be derived from their token's own span in that case: the ConcatenatedString (it starts
there but shares its end with the last segment) and the QualifiedName inside a ``$x`` at the very
start of the text.  Those tokens are :class:`MappedToken` instances that carry the extra offset
(``concat_end``/``name_start`` read it, falling back to the token's span).

Decisions where Puppet crashes instead of reporting an issue (each is a deliberate choice):

* ``::`` at the end of the input: ILLEGAL_FULLY_QUALIFIED_NAME after the ``::``.
* ``::A::`` at the end of the input (Puppet: RangeError): ILLEGAL_FULLY_QUALIFIED_CLASS_REFERENCE at
  the end of the input (elsewhere it is 3 characters past the reference, as Puppet has it).
* ``\\u{D800}`` (a surrogate) or ``\\u{110000}``: hard ILLEGAL_UNICODE_ESCAPE at the end of the string part.
* a float literal that overflows (``1e400``): INVALID_DECIMAL_NUMBER at the number.
* ``"${true}"``: a VARIABLE token named ``true`` (Puppet makes a variable whose name is a Ruby boolean).
* any lexer error or warning inside a heredoc's text (Puppet's SubLocator cannot compute a
  column and raises NoMethodError): the issue is reported at the mapped global offset.
* an interpolating heredoc with the ``$`` escape whose text ends in an odd number of backslashes
  (Puppet: NoMethodError): the rest of the text is literal text.
* a heredoc inside a heredoc's interpolation (Puppet: NoMethodError, always): lexed like any heredoc.
* invalid UTF-8 (Puppet: ArgumentError before lexing; we get text decoded with surrogateescape):
  each stray byte is an OTHER token, which the parser rejects.
* deeper than MAX_DEPTH nested interpolations/heredocs: PARSE_TOO_DEEP (Puppet has no limit).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.grammar.lexer_match import scanner_match
from puppet_xpp.grammar.lexer_text import (
    DQ_ESCAPES,
    LISTSTART_PREV,
    NO_REGEX,
    WS_CHARS,
    WS_RE,
    ByteMap,
    Finder,
    LexFail,
    SubLocator,
    bad_number,
    byte_order_mark,
    encode,
    epp_text,
    find_all_end,
    find_dq_end,
    find_sq_end,
    find_uq_end,
    find_uqne_end,
    followed_by,
    format_quote,
    heredoc_body,
    heredoc_spec,
    number_issue,
    unescape,
    unescape_sq,
    utf8_len,
)

__all__ = ["Lexer", "MappedToken", "Token", "concat_end", "name_start", "KEYWORDS", "MAX_DEPTH"]

MAX_DEPTH = 100


class Token:
    """One token: Puppet's token type, its value, its UTF-8 byte span in the source.

    Not lark's Token (the parser only takes lark's tables): that is a ``str`` subclass with line and
    column slots we never fill, 2.5 times the memory of this one (a 5 MB one-line list makes 1.3
    million tokens: 320 MB against 130 MB).  A token is no string: its text is ``value``."""

    __slots__ = ("type", "value", "start_pos", "end_pos")
    type: str
    value: str
    start_pos: int
    end_pos: int

    def __init__(self, type: str, value: str, start_pos: int, end_pos: int) -> None:  # noqa: A002
        self.type = type
        self.value = value
        self.start_pos = start_pos
        self.end_pos = end_pos

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r}, {self.start_pos}, {self.end_pos})"


_new = Token


class MappedToken(Token):
    """A token of a heredoc's text whose derived positions Puppet maps differently from its own span
    (heredoc with a margin): ``concat_end_pos`` on the DQPOST ending the heredoc's ConcatenatedString,
    ``name_start_pos`` on a ``$var`` VARIABLE at the very start of the text (where Puppet puts the
    QualifiedName inside it).  Unused slots are None.  Use :func:`concat_end` / :func:`name_start`."""

    __slots__ = ("concat_end_pos", "name_start_pos")
    concat_end_pos: int | None
    name_start_pos: int | None


def concat_end(dqpost: Token) -> int:
    """Where the ConcatenatedString that this DQPOST closes ends (byte offset)."""
    v: int | None = getattr(dqpost, "concat_end_pos", None)
    return dqpost.end_pos if v is None else v


def name_start(variable: Token) -> int:
    """Where the QualifiedName inside this VARIABLE token starts (byte offset; Puppet: offset + 1)."""
    v: int | None = getattr(variable, "name_start_pos", None)
    return variable.start_pos + 1 if v is None else v


def _mapped(
    t: Token, start: int, end: int, concat_end_pos: int | None = None, name_start_pos: int | None = None
) -> MappedToken:
    m = MappedToken(t.type, t.value, start, end)
    m.concat_end_pos = concat_end_pos
    m.name_start_pos = name_start_pos
    return m


KEYWORDS = {
    "case": "CASE",
    "class": "CLASS",
    "default": "DEFAULT",
    "define": "DEFINE",
    "if": "IF",
    "elsif": "ELSIF",
    "else": "ELSE",
    "inherits": "INHERITS",
    "node": "NODE",
    "and": "AND",
    "or": "OR",
    "undef": "UNDEF",
    "false": "BOOLEAN",
    "true": "BOOLEAN",
    "in": "IN",
    "unless": "UNLESS",
    "function": "FUNCTION",
    "type": "TYPE",
    "attr": "ATTR",
    "private": "PRIVATE",
}
_TASK_KEYWORDS = {"plan": "PLAN", "apply": "APPLY"}
# token types that "${x}" turns into a variable (Puppet: NUMBER NAME WORD and the keyword tokens,
# but not PLAN/APPLY)
_TO_VARIABLE = frozenset(["NUMBER", "NAME", "WORD"] + list(set(KEYWORDS.values())))

_OPS = {
    "<<|": "LLCOLLECT",
    "|>>": "RRCOLLECT",
    "==": "ISEQUAL",
    "=>": "FARROW",
    "=~": "MATCH",
    "+=": "APPENDS",
    "+>": "PARROW",
    "->": "IN_EDGE",
    "-=": "DELETES",
    "!=": "NOTEQUAL",
    "!~": "NOMATCH",
    "~>": "IN_EDGE_SUB",
    "<<": "LSHIFT",
    "<=": "LESSEQUAL",
    "<|": "LCOLLECT",
    "<-": "OUT_EDGE",
    "<~": "OUT_EDGE_SUB",
    ">>": "RSHIFT",
    ">=": "GREATEREQUAL",
    "|>": "RCOLLECT",
    "@@": "ATAT",
    "=": "EQUALS",
    "+": "PLUS",
    "-": "MINUS",
    "!": "NOT",
    "~": "TILDE",
    "<": "LESSTHAN",
    ">": "GREATERTHAN",
    "|": "PIPE",
    "%": "MODULO",
    ":": "COLON",
    ".": "DOT",
    ",": "COMMA",
    ";": "SEMIC",
    "?": "QMARK",
    "*": "TIMES",
    "]": "RBRACK",
    ")": "RPAREN",
    "@": "AT",
}

_W = "[A-Za-z0-9_]"
_SEG = "[a-z_](?:[A-Za-z0-9_-]*" + _W + ")?"
_CREF = "[A-Z]" + _W + "*(?:::[A-Z]" + _W + "*)*"
# token alternatives, in order; group numbers are 2.. (group 1 is the skipped prefix)
_ALTS = [
    # most frequent first (Python's re tries the alternatives in order)
    ("VAR", r"\$(?:(?:::)?(?:" + _W + "+::)*" + _W + "+)?"),
    ("EPPEND", None),  # filled per mode; must precede OP
    (
        "OP",
        r"[,;?*\].)]|=>|==|=~|=|\+=|\+>|\+|->|-=|-|!=|!~|!|~>|~|<<\||<<|<=|<\||<-|<~|<|>>|>=|>"
        r"|\|>>|\|>|\||@@|@(?!\()|:(?!:)|%",
    ),
    ("WORD", _SEG + "(?:::" + _SEG + ")*"),
    # unrolled (a run of plain characters between escapes): one regex step per escape, not per character
    ("SQ", r"'[^'\\]*(?:\\[\s\S][^'\\]*)*'"),
    ("LBRACE", r"\{"),
    ("RBRACE", r"\}"),
    ("CLASSREF", _CREF),
    ("LBRACK", r"\["),
    ("LPAREN", r"\("),
    ("DQ", r'"(?:[^"\\$]+"|"(?![\\"$]))'),
    ("NUMBER", r"(?:0[xX][0-9A-Fa-f]+|0?[0-9]+(?:\.[0-9]+)?(?:[eE]-?[0-9]+)?)\b"),  # Unicode \b, as Ruby's
    ("CCLASSREF", "::" + _CREF),
    ("CWORD", "::" + _SEG + "(?:::" + _SEG + ")*"),
    ("SLASH", "/"),
    ("HEREDOC", r"@\("),
    ("NL", r"\n"),
    ("ANY", r"[\s\S]"),
    ("END", r"\Z"),
]
_G = {name: i + 2 for i, (name, _) in enumerate(_ALTS)}
G_EPPEND, G_WORD, G_OP, G_VAR = _G["EPPEND"], _G["WORD"], _G["OP"], _G["VAR"]
G_LBRACE, G_RBRACE, G_LBRACK, G_LPAREN = _G["LBRACE"], _G["RBRACE"], _G["LBRACK"], _G["LPAREN"]
G_CLASSREF, G_NUMBER, G_SQ, G_DQ = _G["CLASSREF"], _G["NUMBER"], _G["SQ"], _G["DQ"]
G_CCLASSREF, G_CWORD, G_SLASH, G_HEREDOC = _G["CCLASSREF"], _G["CWORD"], _G["SLASH"], _G["HEREDOC"]
G_NL, G_ANY, G_END = _G["NL"], _G["ANY"], _G["END"]


def _master(epp: bool, careful: bool) -> re.Pattern[str]:
    # Skipped between tokens: whitespace, comments.  'careful' (a heredoc waits for the end of the
    # line) leaves newlines to the NL alternative.
    ws = r"[ \t\r]*" if careful else r"[ \t\r\n]*"
    prefix = "(" + ws + r"(?:(?:#[^\n]*|/\*[\s\S]*?\*/)" + ws + ")*)"
    alts = []
    for name, rx in _ALTS:
        if name == "EPPEND":
            rx = "-?%>" if epp else "(?!)"
        alts.append("(" + cast(str, rx) + ")")
    return re.compile(prefix + "(?:" + "|".join(alts) + ")")


_MASTERS: dict[tuple[bool, bool], re.Pattern[str]] = {}  # (epp, careful) -> _master(epp, careful)


def master_pattern(epp: bool, careful: bool) -> re.Pattern[str]:
    """_master's pattern, compiled at its first use (a process that lexes no EPP compiles two of the
    four: each is a large pattern, ~0.7 ms of every process's start when all were made at import)."""
    pattern = _MASTERS.get((epp, careful))
    if pattern is None:
        pattern = _MASTERS[(epp, careful)] = _master(epp, careful)
    return pattern


def load_accelerator() -> Any:
    """grammar/_accel.c's module (the lexer's fast path, the parser's LR loop), or None: not built (it is
    optional at install time), or disabled by PUPPET_XPP_PURE_PYTHON=1 (as the C reader xpp/_fastload.c
    is)."""
    import os

    if os.environ.get("PUPPET_XPP_PURE_PYTHON"):
        return None
    try:
        from puppet_xpp.grammar import _accel
    except ImportError:
        return None
    return _accel


def _scanner() -> Any:
    accel = load_accelerator()
    if accel is None:
        return None
    # the type names in the order of _accel.c's enum TokType
    types = "VARIABLE WORD NAME CLASSREF STRING LBRACE SELBRACE RBRACE LISTSTART LBRACK WSLPAREN LPAREN NUMBER QMARK"
    accel.configure_lexer(Token, tuple(types.split()), _OPS)
    return accel.scan


#: the C fast path of Engine.code (grammar/_accel.c ``scan``), or None: the Python loop lexes every token.
#: Engines made after it is set to None use the Python loop only (tests compare the two).
SCAN = _scanner()
_VARNAME = re.compile(r"(?:::)?(?:" + _W + "+::)*" + _W + "+")


class Engine:
    """Lexes one text (the source, or a heredoc's processed text) into self.toks.

    Positions are character indices into self.text while lexing; tokens in ranges listed in
    self.preconv (heredoc text tokens, bytes of multi-byte OTHER characters) already hold byte
    offsets of this text.  finish() turns everything into byte offsets."""

    def __init__(
        self,
        text: str,
        epp: bool,
        kw: dict[str, str],
        diags: list[Diagnostic],
        depth: int = 0,
        parent: Engine | None = None,
        loc: SubLocator | None = None,
    ):
        self.text = text
        self.epp = epp
        self.kw = kw
        self.diags = diags
        self.depth = depth
        self.parent = parent
        self.loc = loc
        self.toks: list[Token] = []
        # each distinct value once (a 5 MB manifest names the same variables and types thousands of
        # times: one string each instead of one per token)
        self.values: dict[str, str] = {} if parent is None else parent.values
        self.preconv: list[tuple[int, int, int | None]] = []
        # (len(toks), type): Puppet's "after" token when it is not toks[-1]
        self.ov: tuple[int, str | None] | None = None
        self.jump: int | None = None  # where the next newline jumps to (after heredoc bodies)
        self.slash_fail: int | None = None  # where the last regex search that found no end started
        self.bmap = None if text.isascii() else ByteMap(text)
        self.epp_mode: str | None = None
        self.epp_open = False
        self.fast = master_pattern(epp, False).finditer
        self.careful = master_pattern(epp, True).finditer

    # -- positions -----------------------------------------------------------------------------
    def to_byte(self, c: int) -> int:
        return c if self.bmap is None else self.bmap(c)

    def global_byte(self, b: int) -> int:
        """byte offset in this text -> byte offset in the source"""
        e: Engine | None = self
        while e is not None and e.loc is not None:
            b = e.loc.point(b)
            e = e.parent
        return b

    def warn(self, code: str, args: dict[str, Any], pos: int) -> None:
        self.diags.append(Diagnostic.make(code, self.global_byte(self.to_byte(pos)), 0, args))

    def after(self) -> str | None:
        ov = self.ov
        toks = self.toks
        if ov is not None and ov[0] == len(toks):
            return ov[1]
        return toks[-1].type if toks else None

    def finish(self) -> None:
        """char indices -> byte offsets (no-op for ASCII text)"""
        bmap = self.bmap
        if bmap is None:
            return
        toks = self.toks
        skip = iter(sorted(self.preconv) + [(len(toks), len(toks), None)])
        s0, s1, _ = next(skip)
        i = 0
        n = len(toks)
        while i < n:
            if i == s0:
                i = s1
                s0, s1, _ = next(skip)
                continue
            t = toks[i]
            t.start_pos = bmap(t.start_pos)
            t.end_pos = bmap(t.end_pos)
            i += 1

    # -- entry points --------------------------------------------------------------------------
    def run(self, fn: Callable[..., object], *args: Any) -> None:
        try:
            fn(*args)
        except LexFail as f:
            if not f.is_byte:
                if f.pos is not None:
                    f.pos = self.global_byte(self.to_byte(f.pos))
                f.is_byte = True
            raise

    def lex_source(self) -> None:
        if self.epp:
            self.epp_mode = "text"
            self.toks.append(_new("EPP_START", "", 0, 0))
            pos = self.epp_text(0, False)
            self.code(pos, False)
            if self.epp_open:
                raise LexFail("EPP_UNBALANCED_TAG", len(self.text))
        else:
            self.code(0, False)

    # -- the main loop ---------------------------------------------------------------------------
    def code(self, pos: int, interp: bool) -> tuple[int, bool]:
        """Lex code from pos.  interp: stop at the '}' that closes a '${' (not emitted).
        Returns (position after it or end of text, whether it was found)."""
        text = self.text
        toks = self.toks
        append = toks.append
        new = _new
        kw = self.kw
        ops = _OPS
        same = self.values.setdefault  # one string per distinct name, operator, quoted text
        last = -1  # the end of the last match
        depth = 0
        nxt = (self.fast if self.jump is None else self.careful)(text, pos).__next__
        # the C fast path (grammar/_accel.c scan) lexes the frequent tokens of plain code (character
        # positions, as here: finish() makes them byte offsets) and stops at the first other one (in an interpolation, at every brace: counted here), which this
        # loop lexes; `at` is where the iterator stands
        scan = SCAN if not self.epp else None
        at = pos
        while True:
            if scan is not None and self.jump is None:
                q = scan(text, at, toks, self.values, kw, self.after(), interp)
                if q != at:
                    nxt = self.fast(text, q).__next__
            m = nxt()
            g: int = m.lastindex  # type: ignore[assignment]  # never None: one alternative always matches
            p, e = m.span(g)  # the token's group starts where the skipped prefix (group 1) ends
            if p == last:
                p = last  # (one int object for both: adjacent tokens share the position)
            last = at = e
            if g == G_VAR:
                v = text[p + 1 : e]
                append(new("VARIABLE", same(v, v), p, e))
            elif g == G_OP:
                v = text[p:e]
                append(new(ops[v], same(v, v), p, e))
            elif g == G_WORD:
                v = text[p:e]
                v = same(v, v)
                t = kw.get(v)
                if t is None:
                    t = "WORD" if ("-" in v or v[0] == "_" or "::_" in v) else "NAME"
                append(new(t, v, p, e))
            elif g == G_SQ:
                if e - p == 2 and text[e : e + 1] in ("'", "\\"):
                    pos = at = self.sq(p)  # Puppet's quirk for '' followed by a quote
                    nxt = (self.fast if self.jump is None else self.careful)(text, pos).__next__
                    continue
                v = unescape_sq(text[p + 1 : e - 1])
                append(new("STRING", same(v, v), p, e))
            elif g == G_LBRACE:
                append(new("SELBRACE" if self.after() == "QMARK" else "LBRACE", "{", p, e))
                depth += 1
            elif g == G_RBRACE:
                if interp:
                    depth -= 1
                    if depth < 0:
                        return e, True
                append(new("RBRACE", "}", p, e))
            elif g == G_CLASSREF:
                if text.startswith("::", e):
                    raise LexFail("ILLEGAL_CLASS_REFERENCE", e + 1)
                v = text[p:e]
                append(new("CLASSREF", same(v, v), p, e))
            elif g == G_LBRACK:
                t = "LISTSTART" if (p == 0 or text[p - 1] in LISTSTART_PREV) else "LBRACK"
                append(new(t, "[", p, e))
            elif g == G_LPAREN:
                # WSLPAREN when only blanks precede it on its line
                k = p - 1
                while k >= 0 and text[k] in WS_CHARS:
                    k -= 1
                t = "WSLPAREN" if (k < 0 or text[k] == "\n") else "LPAREN"
                append(new(t, "(", p, e))
            elif g == G_DQ:
                append(new("STRING", text[p + 1 : e - 1], p, e))
            elif g == G_NUMBER:
                v = text[p:e]
                if not (v.isdigit() and (v[0] != "0" or e - p == 1)):
                    code = number_issue(v)
                    if code:
                        raise LexFail(code, p, {"value": v})
                append(new("NUMBER", v, p, e))
            elif g == G_END:
                return e, False
            else:
                # the less frequent cases; each returns the position to continue at
                if g == G_ANY:
                    pos = self.other(p)
                elif g == G_CWORD:
                    v = text[p:e]
                    t = "WORD" if ("-" in v or "::_" in v) else "NAME"
                    append(new(t, v, p, e))
                    continue
                elif g == G_CCLASSREF:
                    if text.startswith("::", e):
                        # Puppet: 3 past the reference (a RangeError when that is past the end)
                        raise LexFail("ILLEGAL_FULLY_QUALIFIED_CLASS_REFERENCE", min(e + 3, len(text)))
                    append(new("CLASSREF", text[p:e], p, e))
                    continue
                elif g == G_SLASH:
                    pos = self.slash(p)
                    if pos == p + 1:
                        continue  # DIV: the iterator is still in step
                elif g == G_HEREDOC:
                    pos = self.heredoc(p)
                elif g == G_NL:
                    pos = cast(int, self.jump)  # a newline is its own alternative only then
                    self.jump = None
                elif g == G_EPPEND:
                    if self.epp_mode == "expr":
                        append(
                            new(
                                "EPP_END_TRIM" if e - p == 3 else "EPP_END",
                                text[p:e],
                                p,
                                e,
                            )
                        )
                    if e - p == 2:
                        self.epp_mode = "text"
                    pos = self.epp_text(e, e - p == 3)
                else:  # pragma: no cover
                    raise AssertionError(g)
                at = pos
                nxt = (self.fast if self.jump is None else self.careful)(text, pos).__next__

    # -- less frequent tokens ----------------------------------------------------------------------
    def other(self, p: int) -> int:
        text = self.text
        c = text[p]
        if c in WS_CHARS:
            m = WS_RE.match(text, p)
            return m.end() if m is not None else p + 1
        if "0" <= c <= "9":
            raise bad_number(text, p)
        if c == ":":  # '::' not followed by a name
            raise LexFail("ILLEGAL_FULLY_QUALIFIED_NAME", p + 2)
        if c == "'":
            return self.sq(p)
        if c == '"':
            return self.dq(p)
        # anything else: one OTHER token per byte, with an empty value (as Puppet)
        n = utf8_len(c)
        toks = self.toks
        if n == 1:
            toks.append(_new("OTHER", "", p, p + 1))
        else:
            b = self.to_byte(p)
            i0 = len(toks)
            for k in range(n):
                toks.append(_new("OTHER", "", b + k, b + k + 1))
            self.preconv.append((i0, len(toks), p + 1))
        return p + 1

    def sq(self, p: int) -> int:
        text = self.text
        r = find_sq_end(text, p + 1)
        if r is None:
            raise LexFail("UNCLOSED_QUOTE", p + 1, {"after": '"\'"', "followed_by": followed_by(text, p + 1)})
        end = r[0]
        self.toks.append(_new("STRING", unescape_sq(text[p + 1 : end])[:-1], p, end))
        return end

    def slash(self, p: int) -> int:
        text = self.text
        if text.startswith("/*", p):
            raise LexFail("UNCLOSED_MLCOMMENT", p)
        if self.after() not in NO_REGEX:
            q = text.find("/", p + 1)
            # After a failed search from slash_fail < p, every later '/' is escaped unless only
            # backslashes separate it from p: check that first one only (keeps '/\\/\\/...' linear).
            last = q if (self.slash_fail is not None and p > self.slash_fail) else len(text)
            while 0 <= q <= last:
                k = q
                while k > p + 1 and text[k - 1] == "\\":
                    k -= 1
                if not (q - k) & 1:
                    self.toks.append(_new("REGEX", text[p + 1 : q].replace("\\/", "/"), p, q + 1))
                    return q + 1
                q = text.find("/", q + 1)
            if last == len(text):
                self.slash_fail = p
        self.toks.append(_new("DIV", "/", p, p + 1))
        return p + 1

    # -- strings -------------------------------------------------------------------------------
    def segment(self, q: int, end: int, term: str, escapes: frozenset[str], warn_unknown: bool) -> str:
        raw = self.text[q:end]
        if "\\" in raw and escapes:
            warnings: list[tuple[str, dict[str, Any]]] = []
            try:
                raw = unescape(raw, escapes, warn_unknown, warnings)
            except LexFail as f:
                f.pos = end
                raise
            for code, args in warnings:
                self.warn(code, args, end)
        return raw[: len(raw) - len(term)] if term else raw

    def dq(self, p: int) -> int:
        return self.interpolated(p, p + 1, find_dq_end, DQ_ESCAPES, True, '"')

    def interpolated(
        self,
        before: int,
        q: int,
        finder: Finder,
        escapes: frozenset[str],
        warn_unknown: bool,
        last: str | tuple[int, int, int, int] | None,
    ) -> int:
        """A double-quoted string (q after the opening quote) or a heredoc text (q == 0)."""
        text = self.text
        toks = self.toks
        append = toks.append
        str_after = self.after()
        acc = ""
        first = True
        while True:
            r = finder(text, q)
            if r is None:
                if finder is find_dq_end:
                    raise LexFail(
                        "UNCLOSED_QUOTE",
                        q,
                        {
                            "after": format_quote(scanner_match(self, last)),
                            "followed_by": followed_by(text, q),
                        },
                    )
                r = (len(text), "")  # Puppet crashes here (see module doc)
            end, term = r
            acc += self.segment(q, end, term, escapes, warn_unknown)
            if term == '"' or term == "":
                if first:
                    append(_new("STRING", acc, before, end))
                else:
                    append(_new("DQPOST", acc, before, end))
                    if self.depth > 0 and finder is find_dq_end:
                        self.ov = (len(toks), str_after)
                return end
            if term == "${":
                append(_new("DQPRE" if first else "DQMID", acc, before, end))
                first = False
                pos, closed, last = self.interpolation(end, str_after)
                if closed:
                    str_after = "RBRACE"
                before = q = pos
                acc = ""
                continue
            m = _VARNAME.match(text, end)
            if m is not None:
                append(_new("DQPRE" if first else "DQMID", acc, before, end - 1))
                append(_new("VARIABLE", m.group(), end - 1, m.end()))
                first = False
                last = m.group()
                before = q = m.end()
                acc = ""
                continue
            acc += "$"  # a '$' that starts no variable is text
            last = None
            q = end

    def interpolation(self, pos: int, str_after: str | None) -> tuple[int, bool, tuple[int, int, int, int]]:
        """Lex a '${ ... }' expression from pos (after the '${')."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise LexFail("PARSE_TOO_DEEP", pos, {"limit": MAX_DEPTH})
        toks = self.toks
        n0 = len(toks)
        self.ov = (n0, str_after)
        end, closed = self.code(pos, True)
        self.depth -= 1
        n1 = len(toks)
        if closed:
            q = n1 - n0
            i = -1
            if q == 1:
                i = n0
            elif q > 1 and toks[n0 + 1].type in ("DOT", "LBRACK"):
                i = n0
            if i >= 0:
                t = toks[i]
                if t.type in _TO_VARIABLE:
                    toks[i] = _new("VARIABLE", t.value, t.start_pos, t.end_pos)
        return end, closed, (n0, n1, pos, end - 1 if closed else end)

    # -- heredoc -------------------------------------------------------------------------------
    def heredoc(self, p: int) -> int:
        text = self.text
        spec = heredoc_spec(text, p)
        prev_after = self.after()
        toks = self.toks
        toks.append(_new("HEREDOC", spec.syntax, p, spec.end))
        if self.jump is not None:
            start = self.jump
        else:
            nl = text.find("\n", spec.end)
            if nl < 0:
                raise LexFail("HEREDOC_WITHOUT_TEXT", spec.end)
            start = nl + 1
        res = heredoc_body(text, start, spec.tag)
        if res is None:
            raise LexFail("HEREDOC_WITHOUT_END_TAGGED_LINE", start)
        body, margins, resume, has_margin = res
        self.jump = resume
        if self.depth + 1 > MAX_DEPTH:
            raise LexFail("PARSE_TOO_DEEP", p, {"limit": MAX_DEPTH})
        loc = SubLocator(encode(body), self.to_byte(start), has_margin, margins)
        sub = Engine(body, False, self.kw, self.diags, self.depth + 1, self, loc)
        finder: Finder
        if not spec.interpolate:
            finder = find_all_end
        elif "$" in spec.escapes:
            finder = find_uq_end
        else:
            finder = find_uqne_end
        sub.run(sub.interpolated, 0, 0, finder, spec.escapes, False, None)
        sub.finish()
        # map the text's tokens into this text's byte offsets: a token's span is (pos(start), pos(end)),
        # but one at the text's very start begins at lead and ends a first margin earlier (SubLocator.span)
        point = loc.point
        stoks = sub.toks
        last = len(stoks) - 1
        i0 = len(toks)
        lead = loc.lead
        m1 = loc.m1
        starts = loc.positions([t.start_pos for t in stoks])
        ends = loc.positions([t.end_pos for t in stoks])
        append = toks.append
        for i, t in enumerate(stoks):
            ts = t.start_pos
            s = starts[i]
            e = ends[i]
            if ts == 0:
                s = lead
                e -= m1
            if type(t) is MappedToken:
                ce = t.concat_end_pos
                ns = t.name_start_pos
                if ce is not None:
                    ce = point(ce)
                if ns is not None:
                    ns = point(ns)
            else:
                ce = ns = None
            if i == last and t.type == "DQPOST":
                ce = ends[i] - m1  # (the end of the span from 0 to the token's end)
            if ts == 0 and t.type == "VARIABLE":
                ns = point(1)
            if ce == e:
                ce = None
            if ns == s + 1:
                ns = None
            if ce is None and ns is None:
                if type(t) is MappedToken:
                    t = _new(t.type, t.value, s, e)
                else:
                    t.start_pos = s
                    t.end_pos = e
            else:
                t = _mapped(t, s, e, ce, ns)
            append(t)
        self.preconv.append((i0, len(toks), None))
        if self.depth > 0:
            self.ov = (len(toks), prev_after)
        return spec.end

    # -- EPP -------------------------------------------------------------------------------------
    def epp_text(self, pos: int, trim: bool) -> int:
        s, mode, end, issue = epp_text(self.text, pos, trim)
        append = self.toks.append
        if mode == "error":
            raise LexFail(issue or "", end)
        if mode == "text":
            if s is not None:
                append(_new("RENDER_STRING", s, pos, end))
            self.epp_open = False
            return end
        if s:
            append(_new("RENDER_STRING", s, pos, end))
        if mode == "expr":
            append(_new("RENDER_EXPR", "", pos, pos))
        self.epp_mode = mode
        self.epp_open = True
        return end


class Lexer:
    """Puppet 7 lexer.  See the module documentation."""

    def __init__(self, text: str, *, epp: bool = False, tasks: bool = False):
        self.text = text
        self.epp = epp
        self.tasks = tasks
        self.diagnostics: list[Diagnostic] = []
        self.error: Diagnostic | None = None
        self._tokens: list[Token] | None = None

    def tokens(self) -> list[Any]:
        """The tokens of the text."""
        if self._tokens is None:
            self._tokens = self._lex()
        return self._tokens

    def _lex(self) -> list[Token]:
        text = self.text
        bom = byte_order_mark(text)
        if bom is not None:
            self._fail(
                Diagnostic.make(
                    "ILLEGAL_BOM",
                    None,
                    0,
                    {"format_name": bom[0], "bytes": bom[1], "format": bom[0], "bom": bom[1]},
                )
            )
            return []
        kw = dict(KEYWORDS, **_TASK_KEYWORDS) if self.tasks else KEYWORDS
        eng = Engine(text, self.epp, kw, self.diagnostics)
        try:
            eng.run(eng.lex_source)
        except LexFail as f:
            self._fail(Diagnostic.make(f.code, f.pos, 0, f.iargs))
        except RecursionError:  # pragma: no cover - MAX_DEPTH keeps well below the limit
            self._fail(Diagnostic.make("PARSE_TOO_DEEP", len(encode(text)), 0, {"limit": MAX_DEPTH}))
        eng.finish()
        return eng.toks

    def _fail(self, diag: Diagnostic) -> None:
        self.error = diag
        self.diagnostics.append(diag)
