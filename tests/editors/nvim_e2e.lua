-- Headless Neovim end-to-end check of editors/neovim against the real puppet-xpp server.
-- Run by tests/editors/test_neovim.py:
--   nvim --headless -u NONE -i NONE -n -c 'luafile nvim_e2e.lua'   with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, cmd, manifest, fixed_lines, xpp, result, step_ms, extra_files, snippet, xpp_var }
-- (xpp_var: with a snippet, wait for b:puppet_xpp_file too)
-- Every step waits with a timeout; whatever happens, the result JSON is written and Neovim quits.
local uv = vim.loop
local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
local spec, result, step, slurp = harness.spec, harness.result, harness.step, harness.read
local step_ms = harness.step_ms

local function mtime(p)
  local st = uv.fs_stat(p)
  return st and (st.mtime.sec * 1e9 + st.mtime.nsec) or nil
end

local function main()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  result.has_lsp_start = type(vim.lsp.start) == 'function'

  -- filetype detection of other files (function files are Pascal to stock Neovim 0.7)
  result.filetypes = {}
  for _, f in ipairs(spec.extra_files or {}) do
    vim.cmd('edit ' .. vim.fn.fnameescape(f))
    result.filetypes[f] = vim.bo.filetype
    result.commentstring = result.commentstring or {}
    result.commentstring[vim.bo.filetype] = vim.bo.commentstring
  end

  local snippet = spec.snippet ~= vim.NIL and spec.snippet or nil
  if snippet then
    -- a configuration snippet from docs/editors.md instead of the plugin's setup()
    assert(loadstring(snippet, 'docs snippet'))()
  else
    local cmd = spec.cmd ~= vim.NIL and spec.cmd or nil
    require('puppet_xpp').setup({ cmd = cmd, settings = spec.settings or {} })
  end

  vim.cmd('edit ' .. vim.fn.fnameescape(spec.manifest))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype

  local ok = step('attach', function()
    return vim.wait(step_ms, function()
      local cs = harness.clients(buf)
      for _, c in pairs(cs) do
        if c.initialized then
          result.client = { name = c.name, root_dir = c.config.root_dir,
            sync = c.server_capabilities and c.server_capabilities.textDocumentSync,
            semantic_tokens = c.server_capabilities and c.server_capabilities.semanticTokensProvider ~= nil,
            debounce = (c.flags or c.config.flags or {}).debounce_text_changes }
          return true
        end
      end
      return false
    end, 50)
  end)
  if not ok then return end

  ok = step('diagnostic', function()
    return vim.wait(step_ms, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  end)
  result.diagnostics_before = harness.diagnostics(buf)
  if not ok then return end

  vim.cmd('write')
  ok = step('xpp_written', function()
    return vim.wait(step_ms, function()
      local okv, v = pcall(vim.api.nvim_buf_get_var, buf, 'puppet_xpp_file')
      return ((snippet ~= nil and not spec.xpp_var) or (okv and v ~= nil)) and mtime(spec.xpp) ~= nil
    end, 50)
  end)
  result.xpp_exists_after_first_save = mtime(spec.xpp) ~= nil
  local okv, v = pcall(vim.api.nvim_buf_get_var, buf, 'puppet_xpp_file')
  result.b_puppet_xpp_file = okv and v or nil
  if not ok then return end
  local first = slurp(spec.xpp)
  uv.fs_copyfile(spec.xpp, spec.xpp .. '.first')

  -- fix the error by editing the buffer (as typing would): the diagnostic must go away
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, spec.fixed_lines)
  ok = step('diagnostic_cleared', function()
    return vim.wait(step_ms, function() return #vim.diagnostic.get(buf) == 0 end, 50)
  end)
  result.diagnostics_after = harness.diagnostics(buf)
  if not ok then return end

  vim.cmd('write')
  step('xpp_rewritten', function()
    return vim.wait(step_ms, function()
      local now = slurp(spec.xpp)
      return now ~= nil and now ~= first
    end, 50)
  end)
end

harness.run(main)
