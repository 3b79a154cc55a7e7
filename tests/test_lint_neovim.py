"""Neovim (0.7 and 0.11, headless) with the plugin's ``format_on_save``: ``:w`` formats the buffer through
the real server; puppet-lint (the oracle) then finds no layout or quoting problem in the saved file.  A
Hiera data file or a template the server serves is saved as it is, with nothing said."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.editors import REPO, editor_tool_missing, nvim_binaries, server_wrapper

TEXT = "class foo {\n      file { 'x':\n    ensure => \"present\",\n     mode => '0644',\n  }\n}\n"


def init_lua(ready: str, then: str) -> str:
    """The Lua run in Neovim (a template of ``{plugin}``, ``{server}``, ``{file}``): the plugin set up with
    ``format_on_save``, the file edited, a wait until the server's client satisfies ``ready`` (a Lua
    condition on ``c``; exit 3 "no server" after 20 s), then ``then``, then quit."""
    return """
vim.opt.runtimepath:prepend({plugin})
vim.cmd('filetype plugin on')
require('puppet_xpp').setup({{ cmd = {{ {server}, '--stdio' }}, format_on_save = true }})
vim.cmd('edit ' .. {file})
local ok = vim.wait(20000, function()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in ipairs(get()) do
    if c.name == 'puppet-xpp' and c.initialized ~= false and (READY) then
      return true
    end
  end
  return false
end, 100)
if not ok then
  io.stderr:write('no server\\n')
  vim.cmd('cquit 3')
end
THEN
vim.cmd('qall!')
""".replace("READY", ready).replace("THEN", then)


# formatting offered: a capability (0.7), or registered for this buffer (0.11 registers it dynamically)
INIT = init_lua(
    "c.server_capabilities and c.server_capabilities.documentFormattingProvider or c.supports_method"
    " and c:supports_method('textDocument/formatting', vim.api.nvim_get_current_buf())",
    "vim.cmd('write')",
)


def _run_nvim(nvim: Path, script: str, file: Path, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    """A headless Neovim (no user configuration) running ``script`` on ``file``, with this checkout's
    plugin and server."""
    wrapper = server_wrapper(tmp_path / "bin")
    init = tmp_path / "init.lua"
    init.write_text(
        script.format(
            plugin=repr(str(REPO / "editors" / "neovim")), server=repr(str(wrapper)), file=repr(str(file))
        )
    )
    return subprocess.run(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {init}"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path)},
    )


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_format_on_save(version: str, tmp_path: Path, oracle: Any) -> None:
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version}")
    f = tmp_path / "foo" / "manifests" / "init.pp"
    f.parent.mkdir(parents=True)
    f.write_text(TEXT)
    proc = _run_nvim(nvim, INIT, f, tmp_path)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    saved = f.read_text()
    assert saved != TEXT
    problems = oracle.call("lint", source=saved, path="foo/manifests/init.pp")["problems"]
    assert [p["check"] for p in problems] == ["documentation"], saved


# a buffer the server serves but does not format: saved once the server is attached; what Neovim said
INIT_OTHER = init_lua(
    "vim.lsp.buf_is_attached(0, c.id)",
    "vim.wait(1000) -- (the server's registrations after initialized)\n"
    "vim.cmd('write')\n"
    "io.stderr:write(vim.fn.execute('messages'))",
)


@pytest.mark.parametrize("version", ["0.7", "0.11"])
@pytest.mark.parametrize("rel", ["data/common.yaml", "templates/motd.epp"])
def test_format_on_save_leaves_what_is_not_a_manifest_alone(version: str, rel: str, tmp_path: Path) -> None:
    """Hiera's data and a template are served (diagnostics, deep checks) but not formatted: saving them
    sends no format request and says nothing (Neovim 0.10+ takes the server's formatting as registered
    for manifests only: a format asked there said "no matching language servers" at each :w)."""
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version}")
    env = tmp_path / "production"
    (env / "manifests").mkdir(parents=True)
    (env / "environment.conf").write_text("modulepath = modules\n")
    (env / "hiera.yaml").write_text("---\nversion: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n")
    f = env / rel
    f.parent.mkdir(parents=True)
    text = "---\nprofile::port:   80\n" if rel.endswith(".yaml") else "<%= $motd   %>\n"
    f.write_text(text)
    proc = _run_nvim(nvim, INIT_OTHER, f, tmp_path)
    said = proc.stderr.decode(errors="replace")
    assert proc.returncode == 0, said
    assert "written" in said and "LSP" not in said, said
    assert f.read_text() == text
