"""Unit tests of the analysis core's name resolution without a language server: the reference
extraction (server/analysis/references.py), the variable rename plan (rename.py) and the node
lookup the features share (features.NodeLocator, which replaced a module-level cache).

Expected places are read off the source text by the tests (every place the name is written), never
taken from our own output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from puppet_xpp.grammar import ast
from puppet_xpp.grammar.parser import parse
from puppet_xpp.server.analysis import features, references, rename
from puppet_xpp.server.analysis.document import LineIndex

MANIFEST = """\
class mymod::app (
  Integer $port = 80,
) {
  $url = "http://localhost:${port}/"
  notify { 'app':
    message => $url,
  }
  include mymod::db
}
class mymod::db {
  file { '/etc/db.conf':
    ensure => file,
  }
}
"""


@dataclass
class Source:
    """The parts of an analysis the features read (features.Analysed), from one plain parse."""

    text: str
    path: str = "/env/modules/mymod/manifests/init.pp"
    data: bytes = b""
    tokens: list[Any] = field(default_factory=list)
    program: ast.Program | None = None
    lines: LineIndex = field(default_factory=lambda: LineIndex(b""))

    def __post_init__(self) -> None:
        res = parse(self.text, self.path)
        self.data = self.text.encode()
        self.tokens = res.tokens
        self.program = res.program
        self.lines = LineIndex(self.data)


def places(text: str, pattern: str) -> list[tuple[int, int]]:
    """(line, column) of every match of ``pattern`` in ``text`` (ASCII text: columns are characters)."""
    out = []
    for m in re.finditer(pattern, text):
        line = text.count("\n", 0, m.start())
        out.append((line, m.start() - (text.rfind("\n", 0, m.start()) + 1)))
    return out


def test_refs_of_files_each_written_name_under_its_key() -> None:
    src = Source(MANIFEST)
    refs = references.refs_of(src, src.path)
    by_key: dict[Any, list[references.Ref]] = {}
    for r in refs:
        by_key.setdefault(r.key, []).append(r)

    # the parameter: its declaration and the use inside the string interpolation, nothing else
    port = sorted(by_key[("var", "mymod::app::port")], key=lambda r: r.start)
    assert [r.start for r in port] == places(MANIFEST, r"(?<=\$)port|(?<=\$\{)port")
    assert {r.role for r in port} == {"def", "read"}

    # the body variable: written once, read once, both owned by the class
    url = sorted(by_key[("var", "mymod::app::url")], key=lambda r: r.start)
    assert [r.start for r in url] == places(MANIFEST, r"(?<=\$)url")
    assert [r.role for r in url] == ["write", "read"]
    assert {r.owner for r in url} == {("class", "mymod::app")}

    # the included class: the include and its definition
    db = sorted(by_key[("class", "mymod::db")], key=lambda r: r.start)
    assert [r.start for r in db] == places(MANIFEST, r"(?<=include )mymod::db|(?<=class )mymod::db")
    assert [r.role for r in db] == ["ref", "def"]

    # a core resource type and its attribute
    assert [r.start for r in by_key[("type", "file")]] == places(MANIFEST, r"file(?= \{)")
    assert [r.start for r in by_key[("var", "file::ensure")]] == places(MANIFEST, r"ensure(?= =>)")


def test_parameter_rename_plan_edits_every_place_written() -> None:
    src = Source(MANIFEST)
    index = references.RefIndex()
    index.set_analysis(src.path, src)
    written = places(MANIFEST, r"(?<=\$)port|(?<=\$\{)port")
    line, col = written[1]  # the use in the string
    ref = references.ref_at(index.file_refs(src.path), line, col + 1)
    assert ref is not None and ref.key == ("var", "mymod::app::port")
    plan = rename.plan_rename(index, ref, "listen", lambda path: ["/env/modules"])
    assert sorted(plan.edits[src.path]) == [((ln, c), (ln, c + 4), "listen") for ln, c in written]
    assert plan.moves == []


def test_rename_refuses_what_puppet_sets() -> None:
    src = Source("class a { notify { $title: } }\n", "/env/manifests/site.pp")
    index = references.RefIndex()
    index.set_analysis(src.path, src)
    ref = references.ref_at(index.file_refs(src.path), 0, 21)
    assert ref is not None
    try:
        rename.check_renameable(index, ref)
    except rename.RenameError as e:
        assert "$title" in str(e)
    else:
        raise AssertionError("renaming $title was not refused")


def test_node_locator_computes_extents_once_per_program(monkeypatch: Any) -> None:
    src = Source(MANIFEST)
    calls = []
    real = features.extents

    def counting(program: ast.Program | None) -> features.Extents:
        calls.append(program)
        return real(program)

    monkeypatch.setattr(features, "extents", counting)
    off = MANIFEST.index("$url", MANIFEST.index("message")) + 2
    locator = features.NodeLocator(src.program)
    ref = features.reference_at(src, off, locator)
    assert ref is not None and ref[:2] == ("variable", "url")
    d = features.local_definition(src, ref, off, locator)
    assert isinstance(d, ast.VariableExpression) and d.offset == MANIFEST.index("$url")
    assert len(calls) == 1

    # without a locator each call computes its own (no state kept between calls)
    features.reference_at(src, off)
    features.reference_at(src, off)
    assert len(calls) == 3

    # a locator made for another Program is not used for this one
    other = Source("$x = 1\n")
    path = features.node_path(other.program, 1, locator)
    assert path and all(type(n) is not ast.HostClassDefinition for n in path)


def test_enclosing_resource_type_is_read_from_the_text() -> None:
    text = b"file { '/etc/x':\n  ensure => file,\n  mo"
    assert features.enclosing_resource_type(text, len(text)) == "file"
    text = b"if $x {\n  ens"
    assert features.enclosing_resource_type(text, len(text)) is None


def _apply(text: str, edits: list[Any]) -> str:
    """``text`` with the plan's edits ((line, column), (line, column), new text) applied (ASCII text)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for (l0, c0), (l1, c1), new in sorted(edits, reverse=True):
        a, b = starts[l0] + c0, starts[l1] + c1
        text = text[:a] + new + text[b:]
    return text


def test_rename_in_a_cloned_module_moves_the_file_where_puppet_autoloads_it(
    tmp_path: Any, oracle: Any
) -> None:
    """A module cloned as ``puppet-ntp/`` (metadata.json: ``someone-ntp``): renaming ``ntp::foo`` to
    ``ntp::bar`` moves ``manifests/foo.pp`` to ``manifests/bar.pp`` of the clone, and Puppet, with the
    renamed module installed under its name, finds every file where it belongs."""
    import json
    import os
    import shutil

    from puppet_xpp.xpp.environment import file_context

    clone = tmp_path / "puppet-ntp"
    (clone / "manifests").mkdir(parents=True)
    (clone / "metadata.json").write_text(json.dumps({"name": "someone-ntp", "version": "1.0.0"}))
    files = {
        clone / "manifests/init.pp": "class ntp {\n  include ntp::foo\n}\n",
        clone / "manifests/foo.pp": "class ntp::foo {\n  notify { 'x': }\n}\n",
    }
    index = references.RefIndex()
    for path, text in files.items():
        path.write_text(text)
        index.set_analysis(str(path), Source(text, str(path)))
    foo = str(clone / "manifests/foo.pp")
    ref = references.ref_at(index.file_refs(foo), 0, 8)
    assert ref is not None and ref.key == ("class", "ntp::foo")
    plan = rename.plan_rename(index, ref, "ntp::bar", lambda path: file_context(path).modulepath)
    assert plan.moves == [(foo, str(clone / "manifests/bar.pp"))]
    for path, edits in plan.edits.items():
        with open(path) as f:
            text = _apply(f.read(), edits)
        with open(path, "w") as f:
            f.write(text)
    for old, new in plan.moves:
        os.rename(old, new)
    installed = tmp_path / "env/modules/ntp"
    shutil.copytree(clone, installed)
    for rel in ("manifests/init.pp", "manifests/bar.pp"):
        found = oracle.call("validate", file=str(installed / rel), modulepath=[str(tmp_path / "env/modules")])
        assert found == [], (rel, found)
    assert "ntp::bar" in (installed / "manifests/init.pp").read_text()


def test_a_query_during_the_decode_waits_for_the_files_read_again(tmp_path: Any, monkeypatch: Any) -> None:
    """The indexing decodes the encoded references on a thread of its own; a record that does not
    decode has its file read again -- and a query that comes meanwhile waits for that file instead of
    answering without it (tests/lsp/test_index_cache.py's damaged record failed so under CI's load:
    the query found nothing left encoded while the file was being read again)."""
    import threading

    from puppet_xpp.server.analysis import index as index_module

    path = tmp_path / "init.pp"
    path.write_text("class other { }\ninclude other\n")
    refs = references.RefIndex()
    refs.set_file(str(path), b"not the references")
    entered, release = threading.Event(), threading.Event()
    real = index_module.index_file

    def slow_index_file(*args: Any, **kw: Any) -> Any:
        entered.set()
        release.wait(10)
        return real(*args, **kw)

    monkeypatch.setattr(index_module, "index_file", slow_index_file)
    decoding = threading.Thread(target=refs.decode_pending)
    decoding.start()
    assert entered.wait(10)
    answer: list[Any] = []
    query = threading.Thread(target=lambda: answer.append(refs.refs(("class", "other"))))
    query.start()
    query.join(0.3)
    assert not answer, "the query answered while the file was being read again"
    release.set()
    decoding.join(10)
    query.join(10)
    assert [(r.path, r.role) for r in answer[0]] == [(str(path), "def"), (str(path), "ref")]
