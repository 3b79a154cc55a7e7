"""Pcore stream basics shared by the writer and the readers: extension numbers, integer range, the
errors, the work bound of a read, the generic Pcore objects (types written by reference, included object
types and their instances), and what every reader does alike (fail, decline, finish an included object).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

FORMATS = ("msgpack", "json")

# extension numbers (Puppet's Serialization::Extension)
INNER_TABULATION = 0x00
TABULATION = 0x01
ARRAY_START = 0x10
MAP_START = 0x11
PCORE_OBJECT_START = 0x12
OBJECT_START = 0x13
SENSITIVE_START = 0x14
DEFAULT = 0x20
COMMENT = 0x21
REGEXP = 0x30

#: extension number -> name, for messages (all of Puppet's; the readers refuse those no AST document uses)
EXT_NAMES = {
    0x00: "INNER_TABULATION",
    0x01: "TABULATION",
    0x10: "ARRAY_START",
    0x11: "MAP_START",
    0x12: "PCORE_OBJECT_START",
    0x13: "OBJECT_START",
    0x14: "SENSITIVE_START",
    0x20: "DEFAULT",
    0x21: "COMMENT",
    0x30: "REGEXP",
    0x31: "TYPE_REFERENCE",
    0x32: "SYMBOL",
    0x33: "TIME",
    0x34: "TIMESPAN",
    0x35: "VERSION",
    0x36: "VERSION_RANGE",
    0x37: "BINARY",
    0x38: "BASE64",
    0x39: "URI",
}

#: what the readers take: the bytes of a stream
Buffer = bytes | bytearray

#: Work bound of a read, in characters: repeated strings (INNER_TABULATION) handed out, and source texts
#: whose line index a reader computes, may add up to WORK_PER_BYTE per input byte plus WORK_BASE.  A
#: document Puppet writes stays far below (its repeated strings are names and texts of its own source);
#: beyond it a small file could make every consumer (e.g. --dump) handle gigabytes.
WORK_PER_BYTE = 16
WORK_BASE = 1 << 20


def work_budget(size: int) -> int:
    """The work bound of reading a document of ``size`` bytes."""
    return WORK_PER_BYTE * size + WORK_BASE


def over_budget() -> NoReturn:
    """Raise the error of a read that exceeds its work bound."""
    raise XppFormatError(
        f"the document repeats more text than {WORK_PER_BYTE} characters per byte of it allow "
        "(a back-reference bomb?)"
    )


MAX_INT = (1 << 63) - 1
MIN_INT = -(1 << 63)


class XppError(Exception):
    """Base class of this package's errors."""


class XppFormatError(XppError):
    """Malformed, truncated or unsupported XPP / Pcore data (the only exception the readers raise)."""


class XppWriteError(XppError):
    """A value that cannot be serialized (unknown type, integer out of 64-bit range, NaN in JSON, ...)."""


# ---------------------------------------------------------------------------------------------------------
# generic Pcore objects


class PType:
    """A ``Pcore::*`` object written by reference, e.g. ``PType("Pcore::AnyType")`` or
    ``PType("Pcore::ObjectType", [init_hash])``: ``values`` are the written attribute values in wire order
    (trailing defaults already left out)."""

    __slots__ = ("name", "values")

    def __init__(self, name: str, values: Iterable[Any] = ()):
        self.name = name
        self.values = list(values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PType) and other.name == self.name and other.values == self.values

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"PType({self.name!r}, {self.values!r})"


class IncludedObject:
    """An instance of a non-``Pcore::`` object type written with its type *included*:
    OBJECT_START(n + 1), the type value (a ``PType("Pcore::ObjectType", [init_hash])``), then n values."""

    __slots__ = ("type", "values")

    def __init__(self, type_: PType, values: Iterable[Any] = ()):
        self.type = type_
        self.values = list(values)


class PObject:
    """What the reader returns for an instance of an included object type: its type name, the attribute
    values by name (defaults filled in) and the type's init hash."""

    __slots__ = ("type_name", "attrs", "init_hash")

    def __init__(self, type_name: str, attrs: dict[Any, Any], init_hash: dict[Any, Any]):
        self.type_name = type_name
        self.attrs = attrs
        self.init_hash = init_hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PObject) and other.type_name == self.type_name and other.attrs == self.attrs

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"PObject({self.type_name!r}, {self.attrs!r})"


def fail(msg: str) -> NoReturn:
    """Raise XppFormatError(msg): the readers' one way to refuse input (a call keeps their loops short)."""
    raise XppFormatError(msg)


#: the extensions whose payload is one non-negative integer (an index or a count)
INT_PAYLOAD = frozenset((INNER_TABULATION, TABULATION, ARRAY_START, MAP_START, OBJECT_START))


class Reject(Exception):
    """A fast path declines the input (the general path then reads it, or gives the canonical error)."""


def object_params(init_hash: Any) -> tuple[list[str], int, dict[str, Any]]:
    """(names, required_count, defaults) of an included Pcore::ObjectType init hash."""
    if type(init_hash) is not dict or type(init_hash.get("name")) is not str:
        fail("included object type has no name")
    attrs = init_hash.get("attributes", {})
    if type(attrs) is not dict:
        fail("included object type has bad attributes")
    req: list[str] = []
    opt: list[str] = []
    defaults: dict[str, Any] = {}
    for name, spec in attrs.items():
        if type(name) is not str:
            fail("included object type has a non-string attribute name")
        if type(spec) is dict:
            if spec.get("kind") in ("derived", "constant", "given_or_derived"):
                continue
            if "value" in spec:
                opt.append(name)
                defaults[name] = spec["value"]
                continue
        elif not isinstance(spec, PType):
            fail(f"included object type attribute {name} has no type")
        req.append(name)
    return req + opt, len(req), defaults


def finish_pobject(obj: PObject, vals: list[Any], names: list[str], defaults: dict[str, Any]) -> None:
    """Set ``obj.attrs`` from the values read (``vals``) and the defaults of the attributes not written."""
    attrs = dict(zip(names, vals))
    for name in names[len(vals) :]:
        attrs[name] = defaults[name]
    obj.attrs = attrs
