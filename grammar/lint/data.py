"""What the checks share about one manifest: its tokens and the token ranges of resources, classes,
defined types and nodes, found the way puppet-lint finds them (bracket counting over the token stream,
with the same blind spots, because the checks' results depend on them).

A manifest whose resource bodies cannot be delimited raises :class:`LintSyntaxError` (puppet-lint then
reports one "Syntax error" for the file and nothing else).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property

from puppet_xpp.grammar.lint.tokens import FORMATTING, Tok

_OPEN_CLOSE = {"LBRACE": "RBRACE", "LBRACK": "RBRACK", "LPAREN": "RPAREN"}
_CLOSE_OPEN = {v: k for k, v in _OPEN_CLOSE.items()}


class LintSyntaxError(Exception):
    """The token stream does not delimit a resource; ``token`` is where puppet-lint gives up."""

    def __init__(self, token: Tok):
        super().__init__(token.type)
        self.token = token


def next_of(tok: Tok, types: tuple[str, ...], value: str | None = None) -> Tok | None:
    """The next token of one of ``types`` (and ``value``), skipping bracketed blocks."""
    it = tok.next
    while it is not None:
        if it.type in types and (value is None or it.value == value):
            return it
        close = _OPEN_CLOSE.get(it.type)
        if close is not None:
            it = next_of(it, (close,))
            if it is None:
                return None
        it = it.next
    return None


def prev_of(tok: Tok, types: tuple[str, ...], value: str | None = None) -> Tok | None:
    """The previous token of one of ``types`` (and ``value``), skipping bracketed blocks."""
    it = tok.prev
    while it is not None:
        if it.type in types and (value is None or it.value == value):
            return it
        open_ = _CLOSE_OPEN.get(it.type)
        if open_ is not None:
            it = prev_of(it, (open_,))
            if it is None:
                return None
        it = it.prev
    return None


@dataclass
class Resource:
    start: int
    end: int
    tokens: list[Tok]
    type: Tok
    param_tokens: list[Tok]


@dataclass
class Definition:
    """A class, defined type or node: its tokens from the keyword to the closing brace."""

    start: int
    end: int
    tokens: list[Tok]
    param_tokens: list[Tok] | None
    kind: str
    name_token: Tok | None
    inherited_token: Tok | None


@dataclass
class Manifest:
    tokens: list[Tok]
    path: str | None = None
    fullpath: str | None = None
    filename: str | None = None
    lines: list[str] = field(default_factory=list)
    relative: bool = False

    @cached_property
    def _by_type(self) -> dict[str, list[int]]:
        """The positions of each token type."""
        by: dict[str, list[int]] = {}
        for i, t in enumerate(self.tokens):
            lst = by.get(t.type)
            if lst is None:
                by[t.type] = [i]
            else:
                lst.append(i)
        return by

    def pos(self, tok: Tok) -> int:
        """Position of a token of the (unchanged, linked) list."""
        return tok.idx

    def positions(self, type_: str) -> list[int]:
        """The positions of the tokens of one type, in order."""
        return self._by_type.get(type_, [])

    def of_type(self, *types: str) -> list[Tok]:
        """The tokens of these types, in order (one index built per manifest instead of a scan per check)."""
        by = self._by_type
        idx = [i for ty in types for i in by.get(ty, ())]
        if len(types) > 1:
            idx.sort()
        toks = self.tokens
        return [toks[i] for i in idx]

    @cached_property
    def title_tokens(self) -> list[Tok]:
        toks = self.tokens
        out: list[Tok] = []
        for i in self._by_type.get("COLON", ()):
            t = toks[i]
            if toks[i - 1].type == "RBRACK":
                start = max((k for k, r in enumerate(toks) if r.type == "LBRACK"), default=None)
                if start is None:
                    continue
                out.extend(r for r in toks[start + 1 : i - 1] if r.type in ("STRING", "NAME"))
            else:
                nxt = t.next_code
                if nxt is None:
                    raise LintSyntaxError(t)
                if nxt.type != "LBRACE":
                    out.append(toks[i - 1])
        return out

    @cached_property
    def resources(self) -> list[Resource]:
        toks = self.tokens
        out: list[Resource] = []
        marker = 0
        for colon in self.of_type("COLON"):
            if colon.next_code is None or colon.next_code.type == "LBRACE":
                continue
            start = self.pos(colon)
            if start < marker:
                break
            end_tok = next_of(colon, ("SEMIC", "RBRACE"))
            if end_tok is None or self.pos(end_tok) < start:
                raise LintSyntaxError(colon)
            marker = self.pos(end_tok)
            out.append(
                Resource(
                    start + 1,
                    marker,
                    toks[start : marker + 1],
                    self._resource_type(start),
                    self._resource_params(toks[start : marker + 1]),
                )
            )
        return out

    def _resource_type(self, index: int) -> Tok:
        for k in range(index, -1, -1):
            t = self.tokens[k]
            if t.type == "LBRACE":
                pc = t.prev_code
                if pc is None:
                    raise LintSyntaxError(t)
                if pc.type != "QMARK":
                    return pc
        raise LintSyntaxError(self.tokens[index])

    def _resource_params(self, rtoks: list[Tok]) -> list[Tok]:
        members = {id(t) for t in rtoks}
        out: list[Tok] = []
        it: Tok | None = rtoks[0].prev
        while it is not None:
            it = next_of(it, ("NAME",))
            if it is None or id(it) not in members:
                break
            if it.next_code is not None and it.next_code.type == "FARROW":
                out.append(it)
        return out

    @cached_property
    def classes(self) -> list[Definition]:
        return self._definitions("CLASS")

    @cached_property
    def defines(self) -> list[Definition]:
        return self._definitions("DEFINE")

    @cached_property
    def nodes(self) -> list[Definition]:
        return self._definitions("NODE")

    @cached_property
    def _structure(self) -> list[int]:
        """Indices of the tokens that delimit definitions (braces, parentheses, ``inherits``)."""
        by = self._by_type
        return sorted(
            i for ty in ("INHERITS", "LPAREN", "RPAREN", "LBRACE", "RBRACE") for i in by.get(ty, ())
        )

    def _definitions(self, kind: str) -> list[Definition]:
        toks = self.tokens
        out: list[Definition] = []
        starts = self._by_type.get(kind, [])
        if not starts:
            return out
        structure = self._structure
        for i in starts:
            tok = toks[i]
            brace = paren = 0
            in_params = False
            inherited: Tok | None = None
            for j in structure[bisect_right(structure, i) :]:
                t = toks[j]
                ty = t.type
                if ty == "INHERITS":
                    inherited = t.next_code
                elif ty == "LPAREN":
                    if paren == 0:
                        in_params = True
                    paren += 1
                elif ty == "RPAREN":
                    if paren == 1:
                        in_params = False
                    paren -= 1
                elif ty == "LBRACE":
                    brace += 1
                else:
                    brace -= 1
                    if brace == 0 and not in_params and tok.next_code is not None:
                        if tok.next_code.type != "LBRACE":
                            body = toks[i : j + 1]
                            out.append(
                                Definition(i, j, body, _param_tokens(body), kind, tok.next_code, inherited)
                            )
                            break
        return out


def _param_tokens(toks: list[Tok]) -> list[Tok] | None:
    depth = 0
    lparen: int | None = None
    for i, t in enumerate(toks):
        if t.type == "LPAREN":
            depth += 1
            if depth == 1:
                lparen = i
        elif t.type == "RPAREN":
            depth -= 1
            if depth == 0:
                return None if lparen is None else toks[lparen + 1 : i]
        elif t.type == "LBRACE" and depth == 0:
            return None
    return None


def is_formatting(t: Tok) -> bool:
    return t.type in FORMATTING
