"""Hand-written parts of the AST model: the base class of every node, the Regexp value, the behaviour of
Locator and of positioned nodes (derived attributes), and the tree walk.

The node classes themselves are generated from ``grammar/ast_table.py`` into ``grammar/ast.py``; they
subclass :class:`Node` (and the mixins below for Locator and Positioned) and fill in the class attributes
declared here.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar, cast

from .ast_table import REQ

if TYPE_CHECKING:
    from .ast import Locator


class Regexp:
    """The value of a LiteralRegularExpression (Pcore Regexp): only its source is carried."""

    __slots__ = ("source",)

    def __init__(self, source: str):
        self.source = source

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regexp) and other.source == self.source

    def __hash__(self) -> int:
        return hash(("re", self.source))

    def __repr__(self) -> str:
        return f"Regexp({self.source!r})"


class _Default:
    """Default marker of a generated ``__init__`` parameter whose default is a new empty list."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<default>"


DEFAULT: Any = _Default()


class Node:
    """Base of all generated AST classes (the class attributes are set by each generated class).

    The class attributes are the model's metadata, read across the package (walks, serializers, readers):
    their leading underscore keeps them apart from Puppet's attribute names (``name``, ``value``, ...),
    as namedtuple's ``_fields`` does, and does not mean private."""

    __slots__ = ()
    _name: ClassVar[str] = "Node"
    _pcore_name: ClassVar[str] = ""
    _fields: ClassVar[tuple[str, ...]] = ()
    _wire: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, str]] = {}
    _min: ClassVar[int] = 0
    _abstract: ClassVar[bool] = True
    _child_fields: ClassVar[tuple[str, ...]] = ()
    _ref_fields: ClassVar[tuple[str, ...]] = ()

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return False
        for f in self._fields:
            a, b = getattr(self, f), getattr(other, f)
            if f == "locator":
                if a is not b and a != b:
                    return False
            elif a != b:
                return False
        return True

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        parts = []
        for f in self._fields:
            if f == "locator":
                continue
            v = getattr(self, f)
            if v != self._defaults.get(f, REQ):
                parts.append(f"{f}={v!r}")
        return f"{self._name}({', '.join(parts)})"

    def children(self) -> Iterator[Node]:
        """Contained nodes in attribute order (Program.definitions, a reference, is not containment)."""
        for f in self._child_fields:
            v = getattr(self, f)
            if isinstance(v, Node):
                yield v
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, Node):
                        yield x


class PositionedMixin:
    """Derived attributes of Puppet's Positioned (file, line, pos), from the Locator."""

    __slots__ = ()
    if TYPE_CHECKING:
        locator: Locator
        offset: int
        length: int

    @property
    def file(self) -> str:
        return self.locator.file

    @property
    def line(self) -> int:
        return self.locator.line_for_offset(self.offset)

    @property
    def pos(self) -> int:
        return self.locator.pos_on_line(self.offset)


class LocatorMixin:
    """Line and column lookups of Puppet's Locator (line_index holds the byte offset of each line start)."""

    __slots__ = ()
    if TYPE_CHECKING:
        string: str
        file: str
        line_index: list[int] | None  # None only while a reader builds it (it computes the index then)
        _b: bytes

    def line_for_offset(self, offset: int) -> int:
        return bisect.bisect_right(cast("list[int]", self.line_index), offset)

    def pos_on_line(self, offset: int) -> int:
        idx = cast("list[int]", self.line_index)
        line_start = idx[bisect.bisect_right(idx, offset) - 1]
        data = self.source_bytes()
        return len(data[line_start:offset].decode("utf-8", "replace")) + 1

    def set_source_bytes(self, data: bytes) -> None:
        """Give the Locator its source's UTF-8 bytes when the caller has them already (a parse just
        encoded the text; the incremental parser edits them), so they are not encoded again."""
        object.__setattr__(self, "_b", data)

    def source_bytes(self) -> bytes:
        """The source as UTF-8 bytes (offsets are byte offsets), computed once."""
        b: bytes | None = getattr(self, "_b", None)
        if b is None:
            b = self.string.encode("utf-8", "surrogateescape")
            object.__setattr__(self, "_b", b)
        return b


def line_starts(data: bytes) -> list[int]:
    """Byte offset of every line start (what Locator.line_index holds)."""
    idx = [0]
    find = data.find
    i = find(b"\n")
    while i >= 0:
        idx.append(i + 1)
        i = find(b"\n", i + 1)
    return idx


def walk(node: Node) -> Iterator[Node]:
    """Pre-order walk over containment (what Puppet's validator visits)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        kids = list(n.children())
        kids.reverse()
        stack.extend(kids)
