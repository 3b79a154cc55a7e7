" puppet-xpp: a Puppetfile is Ruby (r10k's DSL): Neovim's Ruby syntax colours it.
if exists('b:current_syntax')
  finish
endif
runtime! syntax/ruby.vim
let b:current_syntax = 'puppetfile'
