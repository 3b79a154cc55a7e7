"""The heredoc ``@(END:syntax)`` checkers Puppet 7 runs at validation time: json, base64, pp and epp.

Each checker takes the heredoc's static text and returns ``(problem, logged)``: ``problem`` is ``None``
when the text is acceptable, else ``(issue_code, detail)`` where detail is the checker's message (Puppet
prefixes it with "Invalid produced text having syntax: '<syntax>'."); ``logged`` lists the diagnostics
Puppet logs while checking (pp/epp only: the warnings, and the errors when there are several, of parsing and
validating the text; positioned relative to the heredoc text, see LoggedDiagnostic).  The json checker accepts what Ruby's JSON 2.x
parser accepts (any value at the top, ``/* */`` and ``//`` comments, no NaN/Infinity, no trailing
commas), and words its refusal as json 2.6.1 does (Debian's Ruby, under both Puppets the oracle runs:
the parser.c line that raised and the text from where it gave up; :class:`_JsonError`); base64 is Ruby's strict decoding after dropping blanks, ``\\r``, ``\\n`` and ``?``; pp and epp
parse (and validate) the text through the ``reparse`` function the validator passes in (as Puppet
registers its syntax checkers), so this module imports neither the parser nor the validator.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from puppet_xpp.grammar.issues import Diagnostic

# (issue code, detail) when the heredoc text is not acceptable, else None
Problem = tuple[str, str] | None
# a checker's answer: the problem and the diagnostics Puppet logs while checking
Checked = tuple[Problem, list[Diagnostic]]
# the validator's reparse function: (parse result, validation diagnostics) of a heredoc's text
Reparse = Callable[[str, bool], tuple[Any, list[Diagnostic]]]

# ----------------------------------------------------------------------------------------------- json


class _JsonError(Exception):
    """A failure at ``pos``.  ``line``: None while the value that failed is being given up (an object
    gives up at its own start), then the line of Ruby's json 2.6.1 parser.c that raises the error Puppet
    prints (Debian's Ruby, the oracle's): 451 in an array (at the element or separator that failed), 859
    at the top (the top value's start, or trailing text)."""

    def __init__(self, pos: int, line: int | None = None) -> None:
        self.pos = pos
        self.line = line


_JSON_IN_ARRAY = 451
_JSON_AT_TOP = 859
# NaN, Infinity, -Infinity are refused where they stand: (parser.c line, offset of the text shown)
_JSON_NOT_A_NUMBER = (("NaN", 225, 0), ("Infinity", 232, -1), ("-Infinity", 249, 0))
_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")


class _Json:
    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)

    def ignore(self, i: int) -> int:
        s, n = self.s, self.n
        while i < n:
            c = s[i]
            if c in " \t\r\n":
                i += 1
            elif c == "/" and s.startswith("/*", i):
                j = s.find("*/", i + 2)
                if j < 0:
                    raise _JsonError(n)
                i = j + 2
            elif c == "/" and s.startswith("//", i):
                j = s.find("\n", i + 2)
                if j < 0:
                    raise _JsonError(n)
                i = j + 1
            else:
                break
        return i

    def value(self, i: int) -> int:
        s = self.s
        if i >= self.n:
            raise _JsonError(i)
        c = s[i]
        if c == "{":
            return self.obj(i)
        if c == "[":
            return self.arr(i)
        if c == '"':
            return self.string(i)
        for word in ("true", "false", "null"):
            if s.startswith(word, i):
                return i + len(word)
        for word, line, shift in _JSON_NOT_A_NUMBER:
            if s.startswith(word, i):
                raise _JsonError(i + shift if i + shift >= 0 else self.n, line)  # (before the text: none)
        m = _NUMBER.match(s, i)
        if m and m.end() > i and s[m.end() : m.end() + 1] in ".eE+-" and m.end() < self.n:
            m = _JSON_INTEGER.match(s, i)  # a float followed by more of one: only its integer part reads
        if m and m.end() > i and not s[m.end() : m.end() + 1].isdigit():  # (01: no number at all)
            return m.end()
        raise _JsonError(i)

    def string(self, i: int) -> int:
        s, n = self.s, self.n
        start = i
        i += 1
        while i < n:
            c = s[i]
            if c == '"':
                return i + 1
            if ord(c) < 0x20:
                raise _JsonError(start)
            if c == "\\":
                if i + 1 >= n:
                    raise _JsonError(start)
                e = s[i + 1]
                if e == "u":
                    if not _HEX4.fullmatch(s, i + 2, i + 6):
                        raise _JsonError(start)
                    code = int(s[i + 2 : i + 6], 16)
                    i += 6
                    if 0xD800 <= code <= 0xDBFF and not (
                        s.startswith("\\u", i) and _HEX4.fullmatch(s, i + 2, i + 6)
                    ):
                        raise _JsonError(start)
                    continue
                if ord(e) < 0x20:
                    raise _JsonError(start)
                i += 2
                continue
            i += 1
        raise _JsonError(start)

    def arr(self, i: int) -> int:
        try:
            return self._arr(i)
        except _JsonError as e:
            if e.line is None:
                raise _JsonError(e.pos, _JSON_IN_ARRAY) from None
            raise

    def _arr(self, i: int) -> int:
        s = self.s
        i = self.ignore(i + 1)
        if s.startswith("]", i):
            return i + 1
        while True:
            i = self.ignore(self.value(i))
            if s.startswith(",", i):
                i = self.ignore(i + 1)
                continue
            if s.startswith("]", i):
                return i + 1
            raise _JsonError(i)

    def obj(self, i: int) -> int:
        try:
            return self._obj(i)
        except _JsonError as e:
            if e.line is None:
                raise _JsonError(i) from None  # the object as a whole failed
            raise

    def _obj(self, i: int) -> int:
        s = self.s
        i = self.ignore(i + 1)
        if s.startswith("}", i):
            return i + 1
        while True:
            if not s.startswith('"', i):
                raise _JsonError(i)
            i = self.ignore(self.string(i))
            if not s.startswith(":", i):
                raise _JsonError(i)
            i = self.ignore(self.value(self.ignore(i + 1)))
            if s.startswith(",", i):
                i = self.ignore(i + 1)
                continue
            if s.startswith("}", i):
                return i + 1
            raise _JsonError(i)

    def document(self) -> None:
        try:
            i = self.value(self.ignore(0))
            i = self.ignore(i)
        except _JsonError as e:
            if e.line is None:
                raise _JsonError(e.pos, _JSON_AT_TOP) from None
            raise
        if i != self.n:
            raise _JsonError(i, _JSON_AT_TOP)


def _check_json(text: str, level: str) -> Problem:
    if level == "7.23" and not text.strip(" \t\r\n"):
        # Puppet 7.23's JSON.parse(text, {}) of a blank text: a ParserError without a message
        return "ILLEGAL_JSON", 'JSON syntax checker: Cannot parse invalid JSON string. "JSON::ParserError"'
    try:
        _Json(text).document()
    except _JsonError as e:
        rest = text[e.pos :]
        msg = f"{e.line}: unexpected token at '{rest}'"
        msg = msg[:100].replace("\r\n", "\\n").replace("\n", "\\n")
        return "ILLEGAL_JSON", f'JSON syntax checker: Cannot parse invalid JSON string. "{msg}"'
    except RecursionError:
        return "ILLEGAL_JSON", 'JSON syntax checker: Cannot parse invalid JSON string. "nesting too deep"'
    return None


# ----------------------------------------------------------------------------------------------- base64

# Ruby: text.gsub(/[\r?\n[:blank:]]/, '') -- [:blank:] is tab plus the Unicode space separators
_B64_DROP = re.compile(r"[\r?\n\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_B64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_B64_VAL = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}


def _strict_base64_ok(s: str) -> bool:
    if not _B64.fullmatch(s):
        return False
    if s.endswith("=="):
        return _B64_VAL[s[-3]] & 0xF == 0
    if s.endswith("="):
        return _B64_VAL[s[-2]] & 0x3 == 0
    return True


def _check_base64(text: str) -> Problem:
    cleaned = _B64_DROP.sub("", text)
    if _strict_base64_ok(cleaned):
        return None
    if (len(cleaned.encode("utf-8", "surrogateescape")) * 8) % 6 != 0:
        msg = "Base64 syntax checker: Cannot parse invalid Base64 string - padding is not correct"
    else:
        msg = (
            "Base64 syntax checker: Cannot parse invalid Base64 string - contains letters outside strict "
            "base 64 range (or whitespace)"
        )
    return "ILLEGAL_BASE64", msg


# ----------------------------------------------------------------------------------------------- pp / epp

MAX_ERRORS = MAX_WARNINGS = MAX_DEPRECATIONS = 10  # Puppet's max_errors / max_warnings / max_deprecations


@dataclass
class LoggedDiagnostic(Diagnostic):
    """A diagnostic Puppet *logs* while a pp/epp heredoc checker parses and validates the heredoc text.

    Its line and column are relative to the heredoc text (that is what Puppet reports), so it has no
    offset in the file; ``line_col`` returns the stored position whatever the locator.
    """

    at_line: int | None = None
    at_column: int | None = None

    def line_col(self, locator: Any) -> tuple[int | None, int | None]:
        return self.at_line, self.at_column


def _logged(d: Diagnostic, loc: Any, severity: str) -> LoggedDiagnostic:
    line, col = d.line_col(loc)
    return LoggedDiagnostic(d.code, d.message, None, 0, severity, dict(d.args), "", line, col)


def _location(line: int | None, col: int | None) -> str:
    if line is None:
        return ""
    if col is None:
        return f" (line: {line})"
    return f" (line: {line}, column: {col})"


def _with_location(d: Diagnostic, loc: Any) -> str:
    if d.message.endswith("end of input"):
        return d.message  # Puppet has no position for a syntax error at the end of the input
    line, col = d.line_col(loc) if d.offset is not None else (None, None)
    return d.message + _location(line, col)


def _parse_and_validate(text: str, *, epp: bool, reparse: Reparse) -> tuple[str | None, list[Diagnostic]]:
    """Puppet's EvaluatingParser.parse_string on the heredoc text.

    ``reparse(text, epp)`` (given by the validator) returns the parse result and, when it parsed without
    errors, the validator's diagnostics at the outer checker's settings.  Returns (message of the error
    Puppet raises or None, diagnostics it logs on the way): lexer warnings, then the validator's warnings
    and deprecations (capped like Puppet's), then, when there is more than one error, the errors (the
    raised message then only counts them).
    """
    res, found = reparse(text, epp)
    loc = res.locator
    logged: list[Diagnostic] = [_logged(d, loc, d.severity) for d in res.diagnostics if d.severity != "error"]
    errors = [d for d in res.diagnostics if d.severity == "error"]
    if errors:
        return _with_location(errors[0], loc), logged
    if res.program is None:
        return None, logged
    nested = [d for d in found if isinstance(d, LoggedDiagnostic)]
    found = [d for d in found if not isinstance(d, LoggedDiagnostic)]
    logged.extend(nested)
    warnings = [d for d in found if d.severity in ("warning", "deprecation")]
    errors = [d for d in found if d.severity == "error"]
    emitted_w = emitted_dw = 0
    for w in warnings:
        if w.severity == "deprecation":
            if emitted_dw < MAX_DEPRECATIONS:
                logged.append(_logged(w, loc, "warning"))
            emitted_dw += 1
        else:
            if emitted_w < MAX_WARNINGS:
                logged.append(_logged(w, loc, "warning"))
            emitted_w += 1
        if emitted_w >= MAX_WARNINGS and emitted_dw >= MAX_DEPRECATIONS:
            break
    if not errors:
        return None, logged
    if len(errors) == 1:
        return _with_location(errors[0], loc), logged
    for e in errors[:MAX_ERRORS]:
        logged.append(_logged(e, loc, "error"))
    if warnings:
        return (
            f"Language validation logged {len(errors)} errors, and {len(warnings)} warnings. Giving up",
            logged,
        )
    return f"Language validation logged {len(errors)} errors. Giving up", logged


def _clip(msg: str) -> str:
    return msg[:500].replace("\r\n", "\\n").replace("\n", "\\n")


def check_pp(text: str, syntax: str, *, reparse: Reparse, **_: Any) -> Checked:
    if syntax != "pp":
        return ("ILLEGAL_PP", "PP syntax checker: the syntax identifier must be a String, e.g. pp"), []
    msg, logged = _parse_and_validate(text, epp=False, reparse=reparse)
    return (None if msg is None else ("ILLEGAL_PP", f'PP syntax checker: "{_clip(msg)}"')), logged


def check_epp(text: str, syntax: str, *, reparse: Reparse, **_: Any) -> Checked:
    if syntax != "epp":
        return ("ILLEGAL_EPP", "EPP syntax checker: the syntax identifier must be a String, e.g. pp"), []
    msg, logged = _parse_and_validate(text, epp=True, reparse=reparse)
    return (None if msg is None else ("ILLEGAL_EPP", f'EPP syntax checker: "{_clip(msg)}"')), logged


def check_json(text: str, syntax: str, *, level: str = "8", **_: Any) -> Checked:
    return _check_json(text, level), []


def check_base64(text: str, syntax: str, **_: Any) -> Checked:
    return _check_base64(text), []


CHECKERS: dict[str, Callable[..., Checked]] = {
    "json": check_json,
    "base64": check_base64,
    "pp": check_pp,
    "epp": check_epp,
}
