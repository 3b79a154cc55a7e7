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
--- It also serves r10k's `Puppetfile` (filetype `puppetfile`) and a module's `metadata.json`, and takes
--- Hiera's `hiera.yaml` and the YAML/JSON files below `data/` of an environment or module that has a
--- `hiera.yaml` (the deep checks read their unsaved text; other YAML/JSON buffers get no client).
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

local uv = vim.uv or vim.loop

local function has(path, kind)
  local st = uv.fs_stat(path)
  return st ~= nil and st.type == kind
end

--- The directory of the Hiera layer that reads the file `name` -- hiera.yaml's own directory, or for a
--- file below a `data/` directory the one holding that `data/` -- when it is a Puppet environment
--- (environment.conf or manifests/) or module (metadata.json) with a hiera.yaml; else nil. (Puppet reads
--- an environment's or module's data only through its hiera.yaml; a datadir of another name is beyond
--- this check.) Works on Neovim 0.7 (the plugin's setup() asks it too).
local function hiera_layer(name)
  local dir = vim.fn.fnamemodify(name, ':p:h')
  local layer
  if vim.fn.fnamemodify(name, ':t') == 'hiera.yaml' then
    layer = dir
  else
    local d = dir
    for _ = 1, 40 do
      if vim.fn.fnamemodify(d, ':t') == 'data' then
        layer = vim.fn.fnamemodify(d, ':h')
        break
      end
      local up = vim.fn.fnamemodify(d, ':h')
      if up == d then
        break
      end
      d = up
    end
  end
  if layer == nil or not has(layer .. '/hiera.yaml', 'file') then
    return nil
  end
  if has(layer .. '/environment.conf', 'file') or has(layer .. '/manifests', 'directory') or
      has(layer .. '/metadata.json', 'file') then
    return layer
  end
  return nil
end

--- Whether the server takes buffer `bufnr`: Puppet, EPP and Puppetfile buffers; of JSON, a module's
--- metadata.json; of YAML and JSON, Hiera's files of a Puppet environment or module (hiera.yaml, the
--- data below data/: the deep checks read their unsaved text). Any other YAML or JSON buffer is declined
--- (no client for it).
local function serves(bufnr)
  local ft = vim.bo[bufnr].filetype
  if ft ~= 'json' and ft ~= 'yaml' then
    return true
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return false
  end
  if ft == 'json' and vim.fn.fnamemodify(name, ':t') == 'metadata.json' then
    return true
  end
  return hiera_layer(name) ~= nil
end

--- Declines what `serves` does not take (`on_dir` not called); every other buffer is rooted by
--- `root_markers`.
local function root_dir(bufnr, on_dir)
  if not serves(bufnr) then
    return
  end
  on_dir(vim.fs.root(bufnr, root_markers))
end

---@type vim.lsp.Config
return {
  cmd = { 'puppet-xpp', '--stdio' },
  -- manifests, EPP templates, r10k's Puppetfile, a module's metadata.json and Hiera's files (hiera.yaml,
  -- data/): root_dir declines any other JSON or YAML buffer
  filetypes = { 'puppet', 'epuppet', 'puppetfile', 'json', 'yaml' },
  root_markers = root_markers,
  root_dir = root_dir,
  settings = { puppet = {} },
  -- The server analyses a 127 KB manifest in a few milliseconds and coalesces the edits that arrive
  -- while it works, so changes go out almost at once: Neovim's default of 150 ms would delay every
  -- keystroke's diagnostics by that much (measurements: docs/editors.md, "Diagnostics while typing").
  flags = { debounce_text_changes = 20 },
  handlers = { ['puppet/xppWritten'] = xpp_written },
  -- (not a vim.lsp.Config field: the plugin's setup() asks the same rule for Neovim 0.7 to 0.10)
  puppet_xpp_serves = serves,
}
