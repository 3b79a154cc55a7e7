-- Headless Neovim: omni-completion of `stdlib::` names (issue 15) through the plugin's LSP client.
-- Run by tests/editors/test_neovim_world.py with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, cmd, manifest, line, col, result, step_ms }
-- Completion runs through Neovim's own vim.lsp.omnifunc (the 'omnifunc' the plugin sets); only the
-- UI ends are replaced: the mode reads as Insert and complete() records what it is given.
local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
local spec, result = harness.spec, harness.result
result.attempts = 0

local function main()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  require('puppet_xpp').setup({ cmd = spec.cmd, settings = spec.settings })
  vim.cmd('edit ' .. vim.fn.fnameescape(spec.manifest))
  local buf = vim.api.nvim_get_current_buf()
  local get = vim.lsp.get_clients and function() return vim.lsp.get_clients({ bufnr = buf }) end
    or function() return vim.lsp.buf_get_clients(buf) end
  result.attached = vim.wait(spec.step_ms, function() return #vim.tbl_values(get()) > 0 end, 50)
  result.omnifunc = vim.bo[buf].omnifunc
  result.maps = {
    gd = vim.fn.maparg('gd', 'n') ~= '',
    K = vim.fn.maparg('K', 'n') ~= '',
    ck = vim.fn.maparg('<C-k>', 'i') ~= '',
  }
  vim.api.nvim_win_set_cursor(0, { spec.line + 1, spec.col })
  local rec = harness.record_completion()
  -- the index fills in the background: ask until the module's functions are there
  local deadline = vim.loop.now() + spec.step_ms
  while vim.loop.now() < deadline do
    rec.clear()
    result.attempts = result.attempts + 1
    local start = vim.lsp.omnifunc(1, '')
    result.findstart = start
    local r = vim.lsp.omnifunc(0, '')
    result.findbase = r
    vim.wait(3000, function() return rec.last() ~= nil end, 20)
    local got = rec.last()
    if got and vim.tbl_contains(got.words, 'stdlib::merge_all') then
      break
    end
    vim.wait(200)
  end
  rec.restore()
  result.complete = rec.last()
end

harness.run(main)
