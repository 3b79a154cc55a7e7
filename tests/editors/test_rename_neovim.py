"""Rename a class from a real headless Neovim (0.7's ``start_client`` path and 0.11's ``vim.lsp.start``)
through editors/neovim and the real server: ``vim.lsp.buf.rename`` must move the class's file to where
Puppet's autoloader looks for the new name and edit every reference; then Puppet compiles the
environment (``puppet apply --noop --strict_variables``) and our validator reports no location error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.editors import REPO, editor_tool_missing, nvim_binaries, run_nvim_script, server_wrapper
from tests.lsp.test_references import (
    build_workspace,
    location_errors,
    name_pattern,
    occurrences,
    puppet_compile,
)

SCRIPT = Path(__file__).with_name("nvim_rename.lua")


def _run(nvim: str, tmp_path: Path, spec: dict, timeout: float = 240) -> dict:
    return run_nvim_script(nvim, SCRIPT, tmp_path, spec, timeout)


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_neovim_renames_a_class(version, tmp_path):
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version} (installed by .ci/editors)")
    env = build_workspace(tmp_path / "ws")
    manifest = os.path.join(env, "modules/mymod/manifests/app.pp")
    target = os.path.join(env, "modules/mymod/manifests/web/frontend.pp")
    uses = occurrences(env, name_pattern("mymod::app"))
    wrapper = server_wrapper(tmp_path / "bin")
    spec = {
        "plugin_dir": str(REPO / "editors" / "neovim"),
        "cmd": [str(wrapper), "--stdio"],
        "manifest": manifest,
        "cursor": [1, 8],  # on `mymod::app` in `class mymod::app (`
        "new_name": "mymod::web::frontend",
        "target": target,
        "expect_refs": len(uses),
        "result": str(tmp_path / "result.json"),
        "step_ms": 60000,
    }
    res = _run(nvim, tmp_path, spec)
    ctx = json.dumps(res, indent=1)
    assert "error" not in res, ctx
    assert all(s["ok"] for s in res["steps"].values()) and set(res["steps"]) == {
        "attach",
        "indexed",
        "moved",
    }, ctx
    assert res["references"] == len(uses), ctx
    assert res["modified"] == [], ctx
    # the file moved, the definition and every reference carry the new name
    assert not os.path.exists(manifest) and os.path.isfile(target), ctx
    assert "class mymod::web::frontend (" in open(target).read()
    assert occurrences(env, r"(?i)(mymod::app)\b") == set()
    assert occurrences(env, name_pattern("mymod::web::frontend")) == {
        (p if p != "modules/mymod/manifests/app.pp" else "modules/mymod/manifests/web/frontend.pp", ln, col)
        for p, ln, col in uses
    }
    assert location_errors(env) == []
    assert "port=8080 user=deploy" in puppet_compile(env)
