"""The keystroke that first breaks a big body, again (issue 31 item 3): an open quote typed mid-body
makes recovery close the body early and parse the rest of the file as top-level statements, after a
top-level error; deleting the quote repairs the text incrementally.  The next quote typed a few lines
on (the same top-level runs after the same error) takes those statements and their validation from
the last break instead of parsing and validating the whole tail again
(grammar.incremental.plain.KeptChunks), and every step equals the full parse of the same text
(tests/test_incremental.py's comparison).  Counted work, not time: with the tail parsed and validated
again at every break, the counts below fail."""

from __future__ import annotations

from typing import Any

import pytest

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.incremental import IncrementalParser
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


def test_the_next_break_takes_the_last_ones_runs(broken: Any) -> None:
    """Break, repair, a brace typed and deleted, a letter typed and deleted, then a quote a line or
    more on: its top-level runs are the first break's, moved; equal to the full parse at each step."""
    p, config, lines, i, first, stats = broken
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


def test_an_edit_after_the_runs_line_drops_them(broken: Any) -> None:
    """An edit in the top-level runs' part of the text (here a statement added before the class's
    last line) while the text is repaired: the next break parses that part again, and shows it."""
    p, config, lines, i, first, stats = broken
    at = _offset(lines, i)
    p.edit(at, at + 1, "")
    check_same(p, config)
    end = p.data.rindex(b"}")
    p.edit(end, end, "  notice(1, 2)\n  $late = [\n")
    check_same(p, config)
    p.edit(at, at, "'")
    check_same(p, config)
    assert not p.stats.get("kept_taken"), p.stats
