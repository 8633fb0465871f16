" Vim compiler file for tlc, the TileLang compiler: `:compiler tlc`, then `:make` compiles the
" current .tl file (its CUDA goes nowhere) and fills the quickfix list with tlc's errors,
" warnings and their notes (file:line:col: kind: message). A hint line is continued onto the
" diagnostic above it; the source line and caret that follow are skipped.
if exists('current_compiler')
  finish
endif
let current_compiler = 'tlc'

if exists(':CompilerSet') != 2
  command -nargs=* CompilerSet setlocal <args>
endif

CompilerSet makeprg=tlc\ %:S\ -o\ /dev/null\ --color=never
CompilerSet errorformat=
      \%E%f:%l:%c:\ error:\ %m,
      \%W%f:%l:%c:\ warning:\ %m,
      \%I%f:%l:%c:\ note:\ %m,
      \%Etlc:\ error:\ %m,
      \%+Chint:\ %.%#,
      \%-C\ %.%#,
      \%-C^%.%#,
      \%-G%.%#
