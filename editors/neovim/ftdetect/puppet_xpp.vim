" puppet-xpp: *.pp files are Puppet manifests and *.epp files are EPP templates.
" Neovim 0.7 guesses Pascal for a .pp file whose first line looks like Pascal (a Puppet function file
" `function mymod::f(...)` or a type alias file `type Mymod::T = ...`); g:filetype_pp overrides the guess
" (also honoured by Neovim >= 0.8), and the autocommands below catch anything that set another type.
let g:filetype_pp = 'puppet'
augroup puppet_xpp_ftdetect
  autocmd!
  autocmd BufNewFile,BufRead *.pp if &filetype !=# 'puppet' | setlocal filetype=puppet | endif
  autocmd BufNewFile,BufRead *.epp if &filetype !=# 'epuppet' | setlocal filetype=epuppet | endif
augroup END
