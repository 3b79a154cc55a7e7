"""The inside of a double-quoted string or a heredoc body, cut into puppet-lint's segments (lint.tokens
makes the string's tokens of them): its rules for ``${``, ``$name`` and escaped quotes, which decide
where its DQPRE/DQMID/DQPOST and HEREDOC_* tokens start and end."""

from __future__ import annotations

import re

BLANK_CHARS = (
    "\t\v\f \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)
_UNENC_VAR = re.compile(r"(?:|[^\\])\$(::)?(\w+(-\w+)*::)*\w+(-\w+)*", re.ASCII)
_END_STRING = re.compile(r'(?:|[^\\])(\\\\)*"')
_PLAIN_RUN = re.compile(r'(?:[^${}"\\](?=[^${}"\\]))+')
_ESC_DQUOTE = re.compile(r'\\+"')
_HEREDOC_NAME = re.compile(rf'"?(.+?)"?(:.+?)?[{BLANK_CHARS}]*(/.*)?$', re.DOTALL)


class Slurper:
    """Splits the inside of a double-quoted string or a heredoc body into puppet-lint's segments:
    text, ``INTERP`` (the code of a ``${...}``) and ``UNENC_VAR`` (a ``$name``)."""

    def __init__(self, text: str, pos: int):
        self.text = text
        self.pos = pos
        self.results: list[tuple[str, str]] = []
        self.depth = 0
        self.seg: list[str] = []
        self.kind = "STRING"

    def at(self, rx: re.Pattern[str]) -> re.Match[str] | None:
        return rx.match(self.text, self.pos)

    def read_char(self) -> None:
        ch = self.text[self.pos]
        self.pos += 1
        self.seg.append(ch)
        if self.depth:
            if ch == "{":
                self.depth += 1
            elif ch == "}":
                self.depth -= 1

    def unenclosed(self) -> bool:
        return (
            self.depth == 0
            and self.at(_UNENC_VAR) is not None
            and not (self.seg and self.seg[-1].endswith("\\"))
        )

    def take_unenclosed(self) -> None:
        t = self.text
        if self.pos + 1 < len(t) and t[self.pos] not in "\n" and t[self.pos + 1] == "$":
            self.read_char()
        self.results.append((self.kind, "".join(self.seg)))
        m = self.at(_UNENC_VAR)
        assert m is not None
        self.results.append(("UNENC_VAR", m.group()))
        self.pos = m.end()
        self.seg = []

    def start_interp(self) -> None:
        if self.seg and self.seg[-1] == "\\":
            self.read_char()
            return
        if self.depth == 0:
            self.pos += 2
            self.results.append((self.kind, "".join(self.seg)))
            self.seg = []
        else:
            self.seg.append("${")
            self.pos += 2
        self.depth += 1

    def end_interp(self) -> None:
        if self.depth == 0:
            self.seg.append("}")
            self.pos += 1
            return
        self.depth -= 1
        self.pos += 1
        if self.depth == 0:
            self.results.append(("INTERP", "".join(self.seg)))
            self.seg = []
        else:
            self.seg.append("}")

    def string(self) -> tuple[list[tuple[str, str]], int]:
        t = self.text
        n = len(t)
        plain = _PLAIN_RUN
        while self.pos < n:
            m = plain.match(t, self.pos)
            if m:
                # characters that none of the rules below can start at (nor at the character before)
                self.seg.append(m.group())
                self.pos = m.end()
                continue
            c = t[self.pos]
            if t.startswith("${", self.pos):
                self.start_interp()
            elif self.depth and c == "{":
                self.read_char()
            elif c == "}":
                self.end_interp()
            elif (c == "$" or t.startswith("$", self.pos + 1)) and self.unenclosed():
                self.take_unenclosed()
            elif self._string_rest():
                break
        return self.results, self.pos

    def _string_rest(self) -> bool:
        """END_STRING / escaped quote / plain character; True when the string ended."""
        m = _END_STRING.match(self.text, self.pos)
        if m:
            matched = m.group()
            self.pos = m.end()
            if self.depth == 0:
                self.seg.append(matched[:-1])
                self.results.append((self.kind, "".join(self.seg)))
                return True
            self.seg.append(matched)
            return False
        m = _ESC_DQUOTE.match(self.text, self.pos)
        if m:
            self.seg.append(m.group())
            self.pos = m.end()
            return False
        self.read_char()
        return False

    def heredoc(self, tag: str) -> tuple[list[tuple[str, str]], int]:
        t = self.text
        m = _HEREDOC_NAME.match(tag)
        name = m.group(1) if m else tag
        end_rx = re.compile(r"\|?[ \t\r\n\f\v]*-?[ \t\r\n\f\v]*" + re.escape(name) + r"(?=\n|\Z)")
        # a run of characters at each of which only the last branch below applies (no end of the heredoc
        # there, not a brace or "$", not followed by "$"): taken at once (a 50 KB heredoc is otherwise
        # read a character at a time)
        plain = re.compile(rf"(?:(?!{end_rx.pattern})[^${{}}](?!\$))+")
        interp = tag.startswith('"')
        self.kind = "HEREDOC"
        n = len(t)
        while self.pos < n:
            pm = plain.match(t, self.pos)
            if pm:
                self.seg.append(pm.group())
                self.pos = pm.end()
                continue
            em = end_rx.match(t, self.pos)
            if em:
                self.results.append(("HEREDOC", "".join(self.seg)))
                self.results.append(("HEREDOC_TERM", em.group()))
                self.pos = em.end()
                if self.depth == 0:
                    break
            elif interp and t.startswith("${", self.pos):
                self.start_interp()
            elif interp and self.depth and t[self.pos] == "{":
                self.read_char()
            elif interp and "$" in t[self.pos : self.pos + 2] and self.unenclosed():
                self.take_unenclosed()
            elif interp and t[self.pos] == "}":
                self.end_interp()
            else:
                self.read_char()
        return self.results, self.pos
