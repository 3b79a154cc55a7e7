" puppet-xpp: comment settings for Puppet manifests (Neovim's own runtime has no Puppet ftplugin).
setlocal commentstring=#\ %s comments=:#
let b:undo_ftplugin = get(b:, 'undo_ftplugin', '') . (exists('b:undo_ftplugin') ? '|' : '') . 'setlocal commentstring< comments<'
