-- puppet-xpp: the commands over the server's puppet-vscode messages (issue 29): :PuppetNodeGraph,
-- :PuppetResource, :PuppetFacts, :PuppetFixAll. The requests keep puppet-editor-services' names and shapes
-- (`puppet/compileNodeGraph`, `puppet/getResource`, `puppet/getFacts`, `puppet/fixDiagnosticErrors`), the
-- ones the VS Code extension sends too. Every request is asynchronous: Neovim stays usable while the
-- server compiles a catalog or runs `puppet resource`. Works on Neovim 0.7 and later.
local M = {}

local CLIENT_NAMES = { ['puppet-xpp'] = true, puppet_xpp = true }

-- setup()'s client name (it may be changed), set by define_commands
local configured_name = function() return nil end

--- A running puppet-xpp client: the one attached to `bufnr`, else any (facts and resources are not a
--- buffer's).
function M.client(bufnr)
  local name = configured_name()
  local attached
  if vim.lsp.get_clients then
    attached = vim.lsp.get_clients({ bufnr = bufnr })
  else
    attached = vim.lsp.buf_get_clients(bufnr) -- Neovim 0.7: id -> client
  end
  local function ours(c)
    return CLIENT_NAMES[c.name] or (name ~= nil and c.name == name)
  end
  for _, c in pairs(attached) do
    if ours(c) then
      return c
    end
  end
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, c in pairs(all) do
    if ours(c) then
      return c
    end
  end
  return nil
end

local function warn(msg)
  vim.notify('puppet-xpp: ' .. msg, vim.log.levels.WARN)
end

--- Sends `method` and calls `done(result)` on the main loop; an LSP error is reported, not passed on.
local function request(client, method, params, bufnr, done)
  local function handler(err, result)
    if err then
      vim.notify(('puppet-xpp: %s failed: %s'):format(method, err.message or vim.inspect(err)),
        vim.log.levels.ERROR)
      return
    end
    done(result)
  end
  local ok
  if vim.fn.has('nvim-0.11') == 1 then
    ok = client:request(method, params, handler, bufnr)
  else
    ok = client.request(method, params, handler, bufnr)
  end
  if not ok then
    warn('the language server is not running')
  end
end

--- The current buffer and the puppet-xpp client for it, or nothing after saying why: `filetypes` (nil:
--- any buffer) are the filetypes the command works on, `what` what it needs.
local function current(filetypes, what)
  local bufnr = vim.api.nvim_get_current_buf()
  if filetypes and not vim.tbl_contains(filetypes, vim.bo[bufnr].filetype) then
    warn(what)
    return nil
  end
  local client = M.client(bufnr)
  if not client then
    warn('no puppet-xpp language server is running' .. (filetypes and ' for this buffer' or ''))
    return nil
  end
  return bufnr, client
end

--- True (after saying so) when `result`, the answer to `method`, is not an object or carries an error.
local function failed(result, method, what)
  if type(result) ~= 'table' then
    warn('no answer from ' .. method)
    return true
  end
  if type(result.error) == 'string' and result.error ~= '' then
    vim.notify('puppet-xpp: ' .. what .. ': ' .. result.error, vim.log.levels.ERROR)
    return true
  end
  return false
end

--- The lines of `text` (a final newline ends the last line, it does not start another).
local function lines_of(text)
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- A read-only scratch window below the others showing `lines`, named `name`, with filetype `ft`; a
--- scratch buffer of the same name is reused.
function M.scratch(lines, name, ft)
  local old = -1
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name then
      old = b
    end
  end
  if old ~= -1 then
    local win = vim.fn.bufwinid(old)
    if win ~= -1 then
      vim.api.nvim_set_current_win(win)
    else
      vim.cmd('botright sbuffer ' .. old)
    end
  else
    vim.cmd('botright new')
    pcall(vim.api.nvim_buf_set_name, 0, name)
  end
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  if ft then
    vim.bo[buf].filetype = ft
  end
  return buf
end

-- ---------------------------------------------------------------------------------------------
-- :PuppetNodeGraph

local function dot_id(s)
  return '"' .. s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', '\\n') .. '"'
end

--- The graph of a `puppet/compileNodeGraph` answer as Graphviz DOT lines: each vertex, then each edge,
--- each once (edges name their ends by vertex label).
function M.graph_dot(graph, name)
  local out = { 'digraph ' .. dot_id(name) .. ' {', '  node [shape=box];' }
  local seen = {}
  local function vertex(label)
    if type(label) == 'string' and not seen[label] then
      seen[label] = true
      table.insert(out, '  ' .. dot_id(label) .. ';')
    end
  end
  for _, v in ipairs(graph.vertices or {}) do
    vertex(v.label)
  end
  local edges, seen_edges = {}, {}
  for _, e in ipairs(graph.edges or {}) do
    if type(e.source) == 'string' and type(e.target) == 'string' then
      local key = dot_id(e.source) .. ' -> ' .. dot_id(e.target)
      if not seen_edges[key] then
        seen_edges[key] = true
        vertex(e.source)
        vertex(e.target)
        table.insert(edges, '  ' .. key .. ';')
      end
    end
  end
  vim.list_extend(out, edges)
  table.insert(out, '}')
  return out
end

function M.node_graph()
  local bufnr, client = current({ 'puppet' }, 'the node graph is of a Puppet manifest: open one first')
  if not bufnr then
    return
  end
  local file = vim.api.nvim_buf_get_name(bufnr)
  local method = 'puppet/compileNodeGraph'
  request(client, method, { external = vim.uri_from_bufnr(bufnr) }, bufnr, function(graph)
    if failed(graph, method, 'node graph of ' .. file) then
      return
    end
    local base = vim.fn.fnamemodify(file, ':t')
    M.scratch(M.graph_dot(graph, base), 'puppet-xpp://nodegraph/' .. file .. '.dot', 'dot')
  end)
end

-- ---------------------------------------------------------------------------------------------
-- :PuppetResource {type} [{title}]

function M.resource(args)
  local typename, title = args[1], table.concat(args, ' ', 2)
  if not typename or typename == '' then
    return warn('usage: :PuppetResource {type} [{title}]')
  end
  local bufnr, client = current()
  if not bufnr then
    return
  end
  -- where the text goes: below the cursor's line now, whatever the cursor does while Puppet runs
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local mark = vim.api.nvim_buf_set_extmark(bufnr, vim.api.nvim_create_namespace('puppet_xpp_resource'), row - 1, 0, {})
  local params = { typename = typename }
  if title and title ~= '' then
    params.title = title
  end
  request(client, 'puppet/getResource', params, bufnr, function(result)
    if failed(result, 'puppet/getResource', 'puppet resource ' .. typename) then
      return
    end
    if type(result.data) ~= 'string' or result.data == '' then
      return warn('puppet resource ' .. typename .. ' printed nothing')
    end
    if not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    local ns = vim.api.nvim_create_namespace('puppet_xpp_resource')
    local at = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, mark, {})
    vim.api.nvim_buf_del_extmark(bufnr, ns, mark)
    local line = at[1] and at[1] + 1 or row
    vim.api.nvim_buf_set_lines(bufnr, line, line, false, lines_of(result.data))
  end)
end

-- ---------------------------------------------------------------------------------------------
-- :PuppetFacts

local EMPTY_DICT = getmetatable(vim.empty_dict())

--- `value` as indented JSON lines with sorted keys (vim.json.encode writes one line with keys in any
--- order; facter's hash is easier to read like `facter --json` prints it).
function M.json_lines(value)
  local out = {}
  local function enc(v, indent, prefix, suffix)
    local t = type(v)
    if v == nil or v == vim.NIL then
      table.insert(out, indent .. prefix .. 'null' .. suffix)
    elseif t == 'table' then
      local keys = vim.tbl_keys(v)
      local is_list = #keys > 0 and (vim.islist or vim.tbl_islist)(v)
      if #keys == 0 then
        local empty = getmetatable(v) == EMPTY_DICT and '{}' or '[]'
        table.insert(out, indent .. prefix .. empty .. suffix)
        return
      end
      table.insert(out, indent .. prefix .. (is_list and '[' or '{'))
      if is_list then
        for i, item in ipairs(v) do
          enc(item, indent .. '  ', '', i < #v and ',' or '')
        end
      else
        table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
        for i, k in ipairs(keys) do
          enc(v[k], indent .. '  ', vim.fn.json_encode(tostring(k)) .. ': ', i < #keys and ',' or '')
        end
      end
      table.insert(out, indent .. (is_list and ']' or '}') .. suffix)
    else
      table.insert(out, indent .. prefix .. vim.fn.json_encode(v) .. suffix)
    end
  end
  enc(value, '', '', '')
  return out
end

function M.facts()
  local bufnr, client = current()
  if not bufnr then
    return
  end
  request(client, 'puppet/getFacts', nil, bufnr, function(result)
    if failed(result, 'puppet/getFacts', 'facts') then
      return
    end
    if type(result.facts) ~= 'table' then
      return warn('the server sent no facts')
    end
    M.scratch(M.json_lines(result.facts), 'puppet-xpp://facts.json', 'json')
  end)
end

-- ---------------------------------------------------------------------------------------------
-- :PuppetFixAll

function M.fix_all()
  local bufnr, client = current({ 'puppet', 'epuppet' }, 'puppet-lint fixes Puppet manifests: open one first')
  if not bufnr then
    return
  end
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local params = { documentUri = vim.uri_from_bufnr(bufnr), alwaysReturnContent = false }
  request(client, 'puppet/fixDiagnosticErrors', params, bufnr, function(result)
    if type(result) ~= 'table' or type(result.fixesApplied) ~= 'number' or result.fixesApplied <= 0
        or type(result.newContent) ~= 'string' then
      vim.notify('puppet-xpp: no lint problem to fix', vim.log.levels.INFO)
      return
    end
    if not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick then
      return warn('the buffer changed while it was being fixed: run :PuppetFixAll again')
    end
    local wins = vim.fn.win_findbuf(bufnr)
    local cursors = {}
    for _, w in ipairs(wins) do
      cursors[w] = vim.api.nvim_win_get_cursor(w)
    end
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines_of(result.newContent))
    local count = vim.api.nvim_buf_line_count(bufnr)
    for w, c in pairs(cursors) do
      pcall(vim.api.nvim_win_set_cursor, w, { math.min(c[1], count), c[2] })
    end
    vim.notify(('puppet-xpp: fixed %d lint problem%s'):format(result.fixesApplied,
      result.fixesApplied == 1 and '' or 's'), vim.log.levels.INFO)
  end)
end

--- :PuppetNodeGraph, :PuppetResource, :PuppetFacts, :PuppetFixAll; `client_name()` gives setup()'s
--- client name (nil: the default names).
function M.define_commands(client_name)
  configured_name = client_name or configured_name
  vim.api.nvim_create_user_command('PuppetNodeGraph', function() M.node_graph() end,
    { nargs = 0, desc = "the catalog's node graph of this manifest as DOT (puppet/compileNodeGraph)" })
  vim.api.nvim_create_user_command('PuppetResource', function(opts) M.resource(opts.fargs) end,
    { nargs = '+', desc = 'insert what `puppet resource {type} [{title}]` prints below the cursor' })
  vim.api.nvim_create_user_command('PuppetFacts', function() M.facts() end,
    { nargs = 0, desc = "facter's facts as JSON (puppet/getFacts)" })
  vim.api.nvim_create_user_command('PuppetFixAll', function() M.fix_all() end,
    { nargs = 0, desc = "apply puppet-lint's fixes to this buffer (puppet/fixDiagnosticErrors)" })
end

return M
