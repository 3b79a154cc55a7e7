"""Completion from the client's current text reads a window around the cursor
(server/analysis/completion.py ``window_analysis``), not the whole text: its answers must be exactly
those of the whole text, and those of the full analysis (the tree) once the document is settled
(issue 31 item 3).  The text scans look back up to 20,000 bytes for an enclosing resource body, so the
places here include bodies opened just inside and just outside that reach, far into a 300 KB class."""

from __future__ import annotations

import dataclasses

import pytest

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.server.analysis import completion as completions
from puppet_xpp.server.analysis.answers import Completions, Knowledge
from puppet_xpp.server.analysis.document import Document
from puppet_xpp.server.analysis.index import WorkspaceIndex
from puppet_xpp.server.analysis.navigation import local_symbols

BLOCK = "  file {{ '/srv/conf{k}':\n    ensure  => file,\n    content => 'x{k}',\n  }}\n"


def _filler(n: int) -> str:
    """``n`` bytes or so of attribute lines (a resource body that long)."""
    line = "    content => 'abcdefghijklmnopqrstuvwxyz0123456789',\n"
    return line * (n // len(line))


def _text() -> str:
    body = [BLOCK.format(k=k) for k in range(1500)]
    # resource bodies with ~19.5 KB and ~21 KB of attributes before the place typed in them
    near = "  service { 'near':\n" + _filler(19_500) + "    ens\n  }\n"
    far = "  package { 'far':\n" + _filler(21_000) + "    ens\n  }\n"
    tail = "  include defin\n  notify { 'n': message => Pack }\n  $y = $facts['os']['fam']\n"
    return (
        "define app::thing (String $path) {\n}\nclass app {\n"
        + "".join(body[:700])
        + near
        + far
        + "".join(body[700:])
        + tail
        + "}\n"
    )


TEXT = _text()
LINES = TEXT.split("\n")


def _places() -> list[tuple[int, int]]:
    """(line, column) of the places asked about: after each word typed at the ends of the lines above,
    a name at a statement start, an attribute in a block, a value after ``=>``, and past the end."""
    out = []
    for k, line in enumerate(LINES):
        s = line.rstrip()
        if s.endswith(("    ens", "include defin", "=> Pack", "['fam']")):
            out.append((k, len(s) - (2 if s.endswith("']") else 0)))
    mid = LINES.index("  file { '/srv/conf900':")
    out += [(mid, 2), (mid, 4), (mid + 1, 4), (mid + 1, 6), (mid + 1, 16), (mid + 1, 19), (3, 0)]
    out += [(len(LINES) + 3, 0)]
    return out


def _items(c: Completions) -> list[dict[str, object]]:
    return [dataclasses.asdict(it) for it in c.items]


@pytest.fixture(scope="module")
def settled() -> tuple[object, list[object]]:
    doc = Document("file:///w/app/manifests/init.pp", TEXT, 1, CheckConfig(file="/w/app/manifests/init.pp"))
    an = doc.analysis()
    return an, local_symbols(an)


def test_the_places_are_where_they_should_be() -> None:
    near = LINES.index("  service { 'near':")
    far = LINES.index("  package { 'far':")
    assert 19_000 < len("\n".join(LINES[near : far - 2]).encode()) < 20_000
    assert 20_300 < len("\n".join(LINES[far : far + 400]).encode())
    assert len(TEXT.encode()) > 150_000


@pytest.mark.parametrize("place", _places())
def test_window_answers_as_the_whole_text_and_the_tree(place: tuple[int, int], settled: tuple) -> None:
    an, local = settled
    line, character = place
    known = Knowledge(WorkspaceIndex(), None, lambda: [], snippets=True)
    data = TEXT.encode()
    window, first = completions.window_analysis(data, line, 1, "utf-16", False, False)
    assert len(window.data) < 30_000 or first == 0
    from_window = completions.shifted(
        completions.completion(window, known, line - first, character, local), first
    )
    whole = completions.text_analysis(data, 1, "utf-16", False, False)
    from_text = completions.completion(whole, known, line, character, local)
    assert _items(from_window) == _items(from_text)
    assert completions.needs_tree(window, line - first, character) == completions.needs_tree(
        whole, line, character
    )
    if not completions.needs_tree(whole, line, character):
        from_tree = completions.completion(an, known, line, character)
        assert _items(from_window) == _items(from_tree)


def test_the_scans_reach_is_inside_the_window(settled: tuple) -> None:
    """The attributes of the body opened ~19.5 KB back are offered (the scan reaches it), those of the
    one opened ~21 KB back are not (the whole text's answer too): the window holds all a scan reads."""
    an, local = settled
    known = Knowledge(WorkspaceIndex(), None, lambda: [])
    data = TEXT.encode()
    labels = {}
    for k, line in enumerate(LINES):
        if line == "    ens":
            window, first = completions.window_analysis(data, k, 1, "utf-16", False, False)
            c = completions.completion(window, known, k - first, 7, local)
            labels[k] = {it.label for it in c.items}
    near, far = sorted(labels)
    assert {"ensure", "enable", "hasrestart"} <= labels[near]
    assert "ensure" not in labels[far] and "class" in labels[far]
