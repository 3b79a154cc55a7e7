"""Damage to real ``.xpp`` payloads for the differential fuzz of the Ruby loader (tests/test_loader_fuzz.py).

:func:`scan` walks a well-formed Pcore msgpack payload as the readers do (the writer-level table of
strings and markers, the serializer-level table of objects) and gives every value's byte span, its
extension code and count, and the serializer-table index it takes, so that :func:`mutate` can damage a
payload where it matters: byte flips, truncation, counts and lengths, extension codes, a node replaced by
a back-reference to another one (a shared node: a DAG) or to one of its ancestors (a cycle), values of the
wrong type (a string where a node belongs, an integer in ``Program.definitions``, another operator),
positions moved outside the source, a changed line index, the 8-byte allocation bomb of issue 26.  The
walker is written for the payloads our writer produces; it is a test tool, not a reader (the damaged
payloads it makes are judged by the two real readers).
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field

from puppet_xpp.xpp import envelope

INNER_TABULATION, TABULATION, ARRAY_START, MAP_START = 0x00, 0x01, 0x10, 0x11
PCORE_OBJECT_START, OBJECT_START, REGEXP = 0x12, 0x13, 0x30
#: the issue's 8-byte payload: an ARRAY_START whose body is a msgpack array header of 2^32 - 1 elements
NOMEM = bytes.fromhex("c70510ddffffffff")


@dataclass
class Value:
    """One value of a payload: ``start``..``end`` (its children included), the header's end, what it is."""

    start: int
    end: int = 0
    head_end: int = 0
    kind: str = ""  # int, str, nil, bool, float, ext
    code: int = -1  # extension code
    arg: object = None  # an extension's count / index, or the primitive value
    stab: int | None = None  # serializer-table index it takes
    wtab: int | None = None  # writer-table index a string takes
    name: str = ""  # type name of an object
    kids: list[Value] = field(default_factory=list)
    parent: Value | None = None


def _ext_header(data: bytes, i: int) -> tuple[int, int, int] | None:
    """(code, body start, body end) of an extension at ``i``, or None."""
    b = data[i]
    if 0xD4 <= b <= 0xD8:
        n = (1, 2, 4, 8, 16)[b - 0xD4]
        return data[i + 1], i + 2, i + 2 + n
    if 0xC7 <= b <= 0xC9:
        size = (1, 2, 4)[b - 0xC7]
        n = int.from_bytes(data[i + 1 : i + 1 + size], "big")
        return data[i + 1 + size], i + 2 + size, i + 2 + size + n
    return None


def _prims(data: bytes, i: int, end: int) -> list[object]:
    """The primitive values (ints, strings) of data[i:end]."""
    out: list[object] = []
    while i < end:
        v, i = _prim(data, i)
        out.append(v)
    return out


def _prim(data: bytes, i: int) -> tuple[object, int]:
    b = data[i]
    if b < 0x80:
        return b, i + 1
    if b >= 0xE0:
        return b - 256, i + 1
    if 0xA0 <= b <= 0xBF:
        n = b & 0x1F
        return data[i + 1 : i + 1 + n].decode("utf-8", "surrogateescape"), i + 1 + n
    if b == 0xC0:
        return None, i + 1
    if b in (0xC2, 0xC3):
        return b == 0xC3, i + 1
    if 0xCC <= b <= 0xD3:
        size = (1, 2, 4, 8, 1, 2, 4, 8)[b - 0xCC]
        return int.from_bytes(data[i + 1 : i + 1 + size], "big", signed=b >= 0xD0), i + 1 + size
    if b in (0xCA, 0xCB):
        n = 4 if b == 0xCA else 8
        return struct.unpack(">f" if n == 4 else ">d", data[i + 1 : i + 1 + n])[0], i + 1 + n
    if 0xD9 <= b <= 0xDB:
        size = (1, 2, 4)[b - 0xD9]
        n = int.from_bytes(data[i + 1 : i + 1 + size], "big")
        j = i + 1 + size
        return data[j : j + n].decode("utf-8", "surrogateescape"), j + n
    raise ValueError(f"byte 0x{b:02x} at {i}")


class _Walker:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.wtab: list[object] = []
        self.stab = 0
        self.all: list[Value] = []

    def value(self, parent: Value | None) -> Value:
        data = self.data
        v = Value(self.pos, parent=parent)
        self.all.append(v)
        h = _ext_header(data, self.pos)
        if h is None:
            x, self.pos = _prim(data, self.pos)
            v.kind = {str: "str", int: "int", bool: "bool", float: "float", type(None): "nil"}[type(x)]
            v.arg = x
            if isinstance(x, str):
                v.wtab = len(self.wtab)
                self.wtab.append(x)
            v.head_end = v.end = self.pos
            return v
        code, bs, be = h
        v.kind, v.code = "ext", code
        self.pos = v.head_end = be
        items = _prims(data, bs, be)
        count = 0
        if code == INNER_TABULATION:
            t = self.wtab[items[0]]  # type: ignore[index]
            v.arg = items[0]
            if isinstance(t, tuple):
                if t[0] == PCORE_OBJECT_START:
                    v.name, count = t[1], t[2]
                    v.stab = self._take()
                elif t[0] == OBJECT_START:
                    count = t[1]
                elif t[0] == REGEXP:
                    v.stab = self._take()
        elif code == TABULATION:
            v.arg = items[0]
        elif code in (ARRAY_START, MAP_START):
            v.arg = items[0]
            count = items[0] * (2 if code == MAP_START else 1)  # type: ignore[operator]
            v.stab = self._take()
        elif code == PCORE_OBJECT_START:
            nseg = items[0]
            segs = []
            for s in items[1 : 1 + nseg]:  # type: ignore[operator]
                if isinstance(s, str):
                    self.wtab.append(s)
                    segs.append(s)
                else:
                    segs.append(self.wtab[s])  # type: ignore[index]
            v.name, count = "::".join(segs), items[-1]  # type: ignore[arg-type]
            v.arg = count
            self.wtab.append((code, v.name, count))
            v.stab = self._take()
        elif code == OBJECT_START:
            v.arg = count = items[0]  # type: ignore[assignment]
            self.wtab.append((code, count))
        elif code == REGEXP:
            self.wtab.append((code, items[0]))
            v.stab = self._take()
        for k in range(count):  # type: ignore[arg-type]
            v.kids.append(self.value(v))
            if code == OBJECT_START and k == 0 or (code == INNER_TABULATION and not v.name and k == 0):
                v.stab = self._take()  # an included object takes its entry after its type
        v.end = self.pos
        return v

    def _take(self) -> int:
        self.stab += 1
        return self.stab - 1


def scan(payload: bytes) -> list[Value]:
    """Every value of ``payload`` in stream order (the first is the top value)."""
    w = _Walker(payload)
    w.pos = 0
    w.value(None)
    if w.pos != len(payload):
        raise ValueError("trailing data")
    return w.all


def ext(code: int, body: bytes) -> bytes:
    """An extension with ``body`` in its shortest form."""
    n = len(body)
    if n in (1, 2, 4, 8, 16):
        return bytes([{1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}[n], code]) + body
    if n < 256:
        return bytes([0xC7, n, code]) + body
    return bytes([0xC8]) + n.to_bytes(2, "big") + bytes([code]) + body


def mp_int(n: int) -> bytes:
    if 0 <= n < 0x80:
        return bytes([n])
    if -32 <= n < 0:
        return bytes([n + 256])
    if 0 <= n < 1 << 8:
        return b"\xcc" + bytes([n])
    if 0 <= n < 1 << 16:
        return b"\xcd" + n.to_bytes(2, "big")
    if 0 <= n < 1 << 32:
        return b"\xce" + n.to_bytes(4, "big")
    if 0 <= n < 1 << 64:
        return b"\xcf" + n.to_bytes(8, "big")
    return b"\xd3" + n.to_bytes(8, "big", signed=True)


def mp_str(s: str) -> bytes:
    b = s.encode("utf-8", "surrogateescape")
    if len(b) < 32:
        return bytes([0xA0 | len(b)]) + b
    return b"\xd9" + bytes([len(b)]) + b if len(b) < 256 else b"\xda" + len(b).to_bytes(2, "big") + b


def _splice(payload: bytes, v: Value, new: bytes) -> bytes:
    return payload[: v.start] + new + payload[v.end :]


def _nodes(vals: list[Value]) -> list[Value]:
    return [v for v in vals if v.name.startswith("Puppet::AST::") and v.stab is not None]


def _ancestors(v: Value) -> list[Value]:
    out = []
    p = v.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out


KINDS = (
    "flip",
    "flips",
    "truncate",
    "count",
    "extcode",
    "strlen",
    "dag",
    "cycle",
    "typeswap",
    "nodecopy",
    "position",
    "int",
    "definitions",
    "operator",
    "nomem",
    "envelope",
)


def mutate(rng: random.Random, payload: bytes, vals: list[Value]) -> tuple[str, bytes]:
    """One damaged copy of ``payload`` (scanned as ``vals``): (what was done, the new payload)."""
    kind = rng.choice(KINDS)
    n = len(payload)
    if kind == "flip":
        i = rng.randrange(n)
        return kind, payload[:i] + bytes([payload[i] ^ (1 << rng.randrange(8))]) + payload[i + 1 :]
    if kind == "flips":
        b = bytearray(payload)
        for _ in range(rng.randrange(2, 6)):
            b[rng.randrange(n)] = rng.randrange(256)
        return kind, bytes(b)
    if kind == "truncate":
        return kind, payload[: rng.randrange(n)]
    if kind == "nomem":
        v = rng.choice(vals)
        return kind, NOMEM if rng.random() < 0.2 else _splice(payload, v, NOMEM)
    if kind == "envelope":
        return kind, payload  # the caller damages the envelope
    exts = [v for v in vals if v.kind == "ext"]
    if kind == "count":
        cands = [v for v in exts if v.code in (ARRAY_START, MAP_START, OBJECT_START, PCORE_OBJECT_START)]
        if cands:
            v = rng.choice(cands)
            old = v.arg if isinstance(v.arg, int) else 0
            new = rng.choice([0, old - 1, old + 1, old + 2, 1 << 16, (1 << 32) - 1, 1 << 40, -1])
            if v.code == PCORE_OBJECT_START:
                h = _ext_header(payload, v.start)
                assert h is not None
                body = payload[h[1] : h[2]]
                items = _prims(payload, h[1], h[2])
                tail = mp_int(items[-1])  # type: ignore[arg-type]
                body = body[: len(body) - len(tail)] + mp_int(new)
                head = ext(v.code, body)
            else:
                head = ext(v.code, mp_int(new))
            return kind, payload[: v.start] + head + payload[v.head_end :]
    if kind == "extcode":
        if exts:
            v = rng.choice(exts)
            h = _ext_header(payload, v.start)
            assert h is not None
            at = h[1] - 1
            code = rng.choice([0x00, 0x01, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x30, 0x31, 0x7F, 0xFF])
            return kind, payload[:at] + bytes([code]) + payload[at + 1 :]
    if kind == "strlen":
        strs = [v for v in vals if v.kind == "str"]
        if strs:
            v = rng.choice(strs)
            raw = payload[v.start : v.end]
            s = raw[1:] if raw[0] < 0xC0 else raw[2:]
            ln = max(0, len(s) + rng.choice([-1, 1, 2, 100, -len(s)]))
            head = b"\xd9" + bytes([min(ln, 255)]) if rng.random() < 0.5 else bytes([0xA0 | min(ln, 31)])
            return kind, payload[: v.start] + head + s + payload[v.end :]
    nodes = _nodes(vals)
    if kind == "dag" and len(nodes) >= 2:
        a, b = sorted(rng.sample(nodes, 2), key=lambda x: x.start)
        if b.start >= a.end or rng.random() < 0.3:  # b after a (a DAG), or inside it
            return kind, _splice(payload, b, ext(TABULATION, mp_int(a.stab or 0)))
    if kind == "cycle":
        inner = [v for v in vals if v.parent is not None and _ancestors(v)]
        if inner:
            v = rng.choice(inner)
            anc = [x for x in _ancestors(v) if x.stab is not None]
            if anc:
                return kind, _splice(payload, v, ext(TABULATION, mp_int(rng.choice(anc).stab or 0)))
    if kind == "typeswap":
        v = rng.choice(vals[1:] or vals)
        new = rng.choice(
            [mp_str("a"), mp_int(1), b"\xc0", b"\xc3", b"\xcb" + struct.pack(">d", 1.5), mp_int(-1)]
        )
        return kind, _splice(payload, v, new)
    if kind == "nodecopy" and len(nodes) >= 2:
        a, b = rng.sample(nodes, 2)
        return kind, _splice(payload, b, payload[a.start : a.end])
    if kind == "position":
        pos = [v for v in nodes if len(v.kids) >= 3 and v.kids[1].kind == "int" and v.kids[2].kind == "int"]
        if pos:
            v = rng.choice(pos)
            k = v.kids[rng.choice([1, 2])]
            old = k.arg if isinstance(k.arg, int) else 0
            new = rng.choice([old + 1, old - 1, old + n, -1, 1 << 31, (1 << 63) - 1, 0, old + 7])
            return kind, _splice(payload, k, mp_int(new))
    if kind == "int":
        ints = [v for v in vals if v.kind == "int"]
        if ints:
            v = rng.choice(ints)
            old = v.arg if isinstance(v.arg, int) else 0
            new = rng.choice([old + 1, old - 1, 0, -5, 1 << 32, (1 << 64) - 1, old * 2])
            return kind, _splice(payload, v, mp_int(new))
    if kind == "definitions":
        progs = [v for v in nodes if v.name == "Puppet::AST::Program" and len(v.kids) == 3 and v.kids[2].kids]
        if progs:
            d = progs[0].kids[2]
            e = rng.choice(d.kids)
            other = rng.choice(d.kids)
            new = rng.choice([mp_int(1), mp_str("x"), payload[other.start : other.end]])
            return kind, _splice(payload, e, new)
    if kind == "operator":
        ops = [
            v
            for v in vals
            if v.kind == "str" and v.arg in ("=", "+", "==", "=>", "->", "=~", "+=", "regular")
        ]
        if ops:
            v = rng.choice(ops)
            return kind, _splice(payload, v, mp_str(rng.choice(["x", "=", "<>", "+>", "==", "virtual", ""])))
    i = rng.randrange(n)
    return "flip", payload[:i] + bytes([payload[i] ^ 0xFF]) + payload[i + 1 :]


def wrap(rng: random.Random, kind: str, payload: bytes, original: bytes) -> bytes:
    """The document of a damaged payload: its checksum recomputed (most), removed, or the original's kept;
    for ``envelope``, one character of the envelope changed."""
    r = rng.random()
    if kind == "envelope":
        doc = bytearray(envelope.wrap(payload, "msgpack", checksum=True))
        end = doc.index(b"\n\n")
        i = rng.randrange(end + 2)
        doc[i] = rng.choice(b" \t\n;=-_aZ9\r\x00")
        return bytes(doc)
    if r < 0.8:
        return envelope.wrap(payload, "msgpack", checksum=True)
    if r < 0.95:
        return envelope.wrap(payload, "msgpack")
    return envelope.header("msgpack", checksum=envelope.payload_checksum(original)) + payload
