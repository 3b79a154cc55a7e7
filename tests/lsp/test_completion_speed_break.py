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
