"""Hiera data from Neovim to the language server (issue 30 leftover): a real headless Neovim -- 0.7 with the
plugin's ``setup()``, 0.11 with ``vim.lsp.enable('puppet_xpp')`` alone -- opens a control repository's
manifest, whose deep finding is a class parameter Hiera does not give; then ``data/common.yaml``, a
``yaml`` buffer that Neovim's own client sends to the same server; the missing key typed into that buffer
(never saved) clears the manifest's finding, taken out again it comes back.  Puppet 7.23 agrees: the
catalog stops with that message without the key and compiles with it.

YAML that is not a Puppet workspace's Hiera data gets no client (lsp/puppet_xpp.lua's rule, asked by
setup() too): a ``data/`` directory with no hiera.yaml beside it, a ``hiera.yaml`` in a directory that is
no environment or module, a YAML file of the control repository that is not below ``data/``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.editors import REPO, editor_tool_missing, nvim_binaries, run_nvim_script, server_wrapper

SCRIPT = Path(__file__).with_name("nvim_hiera.lua")
KEY = "app::needs::port: 80"
MESSAGE = "Class[App::Needs]: expects a value for parameter 'port'"
FILES = {
    "environment.conf": "modulepath = modules\n",
    "hiera.yaml": "---\nversion: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
    "data/common.yaml": "---\nother::key: 1\n",
    "manifests/site.pp": "include app::uses\n",
    "modules/app/manifests/needs.pp": "class app::needs (Integer $port) {\n}\n",
    "modules/app/manifests/uses.pp": "class app::uses {\n  include app::needs\n}\n",
    "ci/pipeline.yaml": "stages: [test]\n",
}
OUTSIDE = {
    "elsewhere/data/common.yaml": "---\nkey: 1\n",
    "notpuppet/hiera.yaml": "---\nversion: 5\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.mark.parametrize(("version", "mode"), [("0.7", "setup"), ("0.11", "enable")])
def test_neovim_sends_hiera_data_and_only_it(version: str, mode: str, tmp_path: Path) -> None:
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version} (installed by .ci/editors)")
    env = tmp_path / "control" / "production"
    _write(env, FILES)
    _write(tmp_path, OUTSIDE)
    wrapper = server_wrapper(tmp_path / "bin")
    declined = [str(tmp_path / rel) for rel in OUTSIDE] + [str(env / "ci" / "pipeline.yaml")]
    spec = {
        "plugin_dir": str(REPO / "editors" / "neovim"),
        "mode": mode,
        "cmd": [str(wrapper), "--stdio"],
        "manifest": str(env / "modules/app/manifests/uses.pp"),
        "data": str(env / "data/common.yaml"),
        "key_line": KEY,
        "hiera": str(env / "hiera.yaml"),
        "declined": declined,
        "result": str(tmp_path / "result.json"),
        "step_ms": 60000,
    }
    res = run_nvim_script(nvim, SCRIPT, tmp_path, spec, 300)
    out = res.pop("_output")[-6000:]
    ctx = json.dumps(res, indent=1) + "\n" + out
    assert res["nvim"].startswith(version + "."), ctx
    assert "error" not in res, ctx
    assert res["client"]["root_dir"] == str(env), ctx
    # the manifest's finding, where Puppet stops (line 2)
    assert res["steps"]["finding"]["ok"], ctx
    assert [(d["code"], d["lnum"] + 1) for d in res["before"]] == [("DEEP_MISSING_PARAMETER", 2)], ctx
    assert res["before"][0]["message"] == MESSAGE, ctx
    # the data file is a yaml buffer of the same client (one server per environment)
    assert res["data_filetype"] == "yaml" and res["data_client"] == res["client"]["id"], ctx
    # typed, not saved: the finding goes, the YAML itself has no diagnostics (never read as Puppet)
    assert res["steps"]["cleared"]["ok"] and res["after_key"] == [], ctx
    assert res["modified"] is True and (env / "data/common.yaml").read_text() == FILES["data/common.yaml"], (
        ctx
    )
    assert res["data_diagnostics"] == [], ctx
    assert res["steps"]["back"]["ok"] and res["after_removal"] == res["before"], ctx
    # hiera.yaml: the same client; YAML that is no Hiera data of a Puppet workspace: none
    assert res["hiera_client"] == res["client"]["id"], ctx
    assert res["declined"] == {f: {"filetype": "yaml", "clients": 0} for f in declined}, ctx
    assert res["clients"] == 1, ctx


def test_puppet_agrees_on_the_key(tmp_path: Path) -> None:
    """The judge of the test above: Puppet 7.23's catalog of the environment stops with the finding's
    message at line 2 without the key in data/common.yaml, and compiles with it."""
    from tests.lsp.test_deep_lsp import catalog

    env = tmp_path / "without" / "production"
    _write(env, FILES)
    answer = catalog(str(env), "include app::uses")
    assert not answer["ok"] and answer["line"] == 2 and MESSAGE in answer["message"], answer
    with_key = tmp_path / "with" / "production"
    _write(with_key, {**FILES, "data/common.yaml": FILES["data/common.yaml"] + KEY + "\n"})
    assert catalog(str(with_key), "include app::uses")["ok"]
