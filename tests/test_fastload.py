"""The optional C reader ``xpp._fastload`` (used by ``xpp.pcore.loads`` for msgpack) against the complete
Python reader (``xpp.pcore.read.build`` over ``xpp.pcore.tokens.mp_tokens``), which is the reference:

* the extension is built and configured (under CI it must be: ``.ci/install`` builds it);
* every corpus file: our parse -> our writer -> the C reader gives a Program ``==`` our parse, with one
  Locator object and ``definitions`` pointing into the body; Puppet's own bytes for corpus files read the
  same through both readers;
* its per-attribute type checks are the Python reader's, for every attribute of every class;
* differential fuzz (>= 20,000 mutated documents: truncations, bit flips, splices, item-level edits): the
  C reader accepts exactly what the complete reader accepts and gives the same value (types, floats by
  bits, and which objects are shared), and ``loads`` raises only XppFormatError;
* hand-made streams for every rule (tabulations, markers with int segments, Locator without line index,
  included object types, maps, UTF-8 errors, deep nesting, huge counts), no leak on repeated loads,
  PUPPET_XPP_PURE_PYTHON=1 turns it off.
"""

from __future__ import annotations

import base64
import os
import random
import struct
import subprocess
import sys
import tracemalloc

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import pcore, result
from puppet_xpp.xpp.pcore import XppFormatError
from tests.conformance.corpus import corpus_files, corpus_modulepath
from tests.conformance.oracle import OracleError

REJECT = "<rejected>"

try:
    from puppet_xpp.xpp import _fastload
except ImportError:  # pragma: no cover - depends on the build
    _fastload = None

if _fastload is None or pcore.C_LOAD is None:
    if os.environ.get("CI"):
        pytest.fail(
            "xpp._fastload is not built/configured (pip install -e . builds it with a C compiler)",
            pytrace=False,
        )
    pytest.skip("xpp._fastload is not built", allow_module_level=True)


# ------------------------------------------------------------------------------------------------------
# helpers


def c_load(data):
    v = _fastload.load(data)
    return REJECT if v is pcore.c.DECLINED else v


def complete(data):
    """The complete Python reader's verdict: the value, or REJECT."""
    try:
        vals = pcore.read.build(pcore.tokens.mp_tokens(data))
    except XppFormatError:
        return REJECT
    return vals[0] if len(vals) == 1 else REJECT


def same(a, b) -> bool:
    """Structural equality, stricter than ==: exact types, floats by bits, dict order, and the same
    sharing (an object met twice on one side is met twice, as one object, on the other)."""
    ids: dict = {}
    rev: dict = {}
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        t = type(x)
        if x is None or t in (bool, int, str):
            if x != y:
                return False
            continue
        if t is float:
            if struct.pack("<d", x) != struct.pack("<d", y):
                return False
            continue
        # containers and objects: identity pattern must match
        if id(x) in ids or id(y) in rev:
            if ids.get(id(x)) != id(y) or rev.get(id(y)) != id(x):
                return False
            continue
        ids[id(x)] = id(y)
        rev[id(y)] = id(x)
        if t is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif t is dict:
            if len(x) != len(y):
                return False
            for (k1, v1), (k2, v2) in zip(x.items(), y.items()):
                stack.append((k1, k2))
                stack.append((v1, v2))
        elif t is ast.Regexp:
            stack.append((x.source, y.source))
        elif t is pcore.PType:
            stack.append((x.name, y.name))
            stack.append((x.values, y.values))
        elif t is pcore.PObject:
            stack.append((x.type_name, y.type_name))
            stack.append((x.attrs, y.attrs))
            stack.append((x.init_hash, y.init_hash))
        elif isinstance(x, ast.Node):
            for f in x._fields:
                stack.append((getattr(x, f), getattr(y, f)))
        else:
            raise AssertionError(f"unexpected value type {t}")
    return True


def agree(data):
    """Assert that the C reader and the complete reader agree on ``data``; return the value (or REJECT)."""
    c = c_load(data)
    ref = complete(data)
    if c is REJECT or ref is REJECT:
        assert c is REJECT and ref is REJECT, (
            data[:80],
            c if c is REJECT else "C accepted",
            ref if ref is REJECT else "Python accepted",
        )
    else:
        assert same(c, ref), data[:80]
    return c


def test_same_sees_sharing_and_exact_types():
    loc = ast.make_locator("$a", "x.pp")
    a = ast.Program(loc, ast.Nop(loc, 0, 1), [])
    b = ast.Program(loc, ast.Nop(ast.make_locator("$a", "x.pp"), 0, 1), [])
    assert a == b and same(a, a) and not same(a, b)
    nan = float("nan")
    assert not same([1], [True]) and not same([nan], [-nan]) and same([nan, nan], [nan, nan])
    shared = []
    assert not same([shared, shared], [[], []]) and not same({"a": 1, "b": 2}, {"b": 2, "a": 1})


def check_identity(program):
    nodes = list(ast.walk(program))
    assert all(n.locator is program.locator for n in nodes if isinstance(n, ast.Positioned))
    ids = {id(n) for n in nodes}
    assert all(id(d) in ids for d in program.definitions)


# msgpack / Pcore stream building blocks
def u(n):
    return pcore.write.mp_uint_body(n)


def s(text):
    return pcore.write.mp_str(text)


def ext(code, payload):
    return pcore.write.mp_ext(code, payload)


def marker(segs, count):
    return ext(0x12, u(len(segs)) + b"".join(u(x) if type(x) is int else s(x) for x in segs) + u(count))


def inner(k):
    return ext(0x00, u(k))


def tab(k):
    return ext(0x01, u(k))


def array(n):
    return ext(0x10, u(n))


def hmap(n):
    return ext(0x11, u(n))


def i(n):
    return pcore.write.mp_int(n)


def locator(text="a", file="f.pp", line_index=b"\xd4\x10\x01\x00"):
    return (
        marker(["Puppet", "AST", "Locator"], 3 if line_index else 2) + s(text) + s(file) + (line_index or b"")
    )


# ------------------------------------------------------------------------------------------------------
# the extension is what loads() uses


def test_loads_uses_the_extension():
    assert pcore.MSGPACK_LOADER.startswith("C")
    program = ast.Program(ast.make_locator("$a", "x.pp"), None, [])
    data = pcore.dumps(program)
    calls = []
    real = pcore.C_LOAD

    def spy(d, budget):
        calls.append(d)
        assert budget == pcore.base.work_budget(len(d))
        return real(d, budget)

    old = pcore.C_LOAD
    pcore.C_LOAD = spy
    try:
        assert pcore.loads(data) == program
    finally:
        pcore.C_LOAD = old
    assert calls == [data]


def test_non_bytes_input_behaves_as_without_the_extension():
    def outcome(x):
        try:
            return ("value", pcore.loads(x))
        except Exception as e:
            return (type(e).__name__, str(e))

    for x in (
        "abc",
        b"\xc0",
        bytearray(b"\xa1a"),
        memoryview(b"\xc0\xc2")[::2],
        memoryview(b"\xc3"),
        12,
        None,
    ):
        with_c = outcome(x)
        old = pcore.C_LOAD
        pcore.C_LOAD = None
        try:
            without = outcome(x)
        finally:
            pcore.C_LOAD = old
        assert with_c == without, x


def test_pure_python_switch():
    code = (
        "from puppet_xpp.xpp import pcore\n"
        "from puppet_xpp.grammar import ast\n"
        "p = ast.Program(ast.make_locator('$a', 'x.pp'), None, [])\n"
        "assert pcore.loads(pcore.dumps(p)) == p\n"
        "print(pcore.MSGPACK_LOADER, pcore.C_LOAD)"
    )
    for env, want in (({"PUPPET_XPP_PURE_PYTHON": "1"}, "Python None"), ({}, "C (xpp._fastload)")):
        e = {k: v for k, v in os.environ.items() if k != "PUPPET_XPP_PURE_PYTHON"}
        e.update(env)
        out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, check=True)
        assert out.stdout.startswith(want), out.stdout


# ------------------------------------------------------------------------------------------------------
# corpus round trip and Puppet's bytes


@pytest.fixture(scope="module")
def corpus_docs():
    from puppet_xpp.grammar.parser import parse
    from puppet_xpp.grammar.validator import validate

    files = corpus_files("pp") + corpus_files("epp")
    if not files:
        pytest.skip("corpus not installed")
    modulepath = corpus_modulepath()
    out = []
    for path in files:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "surrogateescape")
        r = parse(text, path)
        diags = list(r.diagnostics)
        if r.program is not None:
            diags += validate(r.program, file=path, modulepath=modulepath)
        out.append((path, r, diags))
    return out


def test_corpus_round_trip(corpus_docs):
    """Every corpus file: our writer -> the C reader -> == our parse (and the diagnostics)."""
    programs = 0
    for path, r, diags in corpus_docs:
        doc = result.write_xpp(r.program, diags, "msgpack", locator=r.locator)
        payload = doc[doc.index(b"\n\n") + 2 :]
        value = c_load(payload)
        assert value is not REJECT, path
        assert isinstance(value, pcore.PObject) and value.type_name == result.TYPE_NAME
        prog, records = result.read_xpp(doc)
        assert records == [result.diagnostic_record(d, r.locator) for d in diags]
        if r.program is None:
            assert prog is None
            continue
        programs += 1
        assert prog == r.program, path
        check_identity(prog)
        assert prog.locator.line_index == r.program.locator.line_index
        bare = c_load(pcore.dumps(r.program))
        assert bare == r.program, path
        check_identity(bare)
        assert same(bare, complete(pcore.dumps(r.program)))
    assert programs > 800


@pytest.fixture(scope="module")
def puppet_payloads(oracle):
    files = (corpus_files("pp") + corpus_files("epp"))[::15]
    if not files:
        pytest.skip("corpus not installed")
    out = []
    for what in ("program", "parse_result"):
        answers = oracle.call_many(
            "pcore_write",
            [
                {
                    "file": f,
                    "format": "msgpack",
                    "what": what,
                    "diagnostics": [
                        {"severity": "warning", "message": "m", "arguments": {"a": [1, 2.5, None]}}
                    ],
                }
                for f in files
            ],
        )
        out.extend(base64.b64decode(a["bytes"]) for a in answers if not isinstance(a, OracleError))
    return out


def test_puppet_bytes(puppet_payloads):
    """Pcore msgpack written by Puppet's own serializer reads the same through both readers."""
    assert len(puppet_payloads) > 100
    for data in puppet_payloads:
        v = agree(data)
        assert v is not REJECT
        prog = v if isinstance(v, ast.Program) else v.attrs["program"]
        check_identity(prog)


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


# ------------------------------------------------------------------------------------------------------
# differential fuzz


def _items(data: bytes) -> list:
    """(start, end) of each top-level msgpack item of a well-formed stream."""
    out = []
    p, n = 0, len(data)
    while p < n:
        b = data[p]
        q = p + 1
        if b < 0x80 or b >= 0xE0 or b in (0xC0, 0xC2, 0xC3):
            pass
        elif 0xA0 <= b <= 0xBF:
            q += b & 0x1F
        elif 0xCC <= b <= 0xD3:
            q += (1, 2, 4, 8)[(b - 0xCC) % 4]
        elif b == 0xCA:
            q += 4
        elif b == 0xCB:
            q += 8
        elif 0xD9 <= b <= 0xDB:
            k = (1, 2, 4)[b - 0xD9]
            q += k + int.from_bytes(data[q : q + k], "big")
        elif 0xD4 <= b <= 0xD8:
            q += 1 + (1, 2, 4, 8, 16)[b - 0xD4]
        elif 0xC7 <= b <= 0xC9:
            k = (1, 2, 4)[b - 0xC7]
            q += k + 1 + int.from_bytes(data[q : q + k], "big")
        else:
            raise ValueError(f"unexpected byte {b:#x}")
        out.append((p, q))
        p = q
    return out


_INSERTS = [
    b"\xc0",
    b"\xc2",
    b"\xc3",
    b"\x00",
    b"\x7f",
    b"\xff",
    b"\xa0",
    b"\xa1=",
    b"\xcb" + struct.pack(">d", 0.5),
    b"\xd4\x10\x00",
    b"\xd4\x10\x01",
    b"\xd4\x11\x00",
    b"\xd4\x01\x00",
    b"\xd4\x01\x01",
    b"\xd4\x00\x00",
    b"\xd4\x00\x03",
    b"\xd4\x13\x01",
    b"\xd4\x30\xa0",
    b"\xcf\xff",
    b"\xdb\xff\xff\xff\xff",
    b"\xc7\xff\x12",
    marker(["Pcore", "AnyType"], 0),
    marker([0, 1, "Nop"], 3),
    marker([0, 1, 2], 1),
]


def _mutate(rng: random.Random, data: bytes, pool: list) -> bytes:
    b = bytearray(data)
    op = rng.randrange(13)
    if op == 0 and b:  # truncation
        return bytes(b[: rng.randrange(len(b))])
    if op == 1 and b:  # bit flips
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(b))
            b[k] ^= 1 << rng.randrange(8)
        return bytes(b)
    if op == 2 and b:  # bytes overwritten
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if op == 3:  # splice with another document
        other = rng.choice(pool)
        k, j = rng.randrange(len(b) + 1), rng.randrange(len(other) + 1)
        return (
            bytes(b[:k])
            + other[j : rng.randrange(j, len(other) + 1)]
            + bytes(b[rng.randrange(k, len(b) + 1) :])
        )
    if op == 4 and b:  # delete / duplicate a byte range
        k = rng.randrange(len(b))
        j = min(len(b), k + rng.randint(1, 24))
        return bytes(b[:k] + b[j:]) if rng.random() < 0.5 else bytes(b[:j] + b[k:j] + b[j:])
    if op == 5:  # insert an interesting item
        k = rng.randrange(len(b) + 1)
        return bytes(b[:k]) + rng.choice(_INSERTS) + bytes(b[k:])
    # item-level edits (on the item boundaries of a well-formed stream)
    try:
        items = _items(data)
    except (ValueError, IndexError):
        items = []
    if len(items) < 2:
        return bytes(b[:-1])
    (s1, e1), (s2, e2) = sorted(rng.sample(items, 2))
    if op == 6:  # delete an item
        return data[:s1] + data[e1:]
    if op == 7:  # duplicate an item
        return data[:e1] + data[s1:e1] + data[e1:]
    if op == 8:  # swap two items
        return data[:s1] + data[s2:e2] + data[e1:s2] + data[s1:e1] + data[e2:]
    if op == 9:  # an item from another document
        other = rng.choice(pool)
        try:
            oi = _items(other)
        except (ValueError, IndexError):
            return data
        a, z = rng.choice(oi)
        return data[:s1] + other[a:z] + data[e1:]
    if op == 10:  # a tabulation/count payload changed
        exts = [(p, q) for p, q in items if data[p] == 0xD4]
        if not exts:
            return data
        p, q = rng.choice(exts)
        return (
            data[: p + 2]
            + bytes([rng.choice((0, 1, 2, 3, 5, 8, 13, 40, 0x7F, rng.randrange(256)))])
            + data[q:]
        )
    if op == 11:  # an integer item replaced
        ints = [(p, q) for p, q in items if data[p] < 0x80 or data[p] >= 0xE0 or 0xCC <= data[p] <= 0xD3]
        p, q = rng.choice(ints or items)
        return (
            data[:p]
            + i(rng.choice((0, 1, -1, 2, 127, 128, -33, 1 << 31, (1 << 63) - 1, -(1 << 63))))
            + data[q:]
        )
    # a string item replaced
    strs = [(p, q) for p, q in items if 0xA0 <= data[p] <= 0xBF or 0xD9 <= data[p] <= 0xDB]
    p, q = rng.choice(strs or items)
    return data[:p] + s(rng.choice(("", "=", "x", "regular", "+>", "Nop", "\udcff\xe9", "a" * 40))) + data[q:]


def _seeds(corpus_docs) -> list:
    pool = []
    rng = random.Random(5)
    small = [x for x in corpus_docs if x[1].program is not None and len(x[1].locator.string) < 1500]
    for _path, r, diags in rng.sample(small, min(120, len(small))):
        pool.append(result.parse_result_payload(r.program, diags, "msgpack", locator=r.locator))
        pool.append(pcore.dumps(r.program))
    for _path, r, diags in corpus_docs:
        if r.program is None and len(pool) < 260:
            pool.append(result.parse_result_payload(None, diags, "msgpack", locator=r.locator))
    return pool


def test_differential_fuzz(corpus_docs):
    rng = random.Random(20240611)
    pool = _seeds(corpus_docs)
    for d in pool:
        assert agree(d) is not REJECT
    cases = accepted = 0
    while cases < 22000:
        data = rng.choice(pool)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            data = _mutate(rng, data, pool)
        v = agree(data)
        if v is not REJECT:
            accepted += 1
            if rng.random() < 0.05:
                pool.append(data)  # mutate accepted mutants further
        try:
            pcore.loads(data)
        except XppFormatError:
            pass
        cases += 1
    assert cases >= 20000
    # both outcomes are well represented
    print("accepted", accepted, "of", cases)
    assert 2000 < accepted < cases - 2000, accepted


# ------------------------------------------------------------------------------------------------------
# references are not leaked


def test_no_leak_on_repeated_loads(corpus_docs):
    rng = random.Random(3)
    pool = _seeds(corpus_docs)[:40]
    docs = pool + [_mutate(rng, rng.choice(pool), pool) for _ in range(200)]
    docs += [b"\xd4\x10\x05\xc0\xc0", marker(["Pcore", "AnyType"], 0) + b"\xc0", hmap(1) + array(0) + i(1)]

    def run():
        for d in docs:
            _fastload.load(d)

    run()
    tracemalloc.start()
    try:
        run()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(30):
            run()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # ~7,000 loads: a leak of even one small object per load would show as hundreds of KB
    assert grown < 64 * 1024, grown
