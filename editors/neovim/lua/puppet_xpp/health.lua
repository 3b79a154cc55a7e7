-- :checkhealth puppet_xpp — is the server there and which one, is Puppet there, and which
-- configuration and settings are in force (the running clients' first, else the one that would start).
-- Runs on Neovim 0.7 and later (vim.health, or 0.7's `health` module; before 0.10 its functions are
-- named report_*).
local M = {}

local health = vim.health or require('health')
local report = {
  start = health.start or health.report_start,
  ok = health.ok or health.report_ok,
  info = health.info or health.report_info,
  warn = health.warn or health.report_warn,
  error = health.error or health.report_error,
}

local NAME = 'puppet_xpp'
local DEBOUNCE_DEFAULT = 150 -- Neovim's own, when a client's flags give none

-- The settings the server reads (section `puppet`), in the order :help puppet_xpp-settings lists them.
local SETTING_KEYS = { 'strict', 'puppetVersion', 'modulepath', 'tasks', 'xppOnSave', 'lint' }

local function plugin()
  local ok, mod = pcall(require, 'puppet_xpp')
  return ok and mod or nil
end

--- The configuration that starts the server, and where it comes from: vim.lsp.enable('puppet_xpp')
--- (Neovim 0.11+, lsp/puppet_xpp.lua merged with vim.lsp.config calls), else the plugin's setup(),
--- else the plugin's defaults (nothing enabled yet).
local function configuration()
  local native = type(vim.lsp.config) == 'table' and type(vim.lsp.is_enabled) == 'function'
  if native and vim.lsp.is_enabled(NAME) then
    return vim.lsp.config[NAME], "vim.lsp.enable('puppet_xpp')", (vim.lsp.config[NAME].settings or {}).puppet
  end
  local mod = plugin()
  if mod and mod.config then
    return mod.config, "require('puppet_xpp').setup()", mod.config.settings
  end
  if mod then
    local defaults = mod.native_config()
    return defaults, nil, (defaults.settings or {}).puppet
  end
  return nil, nil, nil
end

local function show(value)
  if value == nil then
    return 'unset (the server\'s default)'
  end
  return vim.inspect(value, { newline = ' ', indent = '' })
end

local function report_settings(settings)
  settings = type(settings) == 'table' and settings or {}
  for _, key in ipairs(SETTING_KEYS) do
    report.info(('settings.%s: %s'):format(key, show(settings[key])))
  end
  for key, value in pairs(settings) do
    if not vim.tbl_contains(SETTING_KEYS, key) then
      report.warn(('settings.%s = %s: not a puppet-xpp setting (ignored by the server)'):format(key, show(value)))
    end
  end
end

--- `exe --version`'s first line, or nil and the reason.
local function version_of(exe)
  local out = vim.fn.system({ exe, '--version' })
  if vim.v.shell_error ~= 0 then
    return nil, ('`%s --version` failed (exit %d): %s'):format(exe, vim.v.shell_error, vim.trim(out))
  end
  return vim.trim(vim.split(out, '\n')[1] or '')
end

local function check_server(cfg, source)
  report.start('puppet-xpp: server')
  local cmd = cfg and cfg.cmd
  if type(cmd) == 'function' then
    report.info('cmd is a function: the server is started by it, not checked here')
    return nil
  end
  if type(cmd) ~= 'table' or not cmd[1] then
    report.error('no server command (cmd)')
    return nil
  end
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    report.error(('`%s` not found (cmd = %s)'):format(cmd[1], show(cmd)), {
      'install the server: pipx install . (in the puppet-xpp sources), or pipx install its wheel',
      source and source:find('setup', 1, true)
          and "or point cmd at it: require('puppet_xpp').setup({ cmd = { '/path/to/puppet-xpp', '--stdio' } })"
        or "or point cmd at it: vim.lsp.config('puppet_xpp', { cmd = { '/path/to/puppet-xpp', '--stdio' } })",
    })
    return nil
  end
  local version, why = version_of(exe)
  if not version then
    report.error(why)
    return nil
  end
  report.ok(('%s (%s)'):format(version, exe))
  report.info('cmd: ' .. show(cmd))
  return version:match('(%d+%.%d+[%w%.%-+]*)%s*$')
end

local function check_puppet()
  report.start('puppet-xpp: Puppet')
  local exe = vim.fn.exepath('puppet')
  if exe == '' then
    report.warn('`puppet` not found on PATH', {
      'the server needs no Puppet; with one installed, hover and signature help quote its reference text',
    })
    return
  end
  local version, why = version_of(exe)
  if version then
    report.ok(('Puppet %s (%s)'):format(version, exe))
  else
    report.warn(why)
  end
end

local function check_clients(server_version)
  report.start('puppet-xpp: running clients')
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local found = false
  for _, client in pairs(get()) do
    if client.name == NAME or client.name == 'puppet-xpp' then
      found = true
      local info = client.server_info or {}
      local server = info.name and ('server %s %s'):format(info.name, tostring(info.version))
        or 'server version not kept by this Neovim'
      report.ok(('client %d (%s): root %s, %s'):format(client.id, client.name,
        tostring(client.config.root_dir), server))
      if server_version and info.version and info.version ~= server_version then
        report.warn(('the running server is %s, `--version` on PATH says %s: restart it (:lsp restart)')
          :format(info.version, server_version))
      end
      local flags = client.flags or client.config.flags or {}
      report.info(('debounce_text_changes: %s ms'):format(flags.debounce_text_changes or DEBOUNCE_DEFAULT))
      local settings = client.settings or client.config.settings or {}
      report_settings(settings.puppet or settings)
    end
  end
  if not found then
    report.info('none: open a .pp or .epp file')
  end
end

function M.check()
  report.start('puppet-xpp: configuration')
  local cfg, source, settings = configuration()
  if cfg == nil then
    report.error("the plugin's Lua module is not on 'runtimepath'")
    return
  end
  if source then
    report.ok('started by ' .. source)
  else
    report.warn("not enabled: neither vim.lsp.enable('puppet_xpp') nor require('puppet_xpp').setup() ran",
      { "Neovim 0.11+: vim.lsp.enable('puppet_xpp')", "Neovim 0.7+: require('puppet_xpp').setup({})" })
  end
  report.info('filetypes: ' .. show(cfg.filetypes))
  if cfg.root_markers then
    report.info('root markers: ' .. show(cfg.root_markers))
  end
  local flags = (cfg.flags or (cfg.client_config or {}).flags or {})
  local debounce = flags.debounce_text_changes
  if debounce == nil and plugin() then
    debounce = (plugin().native_config().flags or {}).debounce_text_changes
  end
  report.info(('debounce_text_changes: %s ms'):format(debounce or DEBOUNCE_DEFAULT))
  report_settings(settings)
  local server_version = check_server(cfg, source)
  check_puppet()
  check_clients(server_version)
end

return M
