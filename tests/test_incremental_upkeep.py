"""The incremental parser's Program handed out at every keystroke (issue 30 item 6: the deep checks
ask for it each time): the positions and the definitions brought up to date in proportion to the edit,
not by walking the whole tree, and still exactly those of a full parse (tests/test_incremental.py's
``check_same``)."""

from __future__ import annotations

from typing import Any

import pytest

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.grammar.incremental import IncrementalParser, state
from tests.test_incremental import check_same

CONFIG = CheckConfig(file="/env/modules/demo/manifests/init.pp", modulepath=("/env/modules",))


def _long_class(n: int = 300) -> str:
    body = "".join(
        f"  file {{ '/tmp/f{i}': ensure => file, content => \"${{c}}-{i}\", mode => '0644' }}\n"
        for i in range(n)
    )
    return "class demo(String $c = 'x') {\n" + body + "  define demo::inner($a) { notice($a) }\n}\n"


class _Count:
    """Counts the nodes a function's walk lists (Positions._list_subtree) or visits (definitions_in)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.listed = 0
        self.searched = 0
        listed = state.Positions._list_subtree
        searched = state.definitions_in

        def list_subtree(pos: state.Positions, n: Any) -> Any:
            e = listed(pos, n)
            self.listed += len(e[1])
            return e

        def definitions_in(roots: list[Any], skip: Any = frozenset()) -> list[Any]:
            self.searched += sum(sum(1 for _ in ast.walk(r)) for r in roots if id(r) not in skip)
            return searched(roots, skip)

        monkeypatch.setattr(state.Positions, "_list_subtree", list_subtree)
        monkeypatch.setattr(state, "definitions_in", definitions_in)


def _nodes(p: IncrementalParser) -> int:
    return sum(1 for _ in ast.walk(p.program.body))


def test_a_keystroke_brings_up_to_date_only_what_it_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keystrokes early in a long class body: the statements after each are moved by lists of their
    nodes made once (the first keystroke), and the definitions are patched from the statement
    reparsed -- neither walks the tree again."""
    text = _long_class()
    p = IncrementalParser(text, CONFIG)
    check_same(p, CONFIG)
    total = _nodes(p)
    count = _Count(monkeypatch)
    at = text.index("/tmp/f3'")
    p.edit(at, at, "x")
    check_same(p, CONFIG)
    assert count.listed > total // 2  # (the first keystroke lists the statements after it)
    assert count.searched < 100
    count.listed = count.searched = 0
    for k in range(1, 8):  # (typed on, then deleted)
        p.edit(at + k, at + k, "y")
        check_same(p, CONFIG)
    for k in range(8, 0, -1):
        p.edit(at + k - 1, at + k, "")
        check_same(p, CONFIG)
    assert count.listed < 200, count.listed  # (the statement reparsed, when a later edit moves it)
    assert count.searched < 16 * 100, count.searched


def test_definitions_follow_edits_inside_a_body() -> None:
    """A define typed, renamed, broken and removed inside a long class: the Program's definitions are
    exactly a full parse's after each edit (typed one character at a time)."""
    text = _long_class(60)
    p = IncrementalParser(text, CONFIG)
    check_same(p, CONFIG)
    at = text.index("  file { '/tmp/f30'")
    piece = "  define demo::typed($b) { class demo::deep { } }\n"
    for k, ch in enumerate(piece):
        p.edit(at + k, at + k, ch)
        check_same(p, CONFIG)
    names = [getattr(d, "name", None) for d in p.program.definitions]
    # (Puppet names a definition inside a class after it: demo::demo::typed)
    assert names == ["demo::demo::deep", "demo::demo::typed", "demo::demo::inner", "demo"], names
    name = p.data.index(b"demo::typed") + len("demo::")
    p.edit(name, name + len("typed"), "other")
    check_same(p, CONFIG)
    assert "demo::demo::other" in [getattr(d, "name", None) for d in p.program.definitions]
    for k in range(len(piece), 0, -1):
        p.edit(at + k - 1, at + k, "")
        check_same(p, CONFIG)
    assert [getattr(d, "name", None) for d in p.program.definitions] == ["demo::demo::inner", "demo"]


def test_marks_of_several_keystrokes_before_the_program_is_asked() -> None:
    """Edits at several depths and places, the Program asked after some of them only (marks nested in
    marks), and statement lists changed inside subtrees listed for an earlier keystroke's marks: the
    positions are a full parse's."""
    inner = _long_class(40).replace("\n", "\n  ")
    # (assignments around it: an edit there reparses that statement only, the class after it is marked)
    text = "class outer {\n  $v = 'start'\n  " + inner + "\n  $w = 'end'\n}\n"
    p = IncrementalParser(text, CONFIG)
    check_same(p, CONFIG)
    spots = ["'start'", "/tmp/f35'", "'start'", "/tmp/f2'", "notice($a)", "'start'", "/tmp/f20'", "'end'"]
    for rnd in range(3):
        for k, spot in enumerate(spots):
            at = p.data.index(spot.encode())
            p.edit(at, at, "z" * (rnd + 1))
            if k % 2 or rnd == 1:
                check_same(p, CONFIG)
            else:
                p.update()
                p.parse_diagnostics()
        check_same(p, CONFIG)
        for spot in spots:
            at = p.data.index(spot.encode())
            p.edit(at - rnd - 1, at, "")
            p.update()
        check_same(p, CONFIG)
