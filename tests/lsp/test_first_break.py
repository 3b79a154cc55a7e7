"""The keystroke that first breaks a big body, again (issue 31 item 3): an open quote typed mid-body
makes recovery close the body early and parse the rest of the file as top-level statements, after a
top-level error; deleting the quote repairs the text incrementally.

* The first break of a region takes those statements from the incremental state, which parsed them
  from the same tokens as the body's statements (grammar.incremental.tail: the run is seeded at a
  boundary of the body's list, the statements lent to the Program shown with their validation), instead
  of parsing and validating the rest of the file again; the repair finds the state as it was.
* With seeding off, the next quote typed a few lines on (the same top-level runs after the same error)
  takes those statements and their validation from the last break (grammar.incremental.plain.KeptChunks).

Every step equals the full parse of the same text (tests/test_incremental.py's comparison).  Counted
work, not time: with the tail parsed and validated again at every break, the counts below fail."""

from __future__ import annotations

from typing import Any

import pytest

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.incremental import IncrementalParser
from puppet_xpp.grammar.incremental.tail import Tail
from tests.lsp.test_completion_speed_break import corpus_class_parser
from tests.test_incremental import check_same


def _offset(lines: list[str], i: int) -> int:
    """The byte offset of line i's first statement character (after its two-space indentation)."""
    return len("\n".join(lines[:i]).encode()) + 1 + 2


def _break_with_runs(p: IncrementalParser, config: CheckConfig, lines: list[str]) -> tuple[int, Any, dict]:
    """The first statement line of the middle of the body where an open quote breaks the text with
    top-level runs after an error (their first token is returned), the quote still typed there."""
    mid = len(lines) // 2
    for i in range(mid - 100, mid + 100):
        if not (lines[i].startswith("  ") and lines[i][2:3].isalpha()):
            continue
        at = _offset(lines, i)
        p.edit(at, at, "'")
        check_same(p, config)
        run = p.broken_text.plain_run
        if run is not None and run.chunks is not None and run.chunks.records:
            return i, run.chunks.records[0][0], dict(p.stats)
        p.edit(at, at + 1, "")
        check_same(p, config)
    pytest.skip("no open quote in the middle of the body leaves top-level runs")


def _next_line(lines: list[str], i: int, before: int) -> int:
    """The next statement line after line i, before byte offset ``before``."""
    for j in range(i + 1, len(lines)):
        if lines[j].startswith("  ") and lines[j][2:3].isalpha():
            if _offset(lines, j) >= before:
                break
            return j
    pytest.skip("no statement line between the break and its top-level runs")


@pytest.fixture
def broken() -> tuple[IncrementalParser, CheckConfig, list[str], int, Any, dict]:
    p, config, lines = corpus_class_parser()
    i, first, stats = _break_with_runs(p, config, lines)
    return p, config, lines, i, first, stats


@pytest.fixture
def unseeded(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Breaks that do not take the state's statements (grammar.incremental.tail off)."""
    monkeypatch.setattr(Tail, "MIN_TOKENS", 1 << 40)
    p, config, lines = corpus_class_parser()
    i, first, stats = _break_with_runs(p, config, lines)
    return p, config, lines, i, first, stats


def test_the_first_break_takes_the_states_statements(broken: Any) -> None:
    """The first quote of a region: the top-level run after the error is seeded with the state's
    statements, so a few hundred tokens are parsed (the break's own, before the error) and a few
    statements validated, not the rest of the body (here ~4,500 tokens and ~780 statements); then
    a letter typed in the string (seeded again), the quote deleted (an incremental repair from the
    state, which got its statements back), a quote a line on: each equal to the full parse."""
    p, config, lines, i, first, stats = broken
    n = len(p.tokens)
    assert stats.get("tail_seeded", 0) > 50, stats
    assert stats["tokens_parsed"] < n // 8, (stats, n)
    assert stats["statements_validated"] < stats["tail_seeded"], stats
    at = _offset(lines, i)
    p.edit(at + 1, at + 1, "a")
    check_same(p, config)
    assert p.stats.get("tail_seeded", 0) > 50 and p.stats["tokens_parsed"] < n // 8, p.stats
    p.edit(at, at + 2, "")
    check_same(p, config)
    assert p.stats["mode"] in ("incremental", "shift"), p.stats
    assert not [d for d in p.parse_diagnostics() if d.severity == "error"]
    j = _next_line(lines, i, first.start_pos)
    at2 = _offset(lines, j)
    p.edit(at2, at2, "'")
    check_same(p, config)
    assert p.stats.get("tail_seeded", 0) > 50 and p.stats["tokens_parsed"] < n // 8, p.stats
    assert p.stats["statements_validated"] < p.stats["tail_seeded"], p.stats
    p.edit(at2, at2 + 1, "")
    check_same(p, config)
    assert not [d for d in p.parse_diagnostics() if d.severity == "error"]


def test_the_next_break_takes_the_last_ones_runs(unseeded: Any) -> None:
    """Break, repair, a brace typed and deleted, a letter typed and deleted, then a quote a line or
    more on: its top-level runs are the first break's, moved; equal to the full parse at each step."""
    p, config, lines, i, first, stats = unseeded
    n = len(p.tokens)
    at = _offset(lines, i)
    p.edit(at, at + 1, "")
    check_same(p, config)
    assert p.stats["mode"] in ("incremental", "shift"), p.stats
    for piece in ("{", "x"):  # (other keystrokes meanwhile, as in bench/bench_completion.py)
        p.edit(at, at, piece)
        check_same(p, config)
        p.edit(at, at + 1, "")
        check_same(p, config)
    j = _next_line(lines, i, first.start_pos)
    at2 = _offset(lines, j)
    p.edit(at2, at2, "'")
    check_same(p, config)
    again = dict(p.stats)
    assert again.get("kept_taken"), again
    assert again["tokens_parsed"] < stats["tokens_parsed"] // 2, (again, stats, n)
    assert again["statements_validated"] < stats["statements_validated"] // 4, (again, stats)
    p.edit(at2, at2 + 1, "")
    check_same(p, config)
    assert not [d for d in p.parse_diagnostics() if d.severity == "error"]


def test_an_edit_after_the_runs_line_drops_them(unseeded: Any) -> None:
    """An edit in the top-level runs' part of the text (here a statement added before the class's
    last line) while the text is repaired: the next break parses that part again, and shows it."""
    p, config, lines, i, first, stats = unseeded
    at = _offset(lines, i)
    p.edit(at, at + 1, "")
    check_same(p, config)
    end = p.data.rindex(b"}")
    p.edit(end, end, "  notice(1, 2)\n  $late = [\n")
    check_same(p, config)
    p.edit(at, at, "'")
    check_same(p, config)
    assert not p.stats.get("kept_taken"), p.stats
