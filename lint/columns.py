"""A large manifest's lint tokens kept in columns, with a token object made only when a check reads one.

One :class:`~puppet_xpp.lint.tokens.Tok` per token costs about 200 bytes (its ten fields, its position
numbers): a 5 MB one-line list of numbers has 1.9 million tokens, 500 MB. Here a token is one byte of
type, one reference to its value (the same string object for every "," or " "), two 4-byte numbers for
its line and column, and an entry in its type's position array: about 25 bytes. Checks read the
tokens through :class:`TokenColumns`, a read-only sequence whose items are :class:`TokenView` objects
made on each read, whose neighbours (``prev``, ``next``, ``prev_code``, ``next_code``) are found in the
columns when asked for. A view is not the same object on two reads: checks compare tokens by position
(``idx``), never by identity. Fixes edit a list of linked tokens; a manifest that is fixed is tokenised
as objects (lint.run decides).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import compress, count, repeat
from operator import attrgetter, is_not
from typing import Any, overload

from puppet_xpp.lint.tokens import FORMATTING, LexProblem, Tok, tokenise_runs

# type name <-> one-byte code (the set of puppet-lint's token types is fixed and small)
_CODES: dict[str, int] = {}
_NAMES: list[str] = []


def _code(name: str) -> int:
    code = _CODES.get(name)
    if code is None:
        code = len(_NAMES)
        if code > 255:
            raise ValueError(f"more than 256 token types ({name})")
        _CODES[name] = code
        _NAMES.append(name)
    return code


for _name in sorted(FORMATTING):
    _code(_name)
_FORMATTING_CODES = frozenset(_CODES.values())  # (registered first: their codes are these)
_TYPE = attrgetter("type")
_VALUE = attrgetter("value")
_RAW = attrgetter("raw")
_LINE = attrgetter("line")
_COLUMN = attrgetter("column")


def _neighbour(find: Callable[[TokenColumns, int], int]) -> Any:
    """A read-only token attribute: the token at ``find(columns, idx)`` (None for -1)."""

    def get(self: TokenView) -> Tok | None:
        i = find(self.columns, self.idx)
        return None if i < 0 else self.columns.view(i)

    def refuse(self: TokenView, value: Tok | None) -> None:
        raise TypeError("lint tokens in columns are read-only")

    return property(get, refuse)


class TokenView(Tok):
    """One token of :class:`TokenColumns`: its type, value, raw text and position are copied at the
    read; its neighbours are read from the columns when asked for. Read-only: setting a neighbour
    raises (fixes work on objects)."""

    __slots__ = ("columns",)

    columns: TokenColumns

    prev = _neighbour(lambda columns, i: i - 1)
    next = _neighbour(lambda columns, i: i + 1 if i + 1 < len(columns) else -1)
    prev_code = _neighbour(lambda columns, i: columns.code_before(i))
    next_code = _neighbour(lambda columns, i: columns.code_after(i))


class Picked(Sequence[Tok]):
    """The tokens at some positions (``Manifest.of_type``; a ``range`` for a slice: a resource's or a
    class's tokens, held by the manifest's derived data), as views made when read."""

    __slots__ = ("columns", "positions")

    def __init__(self, columns: TokenColumns, positions: Sequence[int]):
        self.columns = columns
        self.positions = positions

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> Tok: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Tok]: ...
    def __getitem__(self, index: int | slice) -> Tok | Sequence[Tok]:
        if isinstance(index, slice):
            return Picked(self.columns, self.positions[index])
        return self.columns.view(self.positions[index])

    def __iter__(self) -> Iterator[Tok]:
        view = self.columns.view
        for i in self.positions:
            yield view(i)


class TokenColumns(Picked):
    """A manifest's lint tokens in columns (see the module docstring); made by :func:`tokenise_columns`.
    As a sequence: the tokens at every position (a slice: a :class:`Picked` of a range)."""

    def __init__(self) -> None:
        super().__init__(self, range(0))
        self.types = bytearray()
        self.values: list[str] = []
        self.raws: dict[int, str] = {}  # the few tokens with a raw text
        self.lines = array("i")
        self.cols = array("i")
        self.by_type: dict[str, Sequence[int]] = {}  # type -> its positions (arrays)
        # the token at position ``i`` (0 <= i < len) as a new view: a closure over the columns (made
        # millions of times on a large manifest)
        self.view: Callable[[int], Tok] = self._viewer()

    def take(self, run: list[Tok], by: dict[str, list[int]]) -> None:
        """Append a run of numbered tokens (:func:`~puppet_xpp.lint.tokens.tokenise_runs`)."""
        base = len(self.types)
        codes = _CODES
        for name in by:
            if name not in codes:
                _code(name)
        self.types.extend(map(codes.__getitem__, map(_TYPE, run)))
        self.values.extend(map(_VALUE, run))
        self.lines.extend(map(_LINE, run))
        self.cols.extend(map(_COLUMN, run))
        raws = list(map(_RAW, run))
        self.raws.update(compress(zip(count(base), raws), map(is_not, raws, repeat(None))))
        index = self.by_type
        for name, positions in by.items():
            got = index.get(name)
            if got is None:
                got = index[name] = array("i")
            assert isinstance(got, array)
            got.extend(map(base.__add__, positions))
        self.positions = range(len(self.types))

    def _viewer(self) -> Callable[[int], Tok]:
        new = object.__new__
        kind = TokenView
        names = _NAMES
        types = self.types
        values = self.values
        raw = self.raws.get
        lines = self.lines
        cols = self.cols

        def view(i: int) -> Tok:
            v: TokenView = new(kind)
            v.type = names[types[i]]
            v.value = values[i]
            v.raw = raw(i)
            v.line = lines[i]
            v.column = cols[i]
            v.idx = i
            v.columns = self
            return v

        return view

    def code_before(self, i: int) -> int:
        """The position of the last code token before ``i``, or -1."""
        types = self.types
        fmt = _FORMATTING_CODES
        i -= 1
        while i >= 0 and types[i] in fmt:
            i -= 1
        return i

    def code_after(self, i: int) -> int:
        """The position of the first code token after ``i``, or -1."""
        types = self.types
        fmt = _FORMATTING_CODES
        n = len(types)
        i += 1
        while i < n and types[i] in fmt:
            i += 1
        return i if i < n else -1

    def type_at(self, i: int) -> str:
        return _NAMES[self.types[i]]


def tokenise_columns(text: str) -> tuple[TokenColumns, LexProblem | None]:
    """The lint tokens of ``text`` in columns (no tokens when it cannot be tokenised, as
    :func:`~puppet_xpp.lint.tokens.tokenise`)."""
    columns = TokenColumns()
    problem = tokenise_runs(text, columns.take)
    if problem is not None:
        return TokenColumns(), problem
    return columns, None
