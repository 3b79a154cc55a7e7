-- puppet-xpp: the plugin's commands (:PuppetXppCompile, :PuppetXppDump) whichever way the server is
-- started, setup() or, on Neovim 0.11 and later, vim.lsp.enable('puppet_xpp') with no setup() at all.
if vim.g.loaded_puppet_xpp then
  return
end
vim.g.loaded_puppet_xpp = true
require('puppet_xpp').define_commands()
