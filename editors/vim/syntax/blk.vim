" Vim syntax file for blk (.blk), the block-programming language for GPUs.
" Keywords, builtins and type names are checked against the compiler's own
" tables (the lexer's keywords, sema's builtin table, the dtype names) by
" tests/unit/test_editor_files.c: add a builtin there and here together.
" Install: copy editors/vim/syntax and editors/vim/ftdetect into ~/.vim/.
if exists("b:current_syntax")
  finish
endif

syn keyword blkKeyword kernel fn const let var import as
syn keyword blkConditional if else
syn keyword blkRepeat for in while break continue return
syn keyword blkBoolean true false None
syn keyword blkType bool i8 i16 i32 i64 u8 u16 u32 u64 f8e4m3 f8e5m2 f16 bf16 f32 f64 str
syn keyword blkBuiltin program_id num_programs arange zeros full load store tensor_desc atomic_add
syn keyword blkBuiltin atomic_max atomic_min atomic_and atomic_or atomic_xor atomic_xchg atomic_cas
syn keyword blkBuiltin abs exp exp2 log log2 sqrt rsqrt sin cos tanh sigmoid erf floor ceil round
syn keyword blkBuiltin rint trunc log1p expm1 exp10 log10 tan asin acos atan sinh cosh asinh acosh
syn keyword blkBuiltin atanh cbrt erfc erfinv lgamma fma pow atan2 hypot fmod remainder copysign
syn keyword blkBuiltin nextafter isnan isinf isfinite signbit clz popc brev bswap mulhi bitcast
syn keyword blkBuiltin minimum maximum clamp where cdiv sum max min prod xor_sum argmax argmin
syn keyword blkBuiltin reduce cumsum cumprod scan sort topk dot trans permute reshape broadcast_to
syn keyword blkBuiltin expand_dims join split cat cluster_sum multiple_of max_contiguous rand randn randint
syn keyword blkBuiltin print static_assert device_assert range static_range
syn keyword blkConstant inf nan

syn match blkAttribute "@[A-Za-z_][A-Za-z0-9_]*"
syn match blkNumber "\<\d[0-9_]*\>"
syn match blkNumber "\<0[xX][0-9a-fA-F_]\+\>"
syn match blkNumber "\<0[bB][01_]\+\>"
syn match blkFloat "\<\d[0-9_]*\.\d*\([eE][+-]\=\d\+\)\=\>"
syn match blkFloat "\.\d\+\([eE][+-]\=\d\+\)\=\>"
syn match blkFloat "\<\d[0-9_]*[eE][+-]\=\d\+\>"
syn region blkString start=+"+ skip=+\\\\\|\\"+ end=+"+ contains=blkEscape
syn match blkEscape contained "\\[nt\\"]"
syn keyword blkTodo contained TODO FIXME XXX NOTE
syn region blkComment start="//" end="$" contains=blkTodo
syn region blkComment start="/\*" end="\*/" contains=blkTodo

hi def link blkKeyword Keyword
hi def link blkConditional Conditional
hi def link blkRepeat Repeat
hi def link blkBoolean Boolean
hi def link blkType Type
hi def link blkBuiltin Function
hi def link blkConstant Constant
hi def link blkAttribute PreProc
hi def link blkNumber Number
hi def link blkFloat Float
hi def link blkString String
hi def link blkEscape SpecialChar
hi def link blkTodo Todo
hi def link blkComment Comment

let b:current_syntax = "blk"
