"""A JSON reader that keeps where each key and value is (UTF-8 byte offsets), for diagnostics on a JSON
file in the editor (metadata.json).  No pygls here.

Python's ``json`` module gives values without positions, and its errors a position only for the first
problem of a syntax it reads its own way; a diagnostic on ``"version"`` needs the span of that key and of
its value.  The reader is small and follows RFC 8259 with two of Ruby's readings, because Puppet reads
metadata.json with Ruby (``Puppet::Util::Json.load``: the Oj reader when installed, else the json gem):

* comments (``/* ... */`` and ``// ...``) are read as white space, as both of Ruby's readers read them,
  with a warning (they are not JSON: other tools refuse them);
* a key given twice keeps its last value, as both do, with a warning at the first.

What one of Ruby's readers refuses is an error: a trailing comma, a leading zero, a control character in
a string, a lone surrogate escape, a byte order mark, nesting deeper than the json gem's 100 levels,
anything after the value.  Reading stops at the first error (its span is where it was found).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["JsonValue", "Member", "JsonProblem", "read_json", "MAX_NESTING"]

MAX_NESTING = 100  # the json gem's default max_nesting


@dataclass
class Member:
    """One ``"key": value`` of an object."""

    key: str
    key_start: int
    key_end: int
    value: JsonValue


@dataclass
class JsonValue:
    """A value and its span [start, end) in the UTF-8 bytes.  ``kind``: object, array, string, number,
    true, false or null; ``value``: the Python value of a scalar; ``members`` / ``items`` of a container."""

    kind: str
    start: int
    end: int
    value: object = None
    members: list[Member] = field(default_factory=list)
    items: list[JsonValue] = field(default_factory=list)

    def member(self, key: str) -> Member | None:
        """The member ``key`` of an object (its last, as Ruby's readers keep), else None."""
        found = None
        for m in self.members:
            if m.key == key:
                found = m
        return found

    @property
    def text(self) -> str | None:
        """The string's value when this is a string, else None."""
        return self.value if self.kind == "string" and isinstance(self.value, str) else None

    def to_python(self) -> object:
        """The plain value (dict, list, str, int, float, bool, None)."""
        if self.kind == "object":
            return {m.key: m.value.to_python() for m in self.members}
        if self.kind == "array":
            return [v.to_python() for v in self.items]
        return self.value


@dataclass(frozen=True)
class JsonProblem:
    start: int
    end: int
    severity: str  # "error" | "warning"
    message: str
    code: str = "JSON_SYNTAX"  # JSON_SYNTAX (an error), JSON_COMMENT, JSON_DUPLICATE_KEY (warnings)


class _Stop(Exception):
    """The first syntax error: reading stops."""


_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_LEADING_ZERO = re.compile(rb"-?0[0-9]")
_PLAIN = re.compile(rb'[^"\\\x00-\x1f]+')
_ESCAPES = {ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b", ord("f"): "\f", ord("n"): "\n"}
_ESCAPES.update({ord("r"): "\r", ord("t"): "\t"})
_HEX4 = re.compile(rb"[0-9A-Fa-f]{4}")
_NAMES = {b"true": ("true", True), b"false": ("false", False), b"null": ("null", None)}


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.problems: list[JsonProblem] = []

    def fail(self, start: int, message: str, end: int | None = None) -> _Stop:
        if end is None:
            end = min(start + 1, len(self.data))
        self.problems.append(JsonProblem(start, max(end, start), "error", message))
        return _Stop()

    def what(self) -> str:
        """The unexpected thing at the position, for a message."""
        if self.pos >= len(self.data):
            return "the end of the file"
        ch = self.data[self.pos : self.pos + 1]
        return f"'{ch.decode('latin-1')}'" if 0x20 < ch[0] < 0x7F else f"byte 0x{ch[0]:02x}"

    def blank(self) -> None:
        """Skip white space and comments (comments with a warning)."""
        data, n = self.data, len(self.data)
        while self.pos < n:
            c = data[self.pos]
            if c in b" \t\n\r":
                self.pos += 1
            elif data.startswith(b"/*", self.pos):
                close = data.find(b"*/", self.pos + 2)
                if close < 0:
                    raise self.fail(self.pos, "unterminated comment", n)
                self.comment(self.pos, close + 2)
            elif data.startswith(b"//", self.pos):
                close = data.find(b"\n", self.pos)
                self.comment(self.pos, n if close < 0 else close)
            else:
                return

    def comment(self, start: int, end: int) -> None:
        self.problems.append(
            JsonProblem(
                start,
                end,
                "warning",
                "a comment is not JSON (Puppet's readers skip it; the Forge and other tools do not)",
                "JSON_COMMENT",
            )
        )
        self.pos = end

    def value(self, depth: int) -> JsonValue:
        self.blank()
        data, start = self.data, self.pos
        if start >= len(data):
            raise self.fail(start, "a value was expected, not the end of the file", start)
        c = data[start]
        if c == ord("{"):
            return self.container(depth, object_=True)
        if c == ord("["):
            return self.container(depth, object_=False)
        if c == ord('"'):
            text = self.string()
            return JsonValue("string", start, self.pos, text)
        if c == ord("-") or ord("0") <= c <= ord("9"):
            return self.number()
        for word, (kind, val) in _NAMES.items():
            if data.startswith(word, start):
                self.pos = start + len(word)
                return JsonValue(kind, start, self.pos, val)
        if data.startswith(b"\xef\xbb\xbf", start):
            raise self.fail(start, "a byte order mark: Puppet's JSON readers refuse it", start + 3)
        raise self.fail(start, f"a value was expected, not {self.what()}")

    def container(self, depth: int, *, object_: bool) -> JsonValue:
        start = self.pos
        if depth >= MAX_NESTING:
            raise self.fail(start, f"nested deeper than {MAX_NESTING} levels (Ruby's json gem refuses it)")
        close = ord("}") if object_ else ord("]")
        node = JsonValue("object" if object_ else "array", start, start)
        self.pos += 1
        self.blank()
        if self.pos < len(self.data) and self.data[self.pos] == close:
            self.pos += 1
            node.end = self.pos
            return node
        while True:
            if object_:
                self.blank()
                key_start = self.pos
                if self.pos >= len(self.data) or self.data[self.pos] != ord('"'):
                    if self.pos < len(self.data) and self.data[self.pos] == close and node.members:
                        raise self.fail(self.pos, "a trailing comma before '}' is not JSON")
                    raise self.fail(self.pos, f'a key (a "string") was expected, not {self.what()}')
                key = self.string()
                key_end = self.pos
                self.blank()
                if self.pos >= len(self.data) or self.data[self.pos] != ord(":"):
                    raise self.fail(self.pos, f"':' was expected after the key, not {self.what()}")
                self.pos += 1
                member_value = self.value(depth + 1)
                earlier = node.member(key)
                if earlier is not None:
                    self.problems.append(
                        JsonProblem(
                            earlier.key_start,
                            earlier.key_end,
                            "warning",
                            f'the key "{key}" is given again later; the later value is the one read',
                            "JSON_DUPLICATE_KEY",
                        )
                    )
                node.members.append(Member(key, key_start, key_end, member_value))
            else:
                self.blank()
                if self.pos < len(self.data) and self.data[self.pos] == close and node.items:
                    raise self.fail(self.pos, "a trailing comma before ']' is not JSON")
                node.items.append(self.value(depth + 1))
            self.blank()
            if self.pos < len(self.data) and self.data[self.pos] == ord(","):
                self.pos += 1
                continue
            if self.pos < len(self.data) and self.data[self.pos] == close:
                self.pos += 1
                node.end = self.pos
                return node
            expected = "',' or '}'" if object_ else "',' or ']'"
            if self.pos >= len(self.data):
                opened = "object" if object_ else "array"
                raise self.fail(
                    start, f"this {opened} is not closed: {expected} was expected before the end of the file"
                )
            raise self.fail(self.pos, f"{expected} was expected, not {self.what()}")

    def number(self) -> JsonValue:
        start = self.pos
        if _LEADING_ZERO.match(self.data, start):
            raise self.fail(start, "a number with a leading zero is not JSON")
        match = _NUMBER.match(self.data, start)
        if match is None:
            raise self.fail(start, "a number was expected after '-'")
        self.pos = match.end()
        after = self.data[self.pos : self.pos + 1]
        if after in (b".", b"e", b"E") or after.isalnum():
            raise self.fail(start, "not a JSON number", self.pos + 1)
        raw = match.group(0)
        if match.group(1) or match.group(2):
            return JsonValue("number", start, self.pos, float(raw))
        return JsonValue("number", start, self.pos, int(raw))

    def string(self) -> str:
        """A string starting at the position (a ``"``); its value."""
        data, start = self.data, self.pos
        self.pos += 1
        out: list[str] = []
        while True:
            plain = _PLAIN.match(data, self.pos)
            if plain is not None:
                try:
                    out.append(plain.group(0).decode("utf-8"))
                except UnicodeDecodeError as e:
                    bad = self.pos + e.start
                    raise self.fail(bad, "not valid UTF-8") from None
                self.pos = plain.end()
            if self.pos >= len(data):
                raise self.fail(start, "this string is not closed", self.pos)
            c = data[self.pos]
            if c == ord('"'):
                self.pos += 1
                return "".join(out)
            if c != ord("\\"):
                raise self.fail(self.pos, f"a control character (0x{c:02x}) in a string must be escaped")
            out.append(self.escape())

    def escape(self) -> str:
        data, at = self.data, self.pos
        kind = data[at + 1] if at + 1 < len(data) else -1
        if kind in _ESCAPES:
            self.pos = at + 2
            return _ESCAPES[kind]
        if kind != ord("u"):
            raise self.fail(at, 'not a JSON escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)', at + 2)
        code = self.hex4(at)
        if 0xDC00 <= code <= 0xDFFF:
            raise self.fail(at, "a low surrogate escape without its high surrogate", at + 6)
        if 0xD800 <= code <= 0xDBFF:
            if not data.startswith(b"\\u", at + 6):
                raise self.fail(at, "a high surrogate escape without its low surrogate", at + 6)
            low = self.hex4(at + 6)
            if not 0xDC00 <= low <= 0xDFFF:
                raise self.fail(at, "a high surrogate escape without its low surrogate", at + 12)
            self.pos = at + 12
            return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
        self.pos = at + 6
        return chr(code)

    def hex4(self, at: int) -> int:
        digits = _HEX4.match(self.data, at + 2)
        if digits is None:
            raise self.fail(
                at, "\\u must be followed by four hexadecimal digits", min(at + 6, len(self.data))
            )
        return int(digits.group(0), 16)


def read_json(data: bytes) -> tuple[JsonValue | None, list[JsonProblem]]:
    """The value of a JSON document (None after a syntax error) and the problems found, in order."""
    reader = _Reader(data)
    try:
        reader.blank()
        if reader.pos >= len(data):
            raise reader.fail(0, "the file is empty: a JSON value was expected", 0)
        node = reader.value(0)
        reader.blank()
        if reader.pos < len(data):
            raise reader.fail(
                reader.pos, f"nothing may follow the JSON value, not {reader.what()}", len(data)
            )
    except _Stop:
        return None, reader.problems
    except RecursionError:  # (MAX_NESTING keeps far from it; never a traceback)
        reader.problems.append(JsonProblem(0, 0, "error", "nested too deeply to read"))
        return None, reader.problems
    return node, reader.problems
