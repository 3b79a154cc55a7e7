-- puppet-xpp for Neovim (0.7 and later): starts the puppet-xpp language server for Puppet manifests
-- (filetype `puppet`), EPP templates (`epuppet`), r10k's Puppetfile (`puppetfile`), modules'
-- metadata.json (`json`, that file name only) and Hiera's hiera.yaml and data/ files (`yaml`, `json`) of
-- an environment or module with a hiera.yaml.
--
--   require('puppet_xpp').setup({
--     cmd = { 'puppet-xpp', '--stdio' },                 -- how to start the server
--     settings = { modulepath = {}, strict = 'warning', tasks = false, xppOnSave = true },
--     -- puppet-lint diagnostics and quick fixes are on; to turn them off or use another .puppet-lint.rc:
--     -- settings = { lint = { enabled = false, rcPath = '~/.puppet-lint.rc' } },
--     -- the deep checks (what a catalog compile reports: unknown classes, parameters, ...) are on; off:
--     -- settings = { deepChecks = { enabled = false } },
--   })
--
-- On Neovim 0.11 and later, vim.lsp.enable('puppet_xpp') (lsp/puppet_xpp.lua) does the same without setup().
-- :help puppet_xpp; :checkhealth puppet_xpp.
-- Neovim >= 0.8 uses vim.lsp.start (one client per root directory, reused automatically);
-- Neovim 0.7 uses vim.lsp.start_client + vim.lsp.buf_attach_client with our own per-root cache.
local M = {}

local uv = vim.loop

-- The server's client configuration (command, filetypes, debounce, the puppet/xppWritten handler) lives
-- in lsp/puppet_xpp.lua, the file Neovim 0.11's vim.lsp.enable('puppet_xpp') reads: setup() starts from
-- this plugin's copy of it (next to lua/), whatever else 'runtimepath' holds.
local native -- the table lsp/puppet_xpp.lua returns, loaded once

--- A copy of the configuration in lsp/puppet_xpp.lua (in nvim-lspconfig's shape).
function M.native_config()
  if native == nil then
    local here = debug.getinfo(1, 'S').source:gsub('^@', '')
    local file = vim.fn.fnamemodify(here, ':p:h:h:h') .. '/lsp/puppet_xpp.lua'
    native = dofile(file)
  end
  return vim.deepcopy(native)
end

M.defaults = {
  name = 'puppet-xpp',
  cmd = M.native_config().cmd,
  -- the command line tool used by :PuppetXppCompile and :PuppetXppDump (default: cmd without --stdio)
  cli = nil,
  filetypes = M.native_config().filetypes,
  -- server settings: initializationOptions, and the answer to workspace/configuration section "puppet"
  settings = {},
  on_attach = nil,
  capabilities = nil,
  -- extra fields merged into the client configuration (handlers, flags, ...)
  client_config = {},
  -- show a message each time the server writes a .xpp file
  notify_xpp_written = false,
  -- format a manifest through the server (puppet-lint's fixes, indentation, => alignment) before :w
  format_on_save = false,
  -- buffer-local LSP mappings set on attach where the buffer has none (Neovim 0.7 has no defaults):
  -- false to keep your own; a table to choose the keys
  keymaps = {
    definition = 'gd',
    hover = 'K',
    references = 'gr',
    signature_help = '<C-k>', -- insert mode
  },
}

M.config = nil
local clients_by_root = {} -- Neovim 0.7: root_dir -> client id

local function has_lsp_start()
  return type(vim.lsp.start) == 'function'
end

local function exists(p, kind)
  local st = uv.fs_stat(p)
  return st ~= nil and (kind == nil or st.type == kind)
end

local function join(a, b)
  return (a:gsub('/+$', '')) .. '/' .. b
end

local function parent(d)
  local p = vim.fn.fnamemodify(d, ':h')
  return p
end

--- The environment directory containing `dir`: a directory with environment.conf, or one with
--- manifests/ and site-modules/, site/ or modules/ that is not itself a module (no metadata.json).
function M.find_environment(dir)
  local d = dir
  for _ = 1, 40 do
    if exists(join(d, 'environment.conf'), 'file') then
      return d
    end
    if exists(join(d, 'manifests'), 'directory') and not exists(join(d, 'metadata.json'), 'file') and
        (exists(join(d, 'site-modules'), 'directory') or exists(join(d, 'site'), 'directory') or
          exists(join(d, 'modules'), 'directory')) then
      return d
    end
    local p = parent(d)
    if p == d then
      break
    end
    d = p
  end
  return nil
end

--- Root directory for a file: its Puppet environment, else the nearest module (metadata.json) or
--- repository (.git), else the file's directory.
function M.find_root(fname)
  local dir = vim.fn.fnamemodify(fname, ':p:h')
  local env = M.find_environment(dir)
  if env then
    return env
  end
  local d = dir
  for _ = 1, 40 do
    if exists(join(d, 'metadata.json'), 'file') or exists(join(d, '.git')) then
      return d
    end
    local p = parent(d)
    if p == d then
      break
    end
    d = p
  end
  return dir
end

local function cli_cmd(cfg)
  if cfg.cli then
    return vim.deepcopy(cfg.cli)
  end
  local out = {}
  for _, a in ipairs(cfg.cmd) do
    if a ~= '--stdio' then
      table.insert(out, a)
    end
  end
  return out
end

-- puppet/xppWritten: lsp/puppet_xpp.lua's handler (b:puppet_xpp_file, User PuppetXppWritten), and a
-- message when notify_xpp_written is set.
local function on_xpp_written(err, result, ctx, config)
  M.native_config().handlers['puppet/xppWritten'](err, result, ctx, config)
  if not err and type(result) == 'table' and result.xpp and M.config and M.config.notify_xpp_written then
    vim.notify('puppet-xpp: wrote ' .. vim.uri_to_fname(result.xpp), vim.log.levels.INFO)
  end
end

-- On attach: LSP omni-completion (<C-x><C-o>; Neovim 0.7 does not set 'omnifunc' itself) and the
-- mappings of `keymaps`, never over a mapping the buffer already has.
local function on_attach(cfg)
  return function(client, bufnr)
    if vim.bo[bufnr].omnifunc == '' then
      vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
    end
    local km = cfg.keymaps
    if type(km) == 'table' then
      local function map(mode, lhs, fn)
        if lhs and vim.fn.maparg(lhs, mode) == '' then
          vim.api.nvim_buf_set_keymap(bufnr, mode, lhs, '', { noremap = true, silent = true, callback = fn })
        end
      end
      map('n', km.definition, vim.lsp.buf.definition)
      map('n', km.hover, vim.lsp.buf.hover)
      map('n', km.references, vim.lsp.buf.references)
      map('i', km.signature_help, vim.lsp.buf.signature_help)
    end
    -- manifests only: the server formats nothing else (on Neovim 0.10+ it registers formatting for the
    -- `puppet` filetype alone, and a format of another buffer would say "no matching language servers")
    if cfg.format_on_save and vim.bo[bufnr].filetype == 'puppet' then
      vim.api.nvim_create_autocmd('BufWritePre', {
        buffer = bufnr,
        callback = function()
          if vim.lsp.buf.format then
            vim.lsp.buf.format({ bufnr = bufnr, id = client.id, timeout_ms = 3000 })
          else
            vim.lsp.buf.formatting_sync(nil, 3000) -- Neovim 0.7
          end
        end,
      })
    end
    if cfg.on_attach then
      cfg.on_attach(client, bufnr)
    end
  end
end

local function client_config(cfg, root)
  local settings = cfg.settings or {}
  local c = {
    name = cfg.name,
    cmd = cfg.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = settings,
    settings = { puppet = settings },
    capabilities = cfg.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = on_attach(cfg),
    flags = M.native_config().flags,
    handlers = { ['puppet/xppWritten'] = on_xpp_written },
  }
  for k, v in pairs(cfg.client_config or {}) do
    if k == 'handlers' then
      c.handlers = vim.tbl_extend('force', c.handlers, v)
    else
      c[k] = v
    end
  end
  return c
end

--- Attach the server to a buffer (called from the FileType autocommand).
function M.attach(bufnr)
  local cfg = M.config
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local fname = vim.api.nvim_buf_get_name(bufnr)
  if fname == '' or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  -- of JSON, a module's metadata.json; of YAML and JSON, Hiera's files of an environment or module (the
  -- rule of lsp/puppet_xpp.lua, whose root_dir decides so on Neovim 0.11+)
  if not M.native_config().puppet_xpp_serves(bufnr) then
    return nil
  end
  local root = M.find_root(fname)
  if has_lsp_start() then
    return vim.lsp.start(client_config(cfg, root), { bufnr = bufnr })
  end
  local id = clients_by_root[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(client_config(cfg, root))
    if not id then
      vim.notify('puppet-xpp: could not start ' .. table.concat(cfg.cmd, ' '), vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

-- What the commands run: setup()'s configuration, else (the server started by vim.lsp.enable on Neovim
-- 0.11+, or not at all yet) the command and settings of vim.lsp.config's puppet_xpp / lsp/puppet_xpp.lua.
local function command_config()
  if M.config then
    return M.config
  end
  local c = type(vim.lsp.config) == 'table' and vim.lsp.config.puppet_xpp or M.native_config()
  return { cmd = type(c.cmd) == 'table' and c.cmd or M.defaults.cmd, settings = (c.settings or {}).puppet or {} }
end

-- :PuppetXppCompile [ENVDIR]: `puppet-xpp --compile ENVDIR`, diagnostics into the quickfix list.
local function compile(opts)
  local cfg = command_config()
  local env = opts.args ~= '' and vim.fn.fnamemodify(opts.args, ':p') or nil
  if not env then
    local name = vim.api.nvim_buf_get_name(0)
    env = M.find_environment(name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd())
  end
  if not env then
    vim.notify('puppet-xpp: no Puppet environment here; give its directory: :PuppetXppCompile DIR',
      vim.log.levels.WARN)
    return
  end
  env = env:gsub('/+$', '')
  local argv = cli_cmd(cfg)
  vim.list_extend(argv, { '--compile', env, '--strict', (cfg.settings or {}).strict or 'warning' })
  local lines = {}
  local function collect(_, data)
    for _, l in ipairs(data or {}) do
      if l ~= '' then
        table.insert(lines, l)
      end
    end
  end
  local job = vim.fn.jobstart(argv, {
    cwd = env,
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(_, code)
      vim.fn.setqflist({}, ' ', {
        title = 'puppet-xpp --compile ' .. env,
        lines = lines,
        efm = '%tarning: %m (file: %f\\, line: %l\\, column: %c),%trror: %m (file: %f\\, line: %l\\, column: %c)',
      })
      local msg = code == 0 and 'compiled ' or (code == 1 and 'compiled with errors (see :copen) ' or 'failed: ')
      vim.notify('puppet-xpp: ' .. msg .. env .. (code > 1 and (' (exit ' .. code .. ')') or ''),
        code == 0 and vim.log.levels.INFO or vim.log.levels.WARN)
    end,
  })
  if job <= 0 then
    vim.notify('puppet-xpp: cannot run ' .. table.concat(argv, ' '), vim.log.levels.ERROR)
  end
end

-- :PuppetXppDump [pn|tree]: the .xpp of the current file (written on save), dumped into a scratch buffer.
local function dump(opts)
  local cfg = command_config()
  local format = opts.args ~= '' and opts.args or 'pn'
  local src = vim.api.nvim_buf_get_name(0)
  local ok, xpp = pcall(vim.api.nvim_buf_get_var, 0, 'puppet_xpp_file')
  local file = (ok and xpp and exists(xpp, 'file')) and xpp or src
  if file == src then
    vim.notify('puppet-xpp: no .xpp written for this buffer yet (save it); dumping the source', vim.log.levels.INFO)
  end
  local argv = cli_cmd(cfg)
  vim.list_extend(argv, { '--dump', file, '--format', format })
  if format == 'pn' then
    table.insert(argv, '--pretty')
  end
  local out = vim.fn.systemlist(argv)
  require('puppet_xpp.commands').scratch(out, 'puppet-xpp://' .. file .. '.' .. format)
end

--- :PuppetXppCompile and :PuppetXppDump, and the commands of lua/puppet_xpp/commands.lua (:PuppetNodeGraph,
--- :PuppetResource, :PuppetFacts, :PuppetFixAll): setup() defines them; plugin/puppet_xpp.lua too, for the
--- vim.lsp.enable way.
function M.define_commands()
  require('puppet_xpp.commands').define_commands(function() return M.config and M.config.name end)
  vim.api.nvim_create_user_command('PuppetXppCompile', compile,
    { nargs = '?', complete = 'dir', desc = 'puppet-xpp --compile the environment' })
  vim.api.nvim_create_user_command('PuppetXppDump', dump,
    { nargs = '?', complete = function() return { 'pn', 'tree' } end, desc = 'dump the .xpp of this file' })
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  if opts and opts.cmd then
    M.config.cmd = opts.cmd -- lists are replaced, not merged
  end
  if opts and opts.filetypes then
    M.config.filetypes = opts.filetypes
  end
  vim.g.filetype_pp = 'puppet' -- *.pp is Puppet, never Pascal
  local group = vim.api.nvim_create_augroup('puppet_xpp', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  M.define_commands()
  -- buffers that were already open when setup() ran
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(M.config.filetypes, vim.bo[buf].filetype) then
      M.attach(buf)
    end
  end
end

return M
