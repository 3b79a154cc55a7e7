" puppet-xpp: comment settings for EPP templates.
setlocal commentstring=<%#\ %s\ %>
let b:undo_ftplugin = get(b:, 'undo_ftplugin', '') . (exists('b:undo_ftplugin') ? '|' : '') . 'setlocal commentstring<'
