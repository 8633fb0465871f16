" Vim syntax file
" Language:    TileLang (.tl), the tile-level GPU kernel language of tlc
" Maintainer:  the tlc project (editors/ in its repository)
"
" The keyword lists between the GENERATED KEYWORDS markers come from grammar/TileLang.g4:
" edit the g4 and run `node editors/tools/sync-keywords.mjs` instead of editing them here.

if exists('b:current_syntax')
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

syn case match

" BEGIN GENERATED KEYWORDS: generated from grammar/TileLang.g4 by editors/tools/sync-keywords.mjs; do not edit
syn keyword tlControl for in if else
syn keyword tlDeclaration const kernel let
syn keyword tlMemoryScope shared fragment local
syn keyword tlLoopKind parallel pipelined serial unroll vectorized
syn keyword tlPrimitiveType int float
syn keyword tlDtype f16 bf16 f32 f64 f8e4m3 f8e5m2 f4e2m1 i4 u4 i8 u8 i16 i32 u32 i64 bool
syn keyword tlTileOp copy gemm fill clear atomic_add cumsum cummax cummin dequant_i4 im2col
syn keyword tlTileOp reduce_sum reduce_max reduce_min reduce_abssum reduce_absmax reduce_and
syn keyword tlTileOp reduce_or reduce_xor reduce_argmax reduce_argmin annotate_layout swizzle_blocks
syn keyword tlTileOp barrier_arrive barrier_wait warp_specialize persistent tune_for call_extern
syn keyword tlTileOp print
syn keyword tlBuiltin exp exp2 log log2 sqrt rsqrt tanh sigmoid max min abs select inf ceildiv
syn keyword tlBuiltin warpgroup_id max_shared_bytes last_block
syn keyword tlPolicy full_row full_col square
syn keyword tlBoolean true false
syn keyword tlKeyword auto out as
syn keyword tlKernelNameKeyword contained copy gemm fill clear atomic_add cumsum cummax cummin
syn keyword tlKernelNameKeyword contained dequant_i4 im2col reduce_sum reduce_max reduce_min
syn keyword tlKernelNameKeyword contained reduce_abssum reduce_absmax reduce_and reduce_or
syn keyword tlKernelNameKeyword contained reduce_xor reduce_argmax reduce_argmin annotate_layout
syn keyword tlKernelNameKeyword contained swizzle_blocks barrier_arrive barrier_wait warp_specialize
syn keyword tlKernelNameKeyword contained persistent tune_for call_extern print exp exp2 log log2
syn keyword tlKernelNameKeyword contained sqrt rsqrt tanh sigmoid max min abs select inf ceildiv
syn keyword tlKernelNameKeyword contained warpgroup_id max_shared_bytes last_block
" END GENERATED KEYWORDS

" `grid`, `threads` and `dtype` are ordinary names except where the syntax needs the keyword
" (`threads = 128` is a common parameter), so they are matches with context, not keywords.
syn match tlKeyword        "\<\%(grid\|threads\)\>\ze\s*("
syn match tlPrimitiveType  "\%(:\s*\)\@<=\<dtype\>"
syn match tlPrimitiveType  "\<dtype\>\ze\s*\["

" Declared names. A keyword wins over a match that starts at the same column, so a reserved
" word in these positions keeps its keyword group, except for the keywords the g4 accepts as
" a kernel name (`kernel gemm`): `kernel` offers those first, as tlKernelNameKeyword.
syn keyword tlDeclaration  kernel nextgroup=tlKernelNameKeyword skipwhite
syn match tlKernelName     "\%(\<kernel\s\+\)\@<=\h\w*"
syn match tlConstName      "\%(\<const\s\+\)\@<=\h\w*"

" Literals: INT_LIT and FLOAT_LIT of the g4. Among matches that start at the same column the
" last one defined wins, so floats and hex come after decimal integers.
syn match tlInteger        "\<\d[0-9_]*"
syn match tlFloat          "\<\d\+\.\d*\%([eE][+-]\=\d\+\)\="
syn match tlFloat          "\%(\h\)\@<!\.\d\+\%([eE][+-]\=\d\+\)\="
syn match tlFloat          "\<\d\+[eE][+-]\=\d\+"
syn match tlHex            "\<0x[0-9a-fA-F_]\+"

" Strings end at the line's end like STRING_LIT, so an unterminated one stays on its line.
syn match  tlEscape        contained "\\."
syn region tlString        start=+"+ skip=+\\.+ end=+"+ end=+$+ contains=tlEscape

syn keyword tlTodo         contained TODO FIXME XXX NOTE
syn match  tlLineComment   "//.*" contains=tlTodo,@Spell
syn region tlBlockComment  start="/\*" end="\*/" contains=tlTodo,@Spell fold

" Kernel bodies and blocks fold with foldmethod=syntax.
syn region tlBlock         start="{" end="}" transparent fold

hi def link tlControl       Conditional
hi def link tlDeclaration   StorageClass
hi def link tlMemoryScope   StorageClass
hi def link tlLoopKind      Repeat
hi def link tlPrimitiveType Type
hi def link tlDtype         Type
hi def link tlTileOp        Function
hi def link tlBuiltin       Function
hi def link tlPolicy        Constant
hi def link tlBoolean       Boolean
hi def link tlKeyword       Keyword
hi def link tlKernelName    Function
hi def link tlKernelNameKeyword Function
hi def link tlConstName     Constant
hi def link tlInteger       Number
hi def link tlHex           Number
hi def link tlFloat         Float
hi def link tlString        String
hi def link tlEscape        SpecialChar
hi def link tlTodo          Todo
hi def link tlLineComment   Comment
hi def link tlBlockComment  Comment

let b:current_syntax = 'tl'

let &cpo = s:cpo_save
unlet s:cpo_save
