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
