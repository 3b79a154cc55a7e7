"""Formatting (lint.format: every lint fix + indentation + arrow alignment), judged by Puppet and
by puppet-lint: formatting keeps Puppet's parse (PN) when only layout fixes are enabled, is idempotent,
and leaves nothing for puppet-lint's whitespace checks to report."""

from __future__ import annotations

from typing import Any

import pytest

from puppet_xpp.lint.format import format_manifest
from tests.conformance.corpus import corpus_files
from tests.test_lint_conformance import CHANGES_PARSE, FIXABLE, puppet_parse

LAYOUT_ONLY = {c for c in FIXABLE if c not in CHANGES_PARSE}
WHITESPACE_CHECKS = ["arrow_alignment", "2sp_soft_tabs", "hard_tabs", "trailing_whitespace"]

SAMPLES = [
    "class foo(\n$a = 1,\n) {\n      file { 'x':\n    ensure => present,\n     mode => '0644',\n   }\n\n"
    '    if $a {\n  notice("hi ${a}")   \n  }\n}\n',
    "file {\n  'a':\n  ensure => file;\n'b':\n      ensure => absent,\n    mode => '0644';\n}\n",
    "$x = @(END)\n      keep   me\n    | END\nnotice(\n      $x,\n  )\n",
    "if $a and\n     $b {\n\tnotice('x')\n}\n",
    "Package['a']\n    -> Service['b']\n$h = {\n'a' => 1,\n    'bb' => { 'c' => 2,\n 'dd' => 3 },\n}\n",
]


def _check(oracle: Any, name: str, text: str) -> list[str]:
    bad = []
    out = format_manifest(text, path=name, enabled=LAYOUT_ONLY)
    if format_manifest(out, path=name, enabled=LAYOUT_ONLY) != out:
        bad.append(f"{name}: formatting twice changes the text")
    if out != text and puppet_parse(oracle, out) != puppet_parse(oracle, text):
        bad.append(f"{name}: formatting changes Puppet's parse:\n{out}")
    if out != text:
        answer = oracle.request("lint", source=out, path=name, checks=WHITESPACE_CHECKS)
        left = [p for p in answer["result"]["problems"] if p["kind"] != "ignored"]
        if left:
            bad.append(f"{name}: puppet-lint still reports {left}")
    return bad


def test_samples(oracle: Any) -> None:
    bad = []
    for n, text in enumerate(SAMPLES):
        assert format_manifest(text, enabled=LAYOUT_ONLY) != text
        bad += _check(oracle, f"sample{n}.pp", text)
    assert bad == []


@pytest.mark.corpus
def test_corpus(oracle: Any) -> None:
    files = corpus_files("pp")
    if not files:
        pytest.skip("corpus not installed")
    bad = []
    for f in files:
        bad += _check(oracle, f, open(f, encoding="utf-8").read())
    assert bad == []
