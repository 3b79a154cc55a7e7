"""Pcore serialization (xpp.pcore), the PRFC-23 envelope (xpp.envelope) and the Xpp::ParseResult document
(xpp.result), checked against real Puppet through the oracle ops in tests/conformance/ruby/ops/pcore.rb:

* our bytes for hand-built ASTs == the bytes of Puppet's Serializer(type_by_reference: true) for its parse;
* our reader turns Puppet's bytes into ASTs equal to the hand-built ones (Locator / definitions identity kept);
* Puppet's stock Deserializer reads our ParseResult documents into a Program equal to its own parse;
* every corpus file: Puppet's bytes -> our reader -> our writer gives Puppet's bytes back;
* with our parser (skipped while grammar.parser cannot be imported): our bytes for the corpus == Puppet's;
* the envelope accept/reject table; malformed input of any kind raises only XppFormatError (fuzz).
"""

from __future__ import annotations

import base64
import math
import random
import re
import time

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.issues import Diagnostic
from puppet_xpp.xpp import envelope, pcore, result
from puppet_xpp.xpp.pcore import XppFormatError, XppWriteError
from tests.conformance.corpus import corpus_files
from tests.conformance.oracle import OracleError

FILE = "/srv/xpp/init.pp"
FORMATS = ("msgpack", "json")


# ------------------------------------------------------------------------------------------------------
# hand-built ASTs (positions as Puppet 7.23 reports them)


def _var(loc, off, name):
    return ast.VariableExpression(loc, off, len(name) + 1, ast.QualifiedName(loc, off + 1, len(name), name))


def _assign(loc, off, name, rhs):
    """`$name = rhs` starting at `off` (an assignment is positioned at its '=')."""
    return ast.AssignmentExpression(loc, off + len(name) + 2, 1, _var(loc, off, name), rhs, "=")


def _program(src, body, definitions=None):
    loc = body.locator if body is not None else ast.make_locator(src, FILE)
    return ast.Program(loc, body, definitions if definitions is not None else [])


def build_assign():
    src = "$a = 1"
    loc = ast.make_locator(src, FILE)
    return src, _program(src, _assign(loc, 0, "a", ast.LiteralInteger(loc, 5, 1, 1)))


def build_two():
    src = "$a = 1\n$b = 2"
    loc = ast.make_locator(src, FILE)
    s1 = _assign(loc, 0, "a", ast.LiteralInteger(loc, 5, 1, 1))
    s2 = _assign(loc, 7, "b", ast.LiteralInteger(loc, 12, 1, 2))
    return src, _program(src, ast.BlockExpression(loc, 3, 8, [s1, s2]))


def build_class():
    src = "class foo(Integer $x = 1, $y) { notice($x) }"
    loc = ast.make_locator(src, FILE)
    params = [
        ast.Parameter(
            loc,
            18,
            2,
            "x",
            value=ast.LiteralInteger(loc, 23, 1, 1),
            type_expr=ast.QualifiedReference(loc, 10, 7, "Integer"),
        ),
        ast.Parameter(loc, 26, 2, "y"),
    ]
    call = ast.CallNamedFunctionExpression(
        loc, 32, 10, ast.QualifiedName(loc, 32, 6, "notice"), False, [_var(loc, 39, "x")]
    )
    cls = ast.HostClassDefinition(loc, 0, 44, "foo", params, ast.BlockExpression(loc, 0, 0, [call]))
    return src, _program(src, cls, [cls])


def build_regexp():
    src = "$a =~ /x\\/y\\.z/"
    loc = ast.make_locator(src, FILE)
    rx = ast.LiteralRegularExpression(loc, 6, 9, ast.Regexp("x/y\\.z"), "/x\\/y\\.z/")
    return src, _program(src, ast.MatchExpression(loc, 3, 2, _var(loc, 0, "a"), rx, "=~"))


def build_hex():
    src = "$a = 0x1F"
    loc = ast.make_locator(src, FILE)
    return src, _program(src, _assign(loc, 0, "a", ast.LiteralInteger(loc, 5, 4, 31, 16)))


def build_heredoc():
    src = "$x = @(END)\nhello\nEND\n"
    loc = ast.make_locator(src, FILE)
    h = ast.HeredocExpression(loc, 5, 6, ast.LiteralString(loc, 12, 6, "hello\n"), "")
    return src, _program(src, _assign(loc, 0, "x", h))


def build_floats():
    src = "$f = [1.0e20, 0.0001, 1.0e-5, 3.14, 1e15, 123456789012345.0, 2.5e300, 0.1]"
    loc = ast.make_locator(src, FILE)
    vals, pos = [], 6
    for text in src[6:-1].split(", "):
        vals.append(ast.LiteralFloat(loc, pos, len(text), float(text)))
        pos += len(text) + 2
    return src, _program(src, _assign(loc, 0, "f", ast.LiteralList(loc, 5, len(src) - 5, vals)))


def build_interpolation():
    src = '$s = "hé${x}llo"'
    loc = ast.make_locator(src, FILE)
    segs = [
        ast.LiteralString(loc, 5, 6, "hé"),
        ast.TextExpression(loc, 5, 0, ast.VariableExpression(loc, 11, 1, ast.QualifiedName(loc, 12, 0, "x"))),
        ast.LiteralString(loc, 13, 4, "llo"),
    ]
    return src, _program(src, _assign(loc, 0, "s", ast.ConcatenatedString(loc, 5, 12, segs)))


def build_big_int():
    src = "$a = 9223372036854775807"
    loc = ast.make_locator(src, FILE)
    return src, _program(src, _assign(loc, 0, "a", ast.LiteralInteger(loc, 5, 19, (1 << 63) - 1)))


def build_strings():
    """str8 and str16 string lengths."""
    a, b = "x" * 40, "y" * 300
    src = f"$a = '{a}'\n$b = '{b}'"
    loc = ast.make_locator(src, FILE)
    s1 = _assign(loc, 0, "a", ast.LiteralString(loc, 5, len(a) + 2, a))
    off2 = len(a) + 8
    s2 = _assign(loc, off2, "b", ast.LiteralString(loc, off2 + 5, len(b) + 2, b))
    return src, _program(src, ast.BlockExpression(loc, 3, s2.offset + 1 - 3, [s1, s2]))


def build_many():
    """300 distinct names: table indexes beyond the 1-byte (fixint / uint8) ranges."""
    stmts = []
    off = 0
    src = "".join(f"$v{i} = {i}\n" for i in range(300))
    loc = ast.make_locator(src, FILE)
    for i in range(300):
        name = f"v{i}"
        stmts.append(_assign(loc, off, name, ast.LiteralInteger(loc, off + len(name) + 4, len(str(i)), i)))
        off += len(name) + 4 + len(str(i)) + 1
    start = stmts[0].offset
    return src, _program(src, ast.BlockExpression(loc, start, stmts[-1].offset + 1 - start, stmts))


CASES = {
    f.__name__[6:]: f
    for f in (
        build_assign,
        build_two,
        build_class,
        build_regexp,
        build_hex,
        build_heredoc,
        build_floats,
        build_interpolation,
        build_big_int,
        build_strings,
        build_many,
    )
}


def puppet_bytes(oracle, src, fmt, **kw):
    return base64.b64decode(oracle.call("pcore_write", source=src, path=FILE, format=fmt, **kw)["bytes"])


def check_identity(program):
    """One Locator object everywhere; every definition is a node of the body tree."""
    nodes = list(ast.walk(program))
    assert all(n.locator is program.locator for n in nodes if isinstance(n, ast.Positioned))
    ids = {id(n) for n in nodes}
    assert all(id(d) in ids for d in program.definitions)


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

DIAGS = [
    {
        "severity": "warning",
        "issue_code": "UNRECOGNIZED_ESCAPE",
        "message": "Unrecognized escape sequence '\\q'",
        "arguments": {"ch": "q"},
        "file": FILE,
        "offset": 3,
        "length": 2,
        "line": 1,
        "pos": 4,
    },
    {
        "severity": "error",
        "issue_code": "SYNTAX_ERROR",
        "message": "Syntax error at 'x'",
        "arguments": {"where": "'x'", "nested": [1, 2.5, None, True, {"k": "v"}]},
        "file": FILE,
        "offset": None,
        "length": 0,
        "line": None,
        "pos": None,
    },
]


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


ZOO = [  # constructs the corpus lacks, and a few mixed ones; (source, tasks)
    ("plan p::x(String $a) { apply($t) { notice(1) } }", True),
    ("", False),
    ("# only a comment\r\n", False),
    ("$a = 'ü€😀'\r\n$b = \"\\u{1F600}${a}\"\r\n", False),
    ("notice(attr)\n$a = [private]", False),
    ("type Foo { }\ntype Bar inherits Foo { }", False),
    ('type Runtime[ruby, "Foo"] = Foo', False),
    ("notice(*$a)", False),
    ("$a = $b ? { /x/ => 1, default => 2 }", False),
    ('@@file { "a": } File <| |> { x => 1 } File[a] { y +> 2 }', False),
    ("$a = -0x10 + 077 * 1.5e3 - (2)", False),
    ("function f(Integer *$rest) >> Integer { 1 }", False),
    ("node /web/, 'db' inherits default { }", False),
    ('$x = @("E":json/t)\n  {"a": "${b}\\t"}\n  | E\n', False),
]


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


def _corpus():
    return corpus_files("pp") + corpus_files("epp")


@pytest.mark.parametrize("fmt", FORMATS)
def test_corpus_round_trip_is_byte_identical(oracle, fmt):
    files = _corpus()
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
    files = _corpus()[::8]
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


# ------------------------------------------------------------------------------------------------------
# with our parser (grammar.parser): skipped only while it cannot be imported


def _our_parse():
    try:
        from puppet_xpp.grammar.parser import parse

        parse("$a = 1", FILE)
    except ImportError as e:
        pytest.skip(f"grammar.parser not available yet: {e}")
    return parse


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_parser_output_bytes_identical(oracle, case, fmt):
    parse = _our_parse()
    src, program = CASES[case]()
    r = parse(src, FILE)
    assert r.program is not None and not r.errors
    assert pcore.dumps(r.program, fmt) == puppet_bytes(oracle, src, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_parser_corpus_bytes_identical(oracle, fmt):
    parse = _our_parse()
    files = _corpus()
    if not files:
        pytest.skip("corpus not installed")
    answers = oracle.call_many("pcore_write", [{"file": f, "format": fmt} for f in files])
    bad = []
    for f, a in zip(files, answers):
        if isinstance(a, OracleError):
            continue
        with open(f, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        r = parse(text, f)
        if r.program is None or r.errors:
            bad.append((f, "no program / errors"))
            continue
        try:
            if pcore.dumps(r.program, fmt) != base64.b64decode(a["bytes"]):
                bad.append((f, "bytes differ"))
        except XppWriteError as e:
            bad.append((f, str(e)))
    assert bad == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_parser_zoo_bytes_identical(oracle, fmt):
    parse = _our_parse()
    bad = []
    for src, tasks in ZOO:
        r = parse(src, FILE, tasks=tasks)
        theirs = base64.b64decode(
            oracle.call("pcore_write", source=src, path=FILE, format=fmt, tasks=tasks)["bytes"]
        )
        if r.program is None or r.errors or pcore.dumps(r.program, fmt) != theirs:
            bad.append(src)
    assert bad == []


def test_puppet_reads_parser_parse_result(oracle):
    parse = _our_parse()
    for case in sorted(CASES):
        src, _ = CASES[case]()
        r = parse(src, FILE)
        doc = result.write_xpp(r.program, r.diagnostics, "msgpack")
        got = oracle.call(
            "pcore_read",
            data=base64.b64encode(doc).decode(),
            format="msgpack",
            envelope=True,
            source=src,
            path=FILE,
        )
        assert got["equal"] is True, case


# Equal regular expressions are separate objects in Puppet's model: the serializer gives each its own
# table index and the writer repeats the value as INNER_TABULATION (never a TABULATION back-reference).
REGEXP_CASES = [
    "$x =~ /.+/\n$y =~ /.+/\n",
    "$x =~ /.+/\nif $x =~ /.+/ { notice(1) }\n",
    "node /a/ {}\nnode /a/, /a/ {}\n",
    "$a = $x ? { /a/ => 1, /a/ => 2 }\n",
    "type A = Pattern[/a/, /a/]\n",
    "$x = [/a/, /a/, /b/, /a/]\n$y = { /a/ => /a/ }\n",
    "class c { $x =~ /.+/ }\nclass d { $x =~ /.+/ }\n",
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("src", REGEXP_CASES)
def test_equal_regexps_written_as_puppet_writes_them(oracle, src, fmt):
    theirs = puppet_bytes(oracle, src, fmt)
    r = _our_parse()(src, FILE)
    assert r.program is not None and not r.errors
    assert pcore.dumps(r.program, fmt) == theirs
    # both readers keep them separate objects: what they read writes Puppet's bytes again
    old = pcore.C_LOAD
    try:
        for c_load in {old, None}:
            pcore.C_LOAD = c_load
            got = pcore.loads(theirs, fmt)
            regexps = [n.value for n in ast.walk(got) if type(n) is ast.LiteralRegularExpression]
            assert len({id(v) for v in regexps}) == len(regexps) > 1
            assert pcore.dumps(got, fmt) == theirs
    finally:
        pcore.C_LOAD = old


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
    program = _program(src, _assign(loc, 0, "a", node))
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


# ------------------------------------------------------------------------------------------------------
# envelope

PAYLOAD = pcore.dumps(build_assign()[1])
ACCEPT = [
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack;document-type=xpp;version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\r\n\r\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\r\n",
    b"application/vnd.puppet.pcore+msgpack\n; document-type=xpp\n; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack\r\n; document-type=xpp\r\n; version=1\r\n\r\n",
    b"application/vnd.puppet.pcore+msgpack ;\tversion = 1 ; document-type= xpp \n\n",
    b"application/vnd.puppet.pcore+msgpack; charset=utf-8; document-type=xpp; x-custom_1=a-b; version=1\n\n",
]
REJECT = [
    b"",
    PAYLOAD,
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1",
    b"application/vnd.puppet.pcore+yaml; document-type=xpp; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpackx; document-type=xpp; version=1\n\n",
    b"application/json; document-type=xpp; version=1\n\n",
    b"application/vnd.puppet.pcore; document-type=xpp; version=1\n\n",
    b"Application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n",
    b" application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n",
    b"# application/vnd.puppet.pcore+msgpack\n; document-type=xpp\n; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=pp; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=2\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1;\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1 x\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1.0\n\n",
    b'application/vnd.puppet.pcore+msgpack; document-type="xpp"; version=1\n\n',
    b"application/vnd.puppet.pcore+msgpack, document-type=xpp, version=1\n\n",
    b"application/vnd.puppet.pcore+json; document-type=xpp; version=1\n\n",  # header ok, payload is msgpack
]


@pytest.mark.parametrize("head", ACCEPT)
def test_envelope_accepts(head):
    assert envelope.unwrap(head + PAYLOAD)[0] == "msgpack"
    assert result.read_xpp(head + PAYLOAD) == (build_assign()[1], [])


@pytest.mark.parametrize("head", REJECT)
def test_envelope_rejects(head):
    with pytest.raises(XppFormatError):
        result.read_xpp(head + PAYLOAD if head not in (b"", PAYLOAD) else head)


def test_envelope_writer():
    assert (
        envelope.header("msgpack")
        == b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n"
    )
    assert envelope.header("json") == b"application/vnd.puppet.pcore+json; document-type=xpp; version=1\n\n"
    assert envelope.unwrap(envelope.wrap(b"[]", "json")) == (
        "json",
        {"document-type": "xpp", "version": "1"},
        b"[]",
    )
    assert envelope.looks_like_xpp(envelope.header()) and not envelope.looks_like_xpp(b"class a {}")


# ------------------------------------------------------------------------------------------------------
# malformed input: only XppFormatError, no hang, bounded memory


def test_specific_malformed_inputs():
    cases = [
        b"\xd4\x10\x7f",  # array of 127 with nothing after it
        b"\xc7\x09\x10\xcf" + (1 << 62).to_bytes(8, "big"),  # huge array count
        b"\xc7\x09\x11\xcf" + (1 << 62).to_bytes(8, "big"),  # huge map count
        b"\xd4\x01\x05",  # tabulation out of range
        b"\xd4\x00\x05",  # inner tabulation out of range
        b"\xd4\x10\x01\xd4\x01\x00",  # array containing itself
        b"\xc7\x0b\x12\x03\xa6Puppet\xa3AST\xa3Foo\x00",  # unknown type (payload too short, too)
        b"\x91\x01",  # native msgpack array
        b"\xc4\x01a",  # bin
        b"\xc1",  # never-used byte
        b"\xd4\x20\x00",  # DEFAULT with a payload byte
        b"\xd5\x33\x01\x02",  # TIME: unsupported
        b"\xd4\x30\x01",  # regexp with an int source
        b"\xc0\xc0",  # trailing data
        b"",  # empty
        b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff",  # uint64 beyond int64
        b"\xdd\xff\xff\xff\xff\xc0",  # native array32 claiming 4G elements
        b"\xdf\xff\xff\xff\xff\xc0",  # native map32 claiming 4G entries
        b"\xdb\xff\xff\xff\xffabc",  # str32 claiming 4 GB
        b"\xc9\xff\xff\xff\xff\x10\x01",  # ext32 claiming 4 GB
        b"\xc7\x02\x10\x01\x01",  # ARRAY_START with two payload values
        b"\xd4\xff\x00",  # ext -1 (msgpack timestamp)
    ]
    for data in cases:
        with pytest.raises(XppFormatError):
            pcore.loads(data)
    for text in (
        b"",
        b"{}",
        b"[",
        b"[[]]",
        b"[[99]]",
        b"[[16,2,1]]",
        b"[NaN]",
        b'[{"a":1}]',
        b"[[18,1,2,0]]",
        b"[[1,0]]",
        b"[99999999999999999999]",
        b"\xff",
        b"[" * 100000,
    ):
        with pytest.raises(XppFormatError):
            pcore.loads(text, "json")


def _mutate(rng: random.Random, data: bytes, pool: list) -> bytes:
    b = bytearray(data)
    op = rng.randrange(8)
    if op == 0 and b:  # truncation
        return bytes(b[: rng.randrange(len(b))])
    if op == 1 and b:  # bit flips
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    if op == 2 and b:  # random bytes overwritten
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if op == 3:  # splice from another document
        other = rng.choice(pool)
        i, j = rng.randrange(len(b) + 1), rng.randrange(len(other) + 1)
        k = rng.randrange(j, len(other) + 1)
        return bytes(b[:i]) + other[j:k] + bytes(b[rng.randrange(i, len(b) + 1) :])
    if op == 4 and b:  # delete a range
        i = rng.randrange(len(b))
        return bytes(b[:i] + b[i + rng.randint(1, 16) :])
    if op == 5 and b:  # duplicate a range
        i = rng.randrange(len(b))
        j = min(len(b), i + rng.randint(1, 32))
        return bytes(b[:j] + b[i:j] + b[j:])
    if op == 6:  # insert interesting bytes
        i = rng.randrange(len(b) + 1)
        ins = rng.choice(
            [
                b"\xd4\x01\x00",
                b"\xd4\x00\x00",
                b"\xd4\x10\x7f",
                b"\xcf\xff",
                b"]",
                b"[",
                b",",
                b"[16,",
                b"[1,0]",
                b"\n\n",
                b"\xc7\xff\x12",
                b"\xdb\xff\xff\xff\xff",
                b"\x00",
            ]
        )
        return bytes(b[:i]) + ins + bytes(b[i:])
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))


def _seed_documents() -> list:
    docs = []
    for name in ("assign", "class", "regexp", "heredoc", "floats", "interpolation", "strings"):
        _, program = CASES[name]()
        for fmt in FORMATS:
            docs.append(result.write_xpp(program, DIAGS, fmt))
            docs.append(result.write_xpp(program, [], fmt))
            docs.append(pcore.dumps(program, fmt))
    for fmt in FORMATS:
        docs.append(result.write_xpp(None, DIAGS, fmt))
    return docs


def _read_any(data: bytes):
    if envelope.looks_like_xpp(data):
        return result.read_xpp(data)
    if data[:1] == b"[":
        return pcore.loads(data, "json")
    return pcore.loads(data, "msgpack")


def test_fuzz_only_format_errors():
    rng = random.Random(20240501)
    pool = _seed_documents()
    for d in pool:
        _read_any(d)  # the seeds themselves are valid
    cases = accepted = 0
    slowest = 0.0
    start = time.perf_counter()
    while cases < 12000:
        data = rng.choice(pool)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            data = _mutate(rng, data, pool)
        if rng.random() < 0.5 and envelope.looks_like_xpp(data):
            # also feed the bare payload to the JSON / msgpack reader
            cut = data.find(b"\n\n")
            data = data[cut + 2 :] if cut >= 0 else data
        t = time.perf_counter()
        try:
            got = _read_any(data)
            accepted += 1
        except XppFormatError:
            got = XppFormatError
        slowest = max(slowest, time.perf_counter() - t)
        if data[:1] not in (b"[", b"a"):
            # the pure-Python msgpack tokenizer (used without the msgpack extension) agrees
            try:
                ref = pcore.read.build(pcore.tokens.mp_tokens_py(data))
                ref = ref[0] if len(ref) == 1 else XppFormatError
            except XppFormatError:
                ref = XppFormatError
            assert ref == got
        cases += 1
    assert cases >= 10000
    assert slowest < 1.0, slowest
    assert time.perf_counter() - start < 120
    assert accepted < cases  # the mutations really do break documents


def test_fuzz_random_token_streams():
    """Structure-aware fuzz: random sequences of extension tokens and primitives, encoded both ways."""
    rng = random.Random(7)
    names = ["Puppet::AST::" + n for n in sorted(ast.CONCRETE)] + [
        "Pcore::ObjectType",
        "Pcore::AnyType",
        "Xpp::ParseResult",
        "Puppet::AST::Nope",
    ]

    def token():
        r = rng.random()
        if r < 0.35:
            code = rng.choice([0, 1, 0x10, 0x11, 0x13])
            return (code, rng.choice([0, 1, 2, 3, rng.randrange(50)]))
        if r < 0.55:
            segs = rng.choice(names).split("::")
            if rng.random() < 0.3:
                segs = [rng.randrange(10) if rng.random() < 0.5 else s for s in segs]
            return (0x12, tuple(segs), rng.randrange(9))
        if r < 0.6:
            return (0x30, rng.choice(["a", "x.*"]))
        return rng.choice([None, True, False, 0, 3, -1, 2.5, "", "a", "=", "regular", "/srv/a.pp"])

    for _ in range(3000):
        toks = []
        for _ in range(rng.randint(1, 40)):
            t = token()
            toks.append(t)
        for fmt in FORMATS:
            try:
                data = _encode_tokens(toks, fmt)
            except (XppWriteError, XppFormatError):
                continue  # not expressible in this encoding
            try:
                pcore.loads(data, fmt)
            except XppFormatError:
                pass


def _encode_tokens(toks, fmt):
    out = bytearray()
    for t in toks:
        if type(t) is tuple:
            code = t[0]
            if code == 0x12:
                payload = pcore.write.mp_uint_body(len(t[1])) + b"".join(
                    pcore.write.mp_uint_body(s) if type(s) is int else pcore.write.mp_str(s) for s in t[1]
                )
                payload += pcore.write.mp_uint_body(t[2])
            elif code == 0x30:
                payload = pcore.write.mp_str(t[1])
            else:
                payload = pcore.write.mp_uint_body(t[1])
            out += pcore.write.mp_ext(code, payload)
        elif t is None:
            out += b"\xc0"
        elif type(t) is bool:
            out += b"\xc3" if t else b"\xc2"
        elif type(t) is int:
            out += pcore.write.mp_int(t)
        elif type(t) is float:
            out += pcore.write.PACK_DOUBLE(0xCB, t)
        else:
            out += pcore.write.mp_str(t)
    data = bytes(out)
    return data if fmt == "msgpack" else pcore.json.tokens_to_json(pcore.tokens.mp_tokens(data))
