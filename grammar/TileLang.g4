// TileLang (.tl) grammar: the single source of truth for the syntax.
//
// The C++ parser is generated from this file at build time (antlr4 -Dlanguage=Cpp).
// Editor grammars under editors/ are checked against the keyword lists here, so keep
// every keyword a literal token below.
grammar TileLang;

// ---------------------------------------------------------------- file structure

program : topDecl* EOF ;

topDecl
    : constDecl
    | kernelDecl
    ;

constDecl : 'const' name (':' typeName)? '=' expr ';' ;

kernelDecl
    : 'kernel' kernelName compileParams? '(' tensorParamList? ')' launchSpec block
    ;

// Keyword argument names: `clear = false` names an option, not the tile operator.
argName : name | tileOpName | builtinName ;

// Kernels are often named after the operator they implement (`kernel gemm`), so tile
// operator and builtin names are allowed here.
kernelName : name | tileOpName | builtinName ;

// Compile-time parameters: `<block_M = 128, dtype: dtype = f16, stages: int = auto>`.
compileParams : '<' (compileParam (',' compileParam)* ','?)? '>' ;
compileParam  : name (':' typeName)? ('=' paramDefault)? ;
paramDefault
    : 'auto' ('(' expr (',' expr)* ')')?    # AutoDefault
    | expr                                  # ExprDefault
    ;

// Run-time parameters: tensors `A: f16[M, K]`, written tensors `C: out f16[M, N]`,
// and scalars `scale: f32`.
tensorParamList : tensorParam (',' tensorParam)* ','? ;
tensorParam     : name ':' 'out'? elemType ('[' exprList ']')? ;

launchSpec
    : 'grid' '(' exprList ')' 'threads' '(' expr ')' ('as' '(' identList ')')?
    ;

// ---------------------------------------------------------------- types

// Element types: a dtype keyword or a dtype-valued compile-time parameter.
elemType : dtypeName | name ;

typeName
    : dtypeName
    | 'int'
    | 'float'
    | 'dtype'
    ;

dtypeName
    : 'f16' | 'bf16' | 'f32' | 'f64' | 'f8e4m3' | 'f8e5m2' | 'f4e2m1'
    | 'i4' | 'u4' | 'i8' | 'u8' | 'i16' | 'i32' | 'u32' | 'i64' | 'bool'
    ;

scopeName : 'shared' | 'fragment' | 'local' ;

// ---------------------------------------------------------------- statements

block : '{' stmt* '}' ;

stmt
    : allocStmt
    | letStmt
    | forStmt
    | ifStmt
    | assignStmt
    | callStmt
    | block
    | ';'
    ;

// `A_s = shared f16[128, 32];`
allocStmt : name '=' scopeName elemType '[' exprList ']' ';' ;

// `let x = expr;` (immutable scalar)
letStmt : 'let' name (':' dtypeName)? '=' expr ';' ;

// `for i, j in parallel(M, N) { ... }`
forStmt : 'for' identList 'in' loopKind '(' argList? ')' block ;

loopKind : 'parallel' | 'pipelined' | 'serial' | 'unroll' | 'vectorized' ;

ifStmt : 'if' expr block ('else' (ifStmt | block))? ;

// `C_f[i, j] = expr;` or `acc[0] += expr;`
assignStmt : lvalue assignOp expr ';' ;
lvalue     : name ('[' exprList ']')? ;
assignOp   : '=' | '+=' | '-=' | '*=' | '/=' ;

// Tile operators and other statement calls: `copy(A[by * 128, k * 32], A_s);`
callStmt : callExpr ';' ;

// ---------------------------------------------------------------- expressions

exprList  : expr (',' expr)* ','? ;
identList : name (',' name)* ;

// `threads`, `grid` and `dtype` are keywords only where the syntax needs them; elsewhere
// they are ordinary names (`threads = 128` is a common compile-time parameter).
name : IDENT | 'threads' | 'grid' | 'dtype' ;

argList : arg (',' arg)* ','? ;
arg
    : argName '=' expr    # KeywordArg
    | expr                # PositionalArg
    ;

expr
    : primary                                                  # PrimaryExpr
    | op=('-' | '!' | '~') expr                                # UnaryExpr
    | expr op=('*' | '/' | '%') expr                           # BinaryExpr
    | expr op=('+' | '-') expr                                 # BinaryExpr
    | expr op=('<<' | '>>') expr                               # BinaryExpr
    | expr op=('<' | '<=' | '>' | '>=') expr                   # BinaryExpr
    | expr op=('==' | '!=') expr                               # BinaryExpr
    | expr op='&' expr                                         # BinaryExpr
    | expr op='^' expr                                         # BinaryExpr
    | expr op='|' expr                                         # BinaryExpr
    | expr op='&&' expr                                        # BinaryExpr
    | expr op='||' expr                                        # BinaryExpr
    ;

primary
    : literal                                   # LiteralPrimary
    | callExpr                                  # CallPrimary
    | name '[' indexList ']'                    # IndexPrimary
    | name                                      # NamePrimary
    | dtypeName                                 # DtypePrimary
    | policyName                                # PolicyPrimary
    | '(' expr ')'                              # ParenPrimary
    | '(' identList ')' '=>' '[' exprList ']'   # LambdaPrimary
    ;

// Calls: tile operators, builtins (`exp2(x)`), casts (`f16(x)`, `acc_t(x)` for a
// dtype parameter), `call_extern("fn", args...)` and `print("label", x, ...)`.
callExpr : callee '(' argList? ')' ;
callee   : tileOpName | builtinName | dtypeName | name ;

tileOpName
    : 'copy' | 'gemm' | 'fill' | 'clear' | 'atomic_add' | 'cumsum' | 'cummax' | 'cummin' | 'dequant_i4' | 'im2col'
    | 'reduce_sum' | 'reduce_max' | 'reduce_min' | 'reduce_abssum' | 'reduce_absmax'
    | 'reduce_and' | 'reduce_or' | 'reduce_xor' | 'reduce_argmax' | 'reduce_argmin'
    | 'annotate_layout' | 'swizzle_blocks' | 'barrier_arrive' | 'barrier_wait' | 'warp_specialize' | 'persistent'
    | 'tune_for' | 'call_extern' | 'print'
    ;

builtinName
    : 'exp' | 'exp2' | 'log' | 'log2' | 'sqrt' | 'rsqrt' | 'tanh' | 'sigmoid'
    | 'max' | 'min' | 'abs' | 'select' | 'inf' | 'ceildiv' | 'warpgroup_id' | 'max_shared_bytes'
    | 'last_block'
    ;

// Warp policies of `gemm(..., policy = full_row)`.
policyName : 'full_row' | 'full_col' | 'square' ;

// Indices and region slices: `A[i]`, `A[i0:i1, j]`, `A[:, k * 32]`.
indexList : index (',' index)* ;
index
    : lo=expr? ':' hi=expr?     # SliceIndex
    | expr                      # PointIndex
    ;

literal
    : INT_LIT
    | FLOAT_LIT
    | STRING_LIT
    | 'true'
    | 'false'
    ;

// ---------------------------------------------------------------- lexer

INT_LIT   : [0-9] [0-9_]* | '0x' [0-9a-fA-F_]+ ;
FLOAT_LIT
    : [0-9]+ '.' [0-9]* EXPONENT?
    | '.' [0-9]+ EXPONENT?
    | [0-9]+ EXPONENT
    ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;

STRING_LIT : '"' (~["\\\r\n] | '\\' .)* '"' ;
// Lexed separately so the front end can say "unterminated string" instead of
// reporting a stray quote.
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' .)* ;

IDENT : [a-zA-Z_] [a-zA-Z_0-9]* ;

LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN) ;
// An unterminated `/*` runs to the end of the file; the front end reports it.
BLOCK_COMMENT : '/*' .*? ('*/' | EOF) -> channel(HIDDEN) ;
WS            : [ \t\r\n]+ -> skip ;

// Anything else is reported by the front end as an invalid character.
INVALID_CHAR : . ;
