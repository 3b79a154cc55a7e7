"""The Pcore writer's errors and limits and the reader's edge cases, without Puppet: the Integer range and
every msgpack integer encoding, JSON floats and strings, values and attribute types the writer refuses (and
our reader refuses like Puppet's), nesting deeper than the Python stack, and the iterative JSON scanner
against the json module.

Apart from the oracle modules: these are local properties of xpp.pcore that need no Puppet.
"""

from __future__ import annotations

import math
import random

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import pcore
from puppet_xpp.xpp.pcore import XppFormatError, XppWriteError
from tests.pcore_helpers import CASES, FILE, FORMATS, build_assign, build_big_int, make_assign, make_program

# ------------------------------------------------------------------------------------------------------
# writer errors and limits


def test_integer_range():
    src, program = build_big_int()
    program.body.right_expr.value = 1 << 63
    with pytest.raises(XppWriteError):
        pcore.dumps(program)
    program.body.right_expr.value = -(1 << 63) - 1
    with pytest.raises(XppWriteError):
        pcore.dumps(program)
    program.body.right_expr.value = -(1 << 63)
    assert pcore.loads(pcore.dumps(program)) == program
    assert pcore.loads(pcore.dumps(program, "json"), "json") == program


def test_integer_encodings_round_trip():
    values = [
        0,
        1,
        127,
        128,
        255,
        256,
        65535,
        65536,
        (1 << 32) - 1,
        1 << 32,
        (1 << 63) - 1,
        -1,
        -32,
        -33,
        -128,
        -129,
        -32768,
        -32769,
        -(1 << 31),
        -(1 << 31) - 1,
        -(1 << 63),
    ]
    for fmt in FORMATS:
        assert pcore.loads(pcore.dumps(values, fmt), fmt) == values


def test_json_floats_and_strings():
    assert (
        pcore.dumps([1e20, 1e-5, 0.0001, -0.0, 1e15, 123456789012345.0], "json")
        == b"[[16,6,1.0e+20,1.0e-05,0.0001,-0.0,1.0e+15,123456789012345.0]]"
    )
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(XppWriteError):
            pcore.dumps([bad], "json")
        pcore.dumps([bad], "msgpack")  # msgpack carries them (as Ruby's msgpack does)
    with pytest.raises(XppWriteError):
        pcore.dumps(["\udcff"], "json")
    assert pcore.loads(pcore.dumps(["\udcff"])) == ["\udcff"]  # invalid UTF-8 bytes are kept as they are


def test_writer_rejects_unknown_values():
    loc = ast.make_locator("", FILE)
    for v in (object(), (1, 2), {1, 2}, ast.Expression(loc, 0, 0), b"bytes"):
        with pytest.raises(XppWriteError):
            pcore.dumps([v])


def test_writer_asserts_attribute_types():
    """What Puppet's reader would reject is refused when writing (unless check=False)."""
    breakages = [
        lambda p: setattr(p.body.right_expr, "value", "1"),  # Integer
        lambda p: setattr(p.body, "operator", "=="),  # Enum['+=', '-=', '=']
        lambda p: setattr(p.body, "right_expr", "text"),  # Expression
        lambda p: setattr(p.body, "left_expr", p.locator),  # Expression, got a Locator
        lambda p: setattr(p.locator, "file", None),  # String (Puppet: "got Undef")
        lambda p: setattr(p, "definitions", [p.body]),  # Array[Definition]
        lambda p: setattr(p.body.right_expr, "radix", True),  # Integer, got a Boolean
    ]
    for brk in breakages:
        _, program = build_assign()
        brk(program)
        with pytest.raises(XppWriteError):
            pcore.dumps(program)
        with pytest.raises(XppFormatError):  # and our reader refuses it like Puppet's
            pcore.loads(pcore.dumps(program, check=False))


def test_deep_nesting_is_not_limited_by_the_python_stack():
    depth = 20000
    src = "$a = " + "[" * depth + "]" * depth
    loc = ast.make_locator(src, FILE)
    node = ast.LiteralList(loc, 5 + depth - 1, 2)
    for i in range(depth - 2, -1, -1):
        node = ast.LiteralList(loc, 5 + i, 2 * (depth - i), [node])
    program = make_program(src, make_assign(loc, 0, "a", node))
    data = pcore.dumps(program)
    back = pcore.loads(data)
    n, d = back.body.right_expr, 1
    while n.values:
        n, d = n.values[0], d + 1
    assert d == depth
    # JSON: deeper than Python's json module goes, the reader falls back to its iterative scanner
    text = pcore.dumps(program, "json")
    assert text.count(b"[") > 2 * depth
    n, d = pcore.loads(text, "json").body.right_expr, 1
    while n.values:
        n, d = n.values[0], d + 1
    assert d == depth


def test_iterative_json_scanner_agrees_with_json_module():
    """The fallback scanner accepts exactly what json.loads + flattening accepts, with the same result."""
    import json

    def via_json(text):
        try:
            doc = json.loads(text, parse_constant=pcore.json.no_constant)
        except (ValueError, XppFormatError):
            return "error"
        try:
            return [(type(x), x) for x in pcore.json.json_flat_doc(doc)]
        except XppFormatError:
            return "error"

    def via_scan(text):
        try:
            return [(type(x), x) for x in pcore.json.json_flat_scan(text)]
        except XppFormatError:
            return "error"

    rng = random.Random(99)
    parts = [
        "[",
        "]",
        ",",
        "1",
        "16",
        '"a"',
        "true",
        "{",
        "}",
        ":",
        " ",
        "1.5",
        "-0",
        "01",
        '"\\u00e9"',
        "null",
        '"\\x"',
        "1e5",
        "[16,",
        '[18,1,"a",0]',
        "\n",
        "NaN",
        "9" * 30,
    ]
    texts = [
        "[" + "".join(rng.choice(parts) for _ in range(rng.randint(0, 12))) + rng.choice(["]", "", "]]"])
        for _ in range(20000)
    ]
    texts += [pcore.dumps(CASES[c]()[1], "json").decode() for c in sorted(CASES)]
    accepted = 0
    for text in texts:
        a = via_json(text)
        assert a == via_scan(text), text
        accepted += a != "error"
    assert accepted > 500
