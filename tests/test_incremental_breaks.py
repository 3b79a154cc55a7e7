"""Breaks and repairs in a one-class body, in random order, with edits elsewhere between them: each step
equals a full parse of the same text (tests/test_incremental.py's comparison).

An open quote, double quote, comment or brace typed at the start of a statement line and deleted again;
sometimes a line added or removed further on, or before.  The plain parse a break shows may take the
top-level runs of an earlier break's (grammar.incremental.plain.KeptChunks: kept across the repairs and
edits since, while every edit ends before their first line); a run taken where the text after that
line changed shows up here as a difference from the full parse."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.incremental import IncrementalParser
from tests.test_incremental import check_same, one_class_manifest

_TEXT: list[str] = []


def _text() -> str:
    if not _TEXT:
        _TEXT.append(one_class_manifest(30000))
    if len(_TEXT[0]) < 15000:
        pytest.skip("corpus not installed")
    return _TEXT[0]


def _statement_lines(data: bytes) -> list[int]:
    """Byte offsets of the first character of every body statement line (indented two spaces)."""
    out = []
    at = 0
    for line in data.split(b"\n"):
        if line.startswith(b"  ") and line[2:3].isalpha():
            out.append(at + 2)
        at += len(line) + 1
    return out


step = st.one_of(
    st.tuples(st.just("break"), st.floats(0.2, 0.8), st.sampled_from(["'", '"', "{", "/*", "x"])),
    # (a statement, or a blank line alone: a shift, test_blank_line_in_an_elsif_chain)
    st.tuples(st.just("line"), st.floats(0, 1), st.sampled_from(["\n  $late = 1\n", "  notice(1)\n", "\n"])),
)


@pytest.mark.corpus
@settings(
    max_examples=int(os.environ.get("PUPPET_XPP_HYPOTHESIS_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(step, min_size=2, max_size=10))
def test_breaks_and_repairs_equal_full_parse(steps: list[tuple[str, float, str]]) -> None:
    config = CheckConfig(file="/env/modules/big/manifests/init.pp", modulepath=("/env/modules",))
    p = IncrementalParser(_text(), config)
    p.update()
    p.validation_diagnostics()
    for kind, where, piece in steps:
        starts = _statement_lines(p.data)
        at = starts[min(len(starts) - 1, int(where * len(starts)))]
        if kind == "line":  # (an edit that is no break: a statement or a blank line added there)
            p.edit(at - 2, at - 2, piece)
            check_same(p, config)
            continue
        p.edit(at, at, piece)
        check_same(p, config)
        p.edit(at, at + len(piece), "")
        check_same(p, config)


@pytest.mark.corpus
def test_blank_line_in_an_elsif_chain() -> None:
    """Found by the test above (the same at 6261b41): a blank line typed before the `else` of an
    `if $cache_root { } elsif versioncmp(...) >= 0 { ... } else {` chain moves what follows (mode "shift"),
    and the full parse's outer IfExpression is one byte longer: its length ends at the `elsif` keyword
    plus the `elsif`'s length counted from its (long) test, before the edit (grammar.incremental.state
    ``else_grows``; the shift did not grow it)."""
    config = CheckConfig(file="/env/modules/big/manifests/init.pp", modulepath=("/env/modules",))
    p = IncrementalParser(_text(), config)
    p.update()
    p.validation_diagnostics()
    for where, piece in ((1.0, "  notice(1)\n"), (0.4921875, "\n")):
        starts = _statement_lines(p.data)
        at = starts[min(len(starts) - 1, int(where * len(starts)))]
        p.edit(at - 2, at - 2, piece)
        check_same(p, config)
