"""The tokens of a huge document in columns (issue 26 item 12: a 5 MB document diagnosed within 300 MB).

The incremental parser keeps a document's lexer tokens because its records refer to them; for a 5 MB
one-line list that is 1.3 million token objects (about 190 MB) beside the whole tree.  From
:data:`HUGE_BYTES` on, the parser keeps no incremental state (each update is a full parse, as after a
configuration change) and the parse drops each token once shifted (grammar.parser's ``release``: the
tokens and the tree never all coexist).  What the editor's features read of the tokens afterwards
(folding, semantic tokens, name spans, the length of a point diagnostic: type, byte span, and the value
of names) is kept here instead: a type code, a start and an end per token in ``array`` columns, and the
values of the name-like tokens in a list (others read theirs from the source's bytes), about 15 bytes a
token against 150.

:class:`CompactTokens` is a read-only sequence of lexer tokens (grammar.lexer.Token), each made on
access (two reads of one position give two tokens alike, not one).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

from puppet_xpp.grammar.lexer import Token

# from this many bytes of text the incremental parser keeps its tokens here (and no incremental state):
# below it, edits reparse only what they touch; from it, each update is a full parse (seconds for
# megabytes, run apart from the other documents' requests: server.analysis.document.analyse_apart)
HUGE_BYTES = 2_000_000

# the token types whose value the features read (names compared, function names looked up): kept as
# made; the value of any other token is its source text
_VALUED = frozenset({"NAME", "WORD", "CLASSREF", "STRING", "VARIABLE", "BOOLEAN"})


class CompactTokens(Sequence[Token]):
    """Lexer tokens as columns (see the module docstring); ``data`` is the source's UTF-8 bytes.  A slice
    with step 1 is a view over the same columns (``for t in tokens[i:]`` that stops early reads only
    what it reads, as with a list)."""

    __slots__ = ("data", "names", "codes", "starts", "ends", "values", "lo", "hi")

    def __init__(self, tokens: Sequence[Any], data: bytes) -> None:
        self.data = data
        self.names: list[str] = []  # type code -> type name
        codes: dict[str, int] = {}
        self.codes = array("B")
        self.starts = array("q")
        self.ends = array("q")
        self.values: list[Any] = []
        code_append, start_append, end_append = self.codes.append, self.starts.append, self.ends.append
        value_append = self.values.append
        valued = _VALUED
        for t in tokens:
            ty = t.type
            code = codes.get(ty)
            if code is None:
                code = codes[ty] = len(self.names)
                self.names.append(ty)
            code_append(code)
            start_append(t.start_pos)
            end_append(t.end_pos)
            value_append(t.value if ty in valued else None)
        self.lo = 0
        self.hi = len(self.codes)

    def _part(self, lo: int, hi: int) -> CompactTokens:
        part = CompactTokens.__new__(CompactTokens)
        part.data, part.names, part.codes, part.starts = self.data, self.names, self.codes, self.starts
        part.ends, part.values, part.lo, part.hi = self.ends, self.values, lo, max(lo, hi)
        return part

    def __len__(self) -> int:
        return self.hi - self.lo

    def _view(self, i: int) -> Token:
        ty = self.names[self.codes[i]]
        start, end = self.starts[i], self.ends[i]
        value = self.values[i]
        if value is None and ty not in _VALUED:
            value = self.data[start:end].decode("utf-8", "surrogateescape")
        return Token(ty, value, start, end)

    @overload
    def __getitem__(self, index: int) -> Token: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Token]: ...
    def __getitem__(self, index: int | slice) -> Token | Sequence[Token]:
        n = self.hi - self.lo
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step == 1:
                return self._part(self.lo + start, self.lo + stop)
            return [self._view(self.lo + i) for i in range(start, stop, step)]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("token index out of range")
        return self._view(self.lo + index)

    def __iter__(self) -> Iterator[Token]:
        view = self._view
        for i in range(self.lo, self.hi):
            yield view(i)
