" Editing settings for TileLang (.tl): C-style comments, two-space indentation.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal commentstring=//\ %s
setlocal comments=s1:/*,mb:*,ex:*/,://
setlocal formatoptions-=t formatoptions+=croql
setlocal shiftwidth=2 softtabstop=2 expandtab

let b:undo_ftplugin = 'setlocal commentstring< comments< formatoptions<'
      \ . ' shiftwidth< softtabstop< expandtab<'
