"""xpp.runtime.load_or_parse: PRFC-23's rule (use the .xpp when it loads, else log why and parse)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys

import pytest

from puppet_xpp.grammar import pn
from puppet_xpp.grammar.parser import parse
from puppet_xpp.xpp.runtime import load_or_parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# parses, but validation fails (a variable of another namespace assigned)
INVALID = "class base::invalid {\n  $base::other = 1\n  notice($base::other)\n}\n"
# a result that depends on the level and strict (grammar.levels.depends_on): the .xpp records both
DUPLICATE = "class base::dup {\n  $h = {a => 1, a => 2}\n  notice($h)\n}\n"


@pytest.fixture()
def env(tmp_path):
    d = tmp_path / "production"
    shutil.copytree(os.path.join(ROOT, "examples", "production"), d, ignore=shutil.ignore_patterns(".xpp"))
    (d / "modules" / "base" / "manifests" / "broken.pp").write_text("class base::broken {\n  $x = [1, 2\n}\n")
    (d / "modules" / "base" / "manifests" / "invalid.pp").write_text(INVALID)
    (d / "modules" / "base" / "manifests" / "dup.pp").write_text(DUPLICATE)
    out = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--compile", str(d), "--puppet-version", "8"],
        cwd=ROOT,
        capture_output=True,
        text=True,
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


def _xpp(env, name):
    return env / ".xpp" / "modules" / "base" / "manifests" / f"{name}.xpp"


def test_validation_error_keeps_the_ast_and_is_refused(env, oracle):
    """PRFC-23: an AST plus the errors.  The .xpp of a manifest that parses but fails validation holds
    the Program (Puppet's own parse of it) and the error; the runtime refuses it as Puppet does."""
    from puppet_xpp.xpp.result import read_document
    from puppet_xpp.xpp.runtime import ParseRefused

    pp = env / "modules" / "base" / "manifests" / "invalid.pp"
    doc = read_document(_xpp(env, "invalid").read_bytes())
    assert doc.program is not None
    want = [d for d in oracle.call("validate", file=str(pp)) if d["severity"] == "error"]
    assert [(d["issue_code"], d["message"], d["line"], d["pos"]) for d in doc.diagnostics] == [
        (d["code"], d["message"], d["line"], d["pos"]) for d in want
    ]
    assert pn.to_data(pn.transform(doc.program)) == oracle.call("pn", file=str(pp))
    res = load_or_parse(str(pp), env_dir=str(env))
    assert res.origin == "xpp" and res.program is not None and res.refused
    with pytest.raises(ParseRefused) as e:
        res.raise_errors()
    assert str(e.value) == want[0]["message"]


def test_dump_of_such_an_xpp_shows_both(env, oracle):
    pp = env / "modules" / "base" / "manifests" / "invalid.pp"
    out = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--dump", str(_xpp(env, "invalid"))],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert json.loads(out.stdout) == oracle.call("pn", file=str(pp))
    want = [d for d in oracle.call("validate", file=str(pp)) if d["severity"] == "error"]
    assert want and want[0]["message"] in out.stderr


def test_other_settings_are_not_used(env, caplog):
    from puppet_xpp.xpp.result import read_document

    pp = str(env / "modules" / "base" / "manifests" / "dup.pp")
    recorded = read_document(_xpp(env, "dup").read_bytes()).settings
    assert set(recorded) == {"puppet_version", "strict", "tasks"}
    other = next(v for v in ("8", "7", "7.23") if v != recorded["puppet_version"])
    with caplog.at_level(logging.WARNING, logger="puppet-xpp.runtime"):
        res = load_or_parse(pp, env_dir=str(env), puppet_version=other, strict=recorded["strict"])
    assert res.origin == "pp" and "other settings" in res.reason and "puppet_version" in res.reason
    res = load_or_parse(pp, env_dir=str(env), strict="off" if recorded["strict"] != "off" else "error")
    assert res.origin == "pp" and "strict" in res.reason
    res = load_or_parse(
        pp, env_dir=str(env), puppet_version=recorded["puppet_version"], strict=recorded["strict"]
    )
    assert res.origin == "xpp"


def test_stale_xpp_without_a_program(env):
    """A syntax error: no Program to compare; the recorded source digest tells the .xpp is stale."""
    pp = env / "modules" / "base" / "manifests" / "broken.pp"
    assert load_or_parse(str(pp), env_dir=str(env)).origin == "xpp"
    pp.write_text("class base::broken {\n  $x = [1, 2]\n}\n")
    res = load_or_parse(str(pp), env_dir=str(env))
    assert res.origin == "pp" and "digest" in res.reason and not res.refused


def test_checksum_catches_a_flipped_bit(env):
    data = bytearray(_xpp(env, "init").read_bytes())
    data[-5] ^= 0x01
    _xpp(env, "init").write_bytes(bytes(data))
    res = load_or_parse(_init(env), env_dir=str(env))
    assert res.origin == "pp" and "checksum" in res.reason


def test_diagnostics_only_xpp_without_source_digest_is_not_used(env):
    """Nothing tells whether such a file is current (another writer, or no source to digest)."""
    from puppet_xpp.xpp.result import read_document, write_xpp

    xpp = _xpp(env, "broken")
    doc = read_document(xpp.read_bytes())
    assert doc.program is None and doc.source_sha256
    xpp.write_bytes(write_xpp(None, doc.diagnostics))
    assert read_document(xpp.read_bytes()).source_sha256 is None
    res = load_or_parse(str(env / "modules" / "base" / "manifests" / "broken.pp"), env_dir=str(env))
    assert res.origin == "pp" and "source digest" in res.reason and res.refused


def test_one_currency_rule_for_runtime_and_compile(env):
    """xpp.compile.current reads the envelope only: the source digest and the recorded settings decide,
    for --compile and for the runtime alike."""
    from puppet_xpp.xpp.compile.current import currency, is_current
    from puppet_xpp.xpp.envelope import unwrap

    pp = env / "modules" / "base" / "manifests" / "dup.pp"
    _fmt, params, _payload = unwrap(_xpp(env, "dup").read_bytes())
    source = pp.read_bytes()
    assert is_current(params, source, {"puppet_version": "8", "strict": None, "tasks": False})
    assert is_current(params, source.decode(), {})
    assert currency(params, source + b"\n", {}).digest == "differs"
    assert currency(params, source, {"puppet_version": "7.23", "tasks": True}).other_settings == (
        "puppet_version",
        "tasks",
    )
    without = {k: v for k, v in params.items() if k != "source-sha256"}
    assert currency(without, source, {}).digest == "missing"
    # the runtime says why by the same rule
    res = load_or_parse(str(pp), env_dir=str(env), puppet_version="7.23")
    assert res.origin == "pp" and "puppet_version=8 (running: 7.23)" in res.reason


def test_main_manifest_outside_the_environment_is_loaded_from_where_compile_put_it(tmp_path, caplog):
    """environment.conf's ``manifest`` outside the environment: --compile writes its .xpp under
    .xpp/modules/environment/manifests/<name> (docs/xpp-format.md); the Python runtime finds it there."""
    env = tmp_path / "production"
    (env / "modules").mkdir(parents=True)
    shared = tmp_path / "shared"
    shared.mkdir()
    site = shared / "site.pp"
    site.write_text("node default {\n  notice('hello')\n}\n")
    (env / "environment.conf").write_text(f"manifest = {site}\n")
    out = subprocess.run(
        [sys.executable, "-m", "puppet_xpp", "--compile", str(env), "--puppet-version", "8"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    written = env / ".xpp" / "modules" / "environment" / "manifests" / "site.xpp"
    assert written.is_file()
    with caplog.at_level(logging.WARNING):
        res = load_or_parse(str(site), env_dir=str(env))
    assert (res.origin, res.reason, res.xpp_path) == ("xpp", None, str(written))
    assert not caplog.records
    # a file the compile skips has no .xpp: parsed
    other = tmp_path / "x.pp"
    other.write_text("notice(1)\n")
    res = load_or_parse(str(other), env_dir=str(env))
    assert (res.origin, res.xpp_path) == ("pp", None)
