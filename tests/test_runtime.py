"""xpp.runtime.load_or_parse: PRFC-23's rule (use the .xpp when it loads, else log why and parse)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys

import pytest

from puppet_xpp.grammar.parser import parse
from puppet_xpp.xpp.runtime import load_or_parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture()
def env(tmp_path):
    d = tmp_path / "production"
    shutil.copytree(os.path.join(ROOT, "examples", "production"), d, ignore=shutil.ignore_patterns(".xpp"))
    (d / "modules" / "base" / "manifests" / "broken.pp").write_text("class base::broken {\n  $x = [1, 2\n}\n")
    out = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--compile", str(d)], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 1, out.stderr  # the broken manifest
    return d


def _init(env):
    return str(env / "modules" / "base" / "manifests" / "init.pp")


def test_loads_the_xpp(env, caplog):
    pp = _init(env)
    with caplog.at_level(logging.WARNING):
        res = load_or_parse(pp, env_dir=str(env))
    assert res.origin == "xpp" and res.reason is None and not caplog.records
    with open(pp, encoding="utf-8") as f:
        text = f.read()
    # the recorded name is relative to the environment; the AST is the parser's
    assert res.program == parse(text, "modules/base/manifests/init.pp").program


def test_an_xpp_of_a_broken_manifest_holds_its_diagnostics(env):
    res = load_or_parse(str(env / "modules" / "base" / "manifests" / "broken.pp"), env_dir=str(env))
    assert res.origin == "xpp"
    assert [d.code for d in res.diagnostics if d.severity == "error"][:1] == ["SYNTAX_ERROR"]


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage", "stale"])
def test_falls_back_to_the_source_and_says_why(env, damage, caplog):
    pp = _init(env)
    xpp = env / ".xpp" / "modules" / "base" / "manifests" / "init.xpp"
    data = xpp.read_bytes()
    if damage == "missing":
        xpp.unlink()
    elif damage == "truncated":
        xpp.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        xpp.write_bytes(b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n\xc1\xc1")
    else:
        with open(pp, "a", encoding="utf-8") as f:
            f.write("\n# edited after the compile\n")
    with caplog.at_level(logging.WARNING, logger="puppet-xpp.runtime"):
        res = load_or_parse(pp, env_dir=str(env))
    assert res.origin == "pp" and res.reason
    assert any(res.reason in r.getMessage() for r in caplog.records)
    with open(pp, encoding="utf-8") as f:
        assert res.program == parse(f.read(), pp).program
    assert not [d for d in res.diagnostics if d.severity == "error"]


def test_outside_any_environment(tmp_path):
    pp = tmp_path / "x.pp"
    pp.write_text("notice(1)\n")
    res = load_or_parse(str(pp))
    assert res.origin == "pp" and "no environment" in res.reason and res.program is not None
