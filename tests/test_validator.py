"""Static validation conformance: our diagnostics against Puppet's validator (through the oracle), at every
language level: 7.23 against Puppet 7.23, 8 against OpenVox 8.28.1 with its default strict=error, 7 (the
newer checker with strict=warning) against OpenVox with strict=warning.

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

from puppet_xpp.grammar import ast, levels
from puppet_xpp.grammar.issues import ISSUES
from puppet_xpp.grammar.parser import parse
from puppet_xpp.grammar.validator import Checker, validate
from tests.conformance.corpus import corpus_files, corpus_modulepath
from tests.conformance.oracle import OracleError, oracle_for
from tests.validator_cases import CASES, NEWER_CASES, RUBY_ERROR_CASES, UNREACHABLE

# messages that embed texts of Ruby libraries (JSON parser, Puppet's parser) we do not reproduce verbatim
FOREIGN_DETAIL = {"ILLEGAL_JSON", "ILLEGAL_BASE64", "ILLEGAL_PP", "ILLEGAL_EPP"}
# codes of the validator section of the issue table that only the CLI raises (reading files)
# (and the per-file failures of the batch modes: an internal error, a source that is not UTF-8)
CLI_ONLY = {"NO_SUCH_FILE_OR_DIRECTORY", "UNREADABLE_FILE", "INTERNAL_ERROR", "INVALID_ENCODING"}


# the Puppet that answers for each language level (level 7 = OpenVox's checker with strict=warning)
LEVEL_PUPPET = {"7.23": "7.23", "7": "8", "8": "8"}
NEWER = ("8", "7")


def _request(src, opts, level="7.23"):
    """The oracle request for a source at a level: the level's default strict made explicit (the op's own
    default is warning, so 7.23's requests stay as they were)."""
    r = {"source": src}
    r.update(opts)
    strict = levels.resolve_strict(level, opts.get("strict"))
    if strict != "warning":
        r["strict"] = strict
    else:
        r.pop("strict", None)
    return r


def ours(src, opts, level="7.23"):
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
            strict=opts.get("strict"),
            level=level,
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


def _opts(i, variant, table=CASES):
    src, code, opts = table[i]
    opts = dict(opts)
    if variant == "tasks":
        opts["tasks"] = True
    elif variant == "strict-error":
        opts["strict"] = "error"
    elif variant == "strict-off":
        opts["strict"] = "off"
    return src, code, opts


_ANSWERS: dict = {}


def _table_answers(level, table=CASES, variants=_variants):
    """All answers of a table at a level in one pipelined batch (then cached on disk)."""
    key = (level, id(table))
    if key not in _ANSWERS:
        oracle = oracle_for(LEVEL_PUPPET[level])
        params = [p.values for p in variants()]
        reqs = [_request(src, opts, level) for src, _c, opts in (_opts(i, v, table) for i, v in params)]
        _ANSWERS[key] = dict(zip(params, oracle.call_many("validate", reqs)))
    return _ANSWERS[key]


@pytest.mark.parametrize("level", list(levels.LEVELS))
@pytest.mark.parametrize("i,variant", [p for p in _variants()])
def test_case(level, i, variant):
    src, code, opts = _opts(i, variant)
    theirs = _table_answers(level)[(i, variant)]
    if isinstance(theirs, OracleError):
        pytest.fail(f"oracle failed: {theirs}")
    if variant == "base" and level == "7.23":
        codes = [d["code"] for d in theirs]
        # the table's own claim, checked against Puppet
        assert (code in codes) if code else codes == [], (src, theirs)
    assert_same(ours(src, opts, level), theirs, (src, opts, level))


def _newer_variants():
    return [
        pytest.param(i, v, id=f"{i}-{c or 'ok'}-{v}")
        for i, (_s, c, _o) in enumerate(NEWER_CASES)
        for v in ("base", "tasks")
    ]


@pytest.mark.parametrize("level", list(levels.LEVELS))
@pytest.mark.parametrize("i,variant", _newer_variants())
def test_newer_checker_case(level, i, variant):
    """The newer checker's table: its claims hold for OpenVox 8; every level equals its Puppet."""
    src, code, opts = _opts(i, variant, NEWER_CASES)
    theirs = _table_answers(level, NEWER_CASES, _newer_variants)[(i, variant)]
    if isinstance(theirs, OracleError):
        pytest.fail(f"oracle failed: {theirs}")
    if variant == "base" and level == "8":
        codes = [d["code"] for d in theirs]
        assert (code in codes) if code else codes == [], (src, theirs)
    assert_same(ours(src, opts, level), theirs, (src, opts, level))


@pytest.mark.parametrize("level", list(levels.LEVELS))
@pytest.mark.parametrize("src,ruby_class", RUBY_ERROR_CASES)
def test_ruby_error_of_puppet_is_our_diagnostic(level, src, ruby_class):
    """Where the newer checker makes Puppet fail with a Ruby NoMethodError, we report LITERAL_NEGATION_FAILS
    at the negation (naming the Ruby class Ruby names) and still validate the rest; 7.23 equals Puppet."""
    oracle = oracle_for(LEVEL_PUPPET[level])
    theirs = oracle.request("validate", **_request(src, {}, level))
    mine = ours(src, {}, level)
    if level == "7.23":
        assert theirs.get("ok"), theirs
        assert_same(mine, theirs["result"], src)
        return
    assert not theirs.get("ok") and theirs["class"] == "NoMethodError", theirs
    assert f":{ruby_class}" in theirs["error"], theirs["error"]
    fails = [d for d in mine if d["code"] == "LITERAL_NEGATION_FAILS"]
    assert len(fails) == 1 and fails[0]["severity"] == "error" and ruby_class in fails[0]["message"], mine
    res = parse(src)
    minus = next(n for n in _nodes(res.program) if type(n) is ast.UnaryMinusExpression)
    assert fails[0]["offset"] == minus.offset and fails[0]["length"] == minus.length
    if "b => 3" in src:  # the rest of the hash is still checked
        assert [d["code"] for d in mine].count("DUPLICATE_KEY") == 1


def _nodes(node):
    yield node
    for f in node._child_fields:
        v = getattr(node, f)
        for x in v if isinstance(v, list) else [v] if v is not None else []:
            yield from _nodes(x)


def _validator_codes():
    text = Path(__file__).resolve().parents[1].joinpath("grammar", "issues.py").read_text()
    section = text.split("# --- validator ---", 1)[1].split("# --- end validator ---", 1)[0]
    return set(re.findall(r'^issue\("([A-Z_0-9]+)"', section, re.M))


def test_every_validator_code_has_a_negative_case():
    covered = {code for _, code, _ in CASES + NEWER_CASES if code} | {"LITERAL_NEGATION_FAILS"}
    missing = _validator_codes() - covered - UNREACHABLE - CLI_ONLY
    assert not missing, f"issue codes without a Puppet-checked negative case: {sorted(missing)}"


# ------------------------------------------------------------------------------------------------ settings


def test_strict_setting_sets_duplicate_key_severity():
    res = parse("$a = {a => 1, a => 2}")
    # the default level is 8 (strict error); 7 and 7.23 default to warning; an explicit strict wins
    assert [d.severity for d in validate(res.program)] == ["error"]
    assert [d.severity for d in validate(res.program, level="7")] == ["warning"]
    assert [d.severity for d in validate(res.program, level="7.23")] == ["warning"]
    assert [d.severity for d in validate(res.program, strict="warning")] == ["warning"]
    assert [d.severity for d in validate(res.program, level="7.23", strict="error")] == ["error"]
    assert validate(res.program, strict="off") == []
    with pytest.raises(ValueError):
        validate(res.program, strict="loud")
    with pytest.raises(ValueError):
        validate(res.program, level="6")


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
    return ast.make_locator(text, "")


def _make_program(body, loc):
    prog = ast.Program.__new__(ast.Program)
    prog.body, prog.definitions, prog.locator = body, [], loc
    return prog


def _n(cls, **kw):
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
        ast.AssignmentExpression,
        operator="*=",
        left_expr=_n(ast.VariableExpression, expr=_n(ast.QualifiedName, value="a")),
        right_expr=_n(ast.LiteralInteger, value=1),
    )
    d = validate(_make_program(a, _loc()))
    assert [(x.code, x.message) for x in d] == [
        ("UNSUPPORTED_OPERATOR", "The operator '*=' is not supported.")
    ]


def test_illegal_assignment_via_index():
    c = Checker()
    c.assign(_n(ast.LiteralInteger, value=1), True)
    assert [(x.code, x.message) for x in c.diagnostics] == [
        (
            "ILLEGAL_ASSIGNMENT_VIA_INDEX",
            "Illegal attempt to assign to a Literal Integer via [index/key]. Not an assignable reference",
        )
    ]


def test_unfold_operator_outside_a_resource():
    op = _n(ast.AttributesOperation, expr=_n(ast.LiteralHash, entries=[]))
    body = _n(ast.ResourceBody, title=_n(ast.LiteralString, value="t"), operations=[op])
    block = _n(ast.BlockExpression, statements=[body])
    d = validate(_make_program(block, _loc()))
    assert [(x.code, x.message) for x in d] == [
        ("UNSUPPORTED_OPERATOR_IN_CONTEXT", "The operator '* =>' in a Block Expression is not supported.")
    ]


def test_illegal_class_reference():
    d = validate(_make_program(_n(ast.QualifiedReference, cased_value="foo"), _loc()))
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


def _assert_all_like_puppet(oracle, cases, level="7.23"):
    """Our diagnostics equal Puppet's for each (source, options) Puppet parses; most must compare."""
    answers = oracle.call_many("validate", [_request(src, opts, level) for src, opts in cases])
    compared = 0
    for (src, opts), theirs in zip(cases, answers):
        assert not isinstance(theirs, OracleError), (src, theirs)
        if any(d["code"] in (None, "SYNTAX_ERROR") for d in theirs):
            continue
        assert_same(ours(src, opts, level), theirs, (src, opts, level))
        compared += 1
    assert compared > len(cases) // 2


@pytest.mark.parametrize("level", list(levels.LEVELS))
@pytest.mark.parametrize("wrap", WRAPS)
def test_case_in_context(wrap, level):
    _assert_all_like_puppet(oracle_for(LEVEL_PUPPET[level]), _wrapped(wrap), level)


@pytest.mark.parametrize("level", list(levels.LEVELS))
def test_parser_case_table_validates_like_puppet(level):
    """The parser's construct table (tests/parser_cases.py), validated: no syntax errors there, so every
    diagnostic is the validator's."""
    parser_cases = pytest.importorskip("tests.parser_cases")
    cases = [(s, {}) for s in parser_cases.CASES] + [(s, {"tasks": True}) for s in parser_cases.TASK_CASES]
    _assert_all_like_puppet(oracle_for(LEVEL_PUPPET[level]), cases, level)


def test_deep_nesting_falls_back_to_the_iterative_walk(oracle):
    src = "notice(" + "(" * 1200 + "File <| |>" + ")" * 1200 + " + 1)"
    theirs = oracle.call("validate", source=src)
    assert {d["code"] for d in theirs} == {"NOT_RVALUE"} and len(theirs) > 1000
    assert_same(ours(src, {}), theirs, "deep")


@pytest.mark.parametrize("level", list(levels.LEVELS))
def test_random_combinations(level):
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
    oracle = oracle_for(LEVEL_PUPPET[level])
    answers = oracle.call_many("validate", [_request(src, opts, level) for src, opts in cases])
    compared = 0
    for (src, opts), theirs in zip(cases, answers):
        if isinstance(theirs, OracleError) or any(d["code"] in (None, "SYNTAX_ERROR") for d in theirs):
            continue
        assert_same(ours(src, opts, level), theirs, (src, opts, level))
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


@pytest.mark.corpus
@pytest.mark.parametrize("level", NEWER)
@pytest.mark.parametrize(
    "settings", [{}, {"tasks": True}, {"strict": "off"}], ids=["default", "tasks", "strict-off"]
)
def test_corpus_at_newer_level(level, settings):
    """Every corpus manifest and template at levels 8 and 7 against OpenVox 8 (with the level's strict)."""
    files = corpus_files("pp") + corpus_files("epp")
    if not files:
        pytest.skip("corpus not installed")
    oracle = oracle_for(LEVEL_PUPPET[level])
    mp = corpus_modulepath()
    reqs = [dict(file=f, modulepath=mp, **settings) for f in files]
    for r in reqs:
        strict = levels.resolve_strict(level, r.get("strict"))
        r.pop("strict", None)
        if strict != "warning":
            r["strict"] = strict
    answers = oracle.call_many("validate", reqs)
    for path, theirs in zip(files, answers):
        assert not isinstance(theirs, OracleError), (path, theirs)
        with open(path, encoding="utf-8") as f:
            src = f.read()
        opts = dict(path=path, modulepath=mp, epp=path.endswith(".epp"), **settings)
        assert_same(ours(src, opts, level), theirs, (path, level))
