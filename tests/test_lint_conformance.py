"""lint against puppet-lint 3.0.1 (the oracle op ``lint``): the same problems (check, kind, message,
line, column, reason) in the same order, and byte-identical ``--fix`` output, on every corpus manifest and
on the table of small cases in ``tests/lint/cases.py``; plus the properties of our fixes (idempotent; a
fix keeps Puppet's parse of the manifest unless changing it is the check's purpose), judged by Puppet."""

from __future__ import annotations

import re
from typing import Any

import pytest

from puppet_xpp.lint.run import all_checks, lint
from tests.conformance.corpus import corpus_files
from tests.lint.cases import CASES, DEVIATIONS, PATHS

ALL = [c.name for c in all_checks()]
FIXABLE = [c.name for c in all_checks() if c.fix is not None]
# checks whose fix is meant to change the parse (quoting, renaming, reordering, new attributes; a `//`
# "comment" is code to Puppet until slash_comments makes it one)
CHANGES_PARSE = {
    "slash_comments",
    "names_containing_uppercase",
    "unquoted_node_name",
    "ensure_first_param",
    "ensure_not_symlink_target",
    "file_mode",
    "unquoted_file_mode",
    "unquoted_resource_title",
    "only_variable_string",
    "puppet_url_without_modules",
    "quoted_booleans",
}


def puppet_parse(oracle: Any, text: str) -> Any:
    """Puppet's parse of a text, as comparable data (the PN, or the syntax error)."""
    a = oracle.request("pn", source=text)
    return a.get("result") if a.get("ok") else ("error", a.get("error"))


def _theirs(answer: dict[str, Any]) -> dict[str, Any]:
    assert answer["ok"], answer
    result: dict[str, Any] = answer["result"]
    assert result["crashed"] is None, result["crashed"]
    result["problems"] = [{k: v for k, v in p.items() if v is not None} for p in result["problems"]]
    return result


def _compare(
    oracle: Any, items: list[tuple[str, str, str]], checks: list[str] | None, fix: bool
) -> list[str]:
    """Lint (name, text, path) items with us and with puppet-lint; descriptions of the differences.
    Without ``fix``, each text is linted both with its tokens as objects and in columns (lint.columns,
    what a large manifest gets), each compared with puppet-lint."""
    reqs = [{"source": text, "path": path, "checks": checks, "fix": fix} for _n, text, path in items]
    answers = oracle.request_many("lint", reqs)
    bad = []
    for (name, text, path), answer in zip(items, answers):
        theirs = _theirs(answer)
        enabled = None if checks is None else set(checks)
        for columns in (False,) if fix else (False, True):
            ours = lint(text, path=path, enabled=enabled, fix=fix, columns=columns)
            mine = [p.as_json() for p in ours.problems]
            if mine != theirs["problems"]:
                how = " (in columns)" if columns else ""
                bad.append(f"{name}{how}: problems differ:\n  ours   {mine}\n  theirs {theirs['problems']}")
        if fix and ours.fixed != theirs["manifest"]:
            bad.append(f"{name}: fix differs:\n  ours   {ours.fixed!r}\n  theirs {theirs['manifest']!r}")
    return bad


def _cases() -> list[tuple[str, str, str]]:
    return [(n, s, PATHS.get(n, "init.pp")) for n, s in CASES]


def test_cases_all_checks(oracle: Any) -> None:
    """Every check on (including those off by default): problems equal; fixes equal except DEVIATIONS."""
    assert _compare(oracle, _cases(), ALL, False) == []
    assert _compare(oracle, [c for c in _cases() if c[0] not in DEVIATIONS], ALL, True) == []


def test_cases_default_checks(oracle: Any) -> None:
    assert _compare(oracle, _cases(), None, False) == []
    assert _compare(oracle, [c for c in _cases() if c[0] not in DEVIATIONS], None, True) == []


@pytest.mark.parametrize("relative", [False, True])
def test_autoloader_layout_paths(oracle: Any, relative: bool) -> None:
    text = "# doc\nclass foo::bar {\n}\n# doc\ndefine foo() {\n}\n"
    paths = [
        "foo/manifests/bar.pp",
        "modules/foo/manifests/bar.pp",
        "manifests/bar.pp",
        "x/foo/init.pp",
        "bar.pp",
    ]
    answers = oracle.request_many(
        "lint",
        [{"source": text, "path": p, "relative": relative, "checks": ["autoloader_layout"]} for p in paths],
    )
    for path, answer in zip(paths, answers):
        ours = lint(text, path=path, enabled={"autoloader_layout"}, relative=relative)
        assert [p.as_json() for p in ours.problems] == _theirs(answer)["problems"], path


def test_deviations_keep_the_meaning(oracle: Any) -> None:
    """Where our fix differs from puppet-lint's, Puppet parses puppet-lint's result differently from the
    source (or not at all), and ours the same as the source."""
    cases = {n: (s, p) for n, s, p in _cases()}
    for name in DEVIATIONS:
        text, path = cases[name]
        theirs = _theirs(oracle.request("lint", source=text, path=path, fix=True))["manifest"]
        ours = lint(text, path=path, fix=True).fixed
        assert ours is not None and ours != theirs, name
        source_pn = puppet_parse(oracle, text)
        assert puppet_parse(oracle, theirs) != source_pn, name
        assert puppet_parse(oracle, ours) == source_pn, name


def _fix_properties(oracle: Any, items: list[tuple[str, str, str]]) -> list[str]:
    bad = []
    for name, text, path in items:
        for check in FIXABLE:
            fixed = lint(text, path=path, enabled={check}, fix=True).fixed
            if fixed is None or fixed == text:
                continue
            again = lint(fixed, path=path, enabled={check}, fix=True).fixed
            if again != fixed:
                bad.append(f"{name}/{check}: fixing twice changes the text: {fixed!r} -> {again!r}")
            if check in CHANGES_PARSE:
                if not oracle.request("parse", source=fixed)["ok"]:
                    bad.append(f"{name}/{check}: Puppet rejects the fixed text {fixed!r}")
            elif puppet_parse(oracle, fixed) != puppet_parse(oracle, text):
                bad.append(f"{name}/{check}: the fix changes Puppet's parse: {fixed!r}")
    return bad


def test_case_fixes_idempotent_and_keep_the_parse(oracle: Any) -> None:
    ok = [c for c in _cases() if oracle.request("parse", source=c[1])["ok"]]
    assert _fix_properties(oracle, ok) == []


@pytest.mark.corpus
def test_corpus_lint(oracle: Any) -> None:
    files = corpus_files("pp")
    if not files:
        pytest.skip("corpus not installed")
    items = [(f, open(f, encoding="utf-8").read(), f) for f in files]
    assert _compare(oracle, items, None, False) == []


@pytest.mark.corpus
def test_corpus_fix(oracle: Any) -> None:
    files = corpus_files("pp")
    if not files:
        pytest.skip("corpus not installed")
    items = [(f, open(f, encoding="utf-8").read(), f) for f in files]
    assert _compare(oracle, items, None, True) == []
    changed = [it for it in items if lint(it[1], path=it[2], fix=True).fixed not in (None, it[1])]
    assert changed, "the corpus has fixable problems: the fix comparison must not be vacuous"
    assert _fix_properties(oracle, changed) == []


def _mutations(text: str) -> list[tuple[str, str]]:
    """Variants of a (lint-clean) corpus file that give the fixes work: arrows out of alignment, plain
    strings double-quoted, tab indentation and trailing blanks, 3-space indentation."""
    return [
        ("arrows", re.sub(r" +=>", " =>", text)),
        ("quotes", re.sub(r"'([^'\"\\$\n]*)'", r'"\1"', text)),
        (
            "tabs",
            re.sub(r"(?m)^(  )+", lambda m: "\t" * (len(m.group()) // 2), text)
            .replace(";\n", "; \n")
            .replace("{\n", "{  \n"),
        ),
        ("indent3", re.sub(r"(?m)^  ", "   ", text)),
    ]


@pytest.mark.corpus
def test_corpus_mutations(oracle: Any) -> None:
    """Every third corpus file, mutated four ways: problems and --fix equal to puppet-lint's; our fix is
    idempotent, and (on a sample) keeps Puppet's parse when only layout/quoting checks fixed something."""
    files = corpus_files("pp")[::3]
    if not files:
        pytest.skip("corpus not installed")
    items = []
    for f in files:
        text = open(f, encoding="utf-8").read()
        items.extend((f"{f}:{k}", v, f) for k, v in _mutations(text) if v != text)
    assert _compare(oracle, items, None, False) == []
    assert _compare(oracle, items, None, True) == []
    bad = []
    for n, (name, text, path) in enumerate(items):
        result = lint(text, path=path, fix=True)
        if result.fixed is None or result.fixed == text:
            continue
        if lint(result.fixed, path=path, fix=True).fixed != result.fixed:
            bad.append(f"{name}: fixing twice changes the text")
        fixed_checks = {p.check for p in result.problems if p.kind == "fixed"}
        if (
            n % 4 == 0
            and not fixed_checks & CHANGES_PARSE
            and puppet_parse(oracle, result.fixed) != puppet_parse(oracle, text)
        ):
            bad.append(f"{name}: the fix changes Puppet's parse ({sorted(fixed_checks)})")
    assert bad == []
