" Vim indent file for TileLang (.tl).
"
" Bodies indent like C (cindent). Kernel headers, which cindent takes for a K&R declaration,
" follow the layout of the repository's samples:
"
"   kernel gemm<block_M = 128, block_N = 128,
"               dtype: dtype = f16>(            compile-time parameters line up after `<`
"       A: dtype[M, K], C: out dtype[M, N])     run-time parameters: two shiftwidths
"     grid(ceildiv(N, block_N)) threads(128)    launch spec: one shiftwidth
"   {

if exists('b:did_indent')
  finish
endif
let b:did_indent = 1

" cinoptions for cindent(): continuation lines line up after the unclosed `(`, or take two
" shiftwidths when the `(` ends its line.
setlocal indentexpr=TileLangIndent(v:lnum)
setlocal indentkeys=0{,0},0),0],!^F,o,O,e
setlocal cinoptions=(0,W2s,m1
let b:undo_indent = 'setlocal indentexpr< indentkeys< cinoptions<'

if exists('*TileLangIndent')
  finish
endif

" The line of the `kernel` whose header holds line `lnum` (the header runs up to its `{`),
" or 0 when `lnum` is not in a kernel header.
function! s:HeaderStart(lnum) abort
  let l:lnum = a:lnum - 1
  while l:lnum > 0
    let l:text = substitute(getline(l:lnum), '//.*$', '', '')
    if l:text =~# '[{}]'
      return 0
    endif
    if l:text =~# '^\s*kernel\>'
      return l:lnum
    endif
    let l:lnum -= 1
  endwhile
  return 0
endfunction

" Where the header text from line `first` up to line `last` leaves off: 'compile' inside
" <...> (then s:angle_col is the column after `<`), 'runtime' inside the (...) that follows,
" or 'launch' after them.
function! s:HeaderState(first, last) abort
  let l:state = 'name'
  let l:depth = 0
  for l:lnum in range(a:first, a:last)
    let l:text = substitute(getline(l:lnum), '//.*$', '', '')
    let l:col = 0
    for l:char in split(l:text, '\zs')
      let l:col += 1
      if l:char ==# '('
        if l:depth == 0 && l:state !=# 'compile' && l:state !=# 'launch'
          let l:state = 'runtime'
        endif
        let l:depth += 1
      elseif l:char ==# ')'
        let l:depth -= 1
        if l:depth == 0 && l:state ==# 'runtime'
          let l:state = 'launch'
        endif
      elseif l:char ==# '<' && l:depth == 0 && l:state ==# 'name'
        let l:state = 'compile'
        let s:angle_col = l:col
      elseif l:char ==# '>' && l:depth == 0 && l:state ==# 'compile'
        let l:state = 'params'
      endif
    endfor
  endfor
  return l:state
endfunction

function! TileLangIndent(lnum) abort
  let l:kernel = s:HeaderStart(a:lnum)
  if l:kernel == 0
    return cindent(a:lnum)
  endif
  let l:base = indent(l:kernel)
  if getline(a:lnum) =~# '^\s*{'
    return l:base
  endif
  let l:state = s:HeaderState(l:kernel, a:lnum - 1)
  if l:state ==# 'compile'
    return s:angle_col
  elseif l:state ==# 'runtime' || l:state ==# 'params'
    return l:base + 2 * shiftwidth()
  endif
  return l:base + shiftwidth()
endfunction
