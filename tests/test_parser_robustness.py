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


# --- syntax errors at a template's top level (issue 10: recovery used to crash there) ----------------
EPP_BROKEN = [
    "<% ) %>",
    "<%= 1 + %>",
    "<%= %>",
    "<% } %>",
    "<%:",
    "Hello <%= $name ) %>",
    "<%- | $name | -%>\nHello <%= $name ) %>\n",
    "<%- | $name | -%>\n<% } %>",
    "<%- | String $name | -%>\n<%= 1 + %>\ntext\n",
    "a <% if $x { %> b <% ) %> <% } %>\n<%= $y ) %>",
]


@pytest.mark.parametrize("src", EPP_BROKEN)
def test_template_top_level_syntax_error_is_puppets(src, oracle):
    from puppet_xpp.grammar.validator import validate

    res = parse(src, "t.epp")
    want = oracle.request("parse", source=src, epp=True)
    assert not want["ok"], want
    first = _first_error(res)
    assert first is not None
    assert (first.code, first.message) == (want["issue_code"], want["error"])
    assert first.line_col(res.locator) == (want["line"], want["pos"])
    if res.program is not None:
        validate(res.program, file="t.epp")


@pytest.mark.parametrize(
    "src", ["file { $x:/abc/ }", "file { $x:/a\\/c/ }", "file { $x:/a\\.c/ }", "notice(1)\n$y = [/x\n/ /y/]"]
)
def test_syntax_error_at_a_regex_is_puppets(src, oracle):
    """Puppet shows the regex token as its Ruby Regexp (found by the mutation campaign)."""
    res = parse(src, "r.pp")
    want = oracle.request("parse", source=src)
    first = _first_error(res)
    assert not want["ok"] and first is not None
    assert (first.message, first.line_col(res.locator)) == (want["error"], (want["line"], want["pos"]))


def test_epp_heredoc_with_a_syntax_error_is_puppets(oracle):
    """`puppet parser validate` checks an `@(END:epp)` heredoc by parsing it as a template."""
    from puppet_xpp.grammar.validator import validate

    src = "$t = @(END:epp)\n<% $x ==== 42 %>\nEND\nnotice($t)\n"
    res = parse(src, "h.pp")
    assert not res.errors
    ours = [(d.code, d.message, d.line_col(res.locator)) for d in validate(res.program, file="h.pp")]
    want = oracle.request("validate", source=src)
    assert want["ok"], want
    assert ours == [(d["code"], d["message"], (d["line"], d["pos"])) for d in want["result"]]


# --- differential mutation campaign on damaged corpus files (issue 10) -------------------------------
# Seeded and bounded in time; PUPPET_XPP_MUTATION_SECONDS / PUPPET_XPP_MUTATIONS make a larger run,
# PUPPET_XPP_MUTATION_SEED another one; PUPPET_XPP_MUTATION_DUMP=<file> writes every differing input.
MUTATION_PIECES = [
    "{", "}", "[", "]", "(", ")", '"', "'", "<%", "%>", "<%=", "-%>", "<%#", "@(END)", "@(\"END\")",
    "\nEND\n", "|", "${", "$", "=>", ",", ";", "\n", "/", "/*", "*/", "#", "\\", ":", "@(END:epp)",
]  # fmt: skip


def mutate(src: str, rnd: random.Random) -> str:
    """One random damage: a deletion, an insertion of a bracket/quote/tag/heredoc marker, a truncation,
    an ASCII byte replaced by another, or a NUL, a CR, CR or CRLF line ends, a byte order mark (the text
    stays valid UTF-8: Puppet given invalid bytes fails outside its parser, so tests/test_entry_campaign.py
    checks those, without a comparison)."""
    b = src.encode("utf-8")
    n = len(b)
    op = rnd.randrange(5)
    at = rnd.randrange(n + 1)
    while 0 < at < n and (b[at] & 0xC0) == 0x80:  # on a character boundary
        at -= 1
    if op == 0:
        end = min(n, at + rnd.choice((1, 1, 2, 5, 20)))
        while end < n and (b[end] & 0xC0) == 0x80:
            end += 1
        out = b[:at] + b[end:]
    elif op == 1:
        out = b[:at] + rnd.choice(MUTATION_PIECES).encode() + b[at:]
    elif op == 2:
        out = b[:at]
    elif op == 4:
        kind = rnd.randrange(5)
        if kind < 2:
            out = b[:at] + (b"\x00", b"\r")[kind] + b[at:]
        elif kind < 4:
            out = b.replace(b"\n", (b"\r", b"\r\n")[kind - 2])
        else:
            out = "\ufeff".encode() + b
    else:
        ascii_at = [k for k in range(max(0, at - 40), min(n, at + 40)) if b[k] < 0x80]
        if not ascii_at:
            return b[:at].decode("utf-8")
        k = rnd.choice(ascii_at)
        out = b[:k] + bytes([rnd.randrange(0x20, 0x7F)]) + b[k + 1 :]
    return out.decode("utf-8")


def _mutation_inputs(seed: int, count: int):
    files = [(p, False) for p in corpus_files("pp")] + [(p, True) for p in corpus_files("epp")]
    rnd = random.Random(seed)
    made = 0
    while made < count:
        path, epp = rnd.choice(files)
        with open(path, encoding="utf-8") as f:
            src = f.read()
        if src:  # (empty files are skipped: count is the number of damaged inputs)
            made += 1
            yield path, epp, src, mutate(src, rnd)


def _check_no_crash(path: str, epp: bool, src: str, damaged: str):
    """parse, validate and the incremental parser (the damage applied as an edit) never raise."""
    from puppet_xpp.grammar.check import CheckConfig
    from puppet_xpp.grammar.incremental import IncrementalParser
    from puppet_xpp.grammar.validator import validate

    res = parse(damaged, path, epp=epp)
    if res.program is not None:
        validate(res.program, file=path)
    p = IncrementalParser(src, CheckConfig(file=path, epp=epp))
    p.update()
    old, new = src.encode(), damaged.encode()
    a = 0
    while a < min(len(old), len(new)) and old[a] == new[a]:
        a += 1
    e = 0
    while e < min(len(old), len(new)) - a and old[-1 - e] == new[-1 - e]:
        e += 1
    p.edit(a, len(old) - e, new[a : len(new) - e].decode("utf-8", "surrogateescape"))
    p.update()
    assert p.stats.get("mode") != "crashed", (path, p.parse_diagnostics())
    p.validation_diagnostics()
    return res


@pytest.mark.corpus
def test_mutation_campaign(oracle):
    import os
    import time

    if not corpus_files("pp"):
        pytest.skip("corpus not installed")
    seconds = float(os.environ.get("PUPPET_XPP_MUTATION_SECONDS", "40"))
    count = int(os.environ.get("PUPPET_XPP_MUTATIONS", "400"))
    seed = int(os.environ.get("PUPPET_XPP_MUTATION_SEED", "10"))
    deadline = time.monotonic() + seconds
    batch: list = []
    done = compared = 0
    epp_done = epp_compared = 0  # templates: part of the same run, counted apart for the report
    failures: list = []

    def flush():
        nonlocal compared, epp_compared
        answers = oracle.request_many("parse", [{"source": d, "epp": epp} for _p, epp, d, _r in batch])
        for (path, epp, damaged, res), want in zip(batch, answers):
            if want.get("ok") or want.get("class") not in (
                "Puppet::ParseErrorWithIssue",
                "Puppet::ParseError",
            ):
                continue  # accepted (validation is another test's) or Puppet itself crashed
            compared += 1
            epp_compared += epp
            first = _first_error(res)
            got = None if first is None else (first.message, first.line_col(res.locator))
            exp = (want["error"], (want.get("line"), want.get("pos")))
            if want.get("line") is None and got is not None:
                got = (got[0], exp[1])
            if got != exp:
                failures.append((path, epp, damaged, got, exp))
        batch.clear()

    for path, epp, src, damaged in _mutation_inputs(seed, count):
        res = _check_no_crash(path, epp, src, damaged)
        batch.append((path, epp, damaged, res))
        done += 1
        epp_done += epp
        if len(batch) >= 50:
            flush()
        if time.monotonic() > deadline:
            break
    flush()
    print(
        f"mutation campaign: seed {seed}, {done} inputs ({epp_done} EPP), {compared} compared with Puppet"
        f" ({epp_compared} EPP), {len(failures)} differ ({sum(1 for f in failures if f[1])} EPP)"
    )
    dump = os.environ.get("PUPPET_XPP_MUTATION_DUMP")
    if dump:  # every differing input, one JSON line each (to minimise and add as table cases)
        import json

        with open(dump, "w", encoding="utf-8") as f:
            for path, epp, damaged, got, exp in failures:
                f.write(
                    json.dumps({"path": path, "epp": epp, "src": damaged, "got": got, "want": exp}) + "\n"
                )
    assert not failures, failures[:5]
