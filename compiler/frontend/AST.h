// The TileLang AST. Nodes are owned by an ASTContext and linked by plain pointers; each
// class hierarchy (Decl, Expr, Stmt) uses LLVM-style RTTI so passes can use isa/dyn_cast.
//
// The builder (ASTBuilder) fills the syntactic fields; Sema fills the semantic ones
// (resolved declarations, types, folded constants, buffer shapes).
#pragma once

#include "Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tlc {

class Expr;

// A compile-time value after constant folding.
struct ConstValue {
  std::variant<int64_t, double, bool, DType, WarpPolicy> value;

  bool isInt() const { return std::holds_alternative<int64_t>(value); }
  bool isFloat() const { return std::holds_alternative<double>(value); }
  bool isBool() const { return std::holds_alternative<bool>(value); }
  bool isDType() const { return std::holds_alternative<DType>(value); }
  bool isPolicy() const { return std::holds_alternative<WarpPolicy>(value); }
  int64_t getInt() const { return std::get<int64_t>(value); }
  double getFloat() const { return std::get<double>(value); }
  bool getBool() const { return std::get<bool>(value); }
  DType getDType() const { return std::get<DType>(value); }
  WarpPolicy getPolicy() const { return std::get<WarpPolicy>(value); }
  std::string str() const;
};

// ===================================================================== declarations

enum class Scope { Global, Shared, Fragment, Local };
llvm::StringRef scopeName(Scope s);

class Decl {
public:
  enum Kind {
    DK_Const,
    DK_CompileParam,
    DK_TensorParam, // a global tensor or a run-time scalar parameter
    DK_ShapeSymbol, // a dimension name introduced by a tensor parameter's shape
    DK_BlockIndex,  // `as (bx, by)`
    DK_Buffer,      // shared / fragment / local allocation
    DK_Let,
    DK_LoopVar,
    DK_LambdaParam,
  };

  Kind getKind() const { return kind; }
  llvm::StringRef getName() const { return name; }
  llvm::SMRange getRange() const { return range; }
  const char *kindName() const;

  // Set by Sema.
  Type type;
  std::optional<ConstValue> constant; // known at compile time

  virtual ~Decl() = default;

protected:
  Decl(Kind kind, std::string name, llvm::SMRange range)
      : kind(kind), name(std::move(name)), range(range) {}

private:
  Kind kind;
  std::string name;
  llvm::SMRange range;
};

// Shapes of buffers and tensors.
struct BufferShape {
  std::vector<Expr *> dims;
  size_t rank() const { return dims.size(); }
  // The folded extent of dim i, if it is a compile-time constant.
  std::optional<int64_t> constDim(size_t i) const;
  std::string str() const;
};

// Anything that can be indexed or passed to a tile operator: tensors and allocations.
class BufferLikeDecl : public Decl {
public:
  // Syntax.
  std::string elemTypeName;  // dtype keyword or a dtype parameter name
  llvm::SMRange elemTypeRange;
  BufferShape shape;
  // Semantics.
  DType elemType = DType::F32;
  Scope scope = Scope::Global;

  static bool classof(const Decl *d) {
    return d->getKind() == DK_TensorParam || d->getKind() == DK_Buffer;
  }

protected:
  using Decl::Decl;
};

class TensorParamDecl : public BufferLikeDecl {
public:
  TensorParamDecl(std::string name, llvm::SMRange range) : BufferLikeDecl(DK_TensorParam, std::move(name), range) {}
  bool isOut = false;
  bool hasShape = false; // false: a run-time scalar such as `scale: f32`
  bool isScalar() const { return !hasShape; }
  static bool classof(const Decl *d) { return d->getKind() == DK_TensorParam; }
};

class BufferDecl : public BufferLikeDecl {
public:
  BufferDecl(std::string name, llvm::SMRange range) : BufferLikeDecl(DK_Buffer, std::move(name), range) {}
  static bool classof(const Decl *d) { return d->getKind() == DK_Buffer; }
};

class ConstDecl : public Decl {
public:
  ConstDecl(std::string name, llvm::SMRange range) : Decl(DK_Const, std::move(name), range) {}
  std::optional<std::string> declaredType; // "int", "float", "dtype" or a dtype name
  Expr *init = nullptr;
  static bool classof(const Decl *d) { return d->getKind() == DK_Const; }
};

class CompileParamDecl : public Decl {
public:
  CompileParamDecl(std::string name, llvm::SMRange range) : Decl(DK_CompileParam, std::move(name), range) {}
  std::optional<std::string> declaredType;
  llvm::SMRange declaredTypeRange;
  Expr *defaultValue = nullptr; // null when required (no default) or auto
  bool isAuto = false;
  std::vector<Expr *> autoCandidates; // `auto(64, 128)`
  llvm::SMRange autoRange;
  // Filled by Sema: where the value came from, and whether anything but other parameters'
  // defaults names it (the body, the launch, a shape): otherwise its value reaches the kernel
  // only through those parameters' values, and variants that differ in it alone are one.
  enum class Source { Default, CommandLine, Auto, Missing } source = Source::Default;
  bool usedOutsideDefaults = false;
  static bool classof(const Decl *d) { return d->getKind() == DK_CompileParam; }
};

class ShapeSymbolDecl : public Decl {
public:
  ShapeSymbolDecl(std::string name, llvm::SMRange range) : Decl(DK_ShapeSymbol, std::move(name), range) {}
  static bool classof(const Decl *d) { return d->getKind() == DK_ShapeSymbol; }
};

class SimpleDecl : public Decl {
public:
  SimpleDecl(Kind kind, std::string name, llvm::SMRange range) : Decl(kind, std::move(name), range) {}
  static bool classof(const Decl *d) {
    return d->getKind() == DK_BlockIndex || d->getKind() == DK_LoopVar ||
           d->getKind() == DK_LambdaParam;
  }
};

class LetDecl : public Decl {
public:
  LetDecl(std::string name, llvm::SMRange range) : Decl(DK_Let, std::move(name), range) {}
  std::optional<DType> declaredType;
  Expr *init = nullptr;
  static bool classof(const Decl *d) { return d->getKind() == DK_Let; }
};

// ===================================================================== expressions

class Expr {
public:
  enum Kind {
    EK_IntLit, EK_FloatLit, EK_BoolLit, EK_StringLit,
    EK_Name, EK_DTypeRef, EK_PolicyRef,
    EK_Index, EK_Unary, EK_Binary, EK_Call, EK_Lambda,
  };
  Kind getKind() const { return kind; }
  llvm::SMRange getRange() const { return range; }

  // Set by Sema.
  Type type;
  std::optional<ConstValue> constant;

  virtual ~Expr() = default;

protected:
  Expr(Kind kind, llvm::SMRange range) : kind(kind), range(range) {}

private:
  Kind kind;
  llvm::SMRange range;
};

class IntLitExpr : public Expr {
public:
  IntLitExpr(llvm::SMRange r, int64_t v) : Expr(EK_IntLit, r), value(v) {}
  int64_t value;
  static bool classof(const Expr *e) { return e->getKind() == EK_IntLit; }
};

class FloatLitExpr : public Expr {
public:
  FloatLitExpr(llvm::SMRange r, double v, std::string spelling)
      : Expr(EK_FloatLit, r), value(v), spelling(std::move(spelling)) {}
  double value;
  std::string spelling;
  static bool classof(const Expr *e) { return e->getKind() == EK_FloatLit; }
};

class BoolLitExpr : public Expr {
public:
  BoolLitExpr(llvm::SMRange r, bool v) : Expr(EK_BoolLit, r), value(v) {}
  bool value;
  static bool classof(const Expr *e) { return e->getKind() == EK_BoolLit; }
};

class StringLitExpr : public Expr {
public:
  StringLitExpr(llvm::SMRange r, std::string v) : Expr(EK_StringLit, r), value(std::move(v)) {}
  std::string value; // unescaped
  static bool classof(const Expr *e) { return e->getKind() == EK_StringLit; }
};

class NameExpr : public Expr {
public:
  NameExpr(llvm::SMRange r, std::string name) : Expr(EK_Name, r), name(std::move(name)) {}
  std::string name;
  Decl *decl = nullptr; // resolved by Sema
  static bool classof(const Expr *e) { return e->getKind() == EK_Name; }
};

class DTypeRefExpr : public Expr {
public:
  DTypeRefExpr(llvm::SMRange r, DType t) : Expr(EK_DTypeRef, r), dtype(t) {}
  DType dtype;
  static bool classof(const Expr *e) { return e->getKind() == EK_DTypeRef; }
};

class PolicyRefExpr : public Expr {
public:
  PolicyRefExpr(llvm::SMRange r, WarpPolicy p) : Expr(EK_PolicyRef, r), policy(p) {}
  WarpPolicy policy;
  static bool classof(const Expr *e) { return e->getKind() == EK_PolicyRef; }
};

// One position of `A[...]`: a point `i`, or a slice `lo:hi` where either end may be omitted.
struct IndexItem {
  Expr *lo = nullptr; // the point for a point index
  Expr *hi = nullptr;
  bool isSlice = false;
  llvm::SMRange range;
};

class IndexExpr : public Expr {
public:
  IndexExpr(llvm::SMRange r, NameExpr *base) : Expr(EK_Index, r), base(base) {}
  NameExpr *base;
  std::vector<IndexItem> indices;
  bool hasSlice() const;
  static bool classof(const Expr *e) { return e->getKind() == EK_Index; }
};

enum class UnaryOp { Neg, Not, BitNot };
enum class BinaryOp {
  Mul, Div, Rem, Add, Sub, Shl, Shr,
  Lt, Le, Gt, Ge, Eq, Ne, BitAnd, BitXor, BitOr, And, Or,
};
llvm::StringRef spelling(UnaryOp op);
llvm::StringRef spelling(BinaryOp op);
int precedence(BinaryOp op); // higher binds tighter; for printing without extra parens

class UnaryExpr : public Expr {
public:
  UnaryExpr(llvm::SMRange r, UnaryOp op, Expr *operand) : Expr(EK_Unary, r), op(op), operand(operand) {}
  UnaryOp op;
  Expr *operand;
  static bool classof(const Expr *e) { return e->getKind() == EK_Unary; }
};

class BinaryExpr : public Expr {
public:
  BinaryExpr(llvm::SMRange r, BinaryOp op, Expr *lhs, Expr *rhs, llvm::SMRange opRange)
      : Expr(EK_Binary, r), op(op), lhs(lhs), rhs(rhs), opRange(opRange) {}
  BinaryOp op;
  Expr *lhs, *rhs;
  llvm::SMRange opRange;
  static bool classof(const Expr *e) { return e->getKind() == EK_Binary; }
};

struct CallArg {
  std::string keyword; // empty for positional arguments
  llvm::SMRange keywordRange;
  Expr *value = nullptr;
};

// What a call's callee names; Sema refines `Named` into a cast of a dtype parameter.
enum class CalleeKind { TileOp, Builtin, Cast, Named };

enum class Builtin {
  // Tile operators (statements).
  Copy, Gemm, Fill, Clear, AtomicAdd, Cumsum, Cummax, Cummin, DequantI4, Im2col,
  // The reduce family, ReduceSum .. ReduceArgmin (isReduce): the arithmetic ones, the bitwise
  // ones (integer dtypes only) and the two that also give the position (isArgReduce).
  ReduceSum, ReduceMax, ReduceMin, ReduceAbsSum, ReduceAbsMax, ReduceAnd, ReduceOr, ReduceXor,
  ReduceArgmax, ReduceArgmin,
  AnnotateLayout, SwizzleBlocks, BarrierArrive, BarrierWait, WarpSpecialize, Persistent,
  TuneFor, // tune_for(N, sizes...): the sizes `auto` parameters are chosen for (driver/AutoParams)
  CallExtern,
  Print, // printf for debugging: a per-thread statement like call_extern
  // Scalar functions.
  Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Tanh, Sigmoid, Max, Min, Abs, Select, Inf, CeilDiv,
  WarpgroupId, // the calling thread's warpgroup (128 threads) in the block: per-warpgroup, not folded
  MaxSharedBytes, // the shared memory one block may use on the target, in bytes: a compile-time constant
  // last_block(counter, arrivals): the whole condition of an `if` outside loops
  // (Sema::checkLastBlock); true in the block whose arrival on the counter is the last of
  // `arrivals`.
  LastBlock,
  None,
};
Builtin parseBuiltin(llvm::StringRef name);
// warpgroup_id() is thread / kWarpgroupThreads; barrier_arrive/barrier_wait take the named
// barrier ids 1 .. kNamedBarriers - 1 (0 is __syncthreads').
inline constexpr int64_t kWarpgroupThreads = 128;
inline constexpr int64_t kNamedBarriers = 16;
llvm::StringRef builtinName(Builtin b);
bool isTileOp(Builtin b);
bool isReduce(Builtin b);
bool isBitwiseReduce(Builtin b); // reduce_and, reduce_or, reduce_xor
bool isArgReduce(Builtin b);     // reduce_argmax, reduce_argmin
bool isScan(Builtin b);          // cumsum, cummax, cummin

class CallExpr : public Expr {
public:
  CallExpr(llvm::SMRange r, std::string callee, llvm::SMRange calleeRange)
      : Expr(EK_Call, r), callee(std::move(callee)), calleeRange(calleeRange) {}
  std::string callee;
  llvm::SMRange calleeRange;
  CalleeKind calleeKind = CalleeKind::Named;
  Builtin builtin = Builtin::None;
  DType castType = DType::F32; // for casts
  std::vector<CallArg> args;
  Decl *calleeDecl = nullptr;  // a dtype parameter used as a cast
  std::vector<Expr *> positional() const;
  const CallArg *keywordArg(llvm::StringRef name) const;
  static bool classof(const Expr *e) { return e->getKind() == EK_Call; }
};

// `(i, j) => [j, i]`: an index map for annotate_layout.
class LambdaExpr : public Expr {
public:
  LambdaExpr(llvm::SMRange r) : Expr(EK_Lambda, r) {}
  std::vector<SimpleDecl *> params;
  std::vector<Expr *> results;
  static bool classof(const Expr *e) { return e->getKind() == EK_Lambda; }
};

// ===================================================================== statements

class Stmt {
public:
  enum Kind { SK_Alloc, SK_Let, SK_For, SK_If, SK_Assign, SK_Call, SK_Block };
  Kind getKind() const { return kind; }
  llvm::SMRange getRange() const { return range; }
  virtual ~Stmt() = default;

protected:
  Stmt(Kind kind, llvm::SMRange range) : kind(kind), range(range) {}

private:
  Kind kind;
  llvm::SMRange range;
};

class BlockStmt : public Stmt {
public:
  explicit BlockStmt(llvm::SMRange r) : Stmt(SK_Block, r) {}
  std::vector<Stmt *> body;
  static bool classof(const Stmt *s) { return s->getKind() == SK_Block; }
};

class AllocStmt : public Stmt {
public:
  AllocStmt(llvm::SMRange r, BufferDecl *buffer) : Stmt(SK_Alloc, r), buffer(buffer) {}
  BufferDecl *buffer;
  static bool classof(const Stmt *s) { return s->getKind() == SK_Alloc; }
};

class LetStmt : public Stmt {
public:
  LetStmt(llvm::SMRange r, LetDecl *decl) : Stmt(SK_Let, r), decl(decl) {}
  LetDecl *decl;
  static bool classof(const Stmt *s) { return s->getKind() == SK_Let; }
};

enum class LoopKind { Parallel, Pipelined, Serial, Unroll, Vectorized };
llvm::StringRef loopKindName(LoopKind k);

class ForStmt : public Stmt {
public:
  ForStmt(llvm::SMRange r, LoopKind kind, llvm::SMRange kindRange)
      : Stmt(SK_For, r), loopKind(kind), kindRange(kindRange) {}
  LoopKind loopKind;
  llvm::SMRange kindRange;
  std::vector<SimpleDecl *> vars;
  std::vector<CallArg> args; // extents and options (`stages = 3`)
  BlockStmt *body = nullptr;
  // Filled by Sema.
  std::vector<Expr *> extents; // one per variable (parallel) or the trip count
  Expr *start = nullptr;       // serial(lo, hi): the first value
  std::optional<int64_t> stages;
  static bool classof(const Stmt *s) { return s->getKind() == SK_For; }
};

class IfStmt : public Stmt {
public:
  IfStmt(llvm::SMRange r, Expr *cond) : Stmt(SK_If, r), cond(cond) {}
  Expr *cond;
  BlockStmt *thenBody = nullptr;
  Stmt *elseBody = nullptr; // BlockStmt or IfStmt
  // Set by Sema: every thread of the block takes the same branch (block-level barriers may go
  // inside). A condition on warpgroup_id() is not, though each warp takes one branch.
  bool blockUniform = true;
  // Set by Sema: the condition is a well-formed `last_block(counter, arrivals)` (9.17).
  bool lastBlock = false;
  // last_block's counter element, `Done[by]` (lastBlock only).
  const IndexExpr *lastBlockCounter() const;
  static bool classof(const Stmt *s) { return s->getKind() == SK_If; }
};

enum class AssignOp { Assign, Add, Sub, Mul, Div };
llvm::StringRef spelling(AssignOp op);

class AssignStmt : public Stmt {
public:
  AssignStmt(llvm::SMRange r, Expr *target, AssignOp op, Expr *value)
      : Stmt(SK_Assign, r), target(target), op(op), value(value) {}
  Expr *target; // NameExpr or IndexExpr
  AssignOp op;
  Expr *value;
  static bool classof(const Stmt *s) { return s->getKind() == SK_Assign; }
};

class CallStmt : public Stmt {
public:
  CallStmt(llvm::SMRange r, CallExpr *call) : Stmt(SK_Call, r), call(call) {}
  CallExpr *call;
  static bool classof(const Stmt *s) { return s->getKind() == SK_Call; }
};

// ===================================================================== top level

class KernelDecl {
public:
  std::string name;
  llvm::SMRange range, nameRange;
  std::vector<CompileParamDecl *> compileParams;
  std::vector<TensorParamDecl *> params;
  std::vector<ShapeSymbolDecl *> shapeSymbols; // filled by Sema, in order of appearance
  std::vector<Expr *> grid;
  llvm::SMRange gridRange;
  Expr *threads = nullptr;
  std::vector<SimpleDecl *> blockIndices;
  BlockStmt *body = nullptr;
  // Filled by Sema.
  std::optional<int64_t> numThreads;
  // tune_for(N, s1, s2, ...): each shape symbol's sizes, sorted, for the buckets `auto`
  // parameters are ranked in when the command line gives none (--assume).
  std::map<std::string, std::vector<int64_t>> tunedSizes;
  // Compile-time parameters whose defaults compare shape symbols with constants
  // (`block_M = select(seq_len <= 2048, 128, 192)`), and per symbol the sizes at which one of
  // those comparisons changes value (the first size of every range after the first): the
  // driver compiles a variant per range and dispatches on the sizes of each call
  // (driver/DefaultVariants.h). Symbols bound by -D have no ranges.
  std::vector<CompileParamDecl *> sizeDependentParams;
  std::map<std::string, std::set<int64_t>> sizeEdges;
  // Per symbol, the divisors of the defaults' divisibility tests (`K % 8 == 0`): each splits
  // the sizes into multiples of it and the rest, as an edge splits them into ranges.
  std::map<std::string, std::set<int64_t>> sizeDivisors;
};

class Program {
public:
  std::string fileName;
  std::vector<ConstDecl *> consts;
  std::vector<KernelDecl *> kernels;
};

// Owns every node of one program.
class ASTContext {
public:
  template <typename T, typename... Args> T *make(Args &&...args) {
    auto node = std::make_unique<T>(std::forward<Args>(args)...);
    T *raw = node.get();
    store(std::move(node));
    return raw;
  }
  Program program;

private:
  void store(std::unique_ptr<Decl> d) { decls.push_back(std::move(d)); }
  void store(std::unique_ptr<Expr> e) { exprs.push_back(std::move(e)); }
  void store(std::unique_ptr<Stmt> s) { stmts.push_back(std::move(s)); }
  void store(std::unique_ptr<KernelDecl> k) { kernels.push_back(std::move(k)); }
  std::vector<std::unique_ptr<Decl>> decls;
  std::vector<std::unique_ptr<Expr>> exprs;
  std::vector<std::unique_ptr<Stmt>> stmts;
  std::vector<std::unique_ptr<KernelDecl>> kernels;
};

// Source-like rendering of an expression (folded constants are not substituted).
std::string toSource(const Expr *e);

// Nodes of `e` with the lets `expand` accepts replaced by their initializers (folded constants
// count as one node), saturating at `cap` + 1; `memo` makes chains of lets linear.
int64_t expandedSize(const Expr *e, const std::function<bool(const LetDecl *)> &expand, int64_t cap,
                     llvm::DenseMap<const Expr *, int64_t> &memo);

} // namespace tlc
