"""What the checks share about one manifest: its tokens and the token ranges of resources, classes,
defined types and nodes, found the way puppet-lint finds them (bracket counting over the token stream,
with the same blind spots, because the checks' results depend on them).

A manifest whose resource bodies cannot be delimited raises :class:`LintSyntaxError` (puppet-lint then
reports one "Syntax error" for the file and nothing else).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from puppet_xpp.lint.columns import Picked, TokenColumns
from puppet_xpp.lint.tokens import FORMATTING, Tok

_OPEN_CLOSE = {"LBRACE": "RBRACE", "LBRACK": "RBRACK", "LPAREN": "RPAREN"}
_CLOSE_OPEN = {v: k for k, v in _OPEN_CLOSE.items()}
_OPENERS = tuple(_OPEN_CLOSE)
_BRACKETS = _OPENERS + tuple(_CLOSE_OPEN)


_T = TypeVar("_T")


class _once(Generic[_T]):  # noqa: N801 - used like functools.cached_property
    """``functools.cached_property`` without its lock (Python 3.11 takes one at each first access, which
    costs more than most of these computations on a small manifest): the value replaces the descriptor
    in the instance's ``__dict__``."""

    def __init__(self, fn: Callable[[Any], _T]):
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    @overload
    def __get__(self, inst: None, owner: type | None = None) -> _once[_T]: ...
    @overload
    def __get__(self, inst: object, owner: type | None = None) -> _T: ...
    def __get__(self, inst: object | None, owner: type | None = None) -> _T | _once[_T]:
        if inst is None:
            return self
        value = self.fn(inst)
        inst.__dict__[self.name] = value
        return value


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
    tokens: Sequence[Tok]
    type: Tok
    param_tokens: list[Tok]


@dataclass
class Definition:
    """A class, defined type or node: its tokens from the keyword to the closing brace."""

    start: int
    end: int
    tokens: Sequence[Tok]
    param_tokens: Sequence[Tok] | None
    kind: str
    name_token: Tok | None
    inherited_token: Tok | None


@dataclass
class Manifest:
    """One manifest's tokens and what the checks derive from them. The derived data (type index, bracket
    matches, resources, definitions) is computed once, on the tokens as tokenised: checks run before any
    fix edits the list."""

    tokens: Sequence[Tok]  # a list of linked tokens, or a large manifest's TokenColumns (no fixes then)
    path: str | None = None
    fullpath: str | None = None
    filename: str | None = None
    lines: list[str] = field(default_factory=list)
    relative: bool = False
    text: str | None = None  # the source, for checks that can rule themselves out by a substring test
    index: Mapping[str, Sequence[int]] | None = field(default=None, repr=False)  # type -> positions, if known

    _by_type: Mapping[str, Sequence[int]] = field(init=False, repr=False)  # the positions of each token type
    _merged: dict[tuple[str, ...], Sequence[int]] = field(init=False, repr=False, default_factory=dict)
    _of_type: dict[tuple[str, ...], Sequence[Tok]] = field(init=False, repr=False, default_factory=dict)
    _closers: dict[int, int] = field(init=False, repr=False, default_factory=dict)  # opener -> closer, -1

    def __post_init__(self) -> None:
        by = self.index
        if by is None:
            lists: dict[str, list[int]] = {}
            for i, t in enumerate(self.tokens):
                lst = lists.get(t.type)
                if lst is None:
                    lists[t.type] = [i]
                else:
                    lst.append(i)
            by = dict(lists)
        self._by_type = by
        toks = self.tokens
        # the type and the value of the token at a position (in columns: read without making the token)
        self.type_at: Callable[[int], str] = (
            toks.type_at if isinstance(toks, TokenColumns) else (lambda i: toks[i].type)
        )
        self.value_at: Callable[[int], str] = (
            toks.values.__getitem__ if isinstance(toks, TokenColumns) else (lambda i: toks[i].value)
        )

    def editable(self) -> list[Tok]:
        """The token list a fix edits (a manifest being fixed is tokenised as linked objects)."""
        toks = self.tokens
        if not isinstance(toks, list):
            raise TypeError("a manifest in columns is not fixed")
        return toks

    def pos(self, tok: Tok) -> int:
        """Position of a token of the (unchanged, linked) list."""
        return tok.idx

    def positions(self, type_: str) -> Sequence[int]:
        """The positions of the tokens of one type, in order."""
        return self._by_type.get(type_, [])

    def positions_of(self, *types: str) -> Sequence[int]:
        """The positions of the tokens of these types, in order (computed once per set of types)."""
        if len(types) == 1:
            return self._by_type.get(types[0], [])
        merged = self._merged
        got = merged.get(types)
        if got is None:
            key = tuple(sorted(types))  # the same list for the same set of types in any order
            got = merged.get(key)
            if got is None:
                by = self._by_type
                union: list[int] = []
                for ty in key:
                    union += by.get(ty, ())
                union.sort()  # sorted runs: a merge
                got = merged[key] = union
            merged[types] = got
        return got

    def of_type(self, *types: str) -> Sequence[Tok]:
        """The tokens of these types, in order (made once per set of types; do not modify the list; in
        columns: views made as they are read)."""
        got = self._of_type.get(types)
        if got is None:
            toks = self.tokens
            if isinstance(toks, TokenColumns):
                got = Picked(toks, self.positions_of(*types))
            else:
                got = [toks[i] for i in self.positions_of(*types)]
            self._of_type[types] = got
        return got

    def in_range(self, start: int, end: int, *types: str) -> list[Tok]:
        """The tokens of these types at positions ``start``..``end`` (inclusive), in order."""
        idx = self.positions_of(*types)
        toks = self.tokens
        return [toks[i] for i in idx[bisect_left(idx, start) : bisect_right(idx, end)]]

    def closer(self, opener: Tok) -> Tok | None:
        """``next_of(opener, (its closing type,))``, remembered per opener (the unchanged list only)."""
        at = self._close_at(opener.idx, opener.type)
        return None if at < 0 else self.tokens[at]

    def _close_at(self, i: int, type_: str) -> int:
        """:meth:`closer` by positions (-1: none)."""
        memo = self._closers
        at = memo.get(i)
        if at is None:
            at = memo[i] = self._scan_at(i, (_OPEN_CLOSE[type_],), _BRACKETS)
        return at

    def next_of(self, tok: Tok, types: tuple[str, ...]) -> Tok | None:
        """:func:`next_of` (no value) with remembered bracket matches (the unchanged list only)."""
        at = self._scan_at(tok.idx, types, types + _OPENERS)
        return None if at < 0 else self.tokens[at]

    def _scan_at(self, after: int, want: tuple[str, ...], kinds: tuple[str, ...]) -> int:
        """The position of the first token of a type in ``want`` after position ``after`` (-1: none),
        bracketed blocks skipped, found over the positions of ``kinds`` (``want`` and the opening
        brackets: the only tokens that matter; only their types are read)."""
        type_at = self.type_at
        idx = self.positions_of(*kinds)
        k = bisect_right(idx, after)
        n = len(idx)
        while k < n:
            i = idx[k]
            ty = type_at(i)
            if ty in want:
                return i
            if ty in _OPEN_CLOSE:
                close = self._close_at(i, ty)
                if close < 0:
                    return -1
                k = bisect_right(idx, close, k)
            else:
                k += 1
        return -1

    @_once
    def title_tokens(self) -> list[Tok]:
        toks = self.tokens
        out: list[Tok] = []
        for i in self._by_type.get("COLON", ()):
            t = toks[i]
            if self.type_at(i - 1) == "RBRACK":
                # puppet-lint takes the last '[' of the whole manifest
                lbracks = self._by_type.get("LBRACK")
                if not lbracks:
                    continue
                start = lbracks[-1]
                out.extend(r for r in toks[start + 1 : i - 1] if r.type in ("STRING", "NAME"))
            else:
                nxt = t.next_code
                if nxt is None:
                    raise LintSyntaxError(t)
                if nxt.type != "LBRACE":
                    out.append(toks[i - 1])
        return out

    @_once
    def resources(self) -> list[Resource]:
        toks = self.tokens
        out: list[Resource] = []
        marker = 0
        for colon in self.of_type("COLON"):
            if colon.next_code is None or colon.next_code.type == "LBRACE":
                continue
            start = colon.idx
            if start < marker:
                break
            end_tok = self.next_of(colon, ("SEMIC", "RBRACE"))
            if end_tok is None or end_tok.idx < start:
                raise LintSyntaxError(colon)
            marker = end_tok.idx
            out.append(
                Resource(
                    start + 1,
                    marker,
                    toks[start : marker + 1],
                    self._resource_type(start),
                    self._resource_params(colon, start, marker),
                )
            )
        return out

    def _resource_type(self, index: int) -> Tok:
        """The code token before the nearest ``{`` at or before ``index`` that no ``?`` precedes."""
        toks = self.tokens
        lbraces = self._by_type.get("LBRACE", [])
        for p in range(bisect_right(lbraces, index) - 1, -1, -1):  # (no copy of the list per resource)
            t = toks[lbraces[p]]
            pc = t.prev_code
            if pc is None:
                raise LintSyntaxError(t)
            if pc.type != "QMARK":
                return pc
        raise LintSyntaxError(toks[index])

    def _resource_params(self, colon: Tok, start: int, end: int) -> list[Tok]:
        """The NAMEs followed by ``=>`` between ``start`` and ``end``, bracketed blocks skipped (puppet-lint
        walks ``next NAME`` from the resource's first token until it leaves the resource)."""
        out: list[Tok] = []
        toks = self.tokens
        idx = self.positions_of("NAME", "LBRACE", "LBRACK", "LPAREN")
        skip_to = colon.idx
        for i in idx[bisect_right(idx, skip_to) : bisect_right(idx, end)]:
            if i <= skip_to:
                continue  # inside a skipped block
            t = toks[i]
            if t.type == "NAME":
                nc = t.next_code
                if nc is not None and nc.type == "FARROW":
                    out.append(t)
                continue
            close = self.closer(t)
            if close is None:
                break
            skip_to = close.idx
        return out

    @_once
    def classes(self) -> list[Definition]:
        return self._definitions("CLASS")

    @_once
    def defines(self) -> list[Definition]:
        return self._definitions("DEFINE")

    @_once
    def nodes(self) -> list[Definition]:
        return self._definitions("NODE")

    @_once
    def _structure(self) -> Sequence[int]:
        """Indices of the tokens that delimit definitions (braces, parentheses, ``inherits``)."""
        return self.positions_of("INHERITS", "LPAREN", "RPAREN", "LBRACE", "RBRACE")

    def _param_tokens(self, start: int, end: int) -> Sequence[Tok] | None:
        """The tokens inside a definition's parameter list: between the first ``(`` and its ``)`` when
        no ``{`` comes first (over the brackets of ``start``..``end`` only)."""
        toks = self.tokens
        structure = self._structure
        depth = 0
        lparen: int | None = None
        type_at = self.type_at
        for i in structure[bisect_left(structure, start) : bisect_right(structure, end)]:
            ty = type_at(i)
            if ty == "LPAREN":
                depth += 1
                if depth == 1:
                    lparen = i
            elif ty == "RPAREN":
                depth -= 1
                if depth == 0:
                    return None if lparen is None else toks[lparen + 1 : i]
            elif ty == "LBRACE" and depth == 0:
                return None
        return None

    def _definitions(self, kind: str) -> list[Definition]:
        toks = self.tokens
        out: list[Definition] = []
        starts = self._by_type.get(kind, [])
        if not starts:
            return out
        structure = self._structure
        for i in starts:
            tok = toks[i]
            nc = tok.next_code
            if nc is None or nc.type == "LBRACE":
                continue  # `class { 'x': }` declares, it does not define: nothing below would be added
            brace = paren = 0
            in_params = False
            inherited: Tok | None = None
            type_at = self.type_at
            for p in range(bisect_right(structure, i), len(structure)):  # (no copy per definition)
                j = structure[p]
                ty = type_at(j)
                if ty == "INHERITS":
                    inherited = toks[j].next_code
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
                            params = self._param_tokens(i, j)
                            out.append(
                                Definition(i, j, toks[i : j + 1], params, kind, tok.next_code, inherited)
                            )
                            break
        return out


def is_formatting(t: Tok) -> bool:
    return t.type in FORMATTING
