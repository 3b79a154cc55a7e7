"""The last lint result carried over to a newer text (server/lsp/lint_carry.py ``with_lint``), in process:
the worker's own analysis (server.lsp.sync.analyze) after content changes as a client sends them. Every carried
diagnostic must be one puppet-lint (the oracle) reports for the new text, and the only ones of
puppet-lint's missing are those on the lines the changes touched (the next lint gives them again).
Ranged changes are followed line by line: the whole-text comparison (``shifted``) is not used for
them, only for a whole-text replacement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.server.analysis import lint
from puppet_xpp.server.analysis.document import Document, LspDiagnostic
from puppet_xpp.server.analysis.workspace import LintSettings
from puppet_xpp.server.lsp import lint_carry, sync
from puppet_xpp.server.lsp.session import DocState, Session

SESSION = Session()  # (lint on)

ORACLE_PATH = "foo/manifests/init.pp"


def _text() -> str:
    """A class whose lines 2.. (0-based) alternate: a double-quoted string, a file with an unquoted
    3-digit mode (three lint warnings per pair of lines)."""
    lines = ["# @summary carried lint diagnostics", "class foo {"]
    for i in range(24):
        lines.append(f'  $v{i} = "value {i}"')
        lines.append(f"  file {{ '/tmp/f{i}': mode => 644 }}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _open(tmp_path: Path, text: str) -> DocState:
    """A document analysed once, with the lint result the server gets for that text."""
    path = str(tmp_path / "foo" / "manifests" / "init.pp")
    uri = "file://" + path
    st = DocState(uri, Document(uri, text, 1, CheckConfig(file=path)))
    sync.analyze(SESSION, st)
    _lint_snapshot(st)
    return st


def _lint_snapshot(st: DocState, snap: Any = None) -> None:
    """The lint of the last analysed text (or of ``snap``, an earlier one) arrives, as
    server/lsp/lint.py's lint loop records it."""
    lt = st.lint
    _version, text, path, enc, seq = snap or lt.snap
    lt.result = lint_carry.LintResult(text, lint.diagnostics(text, path, LintSettings(), enc), seq)


def _change(st: DocState, *changes: Any) -> list[LspDiagnostic]:
    """One didChange of (range or None, text) changes, analysed: the lint diagnostics carried to it."""
    st.pending.extend(changes)
    st.version = (st.version or 0) + 1
    return sync.analyze(SESSION, st)[2]


def _theirs(oracle: Any, text: str) -> set[tuple[str, int, int]]:
    problems = oracle.call("lint", source=text, path=ORACLE_PATH)["problems"]
    return {
        (p["check"], p["line"] - 1, p["column"] - 1) for p in problems if p["kind"] in ("warning", "error")
    }


def _check(oracle: Any, st: DocState, carried: list[LspDiagnostic], touched: set[int]) -> None:
    ours = {(d.code, d.start[0], d.start[1]) for d in carried}
    theirs = _theirs(oracle, st.doc.text)
    assert ours <= theirs
    assert {t for t in theirs - ours if t[1] not in touched} == set()
    assert len(ours) > 50  # (most of them were carried)


@pytest.fixture
def no_compare(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_a: Any) -> Any:
        raise AssertionError("the texts were compared")

    monkeypatch.setattr(lint_carry, "shifted", fail)


def test_typing_a_line(tmp_path: Path, oracle: Any, no_compare: None) -> None:
    st = _open(tmp_path, _text())
    row, col = 10, 0
    for ch in '  $typed = "in"\n':
        _change(st, (((row, col), (row, col)), ch))
        row, col = (row + 1, 0) if ch == "\n" else (row, col + 1)
    carried = _change(st, (((0, 2), (0, 2)), ""))  # (an empty change: nothing dropped)
    _check(oracle, st, carried, {10, 11})


def test_a_burst_of_changes(tmp_path: Path, oracle: Any, no_compare: None) -> None:
    """Keystrokes that arrived while the worker was busy, analysed together (more of them than
    lint_carry.MAX_CHANGES: those on the same lines are followed as one), then a deletion that overlaps
    the typed lines."""
    st = _open(tmp_path, _text())
    typed = '  $typed_in = "no interpolation"\n  file { $typed_in: mode => 644 }\n'
    assert len(typed) > lint_carry.MAX_CHANGES
    changes = []
    row, col = 10, 0
    for ch in typed:
        changes.append((((row, col), (row, col)), ch))
        row, col = (row + 1, 0) if ch == "\n" else (row, col + 1)
    changes.append((((9, 2), (11, 2)), ""))  # line 9 and the first typed line deleted
    carried = _change(st, *changes)
    _check(oracle, st, carried, {9, 10})


def test_changes_in_one_did_change(tmp_path: Path, oracle: Any, no_compare: None) -> None:
    st = _open(tmp_path, _text())
    end5 = len(st.doc.text.split("\n")[5])
    carried = _change(
        st,
        (((40, 0), (41, 0)), ""),  # line 40 deleted (line 41 then starts at (40, 0): touched too)
        (((20, 5), (20, 2)), "$w2"),  # a reversed range: $v9 becomes $w2
        (((5, end5), (5, end5)), "\n  $new = 'x'\n"),  # two lines after line 5
    )
    # in the final text: line 5 and the two after it, line 20 (+2), the join at line 40 (+2)
    _check(oracle, st, carried, {5, 6, 7, 22, 42})


def test_lint_of_an_older_text(tmp_path: Path, oracle: Any, no_compare: None) -> None:
    """A lint that ran while typing went on: its result is carried through the changes after its text."""
    st = _open(tmp_path, _text())
    _change(st, (((30, 0), (30, 0)), "\n"))
    _change(st, (((12, 0), (12, 0)), "  $x = 'y'\n"))
    linted = st.lint.snap  # the lint of this text ...
    _change(st, (((3, 0), (4, 0)), ""))
    _lint_snapshot(st, linted)  # ... arrives here
    carried = _change(st, (((44, 0), (44, 0)), "\n\n"))
    # the changes after the linted text: line 3 deleted (4 joins it), two empty lines at 44
    _check(oracle, st, carried, {3, 44, 45, 46})


def test_whole_text_is_compared(tmp_path: Path, oracle: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    st = _open(tmp_path, _text())
    calls = []
    compare = lint_carry.shifted
    monkeypatch.setattr(lint_carry, "shifted", lambda *a: calls.append(1) or compare(*a))
    lines = st.doc.text.split("\n")
    lines[9] = "  $changed = 'x'"
    carried = _change(st, (None, "\n".join(lines)))
    assert calls == [1]
    _check(oracle, st, carried, {9})
    carried = _change(st, (((30, 0), (30, 0)), "\n"))  # ranged changes are followed again
    assert calls == [1]
    _check(oracle, st, carried, {9, 30, 31})


def test_positions_outside_the_text(tmp_path: Path, oracle: Any, no_compare: None) -> None:
    """Lines before the first and after the last are clamped to them (as the change is applied)."""
    st = _open(tmp_path, _text())
    n = len(st.doc.text.split("\n"))  # (the last line is the empty one after the final line break)
    _change(st, (((10**6, 3), (10**6, 9)), "# end\n"))
    carried = _change(st, (((-3, 7), (-1, 0)), "# start\n"))
    _check(oracle, st, carried, {0, 1, n, n + 1})
