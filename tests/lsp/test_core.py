"""Unit tests of the language server's core (no protocol): positions, settings, environments."""

from __future__ import annotations

import os

from puppet_xpp.grammar.check import CheckConfig
from puppet_xpp.server.analysis.document import Document, GcPacer, LineIndex
from puppet_xpp.server.analysis.features import completion_context, document_symbols, folding_ranges
from puppet_xpp.server.analysis.workspace import Settings, file_context, find_environment
from puppet_xpp.xpp.compile.layout import xpp_target

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = os.path.join(REPO, "examples", "production")


def test_positions_utf16_utf8_utf32():
    text = "a😀é\nxy\n"
    data = text.encode()
    # the byte offset of 'é' is 1 + 4
    for enc, col in (("utf-16", 3), ("utf-8", 5), ("utf-32", 2)):
        li = LineIndex(data, encoding=enc)
        assert li.position(5) == (0, col)
        assert li.offset(0, col) == 5
        assert li.position(len("a😀é\n".encode()) + 1) == (1, 1)
    # a column past the end of a line clamps to the line end
    assert LineIndex(data).offset(1, 99) == len("a😀é\nxy".encode())


def test_document_applies_utf16_ranges():
    d = Document("file:///x.pp", "$a = '😀'\n$b = 1\n", 1, CheckConfig(file="x.pp"))
    d.apply_change(((0, 9), (0, 9)), "é")  # after the astral character (2 UTF-16 units) and its quote
    assert d.text == "$a = '😀'é\n$b = 1\n"
    d.apply_change(((1, 0), (1, 2)), "$c")
    assert d.text.endswith("$c = 1\n")


def test_settings_from_client_dict():
    s = Settings.from_dict(
        {"puppet": {"modulepath": ["mods", "/abs"], "strict": "error", "tasks": True, "xppOnSave": False}},
        root="/ws",
    )
    assert s.modulepath == ("/ws/mods", "/abs") and s.strict == "error" and s.tasks and not s.xpp_on_save
    assert Settings.from_dict({"strict": "bogus"}).strict is None  # unset: the language level's default
    assert Settings.from_dict({"puppetVersion": "7.23"}).puppet_version == "7.23"
    assert Settings.from_dict({"puppetVersion": 8}).puppet_version == "8"
    assert Settings.from_dict({"puppetVersion": "6"}).puppet_version == "8"  # unknown: the default


def test_environment_detection_and_xpp_target():
    init = os.path.join(ENV, "modules", "base", "manifests", "init.pp")
    env = find_environment(init)
    assert env is not None and env.root == ENV and env.modulepath == (os.path.join(ENV, "modules"),)
    ctx = file_context(init, Settings())
    assert ctx.modulepath == env.modulepath and not ctx.tasks
    t = xpp_target(env.root, env.modulepath, init)
    assert t.out_path == os.path.join(ENV, ".xpp", "modules", "base", "manifests", "init.xpp")
    assert t.recorded == "modules/base/manifests/init.pp"
    # a module outside any environment: its parent directory is the module path
    vhost = "/usr/share/puppet/modules/apache/manifests/vhost.pp"
    if os.path.exists(vhost):
        assert file_context(vhost, Settings()).modulepath[0] == "/usr/share/puppet/modules"
    assert file_context("/x/plans/p.pp", Settings()).tasks


def test_module_location_rule_uses_the_module_path():
    path = os.path.join(ENV, "modules", "base", "manifests", "user.pp")
    ctx = file_context(path, Settings())
    cfg = CheckConfig(file=path, modulepath=ctx.modulepath, manifest=ctx.manifest)
    d = Document("file://" + path, "class wrong::name {}\n", 1, cfg)
    codes = [x.code for x in d.analysis().diagnostics]
    assert "ILLEGAL_DEFINITION_LOCATION" in codes


def test_features_on_a_broken_file():
    text = "class a {\n  file { '/x': }\n}\n$x = = 1\nclass b {\n}\n"
    d = Document("file:///t.pp", text, 1, CheckConfig(file="t.pp"))
    an = d.analysis()
    assert [s["name"] for s in document_symbols(an)] == ["a", "b"]
    assert (0, 1, None) in folding_ranges(an)


def test_completion_context():
    text = "file { '/x':\n  own\n}\n$fo"
    d = Document("file:///t.pp", text, 1, CheckConfig(file="t.pp"))
    an = d.analysis()
    assert completion_context(an, text.index("own") + 3) == ("attribute", "own", "file")
    assert completion_context(an, len(text)) == ("variable", "fo", None)


def test_analysis_leaves_its_objects_to_reference_counting():
    """After an analysis, what it keeps is frozen out of the cyclic GC (its full passes over a large
    file's AST would land on a keystroke: server.analysis.document.GcPacer) and reference counting still
    frees what the next analysis replaces; a full collection is due after GcPacer.FULL_EVERY analyses."""
    import gc

    pacer = GcPacer()
    text = "class c {\n" + "".join(f"  file {{ '/tmp/f{i}': ensure => file }}\n" for i in range(300)) + "}\n"
    d = Document("file:///c.pp", text, 1, CheckConfig(file="c.pp"), gc_pacer=pacer)
    d.analysis()
    frozen = gc.get_freeze_count()
    assert frozen > 3000 and len(gc.get_objects(generation=2)) < 1000, (frozen, gc.get_count())
    at = text.splitlines()[1].index("ensure")
    d.apply_change(((1, at), (1, at)), "x")
    d.analysis()
    assert len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1)) < 50
    pacer.count = GcPacer.FULL_EVERY - 1
    assert not pacer.due
    d.apply_change(((1, at), (1, at + 1)), "")
    d.analysis()
    assert pacer.due
    pacer.full_collect()
    assert not pacer.due and gc.get_freeze_count() > 0
