"""The editor side of lint (server/analysis/lint.py), judged by puppet-lint: diagnostics at puppet-lint's
positions; a quick fix removes its problem; "ignore this check on this line" makes puppet-lint report
it as ignored; formatting and on-type alignment leave nothing for puppet-lint's whitespace checks."""

from __future__ import annotations

from typing import Any

from puppet_xpp.server.analysis import lint
from puppet_xpp.server.analysis.workspace import LintSettings
from tests.lint.cases import CASES

SETTINGS = LintSettings()
PATH = "/nonexistent/foo/manifests/init.pp"


def apply(text: str, edits: list[lint.Edit]) -> str:
    """Apply LSP-style edits (utf-16 columns; the tests use ASCII text) from the last to the first."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def off(p: lint.Pos) -> int:
        return min(offsets[p[0]] + p[1], len(text)) if p[0] < len(lines) else len(text)

    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        a, b = off(start), off(end)
        text = text[:a] + new + text[b:]
    return text


def _theirs(oracle: Any, text: str) -> list[dict[str, Any]]:
    answer = oracle.request("lint", source=text, path=PATH)
    assert answer["ok"], answer
    problems: list[dict[str, Any]] = answer["result"]["problems"]
    return problems


def test_diagnostics_at_puppet_lints_positions(oracle: Any) -> None:
    for name, text in CASES:
        if not text.isascii():
            continue
        theirs = [
            (p["line"] - 1, p["column"] - 1, p["check"], p["message"], 1 if p["kind"] == "error" else 2)
            for p in _theirs(oracle, text)
            if p["kind"] in ("warning", "error") and p["check"] != "syntax"
        ]
        ours = [
            (d.start[0], d.start[1], d.code, d.message, d.severity)
            for d in lint.diagnostics(text, PATH, SETTINGS)
        ]
        assert ours == theirs, name
        assert all(d.source == "puppet-lint" for d in lint.diagnostics(text, PATH, SETTINGS))


def test_quick_fixes_and_ignore(oracle: Any) -> None:
    checked = 0
    for name, text in CASES:
        if not text.isascii() or not text.endswith("\n"):
            continue
        lines = text.count("\n")
        for action in lint.code_actions(text, PATH, SETTINGS, ((0, 0), (lines, 0))):
            d = action.diagnostic
            if d is None:
                continue
            after = apply(text, action.edits)
            problems = _theirs(oracle, after)
            if action.title.startswith("Ignore"):
                # reported as ignored now (or gone: trailing blanks are no longer trailing)
                assert not any(
                    p["check"] == d.code and p["kind"] != "ignored" and p["line"] == d.start[0] + 1
                    for p in problems
                ), (name, action.title, after)
            else:
                same = [p for p in problems if p["check"] == d.code and p["message"] == d.message]
                assert len(same) < len([p for p in _theirs(oracle, text) if p["check"] == d.code]), (
                    name,
                    action.title,
                    after,
                )
            checked += 1
    assert checked > 50


def test_formatting_leaves_no_whitespace_problems(oracle: Any) -> None:
    checks = ["arrow_alignment", "2sp_soft_tabs", "hard_tabs", "trailing_whitespace"]
    for name, text in CASES:
        if not text.isascii():
            continue
        edits = lint.formatting(text, PATH, SETTINGS)
        if not edits:
            continue
        after = apply(text, edits)
        answer = oracle.request("lint", source=after, path=PATH, checks=checks)
        if (
            not answer["ok"]
            or answer["result"]["problems"]
            and answer["result"]["problems"][0]["check"] == "syntax"
        ):
            continue
        assert [p for p in answer["result"]["problems"] if p["kind"] != "ignored"] == [], (name, after)


def test_on_type_alignment_and_indent(oracle: Any) -> None:
    text = "file { 'x':\n  ensure => present,\n  mode =>"
    edits = lint.on_type_formatting(text, None, SETTINGS, (2, 9), ">")
    after = apply(text, edits) + " '0644',\n}\n"
    problems = _theirs(oracle, after)
    assert [p for p in problems if p["check"] == "arrow_alignment"] == []
    text = "class foo {\n  file { 'x':\n\n  }\n}\n"
    edits = lint.on_type_formatting(text, None, SETTINGS, (2, 0), "\n")
    after = apply(text, edits).replace("\n\n", "\nensure => present,\n", 1)
    after = apply(text, edits)
    assert after.split("\n")[2] == "    "
