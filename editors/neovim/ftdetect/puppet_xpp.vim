" puppet-xpp: *.pp files are Puppet manifests, *.epp files are EPP templates, and a file named Puppetfile
" is r10k's Puppetfile (filetype puppetfile; Neovim calls it ruby, and colours it so through
" syntax/puppetfile.vim), which the language server reads.
" Neovim 0.7 guesses Pascal for a .pp file whose first line looks like Pascal (a Puppet function file
" `function mymod::f(...)` or a type alias file `type Mymod::T = ...`); g:filetype_pp overrides the guess
" (also honoured by Neovim >= 0.8), and the autocommands below catch anything that set another type.
let g:filetype_pp = 'puppet'
augroup puppet_xpp_ftdetect
  autocmd!
  autocmd BufNewFile,BufRead *.pp if &filetype !=# 'puppet' | setlocal filetype=puppet | endif
  autocmd BufNewFile,BufRead *.epp if &filetype !=# 'epuppet' | setlocal filetype=epuppet | endif
  autocmd BufNewFile,BufRead Puppetfile if &filetype !=# 'puppetfile' | setlocal filetype=puppetfile | endif
augroup END
