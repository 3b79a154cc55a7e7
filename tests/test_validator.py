"""Static validation conformance: our diagnostics against Puppet 7's validator (through the oracle).

For every snippet of tests/validator_cases.py and every corpus file, the list of (severity, code, line,
column) must equal Puppet's, and so must the message and the offset/length of every validator diagnostic
(except the heredoc syntax checkers' messages, which embed Ruby's JSON/parser error texts).  The table
cases also assert that Puppet reports the expected code (or nothing), so each issue code the validator
can raise has at least one negative case whose expectation comes from Puppet.  Issue codes that no source
text can reach are checked on hand-built models against the message texts of Puppet's issues.rb.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from puppet_xpp.grammar import ast as A
from puppet_xpp.grammar.issues import ISSUES
from puppet_xpp.grammar.parser import parse
from puppet_xpp.grammar.validator import Checker, validate
from tests.conformance.corpus import corpus_files, corpus_modulepath
from tests.conformance.oracle import OracleError
from tests.validator_cases import CASES, UNREACHABLE

# messages that embed texts of Ruby libraries (JSON parser, Puppet's parser) we do not reproduce verbatim
FOREIGN_DETAIL = {"ILLEGAL_JSON", "ILLEGAL_BASE64", "ILLEGAL_PP", "ILLEGAL_EPP"}
# codes of the validator section of the issue table that only the CLI raises (reading files)
CLI_ONLY = {"NO_SUCH_FILE_OR_DIRECTORY", "UNREADABLE_FILE"}


def _request(src, opts):
    r = {"source": src}
    r.update(opts)
    return r


def ours(src, opts):
    """Our diagnostics for a source, as Puppet's `validate` op lists them (lexer warnings, then the first
    syntax error or the validator's diagnostics)."""
    path = opts.get("path")
    epp = opts.get("epp", bool(path and path.endswith(".epp")))
    tasks = opts.get("tasks", False)
    res = parse(src, file=path or "", epp=epp, tasks=tasks)
    diags = [d for d in res.diagnostics if d.severity != "error"]
    errors = [d for d in res.diagnostics if d.severity == "error"]
    if errors:
        diags.append(errors[0])
    elif res.program is not None:
        diags += validate(
            res.program,
            strict=opts.get("strict", "warning"),
            tasks=tasks,
            file=path,
            modulepath=opts.get("modulepath", ()),
            manifest=opts.get("manifest"),
        )
    out = []
    for d in diags:
        line, col = d.line_col(res.locator)
        out.append(
            {
                "severity": d.severity,
                "code": d.code,
                "message": d.message,
                "line": line,
                "pos": col,
                "offset": d.offset,
                "length": d.length,
            }
        )
    return out


def key(d):
    return (d["severity"], d["code"], d["line"], d["pos"])


def assert_same(mine, theirs, what):
    assert [key(d) for d in mine] == [key(d) for d in theirs], what
    for m, t in zip(mine, theirs):
        if t["code"] in FOREIGN_DETAIL or t["code"] not in ISSUES or t["offset"] is None:
            continue  # lexer/parser diagnostics are the parser's business
        assert (m["message"], m["offset"], m["length"]) == (t["message"], t["offset"], t["length"]), what


def _variants():
    out = []
    for i, (src, code, opts) in enumerate(CASES):
        out.append(pytest.param(i, "base", id=f"{i}-{code or 'ok'}"))
        if "tasks" not in opts:
            out.append(pytest.param(i, "tasks", id=f"{i}-{code or 'ok'}-tasks"))
        if "strict" not in opts and "=>" in src:
            out.append(pytest.param(i, "strict-error", id=f"{i}-{code or 'ok'}-strict-error"))
            out.append(pytest.param(i, "strict-off", id=f"{i}-{code or 'ok'}-strict-off"))
    return out


def _opts(i, variant):
    src, code, opts = CASES[i]
    opts = dict(opts)
    if variant == "tasks":
        opts["tasks"] = True
    elif variant == "strict-error":
        opts["strict"] = "error"
    elif variant == "strict-off":
        opts["strict"] = "off"
    return src, code, opts


@pytest.fixture(scope="module")
def puppet_answers(oracle):
    """All table answers in one pipelined batch (then cached on disk)."""
    params = [p.values for p in _variants()]
    reqs = [_request(*_opts(i, v)[::2]) for i, v in params]
    answers = oracle.call_many("validate", reqs)
    return dict(zip(params, answers))


@pytest.mark.parametrize("i,variant", [p for p in _variants()])
def test_case(i, variant, puppet_answers):
    src, code, opts = _opts(i, variant)
    theirs = puppet_answers[(i, variant)]
    if isinstance(theirs, OracleError):
        pytest.fail(f"oracle failed: {theirs}")
    if variant == "base":
        codes = [d["code"] for d in theirs]
        # the table's own claim, checked against Puppet
        assert (code in codes) if code else codes == [], (src, theirs)
    assert_same(ours(src, opts), theirs, (src, opts))


def _validator_codes():
    text = Path(__file__).resolve().parents[1].joinpath("grammar", "issues.py").read_text()
    section = text.split("# --- validator ---", 1)[1].split("# --- end validator ---", 1)[0]
    return set(re.findall(r'^issue\("([A-Z_0-9]+)"', section, re.M))


def test_every_validator_code_has_a_negative_case():
    covered = {code for _, code, _ in CASES if code}
    missing = _validator_codes() - covered - UNREACHABLE - CLI_ONLY
    assert not missing, f"issue codes without a Puppet-checked negative case: {sorted(missing)}"


# ------------------------------------------------------------------------------------------------ settings


def test_strict_setting_sets_duplicate_key_severity():
    res = parse("$a = {a => 1, a => 2}")
    assert [d.severity for d in validate(res.program)] == ["warning"]
    assert [d.severity for d in validate(res.program, strict="error")] == ["error"]
    assert validate(res.program, strict="off") == []
    with pytest.raises(ValueError):
        validate(res.program, strict="loud")


def test_location_file_defaults_to_the_locator_file():
    src = "include foo"
    res = parse(src, file="/m/aaa/manifests/init.pp")
    assert [d.code for d in validate(res.program, modulepath=["/m"])] == ["ILLEGAL_TOP_CONSTRUCT_LOCATION"]
    assert validate(res.program, modulepath=["/m"], file="/other/init.pp") == []
    assert validate(res.program) == []


def test_no_program_no_diagnostics():
    assert validate(None) == []


# ------------------------------------------------------------------------------------------------ unreachable codes
# Puppet's grammar never produces these models; the expected texts are those of Puppet's issues.rb.


def _loc(text="x"):
    return A.make_locator(text, "")


def _make_program(body, loc):
    prog = A.TYPES["Program"].__new__(A.TYPES["Program"])
    prog.body, prog.definitions, prog.locator = body, [], loc
    return prog


def _n(name, **kw):
    cls = A.TYPES[name]
    obj = cls.__new__(cls)
    for f in cls._fields:
        setattr(obj, f, kw.get(f, cls._defaults.get(f)))
    if obj.offset is None:
        obj.offset = 0
    if obj.length is None:
        obj.length = 1
    if obj.locator is None:
        obj.locator = _loc()
    return obj


def test_unsupported_assignment_operator():
    a = _n(
        "AssignmentExpression",
        operator="*=",
        left_expr=_n("VariableExpression", expr=_n("QualifiedName", value="a")),
        right_expr=_n("LiteralInteger", value=1),
    )
    d = validate(_make_program(a, _loc()))
    assert [(x.code, x.message) for x in d] == [
        ("UNSUPPORTED_OPERATOR", "The operator '*=' is not supported.")
    ]


def test_illegal_assignment_via_index():
    c = Checker()
    c.assign(_n("LiteralInteger", value=1), True)
    assert [(x.code, x.message) for x in c.diagnostics] == [
        (
            "ILLEGAL_ASSIGNMENT_VIA_INDEX",
            "Illegal attempt to assign to a Literal Integer via [index/key]. Not an assignable reference",
        )
    ]


def test_unfold_operator_outside_a_resource():
    op = _n("AttributesOperation", expr=_n("LiteralHash", entries=[]))
    body = _n("ResourceBody", title=_n("LiteralString", value="t"), operations=[op])
    block = _n("BlockExpression", statements=[body])
    d = validate(_make_program(block, _loc()))
    assert [(x.code, x.message) for x in d] == [
        ("UNSUPPORTED_OPERATOR_IN_CONTEXT", "The operator '* =>' in a Block Expression is not supported.")
    ]


def test_illegal_class_reference():
    d = validate(_make_program(_n("QualifiedReference", cased_value="foo"), _loc()))
    assert [(x.code, x.message) for x in d] == [
        (
            "ILLEGAL_CLASSREF",
            "Illegal type reference. The given name 'foo' does not conform to the naming rule",
        )
    ]


# ------------------------------------------------------------------------------------------------ corpus


def _corpus():
    files = corpus_files("pp") + corpus_files("epp")
    return files or [pytest.param(None, marks=pytest.mark.skip(reason="corpus not installed"))]


@pytest.fixture(scope="module")
def corpus_answers(oracle):
    files = corpus_files("pp") + corpus_files("epp")
    mp = corpus_modulepath()
    answers = oracle.call_many("validate", [{"file": f, "modulepath": mp} for f in files])
    return dict(zip(files, answers))


@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus())
def test_corpus(path, corpus_answers):
    theirs = corpus_answers[path]
    if isinstance(theirs, OracleError):
        pytest.fail(f"oracle failed: {theirs}")
    with open(path, encoding="utf-8") as f:
        src = f.read()
    opts = {"path": path, "modulepath": corpus_modulepath(), "epp": path.endswith(".epp")}
    assert_same(ours(src, opts), theirs, path)


# ------------------------------------------------------------------------------------------------ contexts
# Every table snippet again, placed in the containers that change what the checks see (bodies, blocks,
# lambdas, apply, values, parameter defaults, interpolation). Snippets that become syntax errors in a context
# are skipped (Puppet does not validate them); all others must agree with Puppet.

WRAPS = [
    "class w { %s }",
    "define w { %s }",
    "if $c { %s }",
    "if $c { $q = 1 %s }",
    "unless $c { %s } else { %s }",
    "foo() |$z| { %s }",
    "node n { %s }",
    "function f() { %s }",
    "case $c { 1: { %s } default: { %s } }",
    "$v = [%s]",
    "%s\n%s",
    "apply(t) { %s }",
    "plan p() { %s }",
    "$v = $c ? { default => %s }",
    "notice(%s)",
    "$h = { k => %s }",
    "[%s] -> [%s]",
    "class w($p = %s) { }",
    '"${%s}"',
]


def _wrapped(wrap):
    out = []
    for src, _code, opts in CASES:
        if opts.get("epp") or "path" in opts:
            continue
        tasks = opts.get("tasks", False) or wrap.startswith(("apply", "plan"))
        out.append((wrap.replace("%s", src), dict(opts, tasks=tasks)))
    return out


def _assert_all_like_puppet(oracle, cases):
    """Our diagnostics equal Puppet's for each (source, options) Puppet parses; most must compare."""
    answers = oracle.call_many("validate", [_request(src, opts) for src, opts in cases])
    compared = 0
    for (src, opts), theirs in zip(cases, answers):
        assert not isinstance(theirs, OracleError), (src, theirs)
        if any(d["code"] in (None, "SYNTAX_ERROR") for d in theirs):
            continue
        assert_same(ours(src, opts), theirs, (src, opts))
        compared += 1
    assert compared > len(cases) // 2


@pytest.mark.parametrize("wrap", WRAPS)
def test_case_in_context(wrap, oracle):
    _assert_all_like_puppet(oracle, _wrapped(wrap))


def test_parser_case_table_validates_like_puppet(oracle):
    """The parser's construct table (tests/parser_cases.py), validated: no syntax errors there, so every
    diagnostic is the validator's."""
    parser_cases = pytest.importorskip("tests.parser_cases")
    cases = [(s, {}) for s in parser_cases.CASES] + [(s, {"tasks": True}) for s in parser_cases.TASK_CASES]
    _assert_all_like_puppet(oracle, cases)


def test_deep_nesting_falls_back_to_the_iterative_walk(oracle):
    src = "notice(" + "(" * 1200 + "File <| |>" + ")" * 1200 + " + 1)"
    theirs = oracle.call("validate", source=src)
    assert {d["code"] for d in theirs} == {"NOT_RVALUE"} and len(theirs) > 1000
    assert_same(ours(src, {}), theirs, "deep")


def test_random_combinations(oracle):
    """Table snippets combined and nested at random (fixed seed), with random strict/tasks settings."""
    import random

    rnd = random.Random(7)
    snippets = [s for s, _c, o in CASES if not o.get("epp") and "path" not in o and "END" not in s]
    cases = []
    for _ in range(600):
        src = rnd.choice(snippets)
        for _ in range(rnd.randint(1, 3)):
            extra = src if rnd.random() < 0.7 else src + " " + rnd.choice(snippets)
            src = rnd.choice(WRAPS).replace("%s", extra)
        tasks = rnd.random() < 0.3 or "apply" in src or "plan" in src
        cases.append((src, {"tasks": tasks, "strict": rnd.choice(["off", "warning", "error"])}))
    answers = oracle.call_many("validate", [_request(src, opts) for src, opts in cases])
    compared = 0
    for (src, opts), theirs in zip(cases, answers):
        if isinstance(theirs, OracleError) or any(d["code"] in (None, "SYNTAX_ERROR") for d in theirs):
            continue
        assert_same(ours(src, opts), theirs, (src, opts))
        compared += 1
    assert compared > 300


@pytest.mark.corpus
@pytest.mark.parametrize(
    "settings",
    [{"tasks": True}, {"strict": "error"}, {"tasks": True, "strict": "off"}],
    ids=["tasks", "strict-error", "tasks-strict-off"],
)
def test_corpus_with_settings(settings, oracle):
    files = corpus_files("pp") + corpus_files("epp")
    if not files:
        pytest.skip("corpus not installed")
    mp = corpus_modulepath()
    answers = oracle.call_many("validate", [dict(file=f, modulepath=mp, **settings) for f in files])
    for path, theirs in zip(files, answers):
        assert not isinstance(theirs, OracleError), (path, theirs)
        with open(path, encoding="utf-8") as f:
            src = f.read()
        assert_same(
            ours(src, dict(path=path, modulepath=mp, epp=path.endswith(".epp"), **settings)), theirs, path
        )
