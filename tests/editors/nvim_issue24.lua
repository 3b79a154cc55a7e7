-- Headless Neovim: the editor defects of issue 24 through the plugin's LSP client -- signature help
-- inside a string or hash argument, `include mod::` completion, hover on facts.
-- Run by tests/editors/test_neovim_issue24.py with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, cmd, settings, manifest, cases = [{ name, kind, lines, line, col }], result, step_ms }
-- Each case replaces the buffer's lines (Neovim sends the change), puts the cursor at (line, col)
-- (0-based) and asks as Neovim does: signature help with the position Neovim makes in the client's
-- encoding, completion through vim.lsp.omnifunc (only the UI end, complete(), records what it gets),
-- hover through vim.lsp.buf.hover() (the floating window's lines are read).
local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
local spec, result = harness.spec, harness.result
result.cases = {}

local function client_of(buf)
  return harness.clients(buf)[1]
end

local function request(client, method, params, buf)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request_sync(method, params, spec.step_ms, buf)
  end
  return client.request_sync(method, params, spec.step_ms, buf)
end

local function signature(buf, client)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local res = request(client, 'textDocument/signatureHelp', params, buf)
  local r = res and res.result
  if not r or not r.signatures or #r.signatures == 0 then
    return vim.NIL
  end
  local active = (r.activeSignature or 0) + 1
  return { label = r.signatures[active].label, active_parameter = r.activeParameter }
end

local function complete()
  local rec = harness.record_completion()
  -- each call sends a request (0.7 and 0.11): one call, so that no late answer of a second request
  -- lands in the next case
  vim.lsp.omnifunc(1, '')
  vim.wait(spec.step_ms, function() return rec.last() ~= nil end, 20)
  rec.restore()
  return rec.last() or vim.NIL
end

local function floats()
  local out = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then
      table.insert(out, w)
    end
  end
  return out
end

local function hover()
  for _, w in ipairs(floats()) do
    pcall(vim.api.nvim_win_close, w, true)
  end
  vim.lsp.buf.hover()
  local shown = vim.wait(spec.step_ms, function() return #floats() > 0 end, 20)
  if not shown then
    return vim.NIL
  end
  local w = floats()[1]
  local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)
  pcall(vim.api.nvim_win_close, w, true)
  return table.concat(lines, '\n')
end

local function main()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  require('puppet_xpp').setup({ cmd = spec.cmd, settings = spec.settings })
  vim.cmd('edit ' .. vim.fn.fnameescape(spec.manifest))
  local buf = vim.api.nvim_get_current_buf()
  result.attached = vim.wait(spec.step_ms, function() return client_of(buf) ~= nil end, 50)
  local client = client_of(buf)
  vim.wait(spec.step_ms, function() return client.initialized ~= false end, 50)
  for _, case in ipairs(spec.cases) do
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, case.lines)
    vim.api.nvim_win_set_cursor(0, { case.line + 1, case.col })
    local ok, got = pcall(function()
      if case.kind == 'signature' then
        return signature(buf, client)
      elseif case.kind == 'complete' then
        return complete()
      end
      return hover()
    end)
    result.cases[case.name] = ok and got or { error = tostring(got) }
  end
end

harness.run(main)
