-- Hiera data typed in Neovim reaches the language server through Neovim's own client (issue 30 leftover).
-- Run by tests/editors/test_neovim_hiera.py:
--   nvim --headless -u NONE -i NONE -n -c 'luafile nvim_hiera.lua'   with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, mode ('setup' | 'enable'), cmd, manifest, data, key_line, hiera, declined, result, step_ms }
-- The manifest is opened and its deep finding (a class parameter Hiera does not give) awaited; the data
-- file is opened, the key typed into its buffer (not saved): the finding goes; the line taken out again:
-- it comes back. Then each of `declined` (YAML files that are not a Puppet workspace's Hiera data) is
-- opened and must get no client, while the environment's hiera.yaml gets the manifest's client.
local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
local spec, result, step = harness.spec, harness.result, harness.step
local step_ms = harness.step_ms
local DEEP = 'puppet-xpp-deep'

local function deep_codes(buf)
  local out = {}
  for _, d in ipairs(harness.diagnostics(buf)) do
    if d.source == DEEP then
      table.insert(out, { code = d.code, lnum = d.lnum, message = d.message })
    end
  end
  return out
end

local function client_of(buf)
  for _, c in pairs(harness.clients(buf)) do
    if c.initialized then
      return c
    end
  end
  return nil
end

--- Step `name`: the buffer gets an initialized client; its id (vim.NIL: none).
local function attached(name, buf)
  step(name, function()
    return vim.wait(step_ms, function() return client_of(buf) ~= nil end, 20)
  end)
  local c = client_of(buf)
  return c and c.id or vim.NIL
end

local function main()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  vim.o.hidden = true
  if spec.mode == 'enable' then
    vim.lsp.enable('puppet_xpp') -- lsp/puppet_xpp.lua from the plugin, puppet-xpp from PATH
  else
    require('puppet_xpp').setup({ cmd = spec.cmd, settings = { xppOnSave = false } })
  end

  vim.cmd('edit ' .. vim.fn.fnameescape(spec.manifest))
  local manifest = vim.api.nvim_get_current_buf()
  local client
  if not step('attach', function()
    return vim.wait(step_ms, function()
      client = client_of(manifest)
      return client ~= nil
    end, 20)
  end) then
    return
  end
  result.client = { id = client.id, name = client.name, root_dir = client.config.root_dir }
  step('finding', function()
    return vim.wait(step_ms, function() return #deep_codes(manifest) > 0 end, 20)
  end)
  result.before = deep_codes(manifest)

  -- the data file: a yaml buffer, attached to the manifest's client
  vim.cmd('edit ' .. vim.fn.fnameescape(spec.data))
  local data = vim.api.nvim_get_current_buf()
  result.data_filetype = vim.bo[data].filetype
  result.data_client = attached('data_attach', data)

  -- the key typed into the buffer (a didChange; the file is not written)
  local last = vim.api.nvim_buf_line_count(data)
  vim.api.nvim_buf_set_lines(data, last, last, false, { spec.key_line })
  step('cleared', function()
    return vim.wait(step_ms, function() return #deep_codes(manifest) == 0 end, 20)
  end)
  result.after_key = deep_codes(manifest)
  result.data_diagnostics = harness.diagnostics(data)
  result.modified = vim.bo[data].modified
  -- taken out again: the finding is back
  vim.api.nvim_buf_set_lines(data, last, last + 1, false, {})
  step('back', function()
    return vim.wait(step_ms, function() return #deep_codes(manifest) > 0 end, 20)
  end)
  result.after_removal = deep_codes(manifest)

  -- the environment's hiera.yaml: the same client
  vim.cmd('edit ' .. vim.fn.fnameescape(spec.hiera))
  local hiera = vim.api.nvim_get_current_buf()
  result.hiera_client = attached('hiera_attach', hiera)

  -- YAML that is not a Puppet workspace's Hiera data: no client, then or a while later
  result.declined = {}
  for _, f in ipairs(spec.declined) do
    vim.cmd('edit ' .. vim.fn.fnameescape(f))
    local buf = vim.api.nvim_get_current_buf()
    vim.wait(2000, function() return #harness.clients(buf) > 0 end, 20)
    result.declined[f] = { filetype = vim.bo[buf].filetype, clients = #harness.clients(buf) }
  end
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  result.clients = #get()
end

harness.run(main)
