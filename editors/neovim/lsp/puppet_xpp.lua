---@brief
---
--- puppet-xpp: a language server for Puppet 8 and 7 manifests (`.pp`) and EPP templates (`.epp`):
--- diagnostics while typing (syntax errors and Puppet's static validation, puppet-lint's checks),
--- hover, definition, references, rename, completion, formatting, semantic tokens, and the `.xpp`
--- (pre-parsed manifest) of a saved file.
---
--- Install the server (Python 3.11 or later), from its sources, wheel or sdist:
---
--- ```sh
--- pipx install .
--- ```
---
--- It also serves r10k's `Puppetfile` (filetype `puppetfile`) and a module's `metadata.json`.
---
--- Settings (section `puppet`): `strict` ('off' | 'warning' | 'error'), `puppetVersion` ('8' | '7' |
--- '7.23'), `modulepath` (extra module directories), `tasks` (Bolt plan mode), `xppOnSave`,
--- `lint = { enabled, rcPath }`, `deepChecks = { enabled }`. An empty table keeps the server's defaults.
---
--- The root is the Puppet environment (`environment.conf`), else the module (`metadata.json`) or
--- repository (`.git`) nearest to the file.
---
--- This is not the `puppet` config (puppet-editor-services): enable one of the two.

-- The brief above and the table below are the whole config, in the shape of nvim-lspconfig's `lsp/*.lua`:
-- Neovim 0.11's `vim.lsp.enable('puppet_xpp')` finds this file on 'runtimepath' and needs nothing
-- else. The plugin's `require('puppet_xpp').setup()` (Neovim 0.7 to 0.10) starts from the same table,
-- so the command, filetypes, debounce and handler live here only.

--- `puppet/xppWritten` (the server wrote the `.xpp` of a saved file): `b:puppet_xpp_file` names it and a
--- `User PuppetXppWritten` autocommand fires (with the notification as `data` on Neovim 0.8+).
local function xpp_written(err, result)
  if err or type(result) ~= 'table' or not result.uri or not result.xpp then
    return
  end
  local bufnr = vim.uri_to_bufnr(result.uri)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_set_var(bufnr, 'puppet_xpp_file', vim.uri_to_fname(result.xpp))
  end
  local event = { pattern = 'PuppetXppWritten', modeline = false }
  if vim.fn.has('nvim-0.8') == 1 then
    event.data = result
  end
  pcall(vim.api.nvim_exec_autocmds, 'User', event)
end

-- the environment wherever it is above the file, else the nearest module or repository
local root_markers = { 'environment.conf', { 'metadata.json', '.git' } }

--- The server reads a module's `metadata.json`, not JSON in general: any other `json` buffer is declined
--- (`on_dir` not called), every other buffer is rooted by `root_markers`.
local function root_dir(bufnr, on_dir)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].filetype == 'json' and vim.fs.basename(name) ~= 'metadata.json' then
    return
  end
  on_dir(vim.fs.root(bufnr, root_markers))
end

---@type vim.lsp.Config
return {
  cmd = { 'puppet-xpp', '--stdio' },
  -- manifests, EPP templates, r10k's Puppetfile and a module's metadata.json (root_dir declines other JSON)
  filetypes = { 'puppet', 'epuppet', 'puppetfile', 'json' },
  root_markers = root_markers,
  root_dir = root_dir,
  settings = { puppet = {} },
  -- The server analyses a 127 KB manifest in a few milliseconds and coalesces the edits that arrive
  -- while it works, so changes go out almost at once: Neovim's default of 150 ms would delay every
  -- keystroke's diagnostics by that much (measurements: docs/editors.md, "Diagnostics while typing").
  flags = { debounce_text_changes = 20 },
  handlers = { ['puppet/xppWritten'] = xpp_written },
}
