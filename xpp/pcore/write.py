"""The Pcore writer (msgpack): what Puppet's ``Serializer.new(writer, type_by_reference: true)`` writes,
with its two tabulation tables (writer-level by value, serializer-level by object identity).  JSON is
produced from this stream by :mod:`xpp.pcore.json` (the same tabulation by construction).
"""

from __future__ import annotations

import struct
import sys
from typing import Any

from puppet_xpp.grammar.ast import Node, Regexp
from puppet_xpp.xpp.pcore.base import (
    ARRAY_START,
    INNER_TABULATION,
    MAP_START,
    MAX_INT,
    MIN_INT,
    OBJECT_START,
    PCORE_OBJECT_START,
    REGEXP,
    TABULATION,
    IncludedObject,
    PType,
    XppWriteError,
)
from puppet_xpp.xpp.pcore.nodes import INFO, NodeInfo, describe


def mp_uint_body(n: int) -> bytes:
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


def mp_int(n: int) -> bytes:
    if n >= 0:
        if n > MAX_INT:
            raise XppWriteError("Integer out of bounds")
        return mp_uint_body(n)
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


_SMALL_INTS = tuple(mp_int(i) for i in range(0, 4096))


def mp_str(s: str) -> bytes:
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


def mp_ext(code: int, payload: bytes) -> bytes:
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

    def __init__(self, code: int):
        self.code = code
        self.small = tuple(mp_ext(code, mp_uint_body(i)) for i in range(256))
        self.big: dict[int, bytes] = {}

    def get(self, i: int) -> bytes:
        if i < 256:
            return self.small[i]
        b = self.big.get(i)
        if b is None:
            if i > MAX_INT:
                raise XppWriteError("Integer out of bounds")
            b = mp_ext(self.code, mp_uint_body(i))
            if i < 65536:
                self.big[i] = b
        return b


_X_INNER = _ExtIntCache(INNER_TABULATION)
_X_TAB = _ExtIntCache(TABULATION)
_X_ARRAY = _ExtIntCache(ARRAY_START)
_X_MAP = _ExtIntCache(MAP_START)
_X_OBJ = _ExtIntCache(OBJECT_START)
PACK_DOUBLE = struct.Struct(">Bd").pack
# uint 16 and uint 32 (msgpack 0xCD, 0xCE) packed at once: a 5 MB manifest's nodes have a million offsets
# from 4096 up, each otherwise two calls (mp_int, mp_uint_body) and two concatenations
_PACK_U16 = struct.Struct(">BH").pack
_PACK_U32 = struct.Struct(">BI").pack


# ---------------------------------------------------------------------------------------------------------
# writer (msgpack); JSON is produced by transcoding the msgpack stream (same tabulation by construction)


class _ObjEnd:
    """Stack marker: end of an IncludedObject's type value; the instance takes its index now."""

    __slots__ = ("obj",)

    def __init__(self, obj: IncludedObject):
        self.obj = obj


class _Refs:
    """Stack marker: the value of a node's reference attribute (``Program.definitions``), whose entries may
    be back-references to nodes written since that node (``after``, its index) started, each once."""

    __slots__ = ("value", "after", "seen")

    def __init__(self, value: Any, after: int):
        self.value = value
        self.after = after
        self.seen: set[int] = set()


class _Ref:
    """Stack marker: one entry of a reference attribute's list."""

    __slots__ = ("node", "refs")

    def __init__(self, node: Any, refs: _Refs):
        self.node = node
        self.refs = refs


def _shared(v: Any) -> XppWriteError:
    """The error of an object reached a second time where Puppet's model has no reference."""
    what = v._name if isinstance(v, Node) else type(v).__name__
    return XppWriteError(
        f"a {what} is reached twice (shared or cyclic): Puppet's model shares only the Locator and the "
        "nodes of Program.definitions, and the readers refuse any other repeated reference"
    )


def _lone_count() -> int:
    """The reference count :func:`dumps_msgpack` sees on an object that one container alone holds, taken
    off its stack into a local as it takes each value (the container's reference, the local's, the
    argument's; measured, not assumed, since an interpreter may count a local differently)."""
    held = object()
    container = [held]
    stack = [held]
    del held
    v = stack.pop()
    count = sys.getrefcount(v)
    del container
    return count


# An object whose count is no more than this has one holder in the tree: it is reached once, so the
# writer records no identity for it (a 5 MB manifest's AST: 2 million nodes and lists, whose identity
# table cost 90 MB); an object held twice or more -- shared, the Locator, a definition -- is recorded.
_LONE = _lone_count()


_NOTHING = object()


def dumps_msgpack(value: Any, check: bool = True) -> bytes:
    """The msgpack stream of ``value`` (:func:`dumps_msgpack_python`): by the C writer
    (``xpp/_fastwrite.c``, the same bytes) when it is built and takes the value, else by the Python one."""
    if _fast_dumps is not None:
        data = _fast_dumps(value, check)
        if data is not FAST_DECLINED:
            return data  # type: ignore[no-any-return]
    return dumps_msgpack_python(value, check)


def dumps_msgpack_python(value: Any, check: bool = True) -> bytes:
    """The msgpack stream of ``value``.  ``check``: assert what the readers (Puppet's and ours) assert:
    every AST attribute's type, and a tree but for the sharing Puppet's model has, the one Locator of the
    nodes' ``locator`` attribute and the entries of ``Program.definitions`` (nodes of that Program written
    before it, each once); any other object reached twice (a shared node, list, hash..., or a cycle) then
    raises XppWriteError.  Unchecked, an object reached again is written as a back-reference (TABULATION):
    the tests make the documents the readers must refuse that way."""
    out = bytearray()
    wtab: dict[Any, int] = {}  # writer-level table: value key -> index
    # serializer-level table: id(object) -> index, of the objects held more than once (_LONE); ``count``
    # is the index the next object takes
    stab: dict[int, int] = {}
    count = 0
    refcount = sys.getrefcount
    lone = _LONE
    stack: list[Any] = [value]
    pop = stack.pop
    push = stack.append
    extend = stack.extend
    small = _SMALL_INTS
    inner_get = _X_INNER.get
    tab_get = _X_TAB.get
    array_get = _X_ARRAY.get
    info_of = INFO.get
    mrows: dict[
        NodeInfo, list[bytes | None]
    ] = {}  # per class: encoded INNER_TABULATION of its marker, by attribute count
    pack_u16, pack_u32 = _PACK_U16, _PACK_U32
    last_locator: Any = _NOTHING  # the last Locator referred to, and its reference's bytes
    locator_ref = b""
    k: int | None
    while stack:
        v = pop()
        t = type(v)
        if t is int:
            if 0 <= v < 4096:
                out += small[v]
            elif 0 <= v < 0x10000:
                out += pack_u16(0xCD, v)
            elif 0 <= v < 0x100000000:
                out += pack_u32(0xCE, v)
            else:
                out += mp_int(v)
            continue
        info = info_of(t)
        if info is not None:  # an AST node, by type name
            k = stab.get(id(v))
            if k is not None:
                if check:
                    raise _shared(v)
                out += tab_get(k)
                continue
            if refcount(v) > lone:
                stab[id(v)] = count
            count += 1
            vals = info.getter(v)
            if check:
                k = info.wchecks(vals)
                if k >= 0:
                    attr = info.wire[k]
                    raise XppWriteError(
                        f"{info.name}[{attr}] has wrong type, expects {info.cls._types[attr]}, "
                        f"got {describe(vals[k])}"
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
            if check and info.refslot >= 0 and n > info.refslot:
                r = info.refslot
                vals = (*vals[:r], _Refs(vals[r], count - 1), *vals[r + 1 :])
            if info.positioned:
                # the Locator slot (a Locator, when checked): the Locator written before is the one
                # back-reference allowed here (its reference's bytes kept for the next node)
                loc = vals[0]
                if loc is last_locator:
                    k = -1
                else:
                    k = stab.get(id(loc))
                    if k is not None:
                        last_locator, locator_ref = loc, tab_get(k)
                if k is not None:
                    out += locator_ref
                    o, ln = vals[1], vals[2]
                    if type(o) is int and type(ln) is int:  # fast path for (offset, length)
                        if 0 <= o < 4096:
                            out += small[o]
                        elif 0 <= o < 0x100000000:
                            out += pack_u16(0xCD, o) if o < 0x10000 else pack_u32(0xCE, o)
                        else:
                            out += mp_int(o)
                        out += small[ln] if 0 <= ln < 4096 else mp_int(ln)
                        if n > 3:
                            extend(vals[n - 1 : 2 : -1])
                    else:
                        extend(vals[n - 1 : 0 : -1])
                    vals = ()  # (else the first child, taken next, would count this reference too)
                    continue
            if n:
                extend(vals[n - 1 :: -1])
            vals = ()
            continue
        if t is str:
            k = wtab.get(v)
            if k is None:
                wtab[v] = len(wtab)
                out += mp_str(v)
            else:
                out += inner_get(k)
        elif t is list:
            k = stab.get(id(v))
            if k is not None:
                if check:
                    raise _shared(v)
                out += tab_get(k)
                continue
            if refcount(v) > lone:
                stab[id(v)] = count
            count += 1
            out += array_get(len(v))
            extend(reversed(v))
        elif v is None:
            out += b"\xc0"
        elif t is bool:
            out += b"\xc3" if v else b"\xc2"
        elif t is float:
            out += PACK_DOUBLE(0xCB, v)
        elif t is dict:
            k = stab.get(id(v))
            if k is not None:
                if check:
                    raise _shared(v)
                out += tab_get(k)
                continue
            if refcount(v) > lone:
                stab[id(v)] = count
            count += 1
            out += _X_MAP.get(len(v))
            items = list(v.items())
            for kk, vv in reversed(items):
                push(vv)
                push(kk)
        elif t is Regexp:
            k = stab.get(id(v))
            if k is not None:
                if check:
                    raise _shared(v)
                out += tab_get(k)
                continue
            if refcount(v) > lone:
                stab[id(v)] = count
            count += 1
            if type(v.source) is not str:
                raise XppWriteError("Regexp source must be a str")
            k = wtab.get(v)
            if k is None:
                wtab[v] = len(wtab)
                out += mp_ext(REGEXP, mp_str(v.source))
            else:
                out += inner_get(k)
        elif t is PType:
            k = stab.get(id(v))
            if k is not None:
                if check:
                    raise _shared(v)
                out += tab_get(k)
                continue
            if refcount(v) > lone:
                stab[id(v)] = count
            count += 1
            if type(v.name) is not str or not v.name.startswith("Pcore::"):
                raise XppWriteError(f"PType name must start with 'Pcore::': {v.name!r}")
            n = len(v.values)
            k = wtab.get((v.name, n))
            out += _marker(v.name, n, wtab) if k is None else inner_get(k)
            extend(reversed(v.values))
        elif t is IncludedObject:
            k = stab.get(id(v))
            if k is not None:
                if check:
                    raise _shared(v)
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
            stab[id(v.obj)] = count
            count += 1
        elif t is _Ref:
            node = v.node
            k = stab.get(id(node))
            if k is None:  # not written yet: written here (the reader accepts a node in place)
                push(node)
                continue
            refs = v.refs
            if k <= refs.after or k in refs.seen or info_of(type(node)) is None:
                raise _shared(node)
            refs.seen.add(k)
            out += tab_get(k)
        elif t is _Refs:
            lst = v.value
            if type(lst) is not list or id(lst) in stab:  # (the type is checked before)
                raise _shared(lst)
            stab[id(lst)] = count
            count += 1
            out += array_get(len(lst))
            extend([_Ref(x, v) for x in reversed(lst)])
        elif isinstance(v, Node):
            raise XppWriteError(f"cannot serialize abstract or unknown AST class {t.__name__}")
        elif isinstance(v, str):  # str subclasses (e.g. a lexer token) are written as strings
            push(str(v))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            push(int(v) if isinstance(v, int) else float(v))
        else:
            raise XppWriteError(f"cannot serialize a value of type {t.__name__}")
    return bytes(out)


# a type name -> (encoded segment count, (segment, its encoding)...): a document writes each class's
# marker once, ~15 per document, each otherwise splitting and encoding the same names again
_SEGMENTS: dict[str, tuple[bytes, tuple[tuple[str, bytes], ...]]] = {}


def _marker(name: str, n: int, wtab: dict[Any, int]) -> bytes:
    """First occurrence of PCORE_OBJECT_START(name, n): segments through the table, then the marker."""
    known = _SEGMENTS.get(name)
    if known is None:
        segs = name.split("::")
        known = (mp_uint_body(len(segs)), tuple((s, mp_str(s)) for s in segs))
        if len(_SEGMENTS) < 4096:  # (names are the AST's and Pcore's few; a bound all the same)
            _SEGMENTS[name] = known
    parts = [known[0]]
    small = _SMALL_INTS
    for s, encoded in known[1]:
        k = wtab.get(s)
        if k is None:
            wtab[s] = len(wtab)
            parts.append(encoded)
        else:
            parts.append(small[k] if k < 4096 else mp_uint_body(k))
    parts.append(small[n] if n < 4096 else mp_uint_body(n))
    wtab[(name, n)] = len(wtab)
    return mp_ext(PCORE_OBJECT_START, b"".join(parts))


FAST_DECLINED = object()  # what the C writer returns for a value it leaves to the Python writer


def _fast_writer() -> Any:
    """``xpp._fastwrite.dumps`` configured with the AST's per-class tables, or None (not built, a stale
    build, or PUPPET_XPP_PURE_PYTHON=1 in the environment).  The attribute type checks are the C reader's
    (:func:`xpp.pcore.c.fast_kind`): exact str/int/float where the Python writer also admits their
    subclasses; what they refuse the C writer declines, and the Python writer decides."""
    import os

    if os.environ.get("PUPPET_XPP_PURE_PYTHON"):
        return None
    try:
        from puppet_xpp.xpp import _fastwrite
    except ImportError:
        return None
    from puppet_xpp.xpp.pcore.c import fast_kind

    classes = tuple(
        (
            cls,
            info.getter,
            info.name,
            info.wire,
            info.min,
            info.defaults,
            info.positioned,
            info.refslot,
            tuple(fast_kind(cls._types[a]) for a in info.wire),
        )
        for cls, info in INFO.items()
    )
    try:
        _fastwrite.configure(classes, FAST_DECLINED, Regexp, PType, IncludedObject)
    except Exception as e:  # e.g. a stale build of the extension: the Python writer does the work
        import warnings

        warnings.warn(f"xpp._fastwrite not used: {e}", RuntimeWarning, stacklevel=2)
        return None
    return _fastwrite.dumps


_fast_dumps = _fast_writer()
# which writer dumps_msgpack uses first ("c" or "python")
MSGPACK_WRITER = "python" if _fast_dumps is None else "c"
