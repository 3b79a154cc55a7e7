"""Shared material of the Pcore tests (tests/test_pcore_*.py): hand-built ASTs with the positions Puppet 7.23
reports for their sources, the Puppet side of a byte comparison (oracle op ``pcore_write``), the identity check
every reader result must pass, and the diagnostics, extra sources and corpus the modules feed to Puppet.

One home for these, so that the writer, reader, parser and fuzz modules compare the same ASTs.
"""

from __future__ import annotations

import base64

from puppet_xpp.grammar import ast
from tests.conformance.corpus import corpus_files

FILE = "/srv/xpp/init.pp"
FORMATS = ("msgpack", "json")


# ------------------------------------------------------------------------------------------------------
# hand-built ASTs (positions as Puppet 7.23 reports them)


def _var(loc, off, name):
    return ast.VariableExpression(loc, off, len(name) + 1, ast.QualifiedName(loc, off + 1, len(name), name))


def make_assign(loc, off, name, rhs):
    """`$name = rhs` starting at `off` (an assignment is positioned at its '=')."""
    return ast.AssignmentExpression(loc, off + len(name) + 2, 1, _var(loc, off, name), rhs, "=")


def make_program(src, body, definitions=None):
    loc = body.locator if body is not None else ast.make_locator(src, FILE)
    return ast.Program(loc, body, definitions if definitions is not None else [])


def build_assign():
    src = "$a = 1"
    loc = ast.make_locator(src, FILE)
    return src, make_program(src, make_assign(loc, 0, "a", ast.LiteralInteger(loc, 5, 1, 1)))


def build_two():
    src = "$a = 1\n$b = 2"
    loc = ast.make_locator(src, FILE)
    s1 = make_assign(loc, 0, "a", ast.LiteralInteger(loc, 5, 1, 1))
    s2 = make_assign(loc, 7, "b", ast.LiteralInteger(loc, 12, 1, 2))
    return src, make_program(src, ast.BlockExpression(loc, 3, 8, [s1, s2]))


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
    return src, make_program(src, cls, [cls])


def build_regexp():
    src = "$a =~ /x\\/y\\.z/"
    loc = ast.make_locator(src, FILE)
    rx = ast.LiteralRegularExpression(loc, 6, 9, ast.Regexp("x/y\\.z"), "/x\\/y\\.z/")
    return src, make_program(src, ast.MatchExpression(loc, 3, 2, _var(loc, 0, "a"), rx, "=~"))


def build_hex():
    src = "$a = 0x1F"
    loc = ast.make_locator(src, FILE)
    return src, make_program(src, make_assign(loc, 0, "a", ast.LiteralInteger(loc, 5, 4, 31, 16)))


def build_heredoc():
    src = "$x = @(END)\nhello\nEND\n"
    loc = ast.make_locator(src, FILE)
    h = ast.HeredocExpression(loc, 5, 6, ast.LiteralString(loc, 12, 6, "hello\n"), "")
    return src, make_program(src, make_assign(loc, 0, "x", h))


def build_floats():
    src = "$f = [1.0e20, 0.0001, 1.0e-5, 3.14, 1e15, 123456789012345.0, 2.5e300, 0.1]"
    loc = ast.make_locator(src, FILE)
    vals, pos = [], 6
    for text in src[6:-1].split(", "):
        vals.append(ast.LiteralFloat(loc, pos, len(text), float(text)))
        pos += len(text) + 2
    return src, make_program(src, make_assign(loc, 0, "f", ast.LiteralList(loc, 5, len(src) - 5, vals)))


def build_interpolation():
    src = '$s = "hé${x}llo"'
    loc = ast.make_locator(src, FILE)
    segs = [
        ast.LiteralString(loc, 5, 6, "hé"),
        ast.TextExpression(loc, 5, 0, ast.VariableExpression(loc, 11, 1, ast.QualifiedName(loc, 12, 0, "x"))),
        ast.LiteralString(loc, 13, 4, "llo"),
    ]
    return src, make_program(src, make_assign(loc, 0, "s", ast.ConcatenatedString(loc, 5, 12, segs)))


def build_big_int():
    src = "$a = 9223372036854775807"
    loc = ast.make_locator(src, FILE)
    return src, make_program(src, make_assign(loc, 0, "a", ast.LiteralInteger(loc, 5, 19, (1 << 63) - 1)))


def build_strings():
    """str8 and str16 string lengths."""
    a, b = "x" * 40, "y" * 300
    src = f"$a = '{a}'\n$b = '{b}'"
    loc = ast.make_locator(src, FILE)
    s1 = make_assign(loc, 0, "a", ast.LiteralString(loc, 5, len(a) + 2, a))
    off2 = len(a) + 8
    s2 = make_assign(loc, off2, "b", ast.LiteralString(loc, off2 + 5, len(b) + 2, b))
    return src, make_program(src, ast.BlockExpression(loc, 3, s2.offset + 1 - 3, [s1, s2]))


def build_many():
    """300 distinct names: table indexes beyond the 1-byte (fixint / uint8) ranges."""
    stmts = []
    off = 0
    src = "".join(f"$v{i} = {i}\n" for i in range(300))
    loc = ast.make_locator(src, FILE)
    for i in range(300):
        name = f"v{i}"
        stmts.append(
            make_assign(loc, off, name, ast.LiteralInteger(loc, off + len(name) + 4, len(str(i)), i))
        )
        off += len(name) + 4 + len(str(i)) + 1
    start = stmts[0].offset
    return src, make_program(src, ast.BlockExpression(loc, start, stmts[-1].offset + 1 - start, stmts))


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


# two diagnostics as a ParseResult document carries them (one with no position, nested arguments)
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


def corpus_sources():
    """Every .pp and .epp file of the installed corpus."""
    return corpus_files("pp") + corpus_files("epp")
