"""Parser conformance: our AST against Debian's Puppet 7 (PN structure and every node's byte position).

Expected answers come from real Puppet through the project's oracle (tests/conformance/ruby/oracle.rb).
Two sets: a table of small cases covering every construct of language.md §1–§2, and every corpus manifest.
"""

from __future__ import annotations

import base64

import pytest

from puppet_xpp.grammar import ast, pn
from puppet_xpp.grammar.parser import parse
from puppet_xpp.xpp import pcore
from tests.conformance.corpus import corpus_files
from tests.parser_cases import CASES, ERROR_CASES, TASK_CASES

PARSE_ERRORS = ("Puppet::ParseErrorWithIssue", "Puppet::ParseError")


def our_positions(program):
    out = []
    for n in ast.walk(program):
        if type(n) is ast.Program:
            out.append(["Program", None, None])
        else:
            out.append([n._name, n.offset, n.length])
    return out


def our_pn(program):
    return pn.to_data(pn.transform(program))


def check_same(src, oracle, *, epp=False, tasks=False, path=None, full_model=True):
    path = path or ("case.epp" if epp else "case.pp")  # (the Locator's file is part of the full model)
    args = {"source": src, "epp": epp, "tasks": tasks, "path": path}
    res = parse(src, path, epp=epp, tasks=tasks)
    want = oracle.request("pn", **args)
    errors = [d for d in res.diagnostics if d.severity == "error"]
    if not want["ok"] and want.get("class") not in PARSE_ERRORS:
        # Puppet parsed it but its PN dump crashes (captures-rest parameters, `apply`): compare positions.
        assert not errors, f"Puppet parses but we report {errors}: {src!r}"
        assert our_positions(res.program) == oracle.call("positions", **args), src
        return
    if not want["ok"]:
        assert errors, f"Puppet rejects ({want.get('error')}) but we accept: {src!r}"
        first = errors[0]
        line, col = first.line_col(res.locator)
        if want.get("issue_code"):
            assert first.code == want["issue_code"], (src, first, want)
        else:
            assert first.message == want["error"], (src, first, want)
        if want.get("line") is None:  # Puppet gives no position at the end of the input
            assert first.offset == len(src.encode()), (src, first, want)
        else:
            assert (line, col) == (want["line"], want["pos"]), (src, first, want)
        return
    assert not errors, f"Puppet accepts but we report {errors}: {src!r}"
    assert our_pn(res.program) == want["result"], src
    assert our_positions(res.program) == oracle.call("positions", **args), src
    if full_model:
        # every attribute (regexp patterns, radixes, flags, forms...), through Puppet's own serializer
        theirs = base64.b64decode(oracle.call("pcore_write", format="msgpack", **args)["bytes"])
        assert pcore.dumps(res.program, "msgpack") == theirs, src


@pytest.mark.parametrize("src", CASES)
def test_case(src, oracle):
    check_same(src, oracle)


@pytest.mark.parametrize("src", TASK_CASES)
def test_tasks_case(src, oracle):
    check_same(src, oracle, tasks=True)


@pytest.mark.parametrize("src", ERROR_CASES)
def test_error_case(src, oracle):
    check_same(src, oracle)


def _corpus_params(kind):
    files = corpus_files(kind)
    return files or [pytest.param(None, marks=pytest.mark.skip(reason="corpus not installed"))]


@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus_params("pp"))
def test_corpus_pp(path, oracle):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    check_same(src, oracle, path=path)


@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus_params("epp"))
def test_corpus_epp(path, oracle):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    check_same(src, oracle, epp=True, path=path)
