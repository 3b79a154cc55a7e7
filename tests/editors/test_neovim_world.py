"""Neovim (0.7 and, when installed, 0.11) completes `stdlib::` names of a module's Ruby functions
through omni-completion (issue 15): the plugin sets 'omnifunc' and its key mappings on attach, and
the server's completion items carry a textEdit over the whole `stdlib::` prefix, which Neovim's
omnifunc takes as the completion's start column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.editors import REPO, editor_tool_missing, nvim_binaries, run_nvim_script, server_wrapper

SCRIPT = Path(__file__).with_name("nvim_omni.lua")
LINE = "$x = stdlib::"


def _workspace(tmp_path: Path) -> Path:
    env = tmp_path / "production"
    files = {
        "environment.conf": "modulepath = modules\n",
        "manifests/site.pp": LINE + " \n",
        "modules/stdlib/metadata.json": '{"name": "puppetlabs-stdlib"}\n',
        "modules/stdlib/lib/puppet/functions/stdlib/merge_all.rb": (
            "Puppet::Functions.create_function(:'stdlib::merge_all') do\n"
            "  dispatch :m do\n    repeated_param 'Hash', :hashes\n  end\nend\n"
        ),
        "modules/stdlib/lib/puppet/parser/functions/stdlib_legacy.rb": (
            "module Puppet::Parser::Functions\n  newfunction(:'stdlib::legacy', :arity => 1) do |a|\n  end\nend\n"
        ),
    }
    for rel, text in files.items():
        p = env / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return env


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_neovim_omnifunc_completes_stdlib_names(version, tmp_path):
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version} (installed by .ci/editors)")
    env = _workspace(tmp_path)
    wrapper = server_wrapper(tmp_path / "bin")
    spec = {
        "plugin_dir": str(REPO / "editors" / "neovim"),
        "cmd": [str(wrapper), "--stdio"],
        "settings": {"xppOnSave": False},
        "manifest": str(env / "manifests" / "site.pp"),
        "line": 0,
        "col": len(LINE),
        "result": str(tmp_path / "result.json"),
        "step_ms": 30000,
    }
    res = run_nvim_script(nvim, SCRIPT, tmp_path, spec, 120)
    out = res.pop("_output")[-6000:]
    ctx = json.dumps(res, indent=1) + "\n" + out
    assert res["nvim"].startswith(version + "."), ctx
    assert "error" not in res and res["attached"], ctx
    assert res["omnifunc"] == "v:lua.vim.lsp.omnifunc", ctx
    assert res["maps"] == {"gd": True, "K": True, "ck": True}, ctx
    got = res["complete"]
    assert got is not None, ctx
    # the completion starts at `stdlib::` (column 6, 1-based), not after the last `:`
    assert got["startcol"] == LINE.index("stdlib") + 1, ctx
    assert {"stdlib::merge_all", "stdlib::legacy"} <= set(got["words"]), ctx
