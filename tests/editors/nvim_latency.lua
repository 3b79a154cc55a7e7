-- Keystroke -> diagnostics latency in a headless Neovim 0.11 through `vim.lsp.enable('puppet_xpp')`
-- (editors/neovim/lsp/puppet_xpp.lua) and the real server.
-- Run by tests/editors/test_neovim.py (a test, and `python -m tests.editors.test_neovim` for the figures):
--   nvim --headless -u NONE -i NONE -n -c 'luafile nvim_latency.lua'   with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, cmd, manifest, line, text, interval_ms, warmup, debounce (null: the config's), result,
--     step_ms }
-- `text` is typed one character every `interval_ms` at the end of 0-based `line`, as typing in Insert
-- mode changes the buffer; for each keystroke (buffer version v) the latency is the time until the
-- first textDocument/publishDiagnostics of version >= v. With `warmup`, the first character is typed
-- and answered before the measured ones. The result JSON is always written.
local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
local spec, result, step_ms, now_ms = harness.spec, harness.result, harness.step_ms, harness.now_ms

-- CPU seconds (user + system) used so far by Neovim's child processes (the language server and its
-- workers) and their children, from /proc.
local function descendants(pid, out)
  for _, task in ipairs(vim.fn.glob('/proc/' .. pid .. '/task/*/children', false, true)) do
    for child in (harness.read(task) or ''):gmatch('%d+') do
      table.insert(out, child)
      descendants(child, out)
    end
  end
  return out
end

local function children_cpu_seconds()
  local total = 0
  for _, pid in ipairs(descendants(vim.fn.getpid(), {})) do
    local stat = harness.read('/proc/' .. pid .. '/stat')
    if stat then
      local fields = {}
      for w in stat:gsub('^.*%) ', ''):gmatch('%S+') do
        table.insert(fields, w)
      end
      -- fields[1] is field 3 of proc(5); utime and stime are fields 14 and 15
      total = total + (tonumber(fields[12]) + tonumber(fields[13])) / 100
    end
  end
  return total
end

local function main()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  if spec.cmd ~= vim.NIL and spec.cmd ~= nil then
    vim.lsp.config('puppet_xpp', { cmd = spec.cmd })
  end
  if spec.debounce ~= vim.NIL and spec.debounce ~= nil then
    vim.lsp.config('puppet_xpp', { flags = { debounce_text_changes = spec.debounce } })
  end

  local publishes = {} -- { version, ms } in arrival order
  local default_handler = vim.lsp.handlers['textDocument/publishDiagnostics']
  vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, params, ctx, config)
    if params and params.version then
      table.insert(publishes, { params.version, now_ms() })
    end
    return default_handler(err, params, ctx, config)
  end

  vim.lsp.enable('puppet_xpp')
  vim.cmd('edit ' .. vim.fn.fnameescape(spec.manifest))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype

  local client
  local attached = vim.wait(step_ms, function()
    client = vim.lsp.get_clients({ bufnr = buf, name = 'puppet_xpp' })[1]
    return client ~= nil and client.initialized
  end, 10)
  if not attached then
    result.error = 'no puppet_xpp client attached'
    return
  end
  result.client = { name = client.name, root_dir = client.config.root_dir,
    debounce = client.flags and client.flags.debounce_text_changes }
  -- the first diagnostics of the opened version: the server is warm
  local opened = vim.lsp.util.buf_versions[buf]
  if not vim.wait(step_ms, function()
        return #publishes > 0 and publishes[#publishes][1] >= opened
      end, 10) then
    result.error = 'no diagnostics after didOpen'
    return
  end
  vim.wait(500) -- let lint's follow-up publish and indexing settle
  result.diagnostics_before = #vim.diagnostic.get(buf)

  -- one keystroke first, answered and then 300 ms of quiet: Neovim starts rate-limiting a buffer's
  -- changes from its first didChange (before it, every keystroke within the debounce restarts the wait)
  local line = spec.line
  local function type_char(ch)
    local col = #vim.api.nvim_buf_get_lines(buf, line, line + 1, true)[1]
    vim.api.nvim_buf_set_text(buf, line, col, line, col, { ch })
    return vim.lsp.util.buf_versions[buf]
  end
  local text = spec.text
  if spec.warmup then
    local warm = type_char(text:sub(1, 1))
    text = text:sub(2)
    vim.wait(step_ms, function()
      return #publishes > 0 and publishes[#publishes][1] >= warm
    end, 1)
    vim.wait(300)
  end

  local keys = {} -- { version, ms }
  local cpu0 = children_cpu_seconds()
  local first_publish = #publishes + 1
  for i = 1, #text do
    local version = type_char(text:sub(i, i))
    table.insert(keys, { version, now_ms() })
    vim.wait(spec.interval_ms, function() return false end, 1)
  end
  local last = keys[#keys][1]
  local done = vim.wait(step_ms, function()
    return #publishes > 0 and publishes[#publishes][1] >= last
  end, 1)
  if not done then
    result.error = 'no diagnostics for the last keystroke'
  end
  vim.wait(300)
  local cpu1 = children_cpu_seconds()
  result.server_cpu_s = cpu1 - cpu0

  local latencies = {}
  for _, k in ipairs(keys) do
    local lat = vim.NIL
    for j = first_publish, #publishes do
      if publishes[j][1] >= k[1] and publishes[j][2] >= k[2] then
        lat = publishes[j][2] - k[2]
        break
      end
    end
    table.insert(latencies, lat)
  end
  result.latencies_ms = latencies
  result.publishes = #publishes - first_publish + 1
  result.keystrokes = #keys
  result.diagnostics_after = harness.diagnostics(buf)
end

harness.run(main)
