"""Pcore bytes against real Puppet (oracle ops ``pcore_write`` / ``pcore_read`` / ``pcore_canon`` in
tests/conformance/ruby/ops/pcore.rb), without our parser:

* our bytes for hand-built ASTs == the bytes of Puppet's Serializer(type_by_reference: true) for its parse;
* our reader turns Puppet's bytes into ASTs equal to the hand-built ones (Locator / definitions identity kept);
* Puppet's stock Deserializer reads our ParseResult documents into a Program equal to its own parse, and
  accepts every AST class with all / no optional attributes;
* every corpus file: Puppet's bytes -> our reader -> our writer gives Puppet's bytes back.

Apart from tests/test_pcore_parser.py (the same comparisons for our parser's output) so that the serializer
and reader are checked against Puppet on their own.
"""

from __future__ import annotations

import base64
import re

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.xpp import envelope, pcore, result
from tests.conformance.oracle import OracleError
from tests.pcore_helpers import (
    CASES,
    DIAGS,
    FILE,
    FORMATS,
    ZOO,
    build_class,
    check_identity,
    corpus_sources,
    puppet_bytes,
)

# ------------------------------------------------------------------------------------------------------
# byte identity and reading Puppet's bytes


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_bytes_identical_to_puppet(oracle, case, fmt):
    src, program = CASES[case]()
    theirs = puppet_bytes(oracle, src, fmt)
    ours = pcore.dumps(program, fmt)
    assert ours == theirs


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_reader_reads_puppet_bytes(oracle, case, fmt):
    src, program = CASES[case]()
    got = pcore.loads(puppet_bytes(oracle, src, fmt), fmt)
    assert got == program
    check_identity(got)
    assert got.locator.line_index == program.locator.line_index


def test_definitions_are_references(oracle):
    src, program = build_class()
    got = pcore.loads(puppet_bytes(oracle, src, "msgpack"))
    assert got.definitions[0] is got.body


# ------------------------------------------------------------------------------------------------------
# Puppet reads our documents


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_puppet_reads_our_parse_result(oracle, case, fmt):
    src, program = CASES[case]()
    doc = result.write_xpp(program, DIAGS, fmt)
    got = oracle.call(
        "pcore_read", data=base64.b64encode(doc).decode(), format=fmt, envelope=True, source=src, path=FILE
    )
    assert got["type"] == "Xpp::ParseResult"
    assert got["program_class"] == "Puppet::Pops::Model::Program"
    assert got["equal"] is True
    assert got["locator_shared"] is True and got["definitions_in_body"] is True
    assert got["diagnostics"] == DIAGS
    assert got["program"] == oracle.call("pcore_canon", source=src, path=FILE)


@pytest.mark.parametrize("fmt", FORMATS)
def test_parse_result_bytes_identical_to_puppet(oracle, fmt):
    """Puppet writing an Xpp::ParseResult instance (type included, AST by name) gives our bytes."""
    for case in ("class", "two"):
        src, program = CASES[case]()
        theirs = puppet_bytes(oracle, src, fmt, what="parse_result", diagnostics=DIAGS)
        assert result.parse_result_payload(program, DIAGS, fmt) == theirs
        theirs = puppet_bytes(oracle, src, fmt, what="parse_result")
        assert result.parse_result_payload(program, [], fmt) == theirs


@pytest.mark.parametrize("fmt", FORMATS)
def test_puppet_reads_parse_result_without_program(oracle, fmt):
    for diags in ([], DIAGS):
        doc = result.write_xpp(None, diags, fmt)
        got = oracle.call("pcore_read", data=base64.b64encode(doc).decode(), format=fmt, envelope=True)
        assert got["type"] == "Xpp::ParseResult"
        assert got["program_class"] == "NilClass"
        assert got["diagnostics"] == diags
        assert result.read_xpp(doc) == (None, diags)


@pytest.mark.parametrize("fmt", FORMATS)
def test_puppet_reads_bare_program(oracle, fmt):
    src, program = build_class()
    got = oracle.call(
        "pcore_read",
        data=base64.b64encode(pcore.dumps(program, fmt)).decode(),
        format=fmt,
        source=src,
        path=FILE,
    )
    assert got["type"] == "Puppet::AST::Program" and got["equal"] is True and got["diagnostics"] is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_read_xpp_round_trip(fmt):
    src, program = build_class()
    diag = Diagnostic.make("SYNTAX_ERROR", 10, 7, {"where": "'Integer'"})
    doc = result.write_xpp(program, [diag], fmt)
    assert doc.startswith(f"application/vnd.puppet.pcore+{fmt}; document-type=xpp; version=1;".encode())
    prog, diags = result.read_xpp(doc)
    assert prog == program
    check_identity(prog)
    assert diags == [
        {
            "severity": "error",
            "issue_code": "SYNTAX_ERROR",
            "message": "Syntax error at 'Integer'",
            "arguments": {"where": "'Integer'"},
            "file": FILE,
            "offset": 10,
            "length": 7,
            "line": 1,
            "pos": 11,
        }
    ]
    back = result.to_diagnostic(diags[0])
    assert (back.code, back.offset, back.length, back.args) == ("SYNTAX_ERROR", 10, 7, {"where": "'Integer'"})
    # a bare Program payload (option A) is accepted too
    assert result.read_xpp(envelope.wrap(pcore.dumps(program, fmt), fmt)) == (program, [])


def _every_node_type_program():
    """A (meaningless) Program holding an instance of every concrete AST class, once with every optional
    attribute set to a non-default value and once with all defaults, built from the model's tables."""
    counter = iter(range(1 << 30))
    loc = ast.make_locator("x\ny", "/srv/sink.pp")
    leaf = {"Expression": "Nop", "Definition": "TypeMapping", "QueryExpression": "VirtualQuery"}

    def fill(t, full):
        m = re.fullmatch(r"Optional\[(.*)\]", t)
        if m:
            return fill(m.group(1), full)
        m = re.fullmatch(r"Array\[(.*?)(?:,\s*(\d+))?\]", t)
        if m:
            return [fill(m.group(1), full)]
        m = re.fullmatch(r"Enum\[(.*)\]", t)
        if m:
            return m.group(1).split(",")[-1].strip().strip("'")
        scalars = {"String": "s", "Integer": 7, "Boolean": True, "Float": 1.5}
        if t in scalars:
            return scalars[t]
        if t == "Any":
            return ast.Regexp(f"a.b{next(counter)}")  # distinct sources (Puppet's reader shares equal ones)
        if t == "AbstractAttributeOperation":
            t = "AttributeOperation" if full else "AttributesOperation"
        return build(ast.TYPES[leaf.get(t, t)], False)

    def build(cls, full):
        vals = []
        for a in cls._wire:
            if a == "locator":
                vals.append(loc)
            elif a in cls._defaults and not full:
                break
            else:
                vals.append(fill(cls._types[a], full))
        return cls(*vals)

    stmts = [
        build(cls, full)
        for full in (True, False)
        for _, cls in sorted(ast.CONCRETE.items())
        if issubclass(cls, ast.Expression)
    ]
    stmts.append(
        ast.ResourceDefaultsExpression(
            loc, 0, 1, "virtual", None, [ast.AttributesOperation(loc, 0, 1, ast.Nop(loc, 0, 0))]
        )
    )
    return ast.Program(
        loc, ast.BlockExpression(loc, 0, 3, stmts), [s for s in stmts if isinstance(s, ast.Definition)]
    )


def test_every_node_type_program_covers_the_model():
    program = _every_node_type_program()
    seen = {n._name for n in ast.walk(program)} | {"Program", "Locator"}
    assert seen == set(ast.CONCRETE)
    for fmt in FORMATS:
        back = pcore.loads(pcore.dumps(program, fmt), fmt)
        assert back == program
        check_identity(back)


@pytest.mark.parametrize("fmt", FORMATS)
def test_puppet_reads_every_node_type(oracle, fmt):
    """Puppet's Deserializer accepts every class with all/no optional values (its type assertions pass),
    and writing what it read with its own JSON writer gives exactly our JSON bytes."""
    program = _every_node_type_program()
    got = oracle.call("pcore_read", data=base64.b64encode(pcore.dumps(program, fmt)).decode(), format=fmt)
    assert got["type"] == "Puppet::AST::Program"
    assert got["locator_shared"] is True and got["definitions_in_body"] is True
    assert got["program"].encode() == pcore.dumps(program, "json")


@pytest.mark.parametrize("fmt", FORMATS)
def test_zoo_round_trip_is_byte_identical(oracle, fmt):
    for src, tasks in ZOO:
        theirs = base64.b64decode(
            oracle.call("pcore_write", source=src, path=FILE, format=fmt, tasks=tasks)["bytes"]
        )
        program = pcore.loads(theirs, fmt)
        check_identity(program)
        assert pcore.dumps(program, fmt) == theirs, src
    src = "<%- | String $x = 'a' | -%>\nHello <%= $x %>!\n<%# comment %><% if $x { -%>yes<% } %>\n"
    theirs = base64.b64decode(
        oracle.call("pcore_write", source=src, path="/srv/t.epp", format=fmt, epp=True)["bytes"]
    )
    program = pcore.loads(theirs, fmt)
    assert isinstance(program.body, ast.LambdaExpression)
    assert pcore.dumps(program, fmt) == theirs


# ------------------------------------------------------------------------------------------------------
# corpus: Puppet's bytes -> our reader -> our writer == Puppet's bytes (no dependency on our parser)


@pytest.mark.parametrize("fmt", FORMATS)
def test_corpus_round_trip_is_byte_identical(oracle, fmt):
    files = corpus_sources()
    if not files:
        pytest.skip("corpus not installed")
    answers = oracle.call_many("pcore_write", [{"file": f, "format": fmt} for f in files])
    bad, done = [], 0
    for f, a in zip(files, answers):
        if isinstance(a, OracleError):
            continue  # Puppet cannot parse it
        theirs = base64.b64decode(a["bytes"])
        program = pcore.loads(theirs, fmt)
        check_identity(program)
        if pcore.dumps(program, fmt) != theirs:
            bad.append(f)
        done += 1
    assert done > len(files) * 0.9
    assert bad == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_puppet_reads_our_corpus_documents(oracle, fmt):
    files = corpus_sources()[::8]
    if not files:
        pytest.skip("corpus not installed")
    answers = oracle.call_many("pcore_write", [{"file": f, "format": fmt} for f in files])
    reqs = []
    for f, a in zip(files, answers):
        if isinstance(a, OracleError):
            continue
        program = pcore.loads(base64.b64decode(a["bytes"]), fmt)
        doc = result.write_xpp(program, DIAGS[:1], fmt)
        reqs.append({"data": base64.b64encode(doc).decode(), "format": fmt, "envelope": True, "file": f})
    got = oracle.call_many("pcore_read", reqs)
    assert len(got) > 50
    for r, g in zip(reqs, got):
        assert not isinstance(g, OracleError), (r["file"], g)
        assert g["equal"] is True and g["diagnostics"] == DIAGS[:1], r["file"]
