"""Pcore serialization of Puppet ASTs: writer and reader, msgpack and JSON base encodings.

The stream is what Puppet 7's ``Serializer.new(writer, type_by_reference: true)`` produces (research note
``xpp-format.md`` §3): a flat sequence of primitive values and *extensions* (ext type = extension number),
with two back-reference tables:

* writer-level ("inner") tabulation: every string, every PCORE_OBJECT_START / OBJECT_START marker and every
  regexp value gets the next index in one table keyed by value; a repeat is written as INNER_TABULATION(i).
  The name segments of a PCORE_OBJECT_START share that table and are written as plain integers when repeated.
* serializer-level tabulation by object identity: every list, dict, regexp and object takes the next index
  when first written; writing the same object again gives TABULATION(i).  So the one Locator is written once
  and ``Program.definitions`` is a list of TABULATIONs pointing at nodes of the body.

AST nodes are written *by type name* (``Puppet::AST::<Name>``) with the values of ``cls._wire`` in order,
trailing values equal to their default dropped.  Everything about the AST comes from ``grammar.ast``.

API
---
``dumps(value, fmt="msgpack", *, check=True) -> bytes``
                                           serialize one value (normally a ``Program``); fmt 'msgpack'|'json';
                                           ``check`` asserts AST attribute types first (as Puppet's reader will).
``loads(data, fmt="msgpack")``             read one value back; raises :class:`XppFormatError` (and nothing
                                           else) for malformed or unsupported input.
``PType`` / ``PObject`` / ``IncludedObject``  generic Pcore objects (``Pcore::*`` type values, instances of an
                                           included object type) used by :mod:`xpp.result`.

Values the writer accepts: None, bool, int (64-bit), float, str, list, dict, :class:`grammar.ast.Regexp`, AST
nodes (concrete classes of ``grammar.ast``), :class:`PType` and :class:`IncludedObject` (subclasses of
str/int/float are written as their base type).  Anything else, an ill-typed AST attribute, an out-of-range
integer, or (JSON only) a non-finite float or a string that is not valid Unicode raises
:class:`XppWriteError`.  JSON output is produced by transcoding the msgpack stream, so both encodings carry
the same tabulation by construction.  The writer and the reader are iterative: nesting depth is not bounded
by Python's recursion limit (JSON beyond the json module's limit is read by an iterative scanner).

The reader accepts exactly the extensions an AST / ParseResult document uses (INNER_TABULATION, TABULATION,
ARRAY_START, MAP_START, PCORE_OBJECT_START, OBJECT_START, REGEXP) and rebuilds the objects the parser builds:
every value is type-checked against the attribute's Pcore type (``cls._types``), missing trailing values get
their defaults, and object identity (one Locator, definitions shared with the body) is kept.  Documented
strictness beyond Puppet's: ``LiteralRegularExpression.value`` must be a Regexp; integers must fit 64 bits;
native msgpack arrays/maps/bin, DEFAULT, SENSITIVE and the runtime extensions (time, version, ...) are
rejected; trailing data after the value is rejected; ``Locator.line_index`` given as nil is recomputed from
the text.  A back-reference (TABULATION) is accepted only where Puppet's model shares an object: a node's
``locator`` attribute referring to a Locator, and each entry of ``Program.definitions`` referring (once) to
a node read since that Program started.  Any other repeated or cyclic reference is malformed: the value
read is then always a tree (plus those two kinds of sharing), so anything that walks it is linear in the
size of the input.
"""

from __future__ import annotations

import gc as _gc
import json
import math
import re
import struct
from itertools import islice
from json.encoder import encode_basestring as _json_str

from puppet_xpp.grammar import ast as _ast
from puppet_xpp.grammar.ruby import float_to_s

try:
    import msgpack as _msgpack
except ImportError:  # pragma: no cover - msgpack is a declared dependency
    _msgpack = None

__all__ = [
    "XppError",
    "XppFormatError",
    "XppWriteError",
    "dumps",
    "loads",
    "PType",
    "PObject",
    "IncludedObject",
    "FORMATS",
    "ruby_float_repr",
]

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

_EXT_NAMES = {
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

    def __init__(self, name: str, values=()):
        self.name = name
        self.values = list(values)

    def __eq__(self, other):
        return isinstance(other, PType) and other.name == self.name and other.values == self.values

    __hash__ = object.__hash__

    def __repr__(self):
        return f"PType({self.name!r}, {self.values!r})"


class IncludedObject:
    """An instance of a non-``Pcore::`` object type written with its type *included*:
    OBJECT_START(n + 1), the type value (a ``PType("Pcore::ObjectType", [init_hash])``), then n values."""

    __slots__ = ("type", "values")

    def __init__(self, type_: PType, values=()):
        self.type = type_
        self.values = list(values)


class PObject:
    """What the reader returns for an instance of an included object type: its type name, the attribute
    values by name (defaults filled in) and the type's init hash."""

    __slots__ = ("type_name", "attrs", "init_hash")

    def __init__(self, type_name: str, attrs: dict, init_hash: dict):
        self.type_name = type_name
        self.attrs = attrs
        self.init_hash = init_hash

    def __eq__(self, other):
        return isinstance(other, PObject) and other.type_name == self.type_name and other.attrs == self.attrs

    __hash__ = object.__hash__

    def __repr__(self):
        return f"PObject({self.type_name!r}, {self.attrs!r})"


# ---------------------------------------------------------------------------------------------------------
# per-class tables derived from grammar.ast


class _NodeInfo:
    __slots__ = (
        "cls",
        "name",
        "wire",
        "getter",
        "defaults",
        "min",
        "max",
        "checks",
        "wchecks",
        "positioned",
        "locslot",
        "refslot",
    )


def _node_infos() -> dict:
    import operator

    infos = {}
    for _name, cls in _ast.CONCRETE.items():
        i = _NodeInfo()
        i.cls = cls
        i.name = cls._pcore_name
        i.wire = tuple(cls._wire)
        g = operator.attrgetter(*i.wire) if i.wire else (lambda o: ())
        i.getter = g if len(i.wire) != 1 else (lambda o, _g=g: (_g(o),))
        i.defaults = tuple(cls._defaults.get(a, _ast.REQ) for a in i.wire)
        i.min = cls._min
        i.max = len(i.wire)
        i.checks = None  # compiled below
        i.positioned = i.wire[:3] == ("locator", "offset", "length")
        # the wire slots that may hold a back-reference: the Locator, and one list of references
        i.locslot = i.wire.index("locator") if "locator" in i.wire else -1
        refs = [i.wire.index(a) for a in cls._ref_fields]
        if len(refs) > 1:
            raise ValueError(f"{cls._name}: more than one reference attribute")
        i.refslot = refs[0] if refs else -1
        infos[cls] = i
    return infos


_INFO = _node_infos()
_INFO_BY_NAME = {i.name: i for i in _INFO.values()}
_REGEXP = _ast.Regexp
_NODE = _ast.Node


# ---------------------------------------------------------------------------------------------------------
# msgpack primitives


def _mp_uint_body(n: int) -> bytes:
    """msgpack encoding of a non-negative int."""
    if n < 0x80:
        return bytes((n,))
    if n < 0x100:
        return b"\xcc" + bytes((n,))
    if n < 0x10000:
        return b"\xcd" + n.to_bytes(2, "big")
    if n < 0x100000000:
        return b"\xce" + n.to_bytes(4, "big")
    return b"\xcf" + n.to_bytes(8, "big")


def _mp_int(n: int) -> bytes:
    if n >= 0:
        if n > MAX_INT:
            raise XppWriteError("Integer out of bounds")
        return _mp_uint_body(n)
    if n >= -32:
        return bytes((n + 256,))
    if n >= -0x80:
        return b"\xd0" + n.to_bytes(1, "big", signed=True)
    if n >= -0x8000:
        return b"\xd1" + n.to_bytes(2, "big", signed=True)
    if n >= -0x80000000:
        return b"\xd2" + n.to_bytes(4, "big", signed=True)
    if n < MIN_INT:
        raise XppWriteError("Integer out of bounds")
    return b"\xd3" + n.to_bytes(8, "big", signed=True)


_SMALL_INTS = tuple(_mp_int(i) for i in range(0, 4096))


def _mp_str(s: str) -> bytes:
    try:
        b = s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:
        raise XppWriteError(f"string is not valid Unicode: {e}") from None
    n = len(b)
    if n < 32:
        return bytes((0xA0 | n,)) + b
    if n < 0x100:
        return b"\xd9" + bytes((n,)) + b
    if n < 0x10000:
        return b"\xda" + n.to_bytes(2, "big") + b
    if n < 0x100000000:
        return b"\xdb" + n.to_bytes(4, "big") + b
    raise XppWriteError("string too long")


_FIXEXT = {1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}


def _mp_ext(code: int, payload: bytes) -> bytes:
    n = len(payload)
    f = _FIXEXT.get(n)
    if f is not None:
        return bytes((f, code)) + payload
    if n < 0x100:
        return bytes((0xC7, n, code)) + payload
    if n < 0x10000:
        return b"\xc8" + n.to_bytes(2, "big") + bytes((code,)) + payload
    return b"\xc9" + n.to_bytes(4, "big") + bytes((code,)) + payload


class _ExtIntCache:
    """Encoded extensions whose payload is one non-negative int (tabulations, array/map starts).  The
    cache only ever maps i to the same bytes, so concurrent writers can share it."""

    __slots__ = ("code", "small", "big")

    def __init__(self, code):
        self.code = code
        self.small = tuple(_mp_ext(code, _mp_uint_body(i)) for i in range(256))
        self.big: dict = {}

    def get(self, i: int) -> bytes:
        if i < 256:
            return self.small[i]
        b = self.big.get(i)
        if b is None:
            if i > MAX_INT:
                raise XppWriteError("Integer out of bounds")
            b = _mp_ext(self.code, _mp_uint_body(i))
            if i < 65536:
                self.big[i] = b
        return b


_X_INNER = _ExtIntCache(INNER_TABULATION)
_X_TAB = _ExtIntCache(TABULATION)
_X_ARRAY = _ExtIntCache(ARRAY_START)
_X_MAP = _ExtIntCache(MAP_START)
_X_OBJ = _ExtIntCache(OBJECT_START)
_PACK_DOUBLE = struct.Struct(">Bd").pack


# ---------------------------------------------------------------------------------------------------------
# writer (msgpack); JSON is produced by transcoding the msgpack stream (same tabulation by construction)


class _ObjEnd:
    """Stack marker: end of an IncludedObject's type value; the instance takes its index now."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj


def _dumps_msgpack(value, check: bool = True) -> bytes:
    out = bytearray()
    wtab: dict = {}  # writer-level table: value key -> index
    stab: dict = {}  # serializer-level table: id(object) -> index
    stack = [value]
    pop = stack.pop
    push = stack.append
    extend = stack.extend
    small = _SMALL_INTS
    inner_get = _X_INNER.get
    tab_get = _X_TAB.get
    array_get = _X_ARRAY.get
    info_of = _INFO.get
    mrows: dict = {}  # per class: encoded INNER_TABULATION of its marker, by attribute count
    while stack:
        v = pop()
        t = type(v)
        if t is int:
            out += small[v] if 0 <= v < 4096 else _mp_int(v)
            continue
        info = info_of(t)
        if info is not None:  # an AST node, by type name
            k = stab.get(id(v))
            if k is not None:
                out += tab_get(k)
                continue
            stab[id(v)] = len(stab)
            vals = info.getter(v)
            if check:
                k = info.wchecks(vals)
                if k >= 0:
                    attr = info.wire[k]
                    raise XppWriteError(
                        f"{info.name}[{attr}] has wrong type, expects {info.cls._types[attr]}, "
                        f"got {_describe(vals[k])}"
                    )
            n = len(vals)
            if n > info.min:
                d = info.defaults
                while n > info.min:
                    last = vals[n - 1]
                    dv = d[n - 1]
                    if last == dv and type(last) is type(dv):
                        n -= 1
                    else:
                        break
            row = mrows.get(info)
            if row is None:
                row = mrows[info] = [None] * (info.max + 1)
            b = row[n]
            if b is None:
                out += _marker(info.name, n, wtab)
                row[n] = inner_get(len(wtab) - 1)
            else:
                out += b
            if info.positioned:
                # fast path for (locator, offset, length) when the Locator was written before
                k = stab.get(id(vals[0]))
                o, ln = vals[1], vals[2]
                if k is not None and type(o) is int and type(ln) is int:
                    out += tab_get(k)
                    out += small[o] if 0 <= o < 4096 else _mp_int(o)
                    out += small[ln] if 0 <= ln < 4096 else _mp_int(ln)
                    if n > 3:
                        extend(vals[n - 1 : 2 : -1])
                    continue
            if n:
                extend(vals[n - 1 :: -1])
            continue
        if t is str:
            k = wtab.get(v)
            if k is None:
                wtab[v] = len(wtab)
                out += _mp_str(v)
            else:
                out += inner_get(k)
        elif t is list:
            k = stab.get(id(v))
            if k is not None:
                out += tab_get(k)
            else:
                stab[id(v)] = len(stab)
                out += array_get(len(v))
                extend(reversed(v))
        elif v is None:
            out += b"\xc0"
        elif t is bool:
            out += b"\xc3" if v else b"\xc2"
        elif t is float:
            out += _PACK_DOUBLE(0xCB, v)
        elif t is dict:
            k = stab.get(id(v))
            if k is not None:
                out += tab_get(k)
            else:
                stab[id(v)] = len(stab)
                out += _X_MAP.get(len(v))
                items = list(v.items())
                for kk, vv in reversed(items):
                    push(vv)
                    push(kk)
        elif t is _REGEXP:
            k = stab.get(id(v))
            if k is not None:
                out += tab_get(k)
                continue
            stab[id(v)] = len(stab)
            if type(v.source) is not str:
                raise XppWriteError("Regexp source must be a str")
            k = wtab.get(v)
            if k is None:
                wtab[v] = len(wtab)
                out += _mp_ext(REGEXP, _mp_str(v.source))
            else:
                out += inner_get(k)
        elif t is PType:
            k = stab.get(id(v))
            if k is not None:
                out += tab_get(k)
                continue
            stab[id(v)] = len(stab)
            if type(v.name) is not str or not v.name.startswith("Pcore::"):
                raise XppWriteError(f"PType name must start with 'Pcore::': {v.name!r}")
            n = len(v.values)
            k = wtab.get((v.name, n))
            out += _marker(v.name, n, wtab) if k is None else inner_get(k)
            extend(reversed(v.values))
        elif t is IncludedObject:
            k = stab.get(id(v))
            if k is not None:
                out += tab_get(k)
                continue
            if not isinstance(v.type, PType) or v.type.name != "Pcore::ObjectType":
                raise XppWriteError("an IncludedObject's type must be a PType('Pcore::ObjectType', ...)")
            n = len(v.values) + 1
            key = (None, n)  # OBJECT_START markers are equal by count
            k = wtab.get(key)
            if k is None:
                wtab[key] = len(wtab)
                out += _X_OBJ.get(n)
            else:
                out += inner_get(k)
            extend(reversed(v.values))
            push(_ObjEnd(v))
            push(v.type)
        elif t is _ObjEnd:
            stab[id(v.obj)] = len(stab)
        elif isinstance(v, _NODE):
            raise XppWriteError(f"cannot serialize abstract or unknown AST class {t.__name__}")
        elif isinstance(v, str):  # str subclasses (e.g. a lexer token) are written as strings
            push(str(v))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            push(int(v) if isinstance(v, int) else float(v))
        else:
            raise XppWriteError(f"cannot serialize a value of type {t.__name__}")
    return bytes(out)


def _marker(name: str, n: int, wtab: dict) -> bytes:
    """First occurrence of PCORE_OBJECT_START(name, n): segments through the table, then the marker."""
    segs = name.split("::")
    parts = [_mp_uint_body(len(segs))]
    for s in segs:
        k = wtab.get(s)
        if k is None:
            wtab[s] = len(wtab)
            parts.append(_mp_str(s))
        else:
            parts.append(_mp_uint_body(k))
    parts.append(_mp_uint_body(n))
    wtab[(name, n)] = len(wtab)
    return _mp_ext(PCORE_OBJECT_START, b"".join(parts))


def ruby_float_repr(f: float) -> str:
    """``Float#to_s`` of Ruby (what Puppet's JSON writer prints); NaN and infinities have no JSON form."""
    if f != f or f in (math.inf, -math.inf):
        raise XppWriteError(f"{f} cannot be written as JSON")
    return float_to_s(f)


def _json_scalar(v) -> str:
    t = type(v)
    if t is str:
        return _json_str(v)
    if t is int:
        return str(v)
    if v is None:
        return "null"
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return ruby_float_repr(v)
    raise AssertionError(t)


def _tokens_to_json(toks: list) -> bytes:
    """JSON text for a token stream, with the nesting rules of Puppet's JSON::Packer (note §3.8): an
    extension is ``[number, payload...`` and a sequence start with count > 0 stays open for that many values."""
    out = ["["]
    app = out.append
    stack: list = []  # remaining element counts of open sequence arrays

    def delim():
        while stack and stack[-1] == 1:
            app("]")
            stack.pop()
        if stack:
            stack[-1] -= 1
        app(",")

    for t in toks:
        if type(t) is not tuple:
            app(_json_scalar(t))
            delim()
            continue
        code = t[0]
        if code == PCORE_OBJECT_START:
            segs, count = t[1], t[2]
            app("[18," + ",".join([str(len(segs))] + [_json_scalar(s) for s in segs] + [str(count)]))
            seq = count
        else:
            app("[" + ",".join([str(code)] + [_json_scalar(x) for x in t[1:]]))
            seq = t[1] if code in (ARRAY_START, OBJECT_START) else (2 * t[1] if code == MAP_START else 0)
        if seq > 0:
            app(",")
            stack.append(seq)
        else:
            app("]")
            delim()
    if len(out) > 1:
        out.pop()  # the last ","
    app("]")
    text = "".join(out)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise XppWriteError(f"string is not valid Unicode, cannot be written as JSON: {e}") from None


def dumps(value, fmt: str = "msgpack", *, check: bool = True) -> bytes:
    """Serialize ``value`` (normally a ``Program``) as Puppet's ``Serializer(type_by_reference: true)`` does.
    ``check``: assert every AST attribute value against its Pcore type first (what Puppet's reader will
    assert), so that an ill-formed AST raises XppWriteError instead of giving a document Puppet rejects."""
    data = _dumps_msgpack(value, check)
    if fmt == "msgpack":
        return data
    if fmt == "json":
        return _tokens_to_json(_mp_tokens(data))
    raise ValueError(f"unknown format {fmt!r} (expected one of {FORMATS})")


# ---------------------------------------------------------------------------------------------------------
# reader, step 1: bytes -> flat token list
#
# A token is a primitive (None, bool, int, float, str) or a tuple for an extension:
#   (0, i) (1, i) (0x10, n) (0x11, n) (0x13, n) (0x30, source) (0x12, segments_tuple, count)

_UNPACK_F32 = struct.Struct(">f").unpack_from
_UNPACK_F64 = struct.Struct(">d").unpack_from


def _fail(msg: str):
    raise XppFormatError(msg)


def _mp_prims(data, i: int, end: int, out: list, in_payload: bool) -> int:
    """Decode msgpack values in data[i:end] into ``out``; extensions only when not in a payload."""
    app = out.append
    while i < end:
        b = data[i]
        i += 1
        if b < 0x80:
            app(b)
        elif b >= 0xE0:
            app(b - 256)
        elif 0xA0 <= b <= 0xBF:
            n = b & 0x1F
            j = i + n
            if j > end:
                _fail("truncated string")
            app(data[i:j].decode("utf-8", "surrogateescape"))
            i = j
        elif b == 0xC0:
            app(None)
        elif b == 0xC2:
            app(False)
        elif b == 0xC3:
            app(True)
        elif 0xCC <= b <= 0xD3:
            size = (1, 2, 4, 8, 1, 2, 4, 8)[b - 0xCC]
            j = i + size
            if j > end:
                _fail("truncated integer")
            v = int.from_bytes(data[i:j], "big", signed=b >= 0xD0)
            if v > MAX_INT:
                _fail("integer out of 64-bit signed range")
            app(v)
            i = j
        elif b == 0xCB:
            if i + 8 > end:
                _fail("truncated float")
            app(_UNPACK_F64(data, i)[0])
            i += 8
        elif b == 0xCA:
            if i + 4 > end:
                _fail("truncated float")
            app(_UNPACK_F32(data, i)[0])
            i += 4
        elif 0xD9 <= b <= 0xDB:
            size = (1, 2, 4)[b - 0xD9]
            if i + size > end:
                _fail("truncated string header")
            n = int.from_bytes(data[i : i + size], "big")
            i += size
            j = i + n
            if j > end:
                _fail("truncated string")
            app(data[i:j].decode("utf-8", "surrogateescape"))
            i = j
        elif 0xD4 <= b <= 0xD8 or 0xC7 <= b <= 0xC9:
            if in_payload:
                _fail("extension inside an extension payload")
            if b >= 0xD4:
                n = (1, 2, 4, 8, 16)[b - 0xD4]
            else:
                size = (1, 2, 4)[b - 0xC7]
                if i + size > end:
                    _fail("truncated extension header")
                n = int.from_bytes(data[i : i + size], "big")
                i += size
            if i + 1 + n > end:
                _fail("truncated extension")
            code = data[i]
            i += 1
            j = i + n
            if n == 1 and code in _INT_PAYLOAD:
                p = data[i]
                if p >= 0x80:
                    _fail(f"bad {_EXT_NAMES.get(code, code)} payload")
                app((code, p))
            else:
                app(_mp_ext_token(code, data, i, j))
            i = j
        elif 0x80 <= b <= 0x9F or 0xDC <= b <= 0xDF:
            _fail("native msgpack array/map (Pcore writes arrays and maps as extensions)")
        elif 0xC4 <= b <= 0xC6:
            _fail("msgpack bin value (not used by Pcore text serialization)")
        else:
            _fail(f"invalid msgpack byte 0x{b:02x}")
    return i


_INT_PAYLOAD = frozenset((INNER_TABULATION, TABULATION, ARRAY_START, MAP_START, OBJECT_START))


def _mp_ext_token(code: int, data, i: int, j: int):
    items: list = []
    _mp_prims(data, i, j, items, True)
    return _ext_token(code, items, 0, len(items), True)


def _ext_token(code: int, items: list, k: int, end: int, exact: bool):
    """Build the token for extension ``code`` from payload ``items[k:end]``; returns the token (and, when
    not ``exact``, the index after the payload as a pair)."""
    name = _EXT_NAMES.get(code)
    if name is None:
        _fail(f"invalid extension number {code}")

    def take():
        nonlocal k
        if k >= end:
            _fail(f"truncated {name} payload")
        v = items[k]
        k += 1
        return v

    if code in _INT_PAYLOAD:
        n = take()
        if type(n) is not int or n < 0 or (code == OBJECT_START and n < 1):
            _fail(f"bad {name} payload")
        tok = (code, n)
    elif code == PCORE_OBJECT_START:
        nseg = take()
        if type(nseg) is not int or nseg < 1 or nseg > end - k:
            _fail("bad PCORE_OBJECT_START segment count")
        segs = []
        for _ in range(nseg):
            s = take()
            if type(s) is int:
                if s < 0:
                    _fail("bad PCORE_OBJECT_START segment index")
            elif type(s) is not str:
                _fail("bad PCORE_OBJECT_START segment")
            segs.append(s)
        n = take()
        if type(n) is not int or n < 0:
            _fail("bad PCORE_OBJECT_START attribute count")
        tok = (code, tuple(segs), n)
    elif code == REGEXP:
        s = take()
        if type(s) is not str:
            _fail("bad REGEXP payload")
        tok = (code, s)
    else:
        _fail(f"unsupported extension {name}")
    if exact:
        if k != end:
            _fail(f"extra data in {name} payload")
        return tok
    return tok, k


def _mp_tokens_py(data) -> list:
    """Pure-Python tokenizer (reference implementation; also used when the msgpack module is missing)."""
    toks: list = []
    _mp_prims(data, 0, len(data), toks, False)
    return toks


# Decoded extension tokens by extension number, then payload bytes, shared by all reads (tokens are
# immutable tuples).
_EXT_MEMOS: list = [{} for _ in range(256)]
_EXT_MEMO_MAX = 50_000
_EXT_HOOK = None  # set below


def _mp_tokens(data) -> list:
    """Tokens of a msgpack stream, decoded by the msgpack C extension.  Extension payloads are decoded by
    :func:`_ext_token` (memoized: most extensions are repeated small tabulations).  Primitive tokens that
    Pcore does not use (native arrays/maps, bin, out-of-range integers) are rejected by :func:`_build`."""
    if _msgpack is None:
        return _mp_tokens_py(data)
    unpacker = _mp_unpacker(data, _EXT_HOOK)
    try:
        unpacker.feed(data)
        toks = list(unpacker)
    except XppFormatError:
        raise
    except _msgpack.FormatError as e:
        raise XppFormatError(f"invalid msgpack data at byte {unpacker.tell()}: {e}") from None
    except Exception as e:  # the extension's other errors: StackError, ValueError (limits), ...
        raise XppFormatError(f"invalid msgpack data: {e}") from None
    if _mp_pending(unpacker):
        raise XppFormatError("truncated msgpack data")
    return toks


def _mp_unpacker(data, ext_hook):
    # No native arrays/maps/bin (Pcore never writes them), so every value is atomic.  The unpacker stops at
    # the end of the last complete value; a truncated last value is still pending then (see _mp_pending).
    return _msgpack.Unpacker(
        None,
        raw=False,
        ext_hook=ext_hook,
        max_buffer_size=max(len(data), 1),
        max_array_len=0,
        max_map_len=0,
        max_bin_len=0,
        unicode_errors="surrogateescape",
        strict_map_key=False,
        use_list=True,
    )


def _mp_pending(unpacker) -> bool:
    """Are there bytes the unpacker could not turn into a complete value?"""
    try:
        return bool(unpacker.read_bytes(1))
    except ValueError:  # "Cannot switch unpacking methods while an object is incomplete"
        return True


def _mp_ext_hook():
    memos = _EXT_MEMOS

    def ext_hook(code, payload):
        memo = memos[code]
        tok = memo.get(payload)
        if tok is None:
            tok = _mp_ext_token(code, payload, 0, len(payload))
            if len(memo) < _EXT_MEMO_MAX:
                memo[payload] = tok
        return tok

    return ext_hook


_EXT_HOOK = _mp_ext_hook()


class _ExtNo(int):
    """An extension number (first element of a JSON array) in the flattened JSON stream."""

    __slots__ = ()


def _no_constant(name):
    raise XppFormatError(f"invalid JSON number {name}")


def _json_tokens(data) -> list:
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise XppFormatError(f"JSON payload is not UTF-8: {e}") from None
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except RecursionError:  # deeper than the json module goes: scan it iteratively
        flat = _json_flat_scan(text)
    except ValueError as e:  # JSONDecodeError
        raise XppFormatError(f"invalid JSON: {e}") from None
    else:
        try:
            return _json_doc_tokens(doc)
        except _Reject:  # an unusual shape (e.g. a payload running past its array): the general way
            flat = _json_flat_doc(doc)
    return _json_group(flat)


def _json_doc_tokens(doc) -> list:
    """Tokens of a parsed JSON stream in one pass, for streams whose extension payloads lie inside their
    array (what writers produce).  Gives the same tokens as flattening + grouping; raises _Reject for
    anything else (the general way then decides)."""
    if type(doc) is not list:
        raise _Reject
    toks: list = []
    app = toks.append
    int_payload = _INT_PAYLOAD
    stack = [iter(doc)]
    while stack:
        for v in stack[-1]:
            t = v.__class__
            if t is list:
                n = len(v)
                code = v[0] if n else None
                if code.__class__ is not int:
                    raise _Reject
                if code in int_payload:
                    if n < 2:
                        raise _Reject
                    k = v[1]
                    if k.__class__ is not int or k < 0 or (code == OBJECT_START and k < 1):
                        raise _Reject
                    app((code, k))
                    if n > 2:
                        stack.append(islice(v, 2, None))
                        break
                    continue
                try:
                    tok, k = _ext_token(code, v, 1, n, False)
                except XppFormatError:
                    raise _Reject from None
                app(tok)
                if k < n:
                    stack.append(islice(v, k, None))
                    break
                continue
            if t is dict or t is _ExtNo:
                raise _Reject
            if t is int and not (MIN_INT <= v <= MAX_INT):
                raise _Reject
            app(v)
        else:
            stack.pop()
    return toks


def _json_flat_doc(doc) -> list:
    """Flatten a parsed JSON stream.  Puppet's JSON::Unpacker reads the arrays as one flat stream: an array
    starts an extension, its first element is the extension number."""
    if type(doc) is not list:
        raise XppFormatError("JSON stream is not an array")
    flat: list = []
    app = flat.append
    stack = [iter(doc)]
    while stack:
        for v in stack[-1]:
            t = type(v)
            if t is list:
                if not v or type(v[0]) is not int:
                    raise XppFormatError("JSON extension array without an extension number")
                if not (MIN_INT <= v[0] <= MAX_INT):
                    raise XppFormatError("integer out of 64-bit signed range")
                app(_ExtNo(v[0]))
                stack.append(islice(v, 1, None))
                break
            if t is dict:
                raise XppFormatError("JSON object in a Pcore stream (maps are MAP_START extensions)")
            if t is int and not (MIN_INT <= v <= MAX_INT):
                raise XppFormatError("integer out of 64-bit signed range")
            app(v)
        else:
            stack.pop()
    return flat


_JSON_TOKEN = re.compile(
    r'[ \t\n\r]*(?:(?P<p>[\[\],])|(?P<s>")|(?P<n>-?(?:0|[1-9][0-9]*)(?P<f>(?:\.[0-9]+)?'
    r"(?:[eE][+-]?[0-9]+)?))|(?P<l>true|false|null))"
)
_JSON_WS = re.compile(r"[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None}


def _json_flat_scan(text: str) -> list:
    """The same flat stream as ``_json_flat_doc(json.loads(text))``, scanned without recursion (for
    nesting deeper than the json module handles).  Accepts the same JSON subset: arrays and scalars."""
    scanstring = json.decoder.scanstring
    flat: list = []
    app = flat.append
    i = _JSON_WS.match(text, 0).end()
    if text[i : i + 1] != "[":
        raise XppFormatError("JSON stream is not an array")
    i += 1
    depth = 1
    need = "first"  # "first": a value or "]"; "value": a value; "sep": "," or "]"
    match = _JSON_TOKEN.match
    n = len(text)
    while True:
        m = match(text, i)
        if m is None:
            raise XppFormatError(f"invalid JSON at character {i}")
        i = m.end()
        kind = m.lastgroup
        if kind == "p":
            c = m.group("p")
            if c == "[":
                if need == "sep" or need == "ext":
                    raise XppFormatError(f"invalid JSON at character {i - 1}")
                depth += 1
                need = "ext"
                continue
            if c == "]":
                if need == "ext":
                    raise XppFormatError("JSON extension array without an extension number")
                if need == "value" or (need == "first" and depth > 1):
                    raise XppFormatError(f"invalid JSON at character {i - 1}")
                depth -= 1
                need = "sep"
                if depth == 0:
                    if _JSON_WS.match(text, i).end() != n:
                        raise XppFormatError("invalid JSON: extra data")
                    return flat
                continue
            if need != "sep":
                raise XppFormatError(f"invalid JSON at character {i - 1}")
            need = "value"
            continue
        if need == "sep":
            raise XppFormatError(f"invalid JSON at character {m.start(kind)}")
        if kind == "s":
            try:
                v, i = scanstring(text, i, True)
            except ValueError as e:
                raise XppFormatError(f"invalid JSON: {e}") from None
        elif kind == "n":
            if m.group("f"):
                v = float(m.group("n"))
            else:
                try:
                    v = int(m.group("n"))
                except ValueError:  # more digits than int() converts
                    raise XppFormatError("integer out of 64-bit signed range") from None
                if not (MIN_INT <= v <= MAX_INT):
                    raise XppFormatError("integer out of 64-bit signed range")
        else:
            v = _LITERALS[m.group("l")]
        if need == "ext":
            if type(v) is not int:
                raise XppFormatError("JSON extension array without an extension number")
            v = _ExtNo(v)
        app(v)
        need = "sep"


def _json_group(flat: list) -> list:
    # Group each extension number with its payload values (plain values that follow it in the flat
    # stream; an extension number inside a payload fails the payload's type checks).
    toks: list = []
    tapp = toks.append
    k = 0
    n = len(flat)
    while k < n:
        v = flat[k]
        k += 1
        if type(v) is _ExtNo:
            tok, k = _ext_token(int(v), flat, k, n, False)
            tapp(tok)
        else:
            tapp(v)
    return toks


# ---------------------------------------------------------------------------------------------------------
# reader, step 2: tokens -> values (iterative, so nesting depth is not limited by Python's stack)


def _check_expr(tstr: str, env: dict, lenient: bool = False) -> str:
    """A Python expression testing ``x`` against a Pcore type string of the AST table (names it needs are
    put into ``env``)."""
    tstr = tstr.strip()
    simple = {"String": "str", "Integer": "int", "Float": "float", "Boolean": "bool"}
    if tstr in simple:
        if lenient and tstr == "Integer":  # the writer accepts subclasses (it writes them as the base)
            return "(isinstance(x, int) and type(x) is not bool)"
        if lenient and tstr != "Boolean":
            return f"isinstance(x, {simple[tstr]})"
        return f"type(x) is {simple[tstr]}"
    if tstr == "Any":
        # Only LiteralRegularExpression.value is typed Any; the parser always puts a Regexp there.
        env["Regexp"] = _REGEXP
        return "type(x) is Regexp"
    m = re.fullmatch(r"Optional\[(.*)\]", tstr)
    if m:
        return f"(x is None or {_check_expr(m.group(1), env, lenient)})"
    m = re.fullmatch(r"Enum\[(.*)\]", tstr)
    if m:
        name = f"E{len(env)}"
        env[name] = frozenset(v.strip().strip("'\"") for v in m.group(1).split(","))
        return f"({'isinstance(x, str)' if lenient else 'type(x) is str'} and x in {name})"
    m = re.fullmatch(r"Array\[(.*?)(?:,\s*(\d+))?\]", tstr)
    if m:
        inner = m.group(1).strip()
        lo = int(m.group(2) or 0)
        size = f" and len(x) >= {lo}" if lo else ""
        if inner in _ast.TYPES:
            env[inner] = _ast.TYPES[inner]
            return f"(type(x) is list{size} and all([isinstance(x, {inner}) for x in x]))"
        return f"(type(x) is list{size} and all([{_check_expr(inner, env, lenient)} for x in x]))"
    if tstr not in _ast.TYPES:
        raise ValueError(f"grammar.ast type {tstr!r} not understood by the Pcore reader")
    env[tstr] = _ast.TYPES[tstr]
    return f"isinstance(x, {tstr})"


def _compile_checker(info: _NodeInfo, lenient: bool = False):
    """``check(vals) -> index of the first ill-typed value, or -1`` for one class, generated from
    ``cls._types`` (type assertions as Puppet's ObjectReader makes them).  ``lenient``: the writer's variant,
    which also admits subclasses of str/int/float."""
    env: dict = {}
    lines = ["def check(vals):", "    n = len(vals)"]
    for k, attr in enumerate(info.wire):
        if k >= info.min:
            lines.append(f"    if n <= {k}: return -1")
        lines.append(f"    x = vals[{k}]")
        lines.append(f"    if not ({_check_expr(info.cls._types[attr], env, lenient)}): return {k}")
    lines.append("    return -1")
    exec("\n".join(lines), env)
    return env["check"]


for _i in _INFO.values():
    _i.checks = _compile_checker(_i)
    _i.wchecks = _compile_checker(_i, lenient=True)


def _describe(v) -> str:
    if isinstance(v, _NODE):
        return v._name
    if v is None:
        return "Undef"
    return type(v).__name__


class _Frame:
    __slots__ = ("kind", "obj", "left", "vals", "info", "extra")

    def __init__(self, kind, obj, left, vals=None, info=None, extra=None):
        self.kind = kind
        self.obj = obj
        self.left = left
        self.vals = vals
        self.info = info
        self.extra = extra


_K_ARRAY, _K_MAP, _K_NODE, _K_PTYPE, _K_OTYPE, _K_POBJ = range(6)
_LOCATOR = _ast.TYPES["Locator"]


def _finish_node(f: _Frame):
    info = f.info
    vals = f.vals
    k = info.checks(vals)
    if k >= 0:
        attr = info.wire[k]
        _fail(
            f"{info.name}[{attr}] has wrong type, expects {info.cls._types[attr]}, got {_describe(vals[k])}"
        )
    obj = f.obj
    info.cls.__init__(obj, *vals)
    if info.cls is _LOCATOR and obj.line_index is None:
        obj.line_index = _ast.make_locator(obj.string, obj.file).line_index
    return obj


def _object_params(init_hash):
    """(names, required_count, defaults) of an included Pcore::ObjectType init hash."""
    if type(init_hash) is not dict or type(init_hash.get("name")) is not str:
        _fail("included object type has no name")
    attrs = init_hash.get("attributes", {})
    if type(attrs) is not dict:
        _fail("included object type has bad attributes")
    req, opt, defaults = [], [], {}
    for name, spec in attrs.items():
        if type(name) is not str:
            _fail("included object type has a non-string attribute name")
        if type(spec) is dict:
            if spec.get("kind") in ("derived", "constant", "given_or_derived"):
                continue
            if "value" in spec:
                opt.append(name)
                defaults[name] = spec["value"]
                continue
        elif not isinstance(spec, PType):
            _fail(f"included object type attribute {name} has no type")
        req.append(name)
    return req + opt, len(req), defaults


def _build(toks: list):
    wtab: list = []  # writer-level table
    stab: list = []  # serializer-level table
    opened: set = set()  # stab indexes of objects whose values are being read (a reference is a cycle)
    stack: list = []
    results: list = []
    ntok = len(toks)
    i = 0
    while i < ntok:
        t = toks[i]
        i += 1
        fresh = True
        if type(t) is tuple and t[0] == INNER_TABULATION:
            k = t[1]
            if k >= len(wtab):
                _fail(f"INNER_TABULATION index {k} out of range")
            t = wtab[k]
            fresh = False
        tt = type(t)
        if tt is not tuple:
            if tt is str:
                if fresh:
                    wtab.append(t)
            elif tt is int:
                if t > MAX_INT or t < MIN_INT:
                    _fail("integer out of 64-bit signed range")
            elif not (t is None or tt is bool or tt is float):
                _fail(
                    f"unexpected {tt.__name__} value (Pcore writes arrays and maps as extensions, "
                    "and no binary values)"
                )
            v = t
        else:
            code = t[0]
            if code == TABULATION:
                k = t[1]
                if k >= len(stab):
                    _fail(f"TABULATION index {k} out of range")
                if k in opened:
                    _fail("cyclic reference")
                v = stab[k]
                _check_reference(stack[-1] if stack else None, k, v)
            elif code == PCORE_OBJECT_START:
                if fresh:
                    segs = []
                    for s in t[1]:
                        if type(s) is int:
                            if s >= len(wtab) or type(wtab[s]) is not str:
                                _fail("bad PCORE_OBJECT_START segment index")
                            segs.append(wtab[s])
                        else:
                            wtab.append(s)
                            segs.append(s)
                    t = (code, "::".join(segs), t[2])
                    wtab.append(t)
                name, count = t[1], t[2]
                if count > ntok - i:
                    _fail(f"{name}: attribute count {count} exceeds the remaining data")
                info = _INFO_BY_NAME.get(name)
                if info is not None:
                    if not info.min <= count <= info.max:
                        _fail(
                            f"Feature count mismatch for {name}. Expected {info.min} - {info.max}, "
                            f"actual {count}"
                        )
                    obj = info.cls.__new__(info.cls)
                    f = _Frame(_K_NODE, obj, count, [], info, len(stab))
                    stab.append(obj)
                elif name.startswith("Pcore::"):
                    obj = PType(name)
                    f = _Frame(_K_PTYPE, obj, count, obj.values, None, len(stab))
                    stab.append(obj)
                else:
                    _fail(f"No implementation mapping found for Puppet Type {name}")
                if count:
                    opened.add(f.extra)
                    stack.append(f)
                    continue
                v = _finish_node(f) if f.kind == _K_NODE else obj
            elif code == ARRAY_START:
                n = t[1]
                v = []
                stab.append(v)
                if n:
                    if n > ntok - i:
                        _fail(f"array size {n} exceeds the remaining data")
                    opened.add(len(stab) - 1)
                    stack.append(_Frame(_K_ARRAY, v, n, None, _refs_of(stack), len(stab) - 1))
                    continue
            elif code == MAP_START:
                n = t[1]
                v = {}
                stab.append(v)
                if n:
                    if 2 * n > ntok - i:
                        _fail(f"map size {n} exceeds the remaining data")
                    opened.add(len(stab) - 1)
                    stack.append(_Frame(_K_MAP, v, 2 * n, [], None, len(stab) - 1))
                    continue
            elif code == OBJECT_START:
                if fresh:
                    wtab.append(t)
                n = t[1]
                if n > ntok - i:
                    _fail(f"object size {n} exceeds the remaining data")
                stack.append(_Frame(_K_OTYPE, None, 1, None, None, n - 1))
                continue
            elif code == REGEXP:
                if fresh:
                    wtab.append(t)
                v = _REGEXP(t[1])
                stab.append(v)
            else:  # pragma: no cover - tokens are validated when built
                _fail(f"unsupported extension {code}")
        # deliver v to the innermost open container, closing every container that becomes complete
        while True:
            if not stack:
                results.append(v)
                break
            f = stack[-1]
            kind = f.kind
            if kind == _K_NODE:
                f.vals.append(v)
            elif kind == _K_ARRAY:
                f.obj.append(v)
            elif kind == _K_PTYPE or kind == _K_POBJ:
                f.vals.append(v)
            elif kind == _K_MAP:
                if len(f.vals):
                    key = f.vals.pop()
                    try:
                        f.obj[key] = v
                    except TypeError:
                        _fail("unhashable map key")
                else:
                    f.vals.append(v)
            else:  # _K_OTYPE: v is the type of an included object
                if not (isinstance(v, PType) and v.name == "Pcore::ObjectType" and len(v.values) == 1):
                    _fail("OBJECT_START must be followed by a Pcore::ObjectType")
                names, required, defaults = _object_params(v.values[0])
                n = f.extra
                if not required <= n <= len(names):
                    _fail(
                        f"Feature count mismatch for {v.values[0]['name']}. Expected {required} - "
                        f"{len(names)}, actual {n}"
                    )
                obj = PObject(v.values[0]["name"], {}, v.values[0])
                stab.append(obj)
                stack.pop()
                if n:
                    opened.add(len(stab) - 1)
                    stack.append(_Frame(_K_POBJ, obj, n, [], (names, defaults), len(stab) - 1))
                    break
                _finish_pobject(obj, [], names, defaults)
                v = obj
                continue
            f.left -= 1
            if f.left:
                break
            stack.pop()
            obj = f.obj
            opened.discard(f.extra)
            if kind == _K_NODE:
                v = _finish_node(f)
            elif kind == _K_POBJ:
                _finish_pobject(obj, f.vals, *f.info)
                v = obj
            else:
                v = obj
    if stack:
        _fail("unexpected end of input")
    return results


class _Refs:
    """An array being read as a node's reference attribute (Program.definitions): each element must be a
    back-reference to a node read since that node started (i.e. inside its body), each at most once."""

    __slots__ = ("after", "seen")

    def __init__(self, after: int):
        self.after = after
        self.seen: set = set()


def _refs_of(stack: list):
    """The _Refs of an array starting now, or None when it is not a reference attribute's value."""
    if stack:
        f = stack[-1]
        if f.kind == _K_NODE and f.info.refslot == len(f.vals):
            return _Refs(f.extra)
    return None


def _check_reference(f, k: int, v) -> None:
    """A TABULATION(k) read inside frame ``f``: accepted only where Puppet's model shares an object (the
    Locator of a node, an entry of Program.definitions); any other repeated reference would turn the tree
    into a DAG whose walk is exponential in the size of the file, so it is malformed."""
    if f is not None:
        if f.kind == _K_NODE:
            if f.info.locslot == len(f.vals) and type(v) is _LOCATOR:
                return
        elif f.kind == _K_ARRAY and f.info is not None:
            refs = f.info
            if k > refs.after and k not in refs.seen and isinstance(v, _NODE):
                refs.seen.add(k)
                return
    _fail(
        f"TABULATION {k}: a repeated reference to an already read object (Puppet's model shares only the "
        "Locator and the nodes of Program.definitions)"
    )


def _finish_pobject(obj: PObject, vals: list, names: list, defaults: dict):
    attrs = dict(zip(names, vals))
    for name in names[len(vals) :]:
        attrs[name] = defaults[name]
    obj.attrs = attrs


# ---------------------------------------------------------------------------------------------------------
# reader, step 2, fast path: a recursive reader generated from the AST table (one function per class, the
# attributes read and type-checked inline).  It accepts a subset of what _build accepts (the same checks,
# plus no nesting beyond Python's recursion limit); on *any* exception loads() falls back to _build, which
# then gives the result or the canonical error message.


class _Reject(Exception):
    pass


_PENDING = object()  # serializer-table slot of an object whose attributes are being read


def _fast_source():
    env: dict = {}
    cats = {
        "Integer": "int",
        "Boolean": "raw",
        "Float": "raw",
        "String": "str",
        "Optional[String]": "str",
        "Locator": "loc",
    }
    # A resolved PCORE_OBJECT_START marker is stored in the writer table as a closure reading that many
    # attributes (so a repeated marker, INNER_TABULATION(k), is read by calling wtab[k]).
    L = [
        "def make(nxt):",
        "    wtab = []; wapp = wtab.append; stab = []; sapp = stab.append",
        "    def value(t):",
        "        c = t.__class__",
        "        if c is tuple:",
        "            code = t[0]",
        "            if code == 0:",
        "                w = wtab[t[1]]",
        "                c = w.__class__",
        "                if c is FN: return w()",
        "                if c is str: return w",
        "                return special(w)",
        "            if code == 1: raise Reject",
        "            if code == 18: return fresh(t)()",
        "            if code == 16:",
        "                k = len(stab); sapp(PENDING); lst = []; app = lst.append",
        "                for _ in range(t[1]):",
        "                    x = nxt()",
        "                    c = x.__class__",
        "                    if c is tuple and x[0] == 0:",
        "                        w = wtab[x[1]]",
        "                        app(w() if w.__class__ is FN else value(x))",
        "                    elif c is int and MIN_INT <= x <= MAX_INT: app(x)",
        "                    else: app(value(x))",
        "                stab[k] = lst",
        "                return lst",
        "            if code == 17:",
        "                k = len(stab); sapp(PENDING); d = {}",
        "                for _ in range(t[1]):",
        "                    key = value(nxt())",
        "                    d[key] = value(nxt())",
        "                stab[k] = d",
        "                return d",
        "            if code == 19:",
        "                wapp(t)",
        "                return objstart(t[1])",
        "            if code == 48:",
        "                wapp(t); r = Regexp(t[1]); sapp(r)",
        "                return r",
        "            raise Reject",
        "        if c is str:",
        "            wapp(t)",
        "            return t",
        "        if c is int:",
        "            if MIN_INT <= t <= MAX_INT: return t",
        "            raise Reject",
        "        if t is None or c is bool or c is float: return t",
        "        raise Reject",
        "    def special(w):",
        "        code = w[0]",
        "        if code == 48:",
        "            r = Regexp(w[1]); sapp(r)",
        "            return r",
        "        if code == 19: return objstart(w[1])",
        "        raise Reject",
        "    def fresh(t):",
        "        segs = []",
        "        for s in t[1]:",
        "            if s.__class__ is int:",
        "                x = wtab[s]",
        "                if x.__class__ is not str: raise Reject",
        "                segs.append(x)",
        "            else:",
        "                wapp(s); segs.append(s)",
        "        name = '::'.join(segs)",
        "        fn = R.get(name)",
        "        if fn is None:",
        "            if not name.startswith('Pcore::'): raise Reject",
        "            fn = ptype",
        "        m = fn(st, t[2], name)",
        "        wapp(m)",
        "        return m",
        "    def ptype(st, count, name):",
        "        def rp():",
        "            o = PType(name); k = len(stab); sapp(PENDING)",
        "            o.values = [value(nxt()) for _ in range(count)]",
        "            stab[k] = o",
        "            return o",
        "        return rp",
        "    def objstart(n):",
        "        tv = value(nxt())",
        "        if not (tv.__class__ is PType and tv.name == 'Pcore::ObjectType' and len(tv.values) == 1):",
        "            raise Reject",
        "        names, required, defaults = object_params(tv.values[0])",
        "        m = n - 1",
        "        if not required <= m <= len(names): raise Reject",
        "        o = PObject(tv.values[0]['name'], {}, tv.values[0]); k = len(stab); sapp(PENDING)",
        "        vals = [value(nxt()) for _ in range(m)]",
        "        finish_pobject(o, vals, names, defaults)",
        "        stab[k] = o",
        "        return o",
    ]
    L.append("    st = (nxt, value, stab, sapp, wtab, wapp)")
    L.append("    def read():")
    L.append("        v = value(nxt())")
    L.append("        try: nxt()")
    L.append("        except StopIteration: return v")
    L.append("        raise Reject")
    L.append("    return read")
    # one module-level factory per class: called once per PCORE_OBJECT_START marker of a document, it
    # returns the closure reading an instance (the reader state comes in as ``st``)
    names = []
    for info in _INFO.values():
        cls = info.cls
        cname = cls._name
        env["C_" + cname] = cls
        fn = "m_" + cname
        names.append((info.name, fn))
        L.append(f"def {fn}(st, count, name):")
        if info.min == info.max:
            L.append(f"    if count != {info.min}: raise Reject")
        else:
            L.append(f"    if not {info.min} <= count <= {info.max}: raise Reject")
        L.append("    nxt, value, stab, sapp, wtab, wapp = st")
        L.append("    def r():")
        L.append("        k = len(stab); sapp(PENDING)")
        checks = []
        for k, attr in enumerate(info.wire):
            tstr = cls._types[attr]
            cat = "enum" if tstr.startswith("Enum[") else cats.get(tstr, "value")
            pad = "        "
            if k >= info.min:
                L.append(f"        if count > {k}:")
                pad = "            "
            if k == info.refslot:
                # only back-references to nodes read since this node started, each once
                L.append(f"{pad}t = nxt()")
                L.append(f"{pad}if t.__class__ is not tuple or t[0] != 16: raise Reject")
                L.append(f"{pad}k2 = len(stab); sapp(PENDING); a{k} = []; seen = set()")
                L.append(f"{pad}for _ in range(t[1]):")
                L.append(f"{pad}    x = nxt()")
                L.append(f"{pad}    if x.__class__ is not tuple or x[0] != 1: raise Reject")
                L.append(f"{pad}    j = x[1]")
                L.append(f"{pad}    if j <= k or j in seen or j >= len(stab): raise Reject")
                L.append(f"{pad}    seen.add(j); a{k}.append(stab[j])")
                L.append(f"{pad}stab[k2] = a{k}")
            elif cat == "loc":
                L.append(f"{pad}t = nxt()")
                L.append(f"{pad}a{k} = stab[t[1]] if t.__class__ is tuple and t[0] == 1 else value(t)")
            elif cat in ("int", "raw"):
                L.append(f"{pad}a{k} = nxt()")
            elif cat in ("str", "enum"):
                L.append(f"{pad}t = nxt()")
                L.append(f"{pad}if t.__class__ is str: wapp(t); a{k} = t")
                L.append(f"{pad}elif t.__class__ is tuple and t[0] == 0: a{k} = wtab[t[1]]")
                L.append(f"{pad}else: a{k} = value(t)")
            else:
                L.append(f"{pad}t = nxt()")
                L.append(f"{pad}if t.__class__ is tuple and t[0] == 0:")
                L.append(f"{pad}    w = wtab[t[1]]")
                L.append(f"{pad}    a{k} = w() if w.__class__ is FN else value(t)")
                L.append(f"{pad}else: a{k} = value(t)")
            expr = _check_expr(tstr, env)
            if cat == "int":
                expr = f"{expr} and MIN_INT <= x <= MAX_INT"
            if k >= info.min:
                d = cls._defaults[attr]
                L.append(f"{pad}x = a{k}")
                L.append(f"{pad}if not ({expr}): raise Reject")
                L.append("        else:")
                L.append(f"            a{k} = {'[]' if isinstance(d, list) else repr(d)}")
            else:
                checks.append((k, expr))
        for k, expr in checks:
            L.append(f"        x = a{k}")
            L.append(f"        if not ({expr}): raise Reject")
        L.append(f"        o = NEW(C_{cname})")
        for k, attr in enumerate(info.wire):
            L.append(f"        o.{attr} = a{k}")
        if cname == "Locator":
            L.append("        if a2 is None: o.line_index = make_locator(a0, a1).line_index")
        L.append("        stab[k] = o")
        L.append("        return o")
        L.append("    return r")
    L.append("R = {" + ", ".join(f"{n!r}: {f}" for n, f in names) + "}")
    env.update(
        {
            "PENDING": _PENDING,
            "Reject": _Reject,
            "MIN_INT": MIN_INT,
            "MAX_INT": MAX_INT,
            "Regexp": _REGEXP,
            "PType": PType,
            "PObject": PObject,
            "object_params": _object_params,
            "finish_pobject": _finish_pobject,
            "NEW": object.__new__,
            "make_locator": _ast.make_locator,
            "FN": type(lambda: None),
        }
    )
    return "\n".join(L), env


def _compile_fast():
    src, env = _fast_source()
    exec(compile(src, "<xpp.pcore fast reader>", "exec"), env)
    return env["make"]


_FAST_MAKE = _compile_fast()


def _fast_build(toks):
    """The single value of ``toks``, or raise (anything) when the fast path cannot read it."""
    return _FAST_MAKE(iter(toks).__next__)()


def loads(data, fmt: str = "msgpack"):
    """Read one Pcore-serialized value (no envelope).  Raises :class:`XppFormatError` on any malformed,
    truncated or unsupported input."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (expected one of {FORMATS})")
    # The reader allocates many objects and creates no reference cycles: the cyclic garbage collector
    # would only rescan them (it is paused while reading, which halves the time on a large AST).
    paused = _gc.isenabled()
    if paused:
        _gc.disable()
    try:
        return _loads(data, fmt)
    finally:
        if paused:
            _gc.enable()


def _loads(data, fmt):
    if fmt == "msgpack" and _C_LOAD is not None:
        v = _C_LOAD(data)
        if v is not _C_DECLINED:
            return v
    toks = _mp_tokens(data) if fmt == "msgpack" else _json_tokens(data)
    try:
        return _fast_build(toks)
    except Exception:  # malformed, or beyond the fast path: the complete reader decides
        pass
    values = _build(toks)
    if len(values) != 1:
        raise XppFormatError("empty stream" if not values else "trailing data after the value")
    return values[0]


# ---------------------------------------------------------------------------------------------------------
# optional C reader (xpp/_fastload.c, built by setup.py when a compiler is there): the same msgpack reader
# over the bytes, building the AST objects directly.  It is given the AST description below (from the
# same grammar.ast table); it declines (returns _C_DECLINED) on malformed or unusual input, and the Python
# reader above then decides.  PUPPET_XPP_PURE_PYTHON=1 in the environment disables it.

_C_DECLINED = object()
_K_STR, _K_INT, _K_FLOAT, _K_BOOL, _K_EXACT, _K_ENUM, _K_INSTANCE, _K_LIST = range(1, 9)


def _fast_kind(tstr: str) -> tuple:
    """The type check of a Pcore type string as (code, optional, arg, min_length, element kind): the same
    test as :func:`_check_expr` (reader variant), in a form the C reader takes."""
    tstr = tstr.strip()
    simple = {"String": _K_STR, "Integer": _K_INT, "Float": _K_FLOAT, "Boolean": _K_BOOL}
    if tstr in simple:
        return (simple[tstr], False, None, 0, None)
    if tstr == "Any":
        return (_K_EXACT, False, _REGEXP, 0, None)
    m = re.fullmatch(r"Optional\[(.*)\]", tstr)
    if m:
        k = _fast_kind(m.group(1))
        return (k[0], True) + k[2:]
    m = re.fullmatch(r"Enum\[(.*)\]", tstr)
    if m:
        return (_K_ENUM, False, frozenset(v.strip().strip("'\"") for v in m.group(1).split(",")), 0, None)
    m = re.fullmatch(r"Array\[(.*?)(?:,\s*(\d+))?\]", tstr)
    if m:
        inner = m.group(1).strip()
        elem = (_K_INSTANCE, False, _ast.TYPES[inner], 0, None) if inner in _ast.TYPES else _fast_kind(inner)
        return (_K_LIST, False, None, int(m.group(2) or 0), elem)
    if tstr not in _ast.TYPES:
        raise ValueError(f"grammar.ast type {tstr!r} not understood by the Pcore reader")
    return (_K_INSTANCE, False, _ast.TYPES[tstr], 0, None)


def _line_index(string, file):
    return _ast.make_locator(string, file).line_index


def _c_loader():
    """``xpp._fastload.load`` configured with the AST description, or None (not built, disabled, or the
    description is beyond it)."""
    import os

    if os.environ.get("PUPPET_XPP_PURE_PYTHON"):
        return None
    try:
        from puppet_xpp.xpp import _fastload
    except ImportError:
        return None
    classes, by_name = [], {}
    for info in _INFO.values():
        cls = info.cls
        is_locator = cls is _LOCATOR
        if is_locator and info.wire[:3] != ("string", "file", "line_index"):
            return None
        by_name[info.name] = len(classes)
        classes.append(
            (
                info.name,
                cls,
                info.wire,
                info.min,
                tuple(None if d is _ast.REQ else d for d in info.defaults),
                tuple(_fast_kind(cls._types[a]) for a in info.wire),
                is_locator,
                info.locslot,
                info.refslot,
            )
        )
    try:
        _fastload.configure(
            tuple(classes),
            by_name,
            _C_DECLINED,
            _REGEXP,
            PType,
            PObject,
            _object_params,
            _finish_pobject,
            _line_index,
        )
    except Exception as e:  # e.g. a stale build of the extension: the Python reader does the work
        import warnings

        warnings.warn(f"xpp._fastload not used: {e}", RuntimeWarning, stacklevel=2)
        return None
    return _fastload.load


_C_LOAD = _c_loader()
#: which msgpack reader ``loads`` tries first: "C (xpp._fastload)" or "Python"
MSGPACK_LOADER = "C (xpp._fastload)" if _C_LOAD is not None else "Python"
