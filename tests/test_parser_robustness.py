"""The parser never crashes or hangs, reports every independent syntax error, and keeps what parses.

Expected answers come from Puppet: the first error of a damaged file must be Puppet's, and in a file
made of independent statements, each broken statement must get the error Puppet reports for it alone.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puppet_xpp.grammar import pn
from puppet_xpp.grammar.parser import parse
from tests.conformance.corpus import corpus_files


def _first_error(res):
    errs = [d for d in res.diagnostics if d.severity == "error"]
    return errs[0] if errs else None


# --- never crash ------------------------------------------------------------------------------------
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_random_bytes(data):
    text = data.decode("utf-8", "surrogateescape")
    res = parse(text, "x.pp")
    assert res.program is not None or res.errors


PUPPETISH = list("${}[]()\"'\\/|@<>-=+*!?:;,.~%#\n \t") + [
    "class",
    "if",
    "$x",
    "@(E)",
    "E",
    "notice",
    "=>",
    "<|",
    "|>",
    "${",
    "default",
    "node",
    "1",
    "0x",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PUPPETISH), max_size=60))
def test_random_puppetish(parts):
    res = parse("".join(parts), "x.pp")
    assert res.program is not None or res.errors
    for d in res.diagnostics:
        assert d.message and d.code


DEEP = [
    "[" * 10000 + "]" * 10000,
    "(" * 10000 + "1" + ")" * 10000,
    "$x = " + "-" * 10000 + "1",
    "$x = " + "!" * 10000 + "true",
    "{a => " * 10000 + "1" + "}" * 10000,
    "if $x { " * 10000 + "}" * 10000,
    '"${' * 3000 + "x" + '}"' * 3000,
    "$x = " + " + ".join(["1"] * 20000),
    "foo(" * 10000 + ")" * 10000,
    "$x = " + " and ".join(["true"] * 400),
]


@pytest.mark.parametrize("shape", DEEP, ids=[f"deep-{i}" for i in range(len(DEEP))])
def test_deep_nesting_gives_a_diagnostic(shape):
    res = parse(shape, "deep.pp")
    if res.errors:
        assert all(d.offset is not None for d in res.errors)
    else:  # what we accept, every consumer must handle without recursion errors
        pn.to_data(pn.transform(res.program))
        from puppet_xpp.grammar.validator import validate
        from puppet_xpp.xpp.result import read_xpp, write_xpp

        validate(res.program, file="deep.pp")
        read_xpp(write_xpp(res.program, res.diagnostics))


# --- first error equals Puppet's -------------------------------------------------------------------
def _damaged_corpus_cases(n=150, seed=7):
    files = corpus_files("pp")
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason="corpus not installed"))]
    rnd = random.Random(seed)
    cases = []
    for i in range(n):
        path = rnd.choice(files)
        with open(path, encoding="utf-8") as f:
            src = f.read()
        if not src:
            continue
        res = parse(src, path)
        toks = res.tokens
        if i % 2 == 0 or not toks:  # truncation at a random byte
            cut = rnd.randrange(len(src))
            cases.append(pytest.param(src[:cut], id=f"trunc-{i}"))
        else:  # delete one token
            t = rnd.choice(toks)
            b = src.encode()
            cases.append(
                pytest.param((b[: t.start_pos] + b[t.end_pos :]).decode("utf-8", "replace"), id=f"del-{i}")
            )
    return cases


@pytest.mark.corpus
@pytest.mark.parametrize("src", _damaged_corpus_cases())
def test_damaged_corpus_first_error_is_puppets(src, oracle):
    res = parse(src, "")
    want = oracle.request("parse", source=src)
    first = _first_error(res)
    if want["ok"]:
        assert first is None, first
        return
    if want.get("class") not in ("Puppet::ParseErrorWithIssue", "Puppet::ParseError"):
        pytest.skip(f"Puppet crashes here: {want.get('class')}")
    assert first is not None, want
    if want.get("issue_code"):
        assert first.code == want["issue_code"], (first, want)
    else:
        assert first.message == want["error"], (first, want)
    if want.get("line") is not None:
        assert first.line_col(res.locator) == (want["line"], want["pos"]), (first, want)


# --- every independent error, and the valid statements kept ----------------------------------------
GOOD = [
    "notice(1)",
    "$a = [1, 2]",
    "class k { file { '/tmp/x': ensure => file } }",
    "define d($x) { }",
    "if $x { notice($x) } else { $y = 2 }",
    "node default { include k }",
    "File { mode => '0644' }",
    "function f() >> Integer { 1 }",
    "$h = { 'a' => 1 }",
    "case $z { 1: { } default: { } }",
]
# each fails inside itself (an error at its own end would be completed by the next line)
BAD = [
    "$b = )",
    "notice(1,,)",
    "class { }",
    "$c = [1 2 3 =]",
    "if $x { 1 } elsif ) { }",
    "file { 'a': => 1 }",
    "$x = 1 + * ]",
    "foo(1))",
    "$d = [}",
    "unless $x { } elsif $y { }",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 9)), min_size=1, max_size=8))
def test_each_independent_error_reported(oracle, plan):
    parts = [(BAD if bad else GOOD)[i] for bad, i in plan]
    src = "\n".join(parts) + "\n"
    res = parse(src, "")
    ours = [(d.code, d.line_col(res.locator)) for d in res.errors]
    expected = []
    good_pn = []
    for line, (part, (bad, _)) in enumerate(zip(parts, plan), start=1):
        want = oracle.request("pn", source=part)
        if bad:
            assert not want["ok"]
            assert want.get("line") is not None, want
            expected.append((want.get("issue_code"), (line + want["line"] - 1, want["pos"])))
        else:
            good_pn.append(want["result"])
    assert [c for c, _ in ours] == [c for c, _ in expected], (src, ours, expected)
    assert [p for _, p in ours] == [p for _, p in expected], (src, ours, expected)
    prog = pn.to_data(pn.transform(res.program))
    stmts = prog["^"][1:] if isinstance(prog, dict) and prog.get("^", [None])[0] == "block" else [prog]
    for g in good_pn:
        assert g in stmts, (src, g)


# (`$d = [}` leaves a `[` open: recovery then skips to the body's `}`, by design)
BAD_IN_BODY = [b for b in BAD if b != "$d = [}"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 8)), min_size=1, max_size=8))
def test_each_independent_error_reported_inside_a_body(oracle, plan):
    """The same inside a class body: every broken statement gets Puppet's error for it alone, and the
    body keeps the valid statements."""
    parts = [(BAD_IN_BODY if bad else GOOD)[i] for bad, i in plan]
    src = "class wrap {\n" + "".join(f"  {p}\n" for p in parts) + "}\nnotice('after')\n"
    res = parse(src, "")
    ours = [(d.code, d.line_col(res.locator)) for d in res.errors]
    expected = []
    for line, (part, (bad, _)) in enumerate(zip(parts, plan), start=2):
        if bad:
            want = oracle.request("pn", source=part)
            assert not want["ok"] and want.get("line") == 1, want
            expected.append((want.get("issue_code"), (line, want["pos"] + 2)))
    assert ours == expected, (src, ours, expected)
    body = res.program.body
    stmts = body.statements if body._name == "BlockExpression" else [body]
    assert stmts[0]._name == "HostClassDefinition" and stmts[-1]._name == "CallNamedFunctionExpression"
    kept = stmts[0].body.statements if stmts[0].body is not None else []
    # every valid statement is kept (a broken one may leave a complete prefix, e.g. `foo(1)` of `foo(1))`)
    assert len(kept) >= sum(1 for bad, _ in plan if not bad)
