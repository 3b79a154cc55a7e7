"""The keystroke that first breaks a big body (issue 31 item 3): a `{` typed as the first token of a line in
a class body is lexed with the token before it (a selector's brace after `?`, else a plain one) and
reparsed incrementally, not by a full parse of the file; the result equals the full parse of the
same text (tests/test_incremental.py's comparison), and deleting it again repairs incrementally too.

Before this change every such brace took a full parse (150-400 ms in the 300 KB class of
bench/bench_completion.py)."""

from __future__ import annotations

import pytest

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.incremental import IncrementalParser
from tests.test_incremental import check_same

BODY = "".join(
    f"  # the file {k}\n  file {{ '/srv/{k}':\n    ensure => file,\n  }}\n  $v{k} = $facts['os'] ?\n    {{ 'a' => 1, default => 2 }}\n"
    for k in range(60)
)
TEXT = "class big {\n" + BODY + "}\n"


@pytest.mark.parametrize("line_text", ["  file { '/srv/30':", "    { 'a' => 1, default => 2 }"])
def test_brace_at_a_line_start_is_incremental(line_text: str) -> None:
    config = CheckConfig(file="x.pp")
    p = IncrementalParser(TEXT, config)
    p.update()
    p.validation_diagnostics()
    at = TEXT.index(line_text) + 2  # (after the indentation; the second: a selector's brace, after `?`)
    for a, b, piece in ((at, at, "{"), (at, at + 1, ""), (at, at, "{ "), (at, at + 2, "")):
        p.edit(a, b, piece)
        check_same(p, config)
        assert p.stats["mode"] != "full", (piece, p.stats)


def corpus_class() -> str:
    """A ~90 KB one-class manifest built like bench/bench_completion.py's (the corpus's class bodies)."""
    import os
    import sys

    from tests.conformance.corpus import CORPUS_ROOT

    if not CORPUS_ROOT.is_dir():
        pytest.skip("no corpus")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
    import bench_completion

    return str(bench_completion.build_manifest(str(CORPUS_ROOT), 80_000))


def corpus_class_parser() -> tuple[IncrementalParser, CheckConfig, list[str]]:
    """An IncrementalParser of :func:`corpus_class`'s text, parsed and validated, and its lines."""
    text = corpus_class()
    config = CheckConfig(file="x.pp")
    p = IncrementalParser(text, config)
    p.update()
    p.validation_diagnostics()
    return p, config, text.split("\n")


@pytest.mark.parametrize("piece", ["'", '"', "/*", "@("])
def test_an_open_quote_mid_body_is_not_a_full_parse(piece: str) -> None:
    """An open quote (single or double), a comment start or a heredoc start typed at the start of
    statement lines in the middle of a long class body, then deleted: each step equals the full parse
    of the same text (its first syntax error at its position, and every other diagnostic), and none is
    a full parse -- the break re-lexes a window around the edit (not the whole tail) and parses from
    the last statement boundary before it; the repair reparses a few statements.  (Counted work, not
    time: a regression to a full re-lex or parse fails here.)"""
    p, config, lines = corpus_class_parser()
    n = len(p.tokens)
    mid = len(lines) // 2
    at_lines = [
        i for i in range(mid - 100, mid + 100) if lines[i].startswith("  ") and lines[i][2:3].isalpha()
    ]
    for i in at_lines[:3]:
        at = len("\n".join(lines[:i]).encode()) + 1 + 2
        p.edit(at, at, piece)
        check_same(p, config)
        broke = dict(p.stats)
        assert broke["mode"] != "full", broke
        assert broke.get("tokens_parsed", n) < 0.6 * n, (broke, n)  # (not from the first token)
        if broke["mode"] == "plain":
            assert broke.get("resumed"), broke  # (from the last boundary before the edit)
        if broke.get("tokens_lexed") is not None:
            assert broke["tokens_lexed"] < n // 4, (broke, n)  # (a window, not the whole tail)
        assert any(d.severity == "error" for d in p.parse_diagnostics())
        p.edit(at, at + len(piece), "")
        check_same(p, config)
        repaired = dict(p.stats)
        assert repaired["mode"] in ("incremental", "shift"), repaired
        assert repaired.get("tokens_parsed", n) < n // 8, (repaired, n)
        assert not [d for d in p.parse_diagnostics() if d.severity == "error"]


def test_typing_on_after_an_open_quote_is_never_a_full_parse() -> None:
    """A call typed at the start of a statement line, its quote open for a few keystrokes, then
    closed: every step equals the full parse and none is a full parse."""
    p, config, lines = corpus_class_parser()
    mid = len(lines) // 2
    i = next(i for i in range(mid, mid + 200) if lines[i].startswith("  ") and lines[i][2:3].isalpha())
    at = len("\n".join(lines[:i]).encode()) + 1 + 2
    typed = "notice('abc')\n  "
    for k, ch in enumerate(typed):
        p.edit(at + k, at + k, ch)
        check_same(p, config)
        assert p.stats["mode"] != "full", (ch, p.stats)
    for k in range(len(typed), 0, -1):
        p.edit(at + k - 1, at + k, "")
        check_same(p, config)
        assert p.stats["mode"] != "full", p.stats
