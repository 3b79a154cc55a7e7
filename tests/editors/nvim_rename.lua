-- Headless Neovim: rename a class with vim.lsp.buf.rename through editors/neovim and the real server.
-- Run by tests/editors/test_rename_neovim.py with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, cmd, manifest, cursor = {line, col} (0-based), new_name, target, expect_refs, result, step_ms }
-- Every step waits with a timeout; whatever happens, the result JSON is written and Neovim quits.
local uv = vim.loop
local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
local spec, result, step, step_ms = harness.spec, harness.result, harness.step, harness.step_ms

local function main()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  vim.o.hidden = true
  require('puppet_xpp').setup({ cmd = spec.cmd, settings = {} })
  vim.cmd('edit ' .. vim.fn.fnameescape(spec.manifest))
  local buf = vim.api.nvim_get_current_buf()

  if not step('attach', function()
    return vim.wait(step_ms, function()
      for _, c in pairs(harness.clients(buf)) do
        if c.initialized then return true end
      end
      return false
    end, 50)
  end) then return end

  -- the workspace is indexed when references of the class reach every use the test wrote
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = spec.cursor[1], character = spec.cursor[2] },
    context = { includeDeclaration = true },
  }
  if not step('indexed', function()
    return vim.wait(step_ms, function()
      local res = vim.lsp.buf_request_sync(buf, 'textDocument/references', params, 5000) or {}
      local n = 0
      for _, r in pairs(res) do
        n = n + #(r.result or {})
      end
      result.references = n
      return n >= spec.expect_refs
    end, 200)
  end) then return end

  vim.api.nvim_win_set_cursor(0, { spec.cursor[1] + 1, spec.cursor[2] })
  vim.lsp.buf.rename(spec.new_name)
  if not step('moved', function()
    return vim.wait(step_ms, function()
      return uv.fs_stat(spec.target) ~= nil and uv.fs_stat(spec.manifest) == nil
    end, 50)
  end) then return end
  -- the other files were edited in buffers: write them as a user would
  vim.wait(500)
  vim.cmd('silent! wall')
  result.modified = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      table.insert(result.modified, vim.api.nvim_buf_get_name(b))
    end
  end
  result.current = vim.api.nvim_buf_get_name(0)
end

harness.run(main)
