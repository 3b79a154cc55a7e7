"""The deep checks of a long class or define kept per body statement (issue 30 item 6).

The language server checks a long definition one body statement at a time, each kept by its text
(server/analysis/deep/engine.py's ``BodyMemo``), with the passes that need the whole body (its
duplicates, its unknown variables: an assignment anywhere in the body makes a use known) on top.
Property: after any sequence of random edits to corpus files and to the ~300 KB one-class manifest,
the findings checked that way, the memo carried from edit to edit, are exactly the findings of
``deep_findings`` on the whole new text -- and an edit checks again only the body statements it
touched."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from puppet_xpp.grammar.parser import parse
from puppet_xpp.server.analysis.deep import (
    BodyMemo,
    Finding,
    Parts,
    Place,
    World,
    deep_findings,
    file_findings,
    statement_findings,
    top_statements,
)
from puppet_xpp.server.analysis.deep.engine import SPLIT_BYTES
from puppet_xpp.server.analysis.deep.worlds import WorldCache
from puppet_xpp.xpp.environment import FileContext
from tests.conformance.corpus import CORPUS_ROOT

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

EDITS = 25
# what an edit inserts: characters that break and repair statements, and statements that make
# findings (an unknown variable, the assignment that makes it known elsewhere in the body, a duplicate
# resource, unknown names)
SNIPPETS = [
    "x", " ", "\n", "$", "{", "}", "'", ",", "(",
    "\n  notice($zz_unknown_q)\n",
    "\n  $zz_unknown_q = 1\n",
    "\n  file { '/tmp/zz_dup': ensure => file }\n",
    "\n  zz_nosuch::thing { 'a': }\n",
    "\n  include zz_nosuch_class\n",
    "\n  if $zz_other { notice($zz_unknown_q) }\n",
]  # fmt: skip


def _world(path: str) -> World:
    return WorldCache().world_for(FileContext(path, modulepath=(str(CORPUS_ROOT),)))


class Incremental:
    """The engine used as the language server uses it: the memo carried from text to text."""

    def __init__(self, path: str, world: World) -> None:
        self.path = path
        self.world = world
        self.parts: Parts = {}
        self.judged: dict[tuple[str, int, int], Finding] = {}
        self.checked = 0

    def findings(self, text: str) -> list[Finding]:
        program = parse(text, self.path).program
        if program is None:
            return []
        place = Place(self.path, complete=self.world.complete)
        memo = BodyMemo(text.encode(), ("stamp",), self.parts)
        memo.judged_before = self.judged
        results = [statement_findings(s, place, self.world, memo) for s in top_statements(program)]
        self.parts, self.judged = memo.used, memo.judged
        self.checked = memo.checked
        return file_findings(results, program, self.path, program.locator.line_for_offset)


def _whole(text: str, path: str, world: World) -> list[Finding]:
    result = parse(text, path)
    return deep_findings(result, path, world)


def _edit(rng: random.Random, text: str) -> str:
    """One random edit inside the file's code: an insertion or a deletion of a few characters."""
    at = rng.randrange(len(text))
    if rng.random() < 0.3:
        return text[:at] + text[at + rng.randint(1, 3) :]
    return text[:at] + rng.choice(SNIPPETS) + text[at:]


def _long_files() -> list[Path]:
    found = []
    for f in sorted(CORPUS_ROOT.glob("*/manifests/**/*.pp")):
        try:
            size = f.stat().st_size
        except OSError:
            continue
        if size >= 2 * SPLIT_BYTES:
            found.append(f)
    return found


def _same_after_edits(text: str, path: str, seed: int, edits: int = EDITS) -> Incremental:
    world = _world(path)
    inc = Incremental(path, world)
    rng = random.Random(seed)
    assert inc.findings(text) == _whole(text, path, world)
    for _ in range(edits):
        text = _edit(rng, text)
        assert inc.findings(text) == _whole(text, path, world), (seed, text)
    return inc


def test_corpus_files_random_edits() -> None:
    files = _long_files()
    if not files:
        pytest.skip("no corpus")
    rng = random.Random(306)
    for f in rng.sample(files, min(6, len(files))):
        _same_after_edits(f.read_text(encoding="utf-8", errors="replace"), str(f), rng.randrange(1 << 30))


def test_one_class_manifest_random_edits() -> None:
    import bench_lsp

    if not CORPUS_ROOT.is_dir():
        pytest.skip("no corpus")
    text = bench_lsp.build_one_class_manifest(str(CORPUS_ROOT))
    path = os.path.join(str(CORPUS_ROOT), "big", "manifests", "init.pp")
    _same_after_edits(text, path, 30, edits=12)


def test_an_edit_checks_only_the_statement_it_touched() -> None:
    """A keystroke inside one statement of a long class body checks that statement again, not the body;
    the findings that depend on the whole body follow: an assignment typed in one statement makes a
    use in another known."""
    body = "".join(f"  file {{ '/tmp/f{i}': ensure => file, content => $c{i} }}\n" for i in range(300))
    text = "class zz_long {\n  notice($later)\n" + body + "}\n"
    path = os.path.join(str(CORPUS_ROOT), "zz_long", "manifests", "init.pp")
    world = _world(path)
    inc = Incremental(path, world)
    first = inc.findings(text)
    assert inc.checked == 301
    unknown = sorted(f.data["variable"] for f in first if f.code == "DEEP_UNKNOWN_VARIABLE")
    assert unknown == sorted(["later"] + [f"c{i}" for i in range(300)])
    edited = text.replace("$c150 }", "$c150, mode => '0644' }")
    assert inc.findings(edited) == _whole(edited, path, world)
    assert inc.checked == 1
    assigned = edited.replace("  file { '/tmp/f7'", "  $later = 1\n  file { '/tmp/f7'")
    found = inc.findings(assigned)
    assert found == _whole(assigned, path, world)
    assert inc.checked <= 3  # (the new statement, and the texts between it and its neighbours)
    assert "later" not in {f.data["variable"] for f in found if f.code == "DEEP_UNKNOWN_VARIABLE"}


def test_the_whole_body_pass_asks_the_world_once_per_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """The unknown-variable pass over a long body asks whether each name it cannot resolve is a fact
    at every check; the answers are kept while the world and the stamp are the same (a keystroke asks
    about the new name only), and asked again when the stamp changes (the index changed)."""
    body = "".join(f"  notice($zz_v{i})\n" for i in range(300))
    text = "class zz_asks {\n" + body + "}\n"
    path = os.path.join(str(CORPUS_ROOT), "zz_asks", "manifests", "init.pp")
    world = _world(path)
    asked: list[str] = []
    fact_known = world.fact_known

    def counted(name: str) -> bool:
        asked.append(name)
        return fact_known(name)

    monkeypatch.setattr(world, "fact_known", counted)
    inc = Incremental(path, world)
    assert len(inc.findings(text)) == 300
    assert len(asked) == 300
    edited = text.replace("$zz_v7)", "$zz_new)")
    whole = _whole(edited, path, world)
    asked.clear()
    assert inc.findings(edited) == whole
    assert asked == ["zz_new"]
    asked.clear()
    program = parse(edited, path).program
    memo = BodyMemo(edited.encode(), ("another stamp",), inc.parts)
    place = Place(path, complete=world.complete)
    for statement in top_statements(program):
        statement_findings(statement, place, world, memo)
    assert len(asked) == 300


def test_a_broken_text_keeps_the_parts_for_its_repair() -> None:
    """A quote opened in a long class makes the rest of the file a string (Puppet's parse ends at the
    first syntax error: the class is not in the tree); the keystroke that closes it again checks the
    statement it changed, not the whole body again, and the findings are the whole text's."""
    body = "".join(f"  file {{ '/tmp/f{i}': ensure => file, content => $c{i} }}\n" for i in range(300))
    text = "class zz_quote {\n" + body + "}\n"
    path = os.path.join(str(CORPUS_ROOT), "zz_quote", "manifests", "init.pp")
    world = _world(path)
    inc = Incremental(path, world)
    assert len(inc.findings(text)) == 300
    at = text.index("  file { '/tmp/f150'")
    steps = ["notice('", "notice('x", "notice('x')", "notice('x')\n"]
    for k, typed in enumerate(steps):
        edited = text[:at] + typed + text[at:]
        assert inc.findings(edited) == _whole(edited, path, world), typed
        if k == 2:
            assert inc.checked <= 3, inc.checked  # (the repair)


def test_top_level_statements_are_kept_across_a_broken_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of top-level statements: each is kept by its text in the memo too, so an edit checks the
    statement it touched, and an open quote (the tree the parser's recovery makes of the rest) then
    closed again checks a few statements, not the file again; findings equal the whole text's."""
    from puppet_xpp.server.analysis.deep import engine

    walked: list[int] = []
    walk = engine._walk

    def counted(root: object, *args: object, **kw: object) -> object:
        walked.append(1)
        return walk(root, *args, **kw)  # type: ignore[arg-type]

    text = "".join(
        f"file {{ '/tmp/t{i}': ensure => file, content => $c{i} }}\nzz_nosuch{i} {{ 'a': }}\n"
        for i in range(100)
    )
    path = os.path.join(str(CORPUS_ROOT), "zz_top", "manifests", "init.pp")
    world = _world(path)
    inc = Incremental(path, world)
    inc.findings(text)
    monkeypatch.setattr(engine, "_walk", counted)
    at = text.index("file { '/tmp/t50'")
    for typed in ["x", "'", "'x", "'x'", "'x'\n"]:
        edited = text[:at] + typed + text[at:]
        whole = _whole(edited, path, world)
        walked.clear()
        assert inc.findings(edited) == whole, typed
        if typed in ("x", "'x'"):
            assert len(walked) <= 3, (typed, len(walked))
