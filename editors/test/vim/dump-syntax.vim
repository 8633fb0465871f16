" Writes, as JSON to $TL_VIM_OUT, what Vim made of the current buffer: its filetype, the
" syntax and comment settings that editors/vim set, and the syntax group of every character
" (per line, per character, '' where none). Run by editors/test/lib/engines/vim.mjs.
let s:lines = []
for s:lnum in range(1, line('$'))
  let s:groups = []
  let s:byte = 1
  for s:char in split(getline(s:lnum), '\zs')
    call add(s:groups, synIDattr(synID(s:lnum, s:byte, 1), 'name'))
    let s:byte += len(s:char)
  endfor
  call add(s:lines, s:groups)
endfor
call writefile([json_encode({
      \ 'filetype': &filetype,
      \ 'syntax': get(b:, 'current_syntax', ''),
      \ 'commentstring': &commentstring,
      \ 'groups': s:lines,
      \ })], $TL_VIM_OUT)
