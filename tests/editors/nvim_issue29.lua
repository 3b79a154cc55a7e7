-- Headless Neovim: the plugin's commands over the server's puppet-vscode messages (issue 29 item 4) --
-- :PuppetNodeGraph, :PuppetResource, :PuppetFacts, :PuppetFixAll -- and the client attaching to a
-- Puppetfile and a module's metadata.json (not to other JSON).
-- Run by tests/editors/test_neovim_issue29.py with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, mode ('setup' | 'enable'), cmd, graph_manifest, graph_unsaved (a line added, not saved),
--     broken_manifest (Puppet cannot compile it),
--     resource_manifest, resource = {type, title},
--     lint_manifest, puppetfile, metadata, other_json, result, step_ms }
-- The commands are asynchronous: each step waits for what the user would see (a scratch buffer, the
-- inserted lines, the changed buffer). What vim.notify said is kept in result.notes.
local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
local spec, result = harness.spec, harness.result
result.notes = {}

local CLIENT = { setup = 'puppet-xpp', enable = 'puppet_xpp' }

local function ours(buf)
  for _, c in pairs(harness.clients(buf)) do
    if c.name == CLIENT[spec.mode] and c.initialized ~= false then
      return c
    end
  end
  return nil
end

local function open(file)
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  return vim.api.nvim_get_current_buf()
end

local function wait_attached(buf)
  return vim.wait(spec.step_ms, function() return ours(buf) ~= nil end, 20)
end

local function buffer_named(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name then
      return b
    end
  end
  return nil
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function main()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  local notify = vim.notify
  vim.notify = function(msg, level, ...)
    table.insert(result.notes, { msg = msg, level = level })
    return notify(msg, level, ...)
  end
  if spec.mode == 'setup' then
    require('puppet_xpp').setup({ cmd = spec.cmd })
  else
    vim.cmd('runtime! plugin/puppet_xpp.lua') -- -u NONE loads no plugins: as Neovim's start-up would
    vim.lsp.config('puppet_xpp', { cmd = spec.cmd })
    vim.lsp.enable('puppet_xpp')
  end
  result.commands = {}
  for _, c in ipairs({ 'PuppetNodeGraph', 'PuppetResource', 'PuppetFacts', 'PuppetFixAll' }) do
    result.commands[c] = vim.fn.exists(':' .. c)
  end

  harness.step('node_graph', function()
    local buf = open(spec.graph_manifest)
    assert(wait_attached(buf), 'no client on ' .. spec.graph_manifest)
    -- an edit not saved: the graph is of the buffer's text
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { spec.graph_unsaved })
    vim.cmd('PuppetNodeGraph')
    local name = 'puppet-xpp://nodegraph/' .. spec.graph_manifest .. '.dot'
    assert(vim.wait(spec.step_ms, function() return buffer_named(name) ~= nil end, 20), 'no ' .. name)
    local shown = buffer_named(name)
    result.graph = { lines = lines(shown), filetype = vim.bo[shown].filetype, buftype = vim.bo[shown].buftype,
      current = vim.api.nvim_get_current_buf() == shown }
  end)

  harness.step('node_graph_error', function()
    local buf = open(spec.broken_manifest)
    assert(wait_attached(buf), 'no client on ' .. spec.broken_manifest)
    local said = #result.notes
    vim.cmd('PuppetNodeGraph')
    assert(vim.wait(spec.step_ms, function() return #result.notes > said end, 20), 'nothing said')
    result.graph_error = { notes = vim.list_slice(result.notes, said + 1),
      shown = buffer_named('puppet-xpp://nodegraph/' .. spec.broken_manifest .. '.dot') ~= nil }
  end)

  harness.step('resource', function()
    local buf = open(spec.resource_manifest)
    assert(wait_attached(buf), 'no client on ' .. spec.resource_manifest)
    local before = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.cmd('PuppetResource ' .. spec.resource.type .. ' ' .. spec.resource.title)
    -- the cursor moves on while Puppet runs: the text still goes below line 1
    vim.api.nvim_win_set_cursor(0, { before, 0 })
    assert(vim.wait(spec.step_ms, function() return vim.api.nvim_buf_line_count(buf) > before end, 20),
      'nothing inserted')
    result.resource = lines(buf)
  end)

  harness.step('facts', function()
    vim.cmd('PuppetFacts')
    local name = 'puppet-xpp://facts.json'
    assert(vim.wait(spec.step_ms * 2, function() return buffer_named(name) ~= nil end, 20), 'no ' .. name)
    local shown = buffer_named(name)
    result.facts = { lines = lines(shown), filetype = vim.bo[shown].filetype }
  end)

  harness.step('fix_all', function()
    local buf = open(spec.lint_manifest)
    assert(wait_attached(buf), 'no client on ' .. spec.lint_manifest)
    -- the lint diagnostics are there: the server has the text
    vim.wait(spec.step_ms, function() return #vim.diagnostic.get(buf) > 0 end, 20)
    result.lint_diagnostics = #vim.diagnostic.get(buf)
    local tick = vim.api.nvim_buf_get_changedtick(buf)
    vim.cmd('PuppetFixAll')
    assert(vim.wait(spec.step_ms, function() return vim.api.nvim_buf_get_changedtick(buf) ~= tick end, 20),
      'buffer not changed')
    result.fixed = lines(buf)
  end)

  harness.step('attach', function()
    result.attach = {}
    for _, f in ipairs({ spec.puppetfile, spec.metadata }) do
      local buf = open(f)
      result.attach[f] = { filetype = vim.bo[buf].filetype, attached = wait_attached(buf) }
    end
    local buf = open(spec.other_json)
    vim.wait(1500, function() return #harness.clients(buf) > 0 end, 20)
    result.attach[spec.other_json] = { filetype = vim.bo[buf].filetype, attached = #harness.clients(buf) > 0 }
    -- the Puppetfile's diagnostics (the server reads it as r10k does)
    local pf = vim.fn.bufnr(spec.puppetfile)
    vim.wait(spec.step_ms, function() return #vim.diagnostic.get(pf) > 0 end, 20)
    result.puppetfile_diagnostics = harness.diagnostics(pf)
    -- metadata.json's diagnostics (the server checks it as the Forge and Puppet do)
    local md = vim.fn.bufnr(spec.metadata)
    vim.wait(spec.step_ms, function() return #vim.diagnostic.get(md) > 0 end, 20)
    result.metadata_diagnostics = harness.diagnostics(md)
  end)
end

harness.run(main)
