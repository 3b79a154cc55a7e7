"""The C reader ``xpp._fastload`` against the complete Python reader, rule by rule: its per-attribute type
checks are the Python reader's for every attribute of every class, and hand-made streams for every rule
(tabulations, markers with int segments, Locator without line index, included object types, maps, UTF-8
errors, deep nesting, huge counts, every node class with and without defaults) read the same through both.

Apart because these streams are written by hand, one per rule; tests/test_fastload_corpus.py covers real
and mutated documents.
"""

from __future__ import annotations

import struct
import tracemalloc

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import pcore, result
from tests.fastload_helpers import (
    REJECT,
    agree,
    array,
    c_load,
    ext,
    hmap,
    i,
    inner,
    locator,
    marker,
    require_extension,
    s,
    tab,
    u,
)
from tests.pcore_helpers import check_identity

_fastload = require_extension()


# ------------------------------------------------------------------------------------------------------
# type checks: the same as the Python reader's, attribute by attribute


def _sample_values():
    loc = ast.make_locator("x", "f.pp")
    nodes = [cls.__new__(cls) for cls in ast.CONCRETE.values()]
    vals = [
        None,
        True,
        False,
        0,
        1,
        -5,
        1 << 40,
        1.5,
        float("nan"),
        "",
        "x",
        "=",
        "+=",
        "regular",
        "virtual",
        "exported",
        "=>",
        "+>",
        "!~",
        "<<",
        "%",
        "->",
        "Integer",
        ast.Regexp("a"),
        loc,
        pcore.PType("Pcore::AnyType"),
        pcore.PObject("X", {}, {}),
        {},
        {"a": 1},
        [],
        [None],
        [1, 2],
        [True],
        ["a"],
        [1.5],
        [loc],
        [ast.Regexp("a")],
    ]
    vals += nodes
    vals += [[n] for n in nodes]
    vals += [[n, n] for n in nodes[:10]] + [[nodes[0], None], [nodes[3], 1]]
    return vals


def test_type_checks_match_the_python_reader():
    vals = _sample_values()
    n = 0
    for info in pcore.nodes.INFO.values():
        for k, attr in enumerate(info.wire):
            env: dict = {}
            expr = pcore.nodes.check_expr(info.cls._types[attr], env)
            py = eval(f"lambda x: bool({expr})", env)  # noqa: S307 - our own generated expression
            for v in vals:
                assert _fastload.check(info.name, k, v) == py(v), (info.name, attr, v)
                n += 1
    assert n > 10000


# ------------------------------------------------------------------------------------------------------
# hand-made streams: every rule, C and Python agree


def _nop(loc_ref=None, off=0, ln=0):
    loc_ref = tab(1) if loc_ref is None else loc_ref
    return marker(["Puppet", "AST", "Nop"], 3) + loc_ref + i(off) + i(ln)


def test_streams_agree():
    P = ["Puppet", "AST"]
    prog = marker(P + ["Program"], 3)
    cases = {
        "bare program": marker(P + ["Program"], 1) + locator(),
        "locator without line index": marker(P + ["Program"], 1) + locator("a\nb\n", line_index=None),
        "locator nil line index": marker(P + ["Program"], 1) + locator("a\nb", line_index=b"\xc0"),
        "locator bad line index": marker(P + ["Program"], 1) + locator("a", line_index=array(1) + s("x")),
        "program with body": prog + locator() + _nop() + array(0),
        "definitions are references": (
            prog + locator() + marker(P + ["TypeMapping"], 3) + tab(1) + i(0) + i(1) + array(1) + tab(3)
        ),
        "definition not a Definition": prog + locator() + _nop() + array(1) + tab(1),
        "reference to an open object": prog + locator() + _nop() + array(1) + tab(2),
        "marker again by INNER_TABULATION": (
            prog
            + locator()
            + marker(P + ["BlockExpression"], 4)
            + tab(1)
            + i(0)
            + i(1)
            + array(2)
            + _nop()
            + inner(17)
            + tab(1)
            + i(1)
            + i(0)
            + array(0)
        ),
        "segments as ints": (prog + locator() + marker([0, 1, "Nop"], 3) + tab(1) + i(0) + i(0) + array(0)),
        "segment index to a marker": prog + locator() + marker([3, 1, "Nop"], 3) + tab(1) + i(0) + i(0),
        "segment index out of range": prog + locator() + marker([0, 99, "Nop"], 3),
        "segment refers to a value string": (
            array(2) + s("Puppet") + marker([0, "AST", "Program"], 1) + locator()
        ),
        "count too small": marker(P + ["Program"], 0),
        "count too large": marker(P + ["Nop"], 4) + tab(0) + i(0) + i(0) + i(0),
        "unknown type": marker(P + ["Nope"], 0),
        "unknown namespace": marker(["Foo", "Bar"], 0),
        "Pcore type": marker(["Pcore", "AnyType"], 0),
        "Pcore type with values": marker(["Pcore", "ArrayType"], 2) + marker(["Pcore", "AnyType"], 0) + i(1),
        "Pcore type again": array(2) + marker(["Pcore", "AnyType"], 0) + inner(2),
        "regexp": array(2) + ext(0x30, s("a.b")) + inner(0),
        "regexp by reference": array(3) + ext(0x30, s("a.b")) + inner(0) + tab(1),
        "regexp int source": ext(0x30, i(3)),
        "regexp extra payload": ext(0x30, s("a") + s("b")),
        "literal regexp": (
            prog
            + locator()
            + marker(P + ["LiteralRegularExpression"], 5)
            + tab(1)
            + i(0)
            + i(3)
            + ext(0x30, s("x"))
            + s("/x/")
            + array(0)
        ),
        "literal regexp string value": (
            prog
            + locator()
            + marker(P + ["LiteralRegularExpression"], 5)
            + tab(1)
            + i(0)
            + i(3)
            + s("x")
            + s("/x/")
            + array(0)
        ),
        "map": hmap(3) + s("a") + i(1) + i(1) + s("b") + ext(0x30, s("r")) + array(0),
        "map duplicate keys": hmap(3) + s("a") + i(1) + s("a") + i(2) + s("b") + i(3),
        "map True and 1": hmap(2) + b"\xc3" + i(1) + i(1) + i(2),
        "map list key": hmap(1) + array(0) + i(1),
        "map dict key": hmap(1) + hmap(0) + i(1),
        "map PType key": hmap(1) + marker(["Pcore", "AnyType"], 0) + i(1),
        "map truncated": hmap(2) + s("a") + i(1) + s("b"),
        "array in itself": array(1) + tab(0),
        "array shared": array(3) + array(1) + i(5) + tab(1) + tab(1),
        "float32": array(3)
        + b"\xca"
        + struct.pack(">f", 1.5)
        + b"\xca\x7f\xc0\x00\x01"
        + b"\xca\xff\x80\x00\x00",
        "float64 nan": b"\xcb" + struct.pack(">Q", 0x7FF8000000000ABC),
        "ints": array(8)
        + b"\xd0\x05\xd1\xff\xfe\xd2\x80\x00\x00\x00\xd3"
        + (1 << 63).to_bytes(8, "big")
        + b"\xcf\x7f\xff\xff\xff\xff\xff\xff\xff\xcc\xff\xcd\xff\xff\xce\xff\xff\xff\xff",
        "uint64 over int64": b"\xcf\x80" + b"\x00" * 7,
        "non-canonical payload ints": (
            array(3) + s("x") + ext(0x00, b"\xd0\x00") + ext(0x10, b"\xd3" + (0).to_bytes(8, "big"))
        ),
        "locator by reference outside a locator slot": (
            prog + locator() + marker(P + ["LiteralList"], 4) + tab(1) + i(0) + i(1) + array(1) + tab(1)
        ),
        "definitions twice the same": (
            prog
            + locator()
            + marker(P + ["TypeMapping"], 3)
            + tab(1)
            + i(0)
            + i(1)
            + array(2)
            + tab(3)
            + tab(3)
        ),
        "negative payload": ext(0x10, b"\xff"),
        "bool payload": ext(0x10, b"\xc3"),
        "float payload": ext(0x10, b"\xcb" + struct.pack(">d", 1.0)),
        "payload with two ints": ext(0x10, b"\x01\x01"),
        "payload extension": ext(0x10, b"\xd4\x00\x00"),
        "string payload": ext(0x01, s("a")),
        "unsupported extensions": ext(0x14, u(0)),
        "DEFAULT": ext(0x20, b"\x00"),
        "ext -1": b"\xd6\xff\x00\x00\x00\x00",
        "ext 0x80": b"\xd4\x80\x00",
        "utf-8 errors": array(4)
        + b"\xa2\xff\xfe"
        + b"\xa3\xed\xa0\x80"
        + b"\xa2\xc3\xa9"
        + b"\xd9\x02\xe2\x82",
        "utf-8 error in a segment": marker(["Pcore", "\udcff"], 0),
        "long strings": array(3) + s("x" * 40) + s("y" * 300) + s("é" * 70000),
        "str8 for a short string": b"\xd9\x01a",
        "native array": b"\x90",
        "native map": b"\x80",
        "bin": b"\xc4\x00",
        "never used": b"\xc1",
        "empty": b"",
        "two values": b"\xc0\xc0",
        "truncated ext": b"\xc7\x05\x10\x01",
        "ext8 empty payload": b"\xc7\x00\x10",
        "huge array": ext(0x10, b"\xcf" + (1 << 62).to_bytes(8, "big")),
        "huge map": ext(0x11, b"\xcf" + (1 << 62).to_bytes(8, "big")),
        "huge str": b"\xdb\xff\xff\xff\xffabc",
        "huge ext": b"\xc9\xff\xff\xff\xff\x10\x01",
        "huge segment count": ext(0x12, b"\xcf" + (1 << 62).to_bytes(8, "big") + s("a") + u(0)),
        "zero segments": ext(0x12, u(0) + u(0)),
        "segment count too large": ext(0x12, u(3) + s("Pcore") + s("AnyType") + u(0)),
        "segment count too small": ext(0x12, u(1) + s("Pcore") + s("AnyType") + u(0)),
    }
    # included object types (what Xpp::ParseResult uses)
    otype = (
        ext(0x13, u(3))
        + marker(["Pcore", "ObjectType"], 1)
        + hmap(2)
        + s("name")
        + s("X::T")
        + s("attributes")
        + hmap(2)
        + s("a")
        + hmap(1)
        + s("type")
        + marker(["Pcore", "AnyType"], 0)
        + s("b")
        + hmap(2)
        + s("type")
        + marker(["Pcore", "AnyType"], 0)
        + s("value")
        + i(7)
    )
    cases.update(
        {
            "object": otype + i(1) + i(2),
            "object with default": ext(0x13, u(2)) + otype[len(ext(0x13, u(3))) :] + i(1),
            "object missing a value": ext(0x13, u(1)) + otype[len(ext(0x13, u(3))) :],
            "object with too many values": ext(0x13, u(4))
            + otype[len(ext(0x13, u(3))) :]
            + i(1)
            + i(2)
            + i(3),
            "object type not an ObjectType": ext(0x13, u(1)) + marker(["Pcore", "AnyType"], 0),
            "object type by reference": (
                array(2)
                + marker(["Pcore", "ObjectType"], 1)
                + hmap(1)
                + s("name")
                + s("Y")
                + ext(0x13, u(1))
                + tab(1)
            ),
            "object value by reference": otype + i(1) + tab(4),
            "object reference to the object": otype + i(1) + tab(7),
            "object start again": array(2)
            + ext(0x13, u(1))
            + marker(["Pcore", "ObjectType"], 1)
            + hmap(1)
            + s("name")
            + s("Y")
            + inner(0)
            + inner(3)
            + hmap(1)
            + inner(4)
            + inner(5),
            "object type without name": ext(0x13, u(1)) + marker(["Pcore", "ObjectType"], 1) + hmap(0),
            "object start zero": ext(0x13, u(0)),
            "parse result": result.parse_result_payload(
                None, [{"severity": "error", "arguments": {"x": [1.5]}}]
            ),
        }
    )
    for name, data in cases.items():
        try:
            agree(data)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None
    accepted = [n for n, d in cases.items() if c_load(d) is not REJECT]
    assert {
        "bare program",
        "locator without line index",
        "locator nil line index",
        "program with body",
        "definitions are references",
        "marker again by INNER_TABULATION",
        "segments as ints",
        "segment refers to a value string",
        "Pcore type",
        "Pcore type with values",
        "Pcore type again",
        "regexp",
        "literal regexp",
        "map",
        "map duplicate keys",
        "map True and 1",
        "map PType key",
        "float32",
        "float64 nan",
        "ints",
        "non-canonical payload ints",
        "utf-8 errors",
        "utf-8 error in a segment",
        "long strings",
        "str8 for a short string",
        "object",
        "object with default",
        "object start again",
        "parse result",
    } == set(accepted)
    assert c_load(cases["locator without line index"]).locator.line_index == [0, 2, 4]
    v = c_load(cases["regexp"])
    assert v[0] is not v[1] and v[0] == v[1]


def test_deep_nesting_and_huge_counts():
    deep = array(1) * 300000 + b"\xc0"
    v = agree(deep)
    depth = 0
    while type(v) is list:
        v = v[0]
        depth += 1
    assert depth == 300000
    # counts far beyond the data allocate nothing up front
    tracemalloc.start()
    try:
        for data in (
            array((1 << 63) - 1) + b"\xc0",
            hmap((1 << 63) - 1),
            marker(["Pcore", "X"], (1 << 63) - 1),
            ext(0x13, u((1 << 63) - 1)),
        ):
            assert c_load(data) is REJECT
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_every_node_class_with_and_without_defaults():
    """A Program with every concrete class, optional attributes all given / all defaulted."""
    loc = ast.make_locator("x\ny\n", "/srv/z.pp")
    picks = {
        "Expression": "Nop",
        "Definition": "TypeMapping",
        "QueryExpression": "ExportedQuery",
        "AbstractAttributeOperation": "AttributesOperation",
    }
    counter = iter(range(1 << 20))

    def value(t, given):
        t = t.strip()
        if t.startswith("Optional["):
            return value(t[9:-1], given)
        if t.startswith("Array["):
            inner_t = t[6:-1].split(",")[0]
            return [value(inner_t, given)]
        if t.startswith("Enum["):
            return t[5:-1].split(",")[0].strip().strip("'")
        simple = {"String": "s", "Integer": 3, "Boolean": True, "Float": 0.25, "Any": None}
        if t in simple:
            return ast.Regexp(f"r{next(counter)}") if t == "Any" else simple[t]
        if t == "AbstractAttributeOperation" and given:
            return make(ast.AttributeOperation, False)
        return make(ast.TYPES[picks.get(t, t)], False)

    def make(cls, given):
        vals = []
        for attr in cls._wire:
            if attr == "locator":
                vals.append(loc)
            elif attr in cls._defaults and not given:
                break
            else:
                vals.append(value(cls._types[attr], given))
        return cls(*vals)

    stmts = [
        make(cls, g)
        for g in (True, False)
        for _, cls in sorted(ast.CONCRETE.items())
        if issubclass(cls, ast.Expression)
    ]
    stmts.append(
        ast.ResourceOverrideExpression(
            loc,
            0,
            1,
            ast.Nop(loc, 0, 0),
            operations=[ast.AttributesOperation(loc, 0, 1, ast.Nop(loc, 0, 0))],
        )
    )
    program = ast.Program(
        loc, ast.BlockExpression(loc, 0, 1, stmts), [x for x in stmts if isinstance(x, ast.Definition)]
    )
    seen = {n._name for n in ast.walk(program)} | {"Program", "Locator"}
    assert seen == set(ast.CONCRETE)
    data = pcore.dumps(program)
    got = agree(data)
    assert got == program
    check_identity(got)
