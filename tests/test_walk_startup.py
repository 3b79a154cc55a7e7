"""The directory walk's import stays cheap: pathspec without typing_extensions' asyncio (xpp/walk.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_walk_import_does_not_import_asyncio() -> None:
    baseline = _modules_after("pass")
    if "asyncio" in baseline:
        pytest.skip("this interpreter imports asyncio at start-up (site)")
    loaded = _modules_after("import puppet_xpp.xpp.walk")
    assert "pathspec" in loaded
    assert "asyncio" not in loaded
    # typing_extensions is hidden only during the import: importable afterwards, and its real module
    loaded = _modules_after(
        "import puppet_xpp.xpp.walk\nimport typing_extensions\nassert typing_extensions.deprecated"
    )
    assert "typing_extensions" in loaded


def test_walk_ignores_still_match_after_cheap_import(tmp_path: object) -> None:
    code = (
        "from puppet_xpp.xpp.walk import _spec\n"
        "spec = _spec(('/pkg/', '*.bak', '!keep.bak', 'a/**/b'))\n"
        "assert spec.match_file('pkg/x.pp') and spec.match_file('y.bak')\n"
        "assert not spec.match_file('keep.bak') and spec.match_file('a/x/y/b')\n"
        "assert not spec.match_file('m/pkg2/x.pp')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pcore_checkers_compiled_on_first_use() -> None:
    """Importing the Pcore package compiles no checker (xpp/pcore/nodes.py); the Python writer's first
    write of a class compiles its checker and puts it in the stub's place (the C writer checks in C); a
    stub kept by a caller still checks."""
    code = (
        "from puppet_xpp.xpp.pcore.nodes import INFO\n"
        "from puppet_xpp.grammar import ast\n"
        "infos = list(INFO.values())\n"
        "assert all('_deferred_checker' in i.checks.__qualname__ for i in infos)\n"
        "assert all('_deferred_checker' in i.wchecks.__qualname__ for i in infos)\n"
        "from puppet_xpp.grammar.parser import parse\n"
        "from puppet_xpp.xpp.pcore.write import dumps_msgpack_python\n"
        "prog = parse('$a = 1', 'x.pp').program\n"
        "info = INFO[type(prog)]\n"
        "stub = info.wchecks\n"
        "dumps_msgpack_python(prog)\n"
        "assert '_deferred_checker' not in info.wchecks.__qualname__\n"
        "assert stub(info.getter(prog)) == -1\n"
        "bad = info.getter(prog)\n"
        "assert stub((bad[0], 'not an int') + tuple(bad[2:])) == 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_patterns_merged_into_one_search_decide_as_pathspec() -> None:
    """A layer without negations is searched with one merged expression (xpp.walk._any_of): on random
    pattern sets and paths, it skips exactly what pathspec's gitignore rules skip; PDK's defaults take
    the merged search, a set with a negation does not."""
    import dataclasses
    import random

    from puppet_xpp.xpp import walk

    assert walk._any_of(walk.PDK_IGNORED) is not None
    assert walk._any_of(("*.pp", "!keep.pp")) is None
    vocabulary = list(walk.PDK_IGNORED) + [
        "*.bak",
        "/build/",
        "a/**/b",
        "**/tmp",
        "docs/*.md",
        "x?y",
        "[ab]c/",
        "# comment",
        "\\#hash",
        "spec/",
        "/manifests/private/",
        "*.pp",
        "!keep.pp",
        "deep/**",
        "trailing\\ ",
        "~*",
    ]
    names = [
        "pkg",
        "spec",
        "fixtures",
        "a",
        "b",
        "x1y",
        "ac",
        "bc",
        "tmp",
        "docs",
        "r.md",
        "v.pp",
        "keep.pp",
        ".git",
        ".hidden",
        "~lock",
        "build",
        "deep",
        "manifests",
        "private",
        "f.bak",
    ]
    rng = random.Random(7)
    checked = 0
    for _ in range(300):
        lines = tuple(rng.sample(vocabulary, rng.randint(1, 8)))
        fast = walk.Ignores()
        fast.add("/r", lines)
        slow = walk.Ignores([dataclasses.replace(layer, any_of=None) for layer in fast.layers])
        for _ in range(20):
            path = "/r/" + "/".join(rng.choice(names) for _ in range(rng.randint(1, 5)))
            is_dir = rng.random() < 0.4
            assert fast.ignored(path, is_dir) == slow.ignored(path, is_dir), (lines, path, is_dir)
            checked += fast.layers[0].any_of is not None
    assert checked > 1000
