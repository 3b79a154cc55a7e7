"""Neovim (0.7 and 0.11, headless) with the plugin's ``format_on_save``: ``:w`` formats the buffer through
the real server; puppet-lint (the oracle) then finds no layout or quoting problem in the saved file."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.editors import REPO, editor_tool_missing, nvim_binaries, server_wrapper

TEXT = "class foo {\n      file { 'x':\n    ensure => \"present\",\n     mode => '0644',\n  }\n}\n"
INIT = """
vim.opt.runtimepath:prepend({plugin})
vim.cmd('filetype plugin on')
require('puppet_xpp').setup({{ cmd = {{ {server}, '--stdio' }}, format_on_save = true }})
vim.cmd('edit ' .. {file})
local ok = vim.wait(20000, function()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in ipairs(get()) do
    -- formatting offered: a capability (0.7), or registered for this buffer (0.11 registers it dynamically)
    if c.name == 'puppet-xpp' and c.initialized ~= false and (c.server_capabilities
        and c.server_capabilities.documentFormattingProvider
        or c.supports_method and c:supports_method('textDocument/formatting', vim.api.nvim_get_current_buf())) then
      return true
    end
  end
  return false
end, 100)
if not ok then
  io.stderr:write('no server\\n')
  vim.cmd('cquit 3')
end
vim.cmd('write')
vim.cmd('qall!')
"""


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_format_on_save(version: str, tmp_path: Path, oracle: Any) -> None:
    nvim = nvim_binaries().get(version)
    if nvim is None:
        editor_tool_missing(f"Neovim {version}")
    f = tmp_path / "foo" / "manifests" / "init.pp"
    f.parent.mkdir(parents=True)
    f.write_text(TEXT)
    wrapper = server_wrapper(tmp_path / "bin")
    init = tmp_path / "init.lua"
    init.write_text(
        INIT.format(
            plugin=repr(str(REPO / "editors" / "neovim")), server=repr(str(wrapper)), file=repr(str(f))
        )
    )
    proc = subprocess.run(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {init}"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    saved = f.read_text()
    assert saved != TEXT
    problems = oracle.call("lint", source=saved, path="foo/manifests/init.pp")["problems"]
    assert [p["check"] for p in problems] == ["documentation"], saved
