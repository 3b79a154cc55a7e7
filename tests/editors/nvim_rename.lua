-- Headless Neovim: rename a class with vim.lsp.buf.rename through editors/neovim and the real server.
-- Run by tests/editors/test_rename_neovim.py with $PUPPET_XPP_NVIM_TEST = a JSON file:
--   { plugin_dir, cmd, manifest, cursor = {line, col} (0-based), new_name, target, expect_refs, result, step_ms }
-- Every step waits with a timeout; whatever happens, the result JSON is written and Neovim quits.
local uv = vim.loop
local spec = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv('PUPPET_XPP_NVIM_TEST')), '\n'))
local v = vim.version()
local result = { steps = {}, nvim = v.major .. '.' .. v.minor .. '.' .. v.patch }
local step_ms = spec.step_ms or 60000

local function finish()
  vim.fn.writefile({ vim.fn.json_encode(result) }, spec.result)
  pcall(function()
    local get = vim.lsp.get_clients or vim.lsp.get_active_clients
    for _, c in pairs(get()) do
      c.stop()
    end
    vim.wait(3000, function() return #get() == 0 end, 50)
  end)
  vim.cmd('qa!')
end

local function step(name, fn)
  local t0 = uv.hrtime()
  local ok, val = pcall(fn)
  result.steps[name] = { ok = ok and val ~= false, ms = math.floor((uv.hrtime() - t0) / 1e6) }
  if not ok then
    result.steps[name].error = tostring(val)
  end
  return ok and val ~= false
end

local function buf_clients(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.lsp.buf_get_clients(buf)
end

local function main()
  vim.opt.runtimepath:prepend(spec.plugin_dir)
  vim.cmd('filetype plugin on')
  vim.o.hidden = true
  require('puppet_xpp').setup({ cmd = spec.cmd, settings = {} })
  vim.cmd('edit ' .. vim.fn.fnameescape(spec.manifest))
  local buf = vim.api.nvim_get_current_buf()

  if not step('attach', function()
    return vim.wait(step_ms, function()
      for _, c in pairs(buf_clients(buf)) do
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

local ok, err = xpcall(main, debug.traceback)
if not ok then
  result.error = err
end
finish()
