" puppet-xpp: comment settings for r10k's Puppetfile (Ruby comments).
setlocal commentstring=#\ %s comments=:#
let b:undo_ftplugin = get(b:, 'undo_ftplugin', '') . (exists('b:undo_ftplugin') ? '|' : '') . 'setlocal commentstring< comments<'
