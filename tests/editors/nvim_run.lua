-- Runs a Lua chunk in a headless Neovim and writes what it puts in `result` as JSON.
-- Run by tests/editors/test_neovim.py (:checkhealth, :help):
--   nvim --headless -u NONE -i NONE -n -c 'luafile nvim_run.lua'   with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, code, result, step_ms }
-- `code` gets (spec, result, helpers) as `...`: helpers.wait_client(bufnr, name) waits for an
-- initialized client of that name on the buffer, and the harness's functions (nvim_harness.lua).
local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
local spec, result = harness.spec, harness.result

local helpers = setmetatable({}, { __index = harness })

function helpers.wait_client(bufnr, name)
  local found
  vim.wait(harness.step_ms, function()
    for _, c in pairs(harness.clients(bufnr)) do
      if c.name == name and c.initialized then
        found = c
        return true
      end
    end
    return false
  end, 20)
  return found
end

harness.run(function()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  assert(loadstring(spec.code, 'test code'))(spec, result, helpers)
end)
