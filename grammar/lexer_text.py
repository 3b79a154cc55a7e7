"""Text-level helpers of the Puppet lexer: string terminators, escape processing, heredoc
headers and bodies, EPP template text, byte-offset maps.

Everything here works on Python ``str`` and character indices; :mod:`grammar.lexer` turns
those into UTF-8 byte offsets.  Behaviour follows Puppet 7's Lexer2 (see
``/work/shared/notes/language.md`` §1), including its quirks, which are noted where they occur.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

# Ruby's [[:blank:]] is Unicode-aware: these are all the characters it matches.
BLANKS = " \t\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
BLANK_CLASS = "[ \\t\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000]"
# Puppet's whitespace token pattern: [[:blank:]\r]+
WS_RE = re.compile("[\\r" + BLANK_CLASS[1:] + "+")

# token types after which a '/' is a division; after any other token it may start a regex (the lexer
# decides with it, and so does the reconstruction of a scanner match on the UNCLOSED_QUOTE path)
NO_REGEX = frozenset(
    [
        "RPAREN",
        "RBRACK",
        "RRCOLLECT",
        "RCOLLECT",
        "NAME",
        "CLASSREF",
        "NUMBER",
        "STRING",
        "BOOLEAN",
        "DQPRE",
        "DQMID",
        "DQPOST",
        "HEREDOC",
        "REGEX",
        "VARIABLE",
        "WORD",
    ]
)
WS_CHARS = frozenset(BLANKS + "\r")
# characters before '[' that make it LISTSTART
LISTSTART_PREV = frozenset(BLANKS + "\r\n")


#: finds the end of a string part: (end, terminator) of the first terminator at or after pos, or None
Finder = Callable[[str, int], "tuple[int, str] | None"]


class LexFail(Exception):
    """A hard lexer error: code, character position (in the text being lexed), arguments."""

    def __init__(self, code: str, pos: int | None, args: dict[str, Any] | None = None):
        super().__init__(code)
        self.code = code
        self.pos = pos
        self.iargs = args or {}
        self.is_byte = False  # pos already a byte offset of the source (set by the lexer)


# ----------------------------------------------------------------------------------------------
# String terminators.  Puppet finds the end of a string part with a regex of the form
# (?:[^\\]|^)(?:\\\\)*TERMINATOR, searched from the scan position, where '^' also matches at the
# scan position itself.  At that first position the [^\\] alternative is tried first, so it may
# swallow a terminator character: '''  is the string "'", """ is the string '"'.  Emulated by an
# anchored attempt at the scan position followed by an unanchored search from the next one.


def _terminator_finder(term: str, anchored_extra: str = "") -> Finder:
    anchored = re.compile(r"(?:[^\\]|)(?:\\\\)*(" + term + ")")
    search = re.compile(r"[^\\](?:\\\\)*(" + term + ")")

    def find(text: str, pos: int) -> tuple[int, str] | None:
        """-> (end, terminator) of the first terminator at or after pos, or None."""
        m = anchored.match(text, pos) or search.search(text, pos + 1)
        if m is None:
            return None
        return m.end(), m.group(1)

    return find


find_sq_end = _terminator_finder("'")
find_dq_end = _terminator_finder(r'"|\$\{?')
# heredoc text, interpolating, with the $ escape enabled
find_uq_end = _terminator_finder(r"\$\{?|\Z")
_UQNE = re.compile(r"\$\{?|\Z")


def find_uqne_end(text: str, pos: int) -> tuple[int, str] | None:
    """Interpolating heredoc without the $ escape: every '$' is a terminator."""
    m = _UQNE.search(text, pos)
    return None if m is None else (m.end(), m.group())


def find_all_end(text: str, pos: int) -> tuple[int, str] | None:
    """Non-interpolating heredoc: all the rest is text."""
    return len(text), ""


def followed_by(text: str, pos: int) -> str:
    """Puppet's 'followed by' excerpt: the next 5 characters + '...', or '<eof>'."""
    if pos >= len(text):
        return "<eof>"
    return (text[pos : pos + 5] + "...").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def format_quote(q: str | None) -> str:
    if q == "'":
        return '"\'"'
    return "'" + (q or "") + "'"


# ----------------------------------------------------------------------------------------------
# Escapes

DQ_ESCAPES = frozenset(["\\", "$", "'", '"', "r", "n", "t", "s", "u", "\r\n", "\n"])
_SQ_ESC = re.compile(r"\\([\\'])")
_UNI_ESC = re.compile(r"((?:[^\\]|^)(?:\\\\)*)\\u(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]{1,6})\})", re.M)
_ESC = re.compile(r"\\([^\r\n]|\r?\n)")
_ESC_MAP = {"r": "\r", "n": "\n", "t": "\t", "s": " ", "\n": "", "\r\n": ""}


def unescape_sq(raw: str) -> str:
    if "\\" not in raw:
        return raw
    return _SQ_ESC.sub(r"\1", raw)


def _uni_repl(m: re.Match[str]) -> str:
    code = int(m.group(2) or m.group(3), 16)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        # Puppet crashes here (Ruby ArgumentError/RangeError); we report the intended issue.
        raise LexFail("ILLEGAL_UNICODE_ESCAPE", None)
    return m.group(1) + chr(code)


def unescape(
    raw: str, escapes: frozenset[str], warn_unknown: bool, warnings: list[tuple[str, dict[str, Any]]]
) -> str:
    """Puppet's slurp escape processing.  Warnings are appended as (code, args) tuples."""
    if "\\" not in raw:
        return raw
    if "u" in escapes:
        # repeated, so that adjacent escapes are all replaced (and, as in Puppet, escapes that the
        # replacement itself produces are processed too)
        while True:
            raw, n = _UNI_ESC.subn(_uni_repl, raw)
            if not n:
                break

    def repl(m: re.Match[str]) -> str:
        ch = m.group(1)
        if ch in escapes:
            if ch == "u":
                warnings.append(("ILLEGAL_UNICODE_ESCAPE", {}))
                return "\\u"
            return _ESC_MAP.get(ch, ch)
        if warn_unknown:
            warnings.append(("UNRECOGNIZED_ESCAPE", {"ch": ch}))
        return "\\" + ch

    return _ESC.sub(repl, raw)


# ----------------------------------------------------------------------------------------------
# Numbers

_HEX_OK = re.compile(r"0[xX][0-9A-Fa-f]+\Z")
_OCT_OK = re.compile(r"0[0-7]+\Z")
_DEC_START = re.compile(r"[0-9]+[eE.]")
_DEC_OK = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE]-?[0-9]+)?\Z")
_WORD_RUN = re.compile(r"[A-Za-z0-9_]+")


def number_issue(value: str) -> str | None:
    """Puppet's assert_numeric: None if fine, else the issue code."""
    if value[:2] in ("0x", "0X"):
        return None if _HEX_OK.match(value) else "INVALID_HEX_NUMBER"
    if len(value) > 1 and value[0] == "0" and value[1] != ".":
        return None if _OCT_OK.match(value) else "INVALID_OCTAL_NUMBER"
    if _DEC_START.match(value):
        if not _DEC_OK.match(value):
            return "INVALID_DECIMAL_NUMBER"
        try:
            if float(value) == float("inf"):
                # Puppet: an internal ArgumentError in the parser.  We report it here.
                return "INVALID_DECIMAL_NUMBER"
        except (ValueError, OverflowError):  # pragma: no cover - _DEC_OK guarantees a float
            return "INVALID_DECIMAL_NUMBER"
        return None
    return None if value.isdigit() and value.isascii() else "ILLEGAL_NUMBER"


def bad_number(text: str, pos: int) -> LexFail:
    """The error for a digit at pos that does not start a valid number token."""
    m = _WORD_RUN.match(text, pos)
    invalid = m.group() if m else text[pos]
    before = pos
    after = m.end() if m else pos + 1
    if pos > 1 and text[pos - 1] == ".":
        # preceded by '.': extend back over the digits before the dot (1.5e -> '1.5e')
        j = pos - 2
        moved = False
        while "0" <= text[j] <= "9":
            moved = True
            before = j
            if j == 0:
                break
            j -= 1
        if moved:
            invalid = text[before:after]
    code = number_issue(invalid)
    if code:
        return LexFail(code, before, {"value": invalid})
    return LexFail("ILLEGAL_NUMBER", before + 1, {"value": invalid})


# ----------------------------------------------------------------------------------------------
# Heredoc

_HEREDOC_HEAD = re.compile(
    r"@\(([^:/\r\n)]+)(?::" + BLANK_CLASS + r"*([a-z][a-zA-Z0-9_+]+)" + BLANK_CLASS + r"*)?"
    r"(?:/((?:[A-Za-z0-9_]|[$])*)" + BLANK_CLASS + r"*)?\)"
)
_RUBY_STRIP = " \t\n\v\f\r\x00"
HEREDOC_ALL_ESCAPES = "trnsuL$"


class HeredocSpec:
    __slots__ = ("tag", "syntax", "interpolate", "escapes", "end")

    def __init__(self, tag: str, syntax: str, interpolate: bool, escapes: frozenset[str], end: int):
        self.tag = tag
        self.syntax = syntax
        self.interpolate = interpolate
        self.escapes = escapes  # frozenset of escape strings, as Puppet's resulting_escapes
        self.end = end  # position after the closing ')'


def heredoc_spec(text: str, pos: int) -> HeredocSpec:
    """Parse the '@(...)' header at pos (text[pos:pos+2] == '@(')."""
    close = text.find(")", pos)
    if close < 0:
        raise LexFail("HEREDOC_UNCLOSED_PARENTHESIS", pos, {"followed_by": followed_by(text, pos)})
    end = close + 1
    md = _HEREDOC_HEAD.search(text, pos, end)
    if md is None:
        raise LexFail("HEREDOC_INVALID_SYNTAX", end)
    tag = md.group(1).strip(_RUBY_STRIP)
    interpolate = False
    if len(tag) >= 2 and tag[0] == '"' and tag[-1] == '"':
        interpolate = True
        tag = tag[1:-1].strip(_RUBY_STRIP)
    if not tag:
        raise LexFail("HEREDOC_EMPTY_ENDTAG", end)
    escapes = md.group(3)
    resulting: set[str] = set()
    if escapes is not None:
        if not escapes:
            escapes = HEREDOC_ALL_ESCAPES
        if len(set(escapes)) != len(escapes):
            raise LexFail("HEREDOC_MULTIPLE_AT_ESCAPES", end, {"escapes": ", ".join(escapes)})
        resulting.add("\\")
        for e in escapes:
            if e in "trnsu$":
                resulting.add(e)
            elif e == "L":
                resulting.update(("\n", "\r\n"))
            else:
                raise LexFail("HEREDOC_INVALID_ESCAPE", end, {"actual": e})
    return HeredocSpec(tag, md.group(2) or "", interpolate, frozenset(resulting), end)


def heredoc_endline_re(tag: str) -> re.Pattern[str]:
    return re.compile(
        "("
        + BLANK_CLASS
        + "*)(?:(\\|)"
        + BLANK_CLASS
        + "*)?(?:(-)"
        + BLANK_CLASS
        + "*)?"
        + re.escape(tag)
        + BLANK_CLASS
        + "*\\r?(?:\\n|\\Z)"
    )


def heredoc_body(text: str, start: int, tag: str) -> tuple[str, list[int], int, bool] | None:
    """Find the heredoc body starting at start.  -> (processed_text, margins, resume_pos, has_margin)
    or None when no end line is found.  margins: per body line, the characters removed."""
    endline = heredoc_endline_re(tag).search
    n = len(text)
    pos = start
    lines: list[str] = []
    while pos < n:
        nl = text.find("\n", pos)
        nxt = n if nl < 0 else nl + 1
        line = text[pos:nxt]
        pos = nxt
        md = endline(line)
        if md is None:
            lines.append(line)
            continue
        leading = md.group(1)
        has_margin = md.group(2) == "|"
        if has_margin and leading:
            margins = []
            out = []
            k = len(leading)
            for s in lines:
                if s.startswith(leading):
                    out.append(s[k:])
                    margins.append(k)
                else:
                    out.append(s)
                    margins.append(0)
            lines = out
        else:
            margins = [0] * len(lines)
        body = "".join(lines)
        if md.group(3) == "-":
            if body.endswith("\r\n"):
                body = body[:-2]
            elif body.endswith("\n"):
                body = body[:-1]
        return body, margins, pos, has_margin
    return None


class SubLocator:
    """Maps byte offsets in a heredoc's processed text to byte offsets in the enclosing text,
    the way Puppet's SubLocator#to_global does (margins included, quirks included)."""

    __slots__ = ("lead", "acc", "line_index", "m1", "plain")

    def __init__(self, body_bytes: bytes, lead: int, has_margin: bool, margins: list[int]):
        self.lead = lead
        self.plain = not has_margin or not any(margins)
        self.m1 = margins[0] if (margins and has_margin) else 0
        if not self.plain:
            acc = [0]
            for m in margins:
                acc.append(acc[-1] + m)
            acc.append(acc[-1])
            self.acc = acc
            idx = [0]
            i = body_bytes.find(b"\n")
            while i >= 0:
                idx.append(i + 1)
                i = body_bytes.find(b"\n", i + 1)
            self.line_index = idx

    def pos(self, x: int) -> int:
        """Global position of local offset x > 0 (also: the end of a node not starting at 0)."""
        if self.plain:
            return x + self.lead
        line = bisect_right(self.line_index, x)
        return x + self.lead + self.acc[min(line, len(self.acc) - 1)]

    def point(self, x: int) -> int:
        """Global position of local offset x (Puppet's to_global offset)."""
        return self.lead if x == 0 else self.pos(x)

    def positions(self, xs: list[int]) -> list[int]:
        """:meth:`pos` of each offset of ``xs`` (0 included: ``pos``, not ``point``).  The offsets of a
        heredoc's tokens mostly increase: the line is followed from one to the next instead of searched
        for each (searched only when an offset goes back, e.g. after a heredoc nested in an
        interpolation)."""
        lead = self.lead
        if self.plain:
            return [x + lead for x in xs]
        line_index = self.line_index
        acc = self.acc
        last = len(acc) - 1
        n = len(line_index)
        out: list[int] = []
        append = out.append
        k = 0  # bisect_right(line_index, x): the line starts at or before x
        for x in xs:
            if k and x < line_index[k - 1]:
                k = bisect_right(line_index, x)
            else:
                while k < n and line_index[k] <= x:
                    k += 1
            append(x + lead + acc[k if k < last else last])
        return out

    def span(self, s: int, e: int) -> tuple[int, int]:
        """Global (start, end) of the local span s..e as Puppet's to_global gives it (:meth:`pos` of
        each end, inline: called for every token of a heredoc's text)."""
        lead = self.lead
        if self.plain:
            return s + lead, e + lead
        line_index = self.line_index
        acc = self.acc
        last = len(acc) - 1
        end = e + lead + acc[min(bisect_right(line_index, e), last)]
        if s == 0:
            return lead, end - self.m1
        return s + lead + acc[min(bisect_right(line_index, s), last)], end


# ----------------------------------------------------------------------------------------------
# EPP text

_EPP_SKIP_LEADING = re.compile(r"[ \t]*\r?\n?")
_EPP_COMMENT_END = re.compile(r"[^%]%>")
_EPP_TRIM_TAG = re.compile(r"[ \t]*<%\Z")


def epp_text(text: str, pos: int, skip_leading: bool) -> tuple[str | None, str, int, str | None]:
    """Puppet's EppScanner#scan from pos.  -> (rendered_text_or_None, mode, new_pos, issue_or_None)
    with mode one of 'text' (reached the end), 'epp' (<% or <%-), 'expr' (<%=), 'error'."""
    n = len(text)
    if pos >= n:
        return None, "text", pos, None
    s = ""
    while pos < n:
        i = text.find("<%", pos)
        if i < 0:
            part = text[pos:]
            pos = n
        else:
            part = text[pos : i + 2]
            pos = i + 2
        if skip_leading:
            m = _EPP_SKIP_LEADING.match(part)
            part = part[m.end() if m is not None else 0 :]
            skip_leading = False
        part = part.replace("%%>", "%>")
        s += part
        c = text[pos] if pos < n else ""
        if c == "":
            if s.endswith("<%"):
                return s, "error", pos, "EPP_UNBALANCED_EXPRESSION"
            return s, "text", pos, None
        if c == "-":
            pos += 1
            m = _EPP_TRIM_TAG.search(s)
            if m:
                s = s[: m.start()]
            return s, "epp", pos, None
        if c == "%":
            pos += 1  # '<%%' is a literal '<%'
            continue
        if c == "=":
            return s[:-2], "expr", pos + 1, None
        if c == "#":
            s = s[:-2]
            m = _EPP_COMMENT_END.search(text, pos)
            if m is None:
                return s, "error", pos, "EPP_UNBALANCED_COMMENT"
            part = text[pos : m.end()]
            pos = m.end()
            if part[1:2] == "-":
                s = s.rstrip(" \t")
            if part.endswith("-%>"):
                skip_leading = True
            continue
        return s[:-2], "epp", pos, None
    # Puppet quirk: the loop ran out (input ends in a comment or '<%%'): the text is dropped.
    return None, "text", pos, None


# ----------------------------------------------------------------------------------------------
# Character index -> UTF-8 byte offset

_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def utf8_len(ch: str) -> int:
    o = ord(ch)
    if o < 0x80:
        return 1
    if o < 0x800:
        return 2
    if 0xDC80 <= o <= 0xDCFF:  # a byte smuggled in by surrogateescape
        return 1
    if o < 0x10000:
        return 3
    return 4


class ByteMap:
    """char index -> byte offset for a text with non-ASCII characters."""

    __slots__ = ("pos", "cum")

    def __init__(self, text: str):
        pos = []
        cum = []
        extra = 0
        for m in _NON_ASCII.finditer(text):
            extra += utf8_len(m.group()) - 1
            pos.append(m.start())
            cum.append(extra)
        self.pos = pos
        self.cum = cum

    def __call__(self, c: int) -> int:
        i = bisect_left(self.pos, c)
        return c + (self.cum[i - 1] if i else 0)


def encode(text: str) -> bytes:
    """UTF-8 bytes of text; surrogateescape'd bytes come back as themselves, other lone
    surrogates as their 3-byte (surrogatepass) form, consistently with utf8_len."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        out = []
        for ch in text:
            try:
                out.append(ch.encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError:
                out.append(ch.encode("utf-8", "surrogatepass"))
        return b"".join(out)


# Byte order marks Puppet rejects: (name, byte pattern (None = any byte), bytes shown)
_BOMS = [
    ("UTF-32", (0x00, 0x00, 0xFE, 0xFF), 4),
    ("UTF-32", (0xFF, 0xFE, 0x00, 0x00), 4),
    ("GB-18030", (0x84, 0x31, 0x95, 0x33), 4),
    ("UTF-EBCDIC", (0xDD, 0x73, 0x66, 0x73), 4),
    ("SCSU", (0x0E, 0xFE, 0xFF, None), 3),
    ("UTF-8", (0xEF, 0xBB, 0xBF, None), 3),
    ("UTF-1", (0xF7, 0x64, 0x4C, None), 3),
    ("BOCU", (0xFB, 0xEE, 0x28, None), 3),
    ("UTF-16", (0xFE, 0xFF, None, None), 2),
    ("UTF-16", (0xFF, 0xFE, None, None), 2),
]


def byte_order_mark(text: str) -> tuple[str, str] | None:
    """(format name, shown bytes) of a byte order mark Puppet rejects at the start of text, or None."""
    if not text or ("\x0f" <= text[0] < "\x80"):  # no byte order mark starts with these
        return None
    head = list(encode(text[:4])[:4])
    head += [-1] * (4 - len(head))
    for name, pattern, size in _BOMS:
        if all(b is None or b == h for b, h in zip(pattern, head)):
            return name, "[" + " ".join(f"{b:X}" for b in head[:size]) + "]"
    return None
