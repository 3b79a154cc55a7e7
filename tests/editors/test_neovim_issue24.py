"""The editor defects of issue 24 in a real headless Neovim (0.11, and 0.7 where its API allows) through
the plugin's LSP client: signature help keeps the signature and the active parameter inside a string
or a hash argument, ``include mod::`` completes classes only (a resource position both classes and
defined types), and hover on a fact shows Facter's schema's description and type and the value
from the facts file of the settings (``facter --json`` output, compared with that output)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.editors import REPO, editor_tool_missing, nvim_binaries, run_nvim_script, server_wrapper
from tests.lsp.test_facts import schema_entry

SCRIPT = Path(__file__).with_name("nvim_issue24.lua")

HEAD = [
    'function sig::pair(String $first, String $second) >> String { "${first}${second}" }',
    "function sig::opts(Hash $options, Integer $count = 1) >> Integer { $count }",
    "class incl::server {}",
    "define incl::vhost() {}",
    "class incl {",
]


def _case(name: str, kind: str, line: str) -> dict:
    """A case whose cursor is at the ``|`` of ``line`` (the class body's one line); a space follows
    it, so that Neovim's Normal-mode cursor can stand right after the text."""
    col = line.index("|")
    text = line.replace("|", "") + " "
    return {"name": name, "kind": kind, "lines": [*HEAD, text, "}"], "line": len(HEAD), "col": col}


def _facter_json(directory: Path) -> tuple[Path, dict]:
    facter = shutil.which("facter")
    if facter is None:
        pytest.skip("facter is not installed")
    run = subprocess.run(  # (facter exits 1 after a fact it may not read, e.g. in a container)
        [facter, "--json", "--show-legacy"], capture_output=True, text=True, timeout=300, check=False
    )
    path = directory / "facter.json"
    path.write_text(run.stdout)
    return path, json.loads(run.stdout)


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_neovim_issue24_editor_defects(version, tmp_path):
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version} (installed by .ci/editors)")
    facts_file, facts = _facter_json(tmp_path)
    env = tmp_path / "production"
    (env / "manifests").mkdir(parents=True)
    (env / "environment.conf").write_text("modulepath = modules\n")
    manifest = env / "manifests" / "site.pp"
    manifest.write_text("\n".join([*HEAD, "}"]) + "\n")
    cases = [
        _case("sig_string", "signature", "  $x = sig::pair('a', 'b|"),
        _case("sig_hash", "signature", "  $x = sig::opts({ |"),
        _case("sig_hash_member", "signature", "  $x = sig::opts({ 'k' => 'v', |"),
        _case("include", "complete", "  include incl::|"),
        _case("resource", "complete", "  incl::|"),
        _case("fact_family", "hover", "  $x = $facts['os']['fa|mily']"),
        _case("fact_legacy", "hover", "  $x = $::osf|amily"),
    ]
    spec = {
        "plugin_dir": str(REPO / "editors" / "neovim"),
        "cmd": [str(server_wrapper(tmp_path / "bin")), "--stdio"],
        "settings": {"xppOnSave": False, "lint": {"enabled": False}, "facts": {"file": str(facts_file)}},
        "manifest": str(manifest),
        "cases": cases,
        "result": str(tmp_path / "result.json"),
        "step_ms": 30000,
    }
    res = run_nvim_script(nvim, SCRIPT, tmp_path, spec, 180)
    out = res.pop("_output")[-6000:]
    ctx = json.dumps(res, indent=1) + "\n" + out
    assert res["nvim"].startswith(version + "."), ctx
    assert "error" not in res and res["attached"], ctx
    got = res["cases"]

    # signature help inside the second string, inside a hash argument
    assert got["sig_string"] == {
        "label": "sig::pair(String $first, String $second) >> String",
        "active_parameter": 1,
    }, ctx
    for name in ("sig_hash", "sig_hash_member"):
        assert got[name]["label"].startswith("sig::opts(Hash $options"), ctx
        assert got[name]["active_parameter"] == 0, ctx

    # include takes classes only; a resource position both
    words = set(got["include"]["words"])
    assert "incl::server" in words and "incl::vhost" not in words, ctx
    assert {"incl::server", "incl::vhost"} <= set(got["resource"]["words"]), ctx

    # hover on facts: Facter's schema, and the value facter reported
    typ, desc = schema_entry(["os", "family"])
    text = got["fact_family"]
    assert isinstance(text, str) and "os.family" in text and typ in text, ctx
    assert " ".join(desc.split()) in " ".join(text.split()), ctx
    assert facts["os"]["family"] in text, ctx
    typ, desc = schema_entry(["osfamily"])
    text = got["fact_legacy"]
    assert isinstance(text, str) and " ".join(desc.split()) in " ".join(text.split()), ctx
    assert facts["osfamily"] in text, ctx
