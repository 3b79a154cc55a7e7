"""Our parser's output (grammar.parser) serialized: bytes equal to Puppet's serializer for the hand-built
cases, the corpus and the extra sources; Puppet's Deserializer reads its ParseResult documents; equal regular
expressions stay separate objects as in Puppet's model (both readers).

Apart from tests/test_pcore_puppet.py because these depend on our parser (skipped only while it cannot be
imported), those do not.
"""

from __future__ import annotations

import base64

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.xpp import pcore, result
from puppet_xpp.xpp.pcore import XppWriteError
from tests.conformance.oracle import OracleError
from tests.pcore_helpers import CASES, FILE, FORMATS, ZOO, corpus_sources, puppet_bytes

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
    files = corpus_sources()
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
