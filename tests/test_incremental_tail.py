"""The first break of a body, seeded with the incremental state's statements (grammar.incremental.tail):
every step equals a full parse of the same text (tests/test_incremental.py's comparison), whatever the
statements after the break hold, and the state is found as it was when the text is repaired.

The text is the corpus-built class of tests/lsp/test_completion_speed_break.py with statements added at
the end of its body, where the seeded run takes them from the state.  Seeded: statements the call
transform joins (`include x`, `notice 'x'`: the state's call is not the one the break's transform
makes), statements with validation errors of their own (their cached diagnostics are copied and moved,
the state's stay), a class moved by an edit before it (its position mark goes down to the statements
lent).  Not seeded, still equal: a definition among them (it takes the class's name inside it, not at
the top level), a syntax error inside one of them (the state's diagnostics are not taken)."""

from __future__ import annotations

from typing import Any

import pytest

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.incremental import IncrementalParser
from tests.lsp.test_completion_speed_break import corpus_class
from tests.lsp.test_first_break import _break_with_runs, _offset
from tests.test_incremental import check_same

ADDED = {
    "calls": "".join(f"  include big::part{k}\n  notice 'x{k}'\n  contain big::more{k}\n" for k in range(20)),
    "invalid": "".join(f"  $other::v{k} = {k}\n  notify {{ 'n{k}': }}\n" for k in range(20)),
    "define": "  define inner($x) {\n    notify { $x: }\n  }\n",
    "syntax": "  if $facts['a'] {\n    notify { 'x' 'y' }\n  }\n",
}


def _parser(kind: str) -> tuple[IncrementalParser, CheckConfig, list[str]]:
    text = corpus_class()
    end = text.rindex("\n}")
    added = ADDED[kind] + "  notice('last')\n"
    # (as many comment lines before the class: the middle line, where the breaks are tried, keeps
    # its text)
    text = "# -\n" * added.count("\n") + text[: end + 1] + added + text[end + 1 :]
    config = CheckConfig(file="/env/modules/big/manifests/init.pp", modulepath=("/env/modules",))
    p = IncrementalParser(text, config)
    p.update()
    p.validation_diagnostics()  # (the state's validation cache, which the seeded statements take)
    return p, config, text.split("\n")


def _repair(p: IncrementalParser, config: CheckConfig, at: int, n: int) -> None:
    p.edit(at, at + n, "")
    check_same(p, config)
    assert p.stats["mode"] in ("incremental", "shift"), p.stats


@pytest.mark.corpus
@pytest.mark.parametrize("kind", ["calls", "invalid"])
def test_seeded_break_typing_and_repair(kind: str) -> None:
    """A quote typed mid-body (seeded), a letter in the string (seeded again), both deleted (the
    state's positions and validation as they were), the quote typed again: each equal to the full
    parse."""
    p, config, lines = _parser(kind)
    i, _first, stats = _break_with_runs(p, config, lines)
    n = len(p.tokens)
    assert stats.get("tail_seeded", 0) > 50 and stats["tokens_parsed"] < n // 8, (stats, n)
    at = _offset(lines, i)
    p.edit(at + 1, at + 1, "a")
    check_same(p, config)
    assert p.stats.get("tail_seeded", 0) > 50, p.stats
    _repair(p, config, at, 2)
    assert not [d for d in p.parse_diagnostics() if d.severity == "error"]
    p.edit(at, at, "'")
    check_same(p, config)
    assert p.stats.get("tail_seeded", 0) > 50, p.stats
    _repair(p, config, at, 1)


@pytest.mark.corpus
def test_seeded_after_an_edit_before_the_class() -> None:
    """A statement added before the class (the class moved by a mark on it), then a break in its
    body: the statements lent carry that move; then the statement deleted again."""
    p, config, lines = _parser("calls")
    i, _first, _stats = _break_with_runs(p, config, lines)
    at = _offset(lines, i)
    _repair(p, config, at, 1)
    added = "$first = 1\n"
    p.edit(0, 0, added)
    check_same(p, config)
    at += len(added)
    p.edit(at, at, "'")
    check_same(p, config)
    assert p.stats.get("tail_seeded", 0) > 50, p.stats
    _repair(p, config, at, 1)
    p.edit(0, len(added), "")
    check_same(p, config)


@pytest.mark.corpus
@pytest.mark.parametrize("kind", ["define", "syntax"])
def test_not_seeded_over_a_definition_or_an_error(kind: str) -> None:
    """A definition or a syntax error among the statements after the break: the state's statements
    are not taken over it, and every step equals the full parse."""
    p, config, lines = _parser(kind)
    i, _first, stats = _break_with_runs(p, config, lines)
    assert not stats.get("tail_seeded"), stats
    _repair(p, config, _offset(lines, i), 1)


def test_seeded_statements_are_the_states(monkeypatch: Any) -> None:
    """(The counts above come from the seeding: with it off, the break parses the rest again.)"""
    from puppet_xpp.grammar.incremental.tail import Tail

    monkeypatch.setattr(Tail, "MIN_TOKENS", 1 << 40)
    p, config, lines = _parser("calls")
    _i, _first, stats = _break_with_runs(p, config, lines)
    assert not stats.get("tail_seeded") and stats["tokens_parsed"] > len(p.tokens) // 4, stats


@pytest.mark.corpus
@pytest.mark.parametrize("kind", ["calls", "define"])
def test_a_brace_that_closes_the_body_early(kind: str) -> None:
    """A `}` typed at a statement line mid-body closes the class there: the first run goes on at
    the top level without an error up to the class's own `}`, and is seeded at the first of the
    class's statement boundaries it meets there (not over a definition); deleted again, the state
    is as it was.  Each step equal to the full parse."""
    p, config, lines = _parser(kind)
    n = len(p.tokens)
    mid = len(lines) // 2
    i = next(i for i in range(mid, mid + 200) if lines[i].startswith("  ") and lines[i][2:3].isalpha())
    at = _offset(lines, i)
    p.edit(at, at, "}\n  ")
    check_same(p, config)
    if kind == "define":
        assert not p.stats.get("tail_seeded"), p.stats
    else:
        assert p.stats.get("tail_seeded", 0) > 50 and p.stats["tokens_parsed"] < n // 8, (p.stats, n)
    _repair(p, config, at, 4)


@pytest.mark.corpus
def test_edits_in_the_lent_statements_while_broken() -> None:
    """While the quote is open (the statements after it lent to the Program shown), lines added and
    removed further on, inside the statements lent and after them, then the quote deleted: each step
    equal to the full parse (the statements go back to the state before each update reads it)."""
    p, config, lines = _parser("invalid")
    text = p.data.decode()
    i, first, _stats = _break_with_runs(p, config, lines)
    at = _offset(lines, i)
    far = [_offset(lines, j) for j in range(len(lines) - 60, i, -(len(lines) - i) // 5)[:4]]
    for where in far:  # (from the end: the offsets before each stay; the quote is one byte before)
        where += 1
        p.edit(where, where, "  $late = [1,\n")
        check_same(p, config)
        p.edit(where, where + len("  $late = [1,\n"), "  $late = 1\n")
        check_same(p, config)
    p.edit(at, at + 1, "")
    check_same(p, config)
    for where in reversed(far):  # (from the first: each comes back to its offset)
        p.edit(where, where + len("  $late = 1\n"), "")
        check_same(p, config)
    assert not [d for d in p.parse_diagnostics() if d.severity == "error"]
    assert p.data.decode() == text
