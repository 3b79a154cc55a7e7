"""Reading any ``.xpp`` is linear in its size (issue 11 item 1).

A Pcore stream can refer back to an object already read (TABULATION).  Puppet's own model shares objects in
two places only: the one Locator (every node's ``locator``) and ``Program.definitions`` (references to
nodes of the body).  Anywhere else a back-reference turns the tree into a DAG (``[a, ref(a)]`` nested 40
deep is 2^40 nodes to any walk: ``--verify``, ``--dump``, the runtime) or a cycle, so both readers (the C
one and the Python one) reject it as malformed, quickly.  The files are generated here for every kind of
container the reader builds (array, map, AST node, Pcore type, included object, the ParseResult's
diagnostics), in both encodings.  Puppet's own files (references to the Locator and definitions) still
load: tests/test_pcore_puppet.py reads Puppet's bytes for every case and the corpus.
"""

from __future__ import annotations

import time

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import envelope, pcore, result, verify
from puppet_xpp.xpp.pcore import IncludedObject, PType, XppFormatError

DEPTH = 40  # 2^40 steps for anything that walks the DAG as a tree
BOUND = 2.0  # seconds for reading and rejecting one such file (it takes milliseconds)
FORMATS = ("msgpack", "json")


def _readers():
    """(name, C loader or None) for every msgpack reader this build has."""
    out = [("python", None)]
    if pcore.C_LOAD is not None:
        out.append(("c", pcore.C_LOAD))
    return out


def _dag_array():
    a: list = [1]
    for _ in range(DEPTH):
        a = [a, a]
    return a


def _dag_map():
    d: dict = {"x": 1}
    for _ in range(DEPTH):
        d = {"l": d, "r": d}
    return d


def _dag_ptype():
    p = PType("Pcore::AnyType")
    for _ in range(DEPTH):
        p = PType("Pcore::TupleType", [p, p])
    return p


def _dag_included():
    otype = PType(
        "Pcore::ObjectType",
        [
            {
                "name": "X::Pair",
                "attributes": {
                    "l": {"type": PType("Pcore::AnyType")},
                    "r": {"type": PType("Pcore::AnyType")},
                },
            }
        ],
    )
    o = IncludedObject(otype, [1, 2])
    for _ in range(DEPTH):
        o = IncludedObject(otype, [o, o])
    return o


def _dag_nodes():
    src = "[1]"
    loc = ast.make_locator(src, "/srv/x.pp")
    n = ast.LiteralInteger(loc, 1, 1, 1)
    for _ in range(DEPTH):
        n = ast.LiteralList(loc, 0, 3, [n, n])
    return ast.Program(loc, n, [])


def _dag_definitions():
    """A definition listed twice in Program.definitions (Puppet lists each once)."""
    src = "type A = B"
    loc = ast.make_locator(src, "/srv/x.pp")
    d = ast.TypeAlias(loc, 0, len(src), "A", ast.QualifiedReference(loc, 9, 1, "B"))
    return ast.Program(loc, d, [d, d])


def _dag_locator_elsewhere():
    """The Locator referred to from a place that is not a node's `locator` attribute."""
    src = "$a"
    loc = ast.make_locator(src, "/srv/x.pp")
    return [loc, loc]


def _dag_diagnostics():
    arg: list = ["x"]
    for _ in range(DEPTH):
        arg = [arg, arg]
    diag = {"severity": "error", "issue_code": "X", "message": "m", "arguments": {"a": arg}}
    return IncludedObject(result.type_value(), [None, [diag]])


def _cycle_array():
    a: list = []
    a.append(a)
    return [1, a]


def _cycle_map():
    d: dict = {}
    d["self"] = d
    return d


def _cycle_ptype():
    p = PType("Pcore::ArrayType", [])
    p.values.append(p)
    return p


def _cycle_included():
    otype = PType(
        "Pcore::ObjectType", [{"name": "X::Box", "attributes": {"v": {"type": PType("Pcore::AnyType")}}}]
    )
    o = IncludedObject(otype, [])
    o.values.append(o)
    return o


def _cycle_nodes():
    loc = ast.make_locator("[1]", "/srv/x.pp")
    n = ast.LiteralList(loc, 0, 3, [])
    n.values.append(n)
    return ast.Program(loc, n, [])


DAGS = {
    "array": _dag_array,
    "map": _dag_map,
    "pcore type": _dag_ptype,
    "included object": _dag_included,
    "ast node": _dag_nodes,
    "definitions": _dag_definitions,
    "locator elsewhere": _dag_locator_elsewhere,
    "diagnostics": _dag_diagnostics,
}
CYCLES = {
    "array": _cycle_array,
    "map": _cycle_map,
    "pcore type": _cycle_ptype,
    "included object": _cycle_included,
    "ast node": _cycle_nodes,
}


def _bytes(value, fmt):
    data = pcore.dumps(value, fmt, check=False)  # the writer is linear: a shared object is one TABULATION
    assert len(data) < 4096
    return data


def _rejected_quickly(data, fmt):
    for name, c_load in _readers():
        old = pcore.C_LOAD
        pcore.C_LOAD = c_load
        try:
            t0 = time.perf_counter()
            with pytest.raises(XppFormatError):
                pcore.loads(data, fmt)
            assert time.perf_counter() - t0 < BOUND, name
        finally:
            pcore.C_LOAD = old


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", sorted(DAGS))
def test_dag_is_malformed(kind, fmt):
    data = _bytes(DAGS[kind](), fmt)
    _rejected_quickly(data, fmt)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", sorted(CYCLES))
def test_cycle_is_malformed(kind, fmt):
    data = _bytes(CYCLES[kind](), fmt)
    _rejected_quickly(data, fmt)


def _repeated_string():
    """One 100,000-character string, then 10,000 references to it (3 bytes each): 10^9 characters."""
    return ["x" * 100_000] * 10_000


def _locators_without_index():
    """Locators whose line index the reader must compute, all of one big text (by reference)."""
    text = "a\n" * 50_000
    return [ast.Locator(text, "/srv/x.pp", None) for _ in range(10_000)]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("make", [_repeated_string, _locators_without_index], ids=["strings", "locators"])
def test_work_per_byte_is_bounded(make, fmt):
    """Repeated text is bounded by pcore.base.WORK_PER_BYTE characters per byte of the document."""
    data = pcore.dumps(make(), fmt, check=False)
    assert len(data) < 400_000
    _rejected_quickly(data, fmt)


def test_work_bound_admits_what_puppet_writes():
    """A source that repeats its names and strings a lot is far within the bound."""
    from puppet_xpp.grammar.parser import parse

    src = "".join(f"notice('{'y' * 60}', $abcdefghijklmnop, Foo::Bar::Baz)\n" for _ in range(1000))
    prog = parse(src, "/srv/x.pp").program
    for fmt in FORMATS:
        data = pcore.dumps(prog, fmt)
        for _name, c_load in _readers():
            old = pcore.C_LOAD
            pcore.C_LOAD = c_load
            try:
                assert pcore.loads(data, fmt) == prog
            finally:
                pcore.C_LOAD = old


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
def test_verify_reports_a_dag_in_the_diagnostics(fmt):
    doc = envelope.wrap(_bytes(_dag_diagnostics(), fmt), fmt)
    t0 = time.perf_counter()
    problems = verify.verify_bytes(doc)
    assert time.perf_counter() - t0 < BOUND
    assert problems and problems[0].startswith("payload: TABULATION"), problems


def test_puppets_sharing_is_accepted():
    """The Locator and Program.definitions: one object each, in both readers."""
    src = "class a { }\ndefine b() { }\n"
    from puppet_xpp.grammar.parser import parse

    prog = parse(src, "/srv/x.pp").program
    data = pcore.dumps(prog)
    for _name, c_load in _readers():
        old = pcore.C_LOAD
        pcore.C_LOAD = c_load
        try:
            got = pcore.loads(data)
        finally:
            pcore.C_LOAD = old
        nodes = list(ast.walk(got))
        assert all(n.locator is got.locator for n in nodes if isinstance(n, ast.Positioned))
        assert [d.name for d in got.definitions] == ["a", "b"]
        assert all(any(d is n for n in nodes) for d in got.definitions)
        assert pcore.dumps(got) == data
