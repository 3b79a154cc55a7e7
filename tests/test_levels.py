"""The language level (grammar/levels.py) reaches every entry point: ``--validate``, ``--dump``,
``--compile`` (both forms, and its settings fingerprint), the language server's ``puppetVersion`` and the
``.xpp`` it writes.  What each level reports is checked against Puppet 7.23 and OpenVox 8 in
tests/test_validator.py; here: that the setting arrives, its default, and that an explicit strict wins."""

from __future__ import annotations

import io
import json

import pytest

from puppet_xpp.grammar import levels
from puppet_xpp.server.cli import compile as cmd_compile
from puppet_xpp.server.cli import dump as cmd_dump
from puppet_xpp.xpp.result import read_document

SOURCE = "class m(Integer[$x] $p = 1) {\n  $h = {a => 1, a => 2}\n  notify { $h: }\n}\n"


@pytest.fixture
def env(tmp_path):
    root = tmp_path / "production"
    (root / "modules" / "m" / "manifests").mkdir(parents=True)
    (root / "manifests").mkdir()
    (root / "modules" / "m" / "manifests" / "init.pp").write_text(SOURCE)
    return root


def _compile(*argv):
    out, err = io.StringIO(), io.StringIO()
    rc = cmd_compile.main([*argv, "-j", "1"], out=out, err=err)
    return rc, out.getvalue()


def _recorded(env):
    doc = read_document((env / ".xpp/modules/m/manifests/init.xpp").read_bytes())
    codes = sorted((d["severity"], d["issue_code"]) for d in doc.diagnostics)
    return doc.settings, codes


def test_level_table_and_defaults():
    assert levels.DEFAULT_LEVEL == "8" and list(levels.LEVELS) == ["8", "7", "7.23"]
    assert [levels.resolve_strict(n, None) for n in levels.LEVELS] == ["error", "warning", "warning"]
    assert levels.resolve_strict("8", "off") == "off"
    with pytest.raises(ValueError):
        levels.level("9")


def test_compile_records_the_level_and_a_change_rebuilds(env):
    rc, out = _compile(str(env), "--puppet-version", "8")  # (the default, auto, asks the puppet on PATH)
    assert rc == 1 and "compiled 1," in out  # level 8: DUPLICATE_KEY is an error
    settings, codes = _recorded(env)
    assert settings.get("puppet_version") == "8" and settings.get("strict") == "error"
    assert codes == [("deprecation", "ILLEGAL_NONLITERAL_PARAMETER_TYPE"), ("error", "DUPLICATE_KEY")]
    assert "up to date 1," in _compile(str(env), "--puppet-version", "8")[1]
    rc, out = _compile(str(env), "--puppet-version", "7.23")
    assert rc == 0 and "compiled 1," in out  # the level is in the settings fingerprint
    settings, codes = _recorded(env)
    assert settings.get("puppet_version") == "7.23" and settings.get("strict") == "warning"
    assert codes == [("warning", "DUPLICATE_KEY")]
    rc, out = _compile(str(env), "--puppet-version", "7.23", "--strict", "error")
    assert rc == 1 and "compiled 1," in out  # an explicit strict wins over the level's default
    rc, out = _compile(str(env), "--puppet-version", "7")
    settings, codes = _recorded(env)
    assert rc == 0 and settings.get("puppet_version") == "7"
    assert codes == [("deprecation", "ILLEGAL_NONLITERAL_PARAMETER_TYPE"), ("warning", "DUPLICATE_KEY")]


def test_compile_one_file_takes_the_level(env, tmp_path):
    src = str(env / "modules/m/manifests/init.pp")
    out = tmp_path / "one.xpp"
    for level, strict in (("8", "error"), ("7", "warning"), ("7.23", "warning")):
        rc, _ = _compile(src, "-o", str(out), "--puppet-version", level)
        doc = read_document(out.read_bytes())
        assert doc.settings.get("puppet_version") == level and doc.settings.get("strict") == strict
        assert rc == (1 if strict == "error" else 0)


def test_dump_accepts_the_level(env, capsys):
    src = str(env / "modules/m/manifests/init.pp")
    assert cmd_dump.main([src, "--format", "pn", "--puppet-version", "7.23"]) == 0
    assert capsys.readouterr().out.startswith(f"--- {src}")  # parsing is the same at every level
    assert cmd_dump.main([src, "--format", "jsonl", "--puppet-version", "8"]) == 0
    rec = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert rec["pn"] is not None


def test_language_server_setting_reaches_the_validator(env):
    from puppet_xpp.grammar.check import check
    from puppet_xpp.server.analysis.workspace import Settings, check_config_for

    path = str(env / "modules/m/manifests/init.pp")
    got = {}
    for pv in ("8", "7", "7.23"):
        cfg = check_config_for(path, Settings.from_dict({"puppetVersion": pv}))
        vd = check(SOURCE, cfg).validation
        got[pv] = sorted((d.severity, d.code) for d in vd)
    assert got["8"] == [("deprecation", "ILLEGAL_NONLITERAL_PARAMETER_TYPE"), ("error", "DUPLICATE_KEY")]
    assert got["7"] == [("deprecation", "ILLEGAL_NONLITERAL_PARAMETER_TYPE"), ("warning", "DUPLICATE_KEY")]
    assert got["7.23"] == [("warning", "DUPLICATE_KEY")]
    cfg = check_config_for(path, Settings.from_dict({"puppetVersion": "7.23", "strict": "error"}))
    assert [d.severity for d in check(SOURCE, cfg).validation] == ["error"]
