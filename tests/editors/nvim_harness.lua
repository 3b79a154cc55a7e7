-- What every headless Neovim test script (tests/editors/nvim_*.lua) shares: the spec it is given, the
-- result it writes, timed steps, and an end that always writes the result, stops the language servers
-- and quits. Works on Neovim 0.7 and later. A script loads it from its own directory:
--   local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_harness.lua')
-- $PUPPET_XPP_NVIM_TEST names the spec (JSON; `result` is where the result JSON goes, `step_ms` the
-- longest wait of a step); tests/editors/__init__.py run_nvim_script runs the scripts.
local uv = vim.uv or vim.loop
local harness = {}

harness.spec = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv('PUPPET_XPP_NVIM_TEST')), '\n'))
local version = vim.version()
harness.result = { steps = {}, nvim = version.major .. '.' .. version.minor .. '.' .. version.patch }
harness.step_ms = harness.spec.step_ms or 30000

function harness.now_ms()
  return uv.hrtime() / 1e6
end

--- The contents of file `path`, or nil.
function harness.read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return data
end

--- The clients attached to buffer `bufnr` (Neovim 0.7's and 0.10's names).
function harness.clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.lsp.buf_get_clients(bufnr)
end

--- The diagnostics of buffer `bufnr`, as plain tables.
function harness.diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, { lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, source = d.source, code = d.code })
  end
  return out
end

--- Run `fn` as step `name`: result.steps[name] = { ok, ms[, error] }; true when it returned non-false.
function harness.step(name, fn)
  local t0 = harness.now_ms()
  local ok, val = pcall(fn)
  harness.result.steps[name] = { ok = ok and val ~= false, ms = math.floor(harness.now_ms() - t0) }
  if not ok then
    harness.result.steps[name].error = tostring(val)
  end
  return ok and val ~= false
end

--- Run `main`; whatever happens (its error goes to result.error), write the result, stop every
--- client and quit Neovim.
function harness.run(main)
  local ok, err = xpcall(main, debug.traceback)
  if not ok then
    harness.result.error = err
  end
  vim.fn.writefile({ vim.fn.json_encode(harness.result) }, harness.spec.result)
  pcall(function()
    local get = vim.lsp.get_clients or vim.lsp.get_active_clients
    for _, c in pairs(get()) do
      vim.lsp.stop_client(c.id)
    end
    vim.wait(3000, function() return #get() == 0 end, 20)
  end)
  vim.cmd('qa!')
end

-- Omni completion as a test reads it: vim.fn.complete records {startcol, words} instead of showing a
-- menu, and the mode Neovim asks before it (0.7: vim.fn.mode, 0.11: nvim_get_mode) answers insert mode.
-- Returns {last = the last recording or nil, clear = forget it, restore = Neovim's own functions back}.
function harness.record_completion()
  local got = nil
  local complete, mode, get_mode = vim.fn.complete, vim.fn.mode, vim.api.nvim_get_mode
  vim.fn.mode = function() return 'i' end
  vim.api.nvim_get_mode = function() return { mode = 'i', blocking = false } end
  vim.fn.complete = function(startcol, items)
    got = { startcol = startcol, words = {} }
    for _, it in ipairs(items) do
      table.insert(got.words, type(it) == 'table' and it.word or it)
    end
  end
  return {
    last = function() return got end,
    clear = function() got = nil end,
    restore = function()
      vim.fn.complete, vim.fn.mode, vim.api.nvim_get_mode = complete, mode, get_mode
    end,
  }
end

return harness
