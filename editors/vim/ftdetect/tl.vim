" TileLang kernels. `set filetype` rather than `setfiletype`: Vim's own filetype.vim maps *.tl
" to Teal, and that mapping runs before ftdetect scripts.
autocmd BufRead,BufNewFile *.tl set filetype=tl
