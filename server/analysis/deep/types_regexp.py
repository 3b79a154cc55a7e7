"""Ruby's regular expressions (Onigmo) as far as Python's ``re`` runs them the same way: what a
``Pattern`` type's match on a literal string needs.  A construct whose meaning differs or that ``re``
lacks makes the match :class:`~.types_model.Unprovable` rather than answered differently."""

from __future__ import annotations

import functools
import re

from puppet_xpp.server.analysis.deep.types_model import Unprovable

_POSIX = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "xdigit": "0-9a-fA-F",
    "word": "a-zA-Z0-9_",
    "punct": "!-/:-@\\[-`{-~",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "print": " -~",
    "graph": "!-~",
}
_ESCAPES = {"z": "\\Z", "Z": "(?=\\n?\\Z)", "h": "[0-9a-fA-F]", "H": "[^0-9a-fA-F]", "e": "\\x1b", "/": "/"}
_SAME = set("AbBdDwWsSntrfv0123456789.*+?()[]{}|^$\\-'\"#&!%,:;<=>@`~ _")


@functools.lru_cache(maxsize=2048)
def translate(source: str) -> tuple[re.Pattern[str], str]:
    """The compiled Python pattern that matches what Ruby's ``Regexp.new(source)`` matches, and what it
    needs of a text to match the same: "any", "icase" (a case-insensitive group: Ruby folds the case of
    all of Unicode, we of ASCII -- the same unless a character folds to ASCII, like U+017F to s) or
    "ascii" (a POSIX bracket other than xdigit: Ruby's are Unicode classes, ours ASCII ranges)."""
    unicode_safe = "any"
    out: list[str] = []
    i = 0
    n = len(source)
    in_class = 0
    while i < n:
        c = source[i]
        if c == "\\":
            if i + 1 >= n:
                raise Unprovable("trailing backslash")
            d = source[i + 1]
            if d in _ESCAPES:
                if in_class and d in "zZhH":
                    raise Unprovable("escape in class")
                out.append(_ESCAPES[d])
            elif d in _SAME or (not d.isalnum() and d.isascii()):
                out.append("\\" + d)
            elif d == "x" and re.match(r"[0-9a-fA-F]{2}", source[i + 2 : i + 4]):
                out.append(source[i : i + 4])
                i += 4
                continue
            else:
                raise Unprovable(f"escape \\{d}")
            i += 2
            continue
        if in_class:
            if source.startswith("[:", i):
                end = source.find(":]", i)
                name = source[i + 2 : end] if end > 0 else ""
                neg = name.startswith("^")
                if neg or name not in _POSIX:
                    raise Unprovable("posix class")
                out.append(_POSIX[name])
                if name != "xdigit":
                    unicode_safe = "ascii"
                i = end + 2
                continue
            if c == "[" or source.startswith("&&", i):
                raise Unprovable("nested class")
            if c == "]":
                in_class = 0
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = 1
            out.append(c)
            i += 1
            if i < n and source[i] == "^":
                out.append("^")
                i += 1
            if i < n and source[i] == "]":  # a leading ] is literal in both
                out.append("\\]")
                i += 1
            continue
        if c == "(" and source.startswith("(?", i):
            rest = source[i + 2 : i + 3]
            if source.startswith("(?<", i) and source[i + 3 : i + 4] not in ("=", "!"):
                out.append("(?P<")
                i += 3
                continue
            if rest in (":", "=", "!", ">") or source.startswith("(?<=", i) or source.startswith("(?<!", i):
                out.append(c)
                i += 1
                continue
            flags = re.match(r"\(\?([imx]*)(?:-([imx]*))?:", source[i:])
            if flags is None:  # (?i) to the end of the group, comments, conditionals, absent operators
                raise Unprovable("group options")
            on, off = (_flags(f or "") for f in flags.groups())
            if "i" in on and unicode_safe == "any":
                unicode_safe = "icase"
            out.append(f"(?{on}{'-' + off if off else ''}:")
            i += flags.end()
            continue
        # Ruby's ^ is a line's start, but not after a newline that ends the text (Python's is)
        out.append("(?:\\A|(?<=\\n)(?!\\Z))" if c == "^" else c)
        i += 1
    if in_class:
        raise Unprovable("open class")
    try:
        return re.compile("".join(out), re.MULTILINE | re.ASCII), unicode_safe
    except re.error as e:
        raise Unprovable(str(e)) from e


def _flags(ruby: str) -> str:
    """Ruby's group options in Python's letters (Ruby's m is Python's s: a dot matches a newline)."""
    return "".join({"i": "i", "m": "s", "x": "x"}[f] for f in ruby)


def search(source: str, text: str) -> bool:
    """Whether Ruby's ``Regexp.new(source).match(text)`` finds a match."""
    pattern, needs = translate(source)
    if needs != "any" and not text.isascii():
        if needs == "ascii" or any(not c.isascii() and any(f.isascii() for f in c.casefold()) for c in text):
            raise Unprovable("non-ASCII text")
    return pattern.search(text) is not None
