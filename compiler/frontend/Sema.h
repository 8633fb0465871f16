// Semantic analysis: name resolution and scopes, compile-time parameters and `-D`
// overrides, constant folding, scalar typing with implicit-conversion rules, and the shape
// rules of tile operators. Errors are reported with recovery: an expression that fails gets
// the Error type, which silences follow-on errors about it.
#pragma once

#include "AST.h"
#include "Diagnostics.h"
#include "Limits.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <variant>
#include <string>
#include <vector>

namespace tlc {

// `-D name=value` or `-D kernel.name=value` from the command line.
struct Define {
  std::string kernel; // empty: applies to every kernel that has `name`
  std::string name;
  std::string value;
  bool used = false;
};

// Parses "name=value" or "kernel.name=value"; nullopt if malformed.
std::optional<Define> parseDefine(llvm::StringRef text);

// An integer on the command line (`-D`, `--assume`), written as in the language: decimal
// (`010` is ten: there is no octal) or hexadecimal with `0x`, optionally negative. nullopt
// if malformed or outside int64_t.
std::optional<int64_t> parseIntegerOption(llvm::StringRef text);

using limits::kMaxOnChipBytes;
using limits::kMaxShapeExtent;
using limits::kMaxSizeDivisor;

// A linear form sum(coeff_i * atom_i) + constant: enough to see that `by * 64 + 64` minus
// `by * 64` is the constant 64, and that `Tab[k] + 64` minus `Tab[k]` is too. An atom is an
// integer declaration or an integer subexpression the form cannot look into (a load, a
// division, a call of a pure builtin), the latter keyed by its source text: expressions
// have no side effects, and the two ends of one slice see the same names, so equal text is
// an equal value.
struct LinearForm {
  using Atom = std::variant<const Decl *, std::string>;
  std::vector<std::pair<Atom, int64_t>> terms; // sorted by atom, no zero coeffs
  int64_t constant = 0;
  bool isConstant() const { return terms.empty(); }
};
std::optional<LinearForm> linearize(const Expr *e);
std::optional<int64_t> constantDifference(const Expr *hi, const Expr *lo);
// True when `e` is provably a multiple of `m` for all values of its variables: a linear form
// whose coefficients are, or sums, differences and products of such values, looking through
// lets (immutable), so that a channel offset `let c0 = k % blocks * 64;` counts as one; null
// counts (an origin of 0).
bool multipleOf(const Expr *e, int64_t m);

// The source of `e` for quoting in a hint (`bx != 0`), parenthesised where an operator
// would bind to it; a placeholder when it is too long to quote.
std::string operandText(const Expr *e);

// The first name that keeps `e` from being a compile-time constant: a run-time value or an
// `auto` parameter the recommender has not chosen yet.
const NameExpr *firstNonConstantName(const Expr *e);

// A tile operand: a whole buffer, an origin-only point `A[i, j]`, or a sliced region.
struct Region {
  BufferLikeDecl *buffer = nullptr;
  bool originOnly = false;
  // Per buffer dimension: the extent if known (nullopt: dynamic), and whether it is a point.
  std::vector<std::optional<int64_t>> extents;
  std::vector<bool> isPoint;
  std::vector<const Expr *> origins; // null where the origin is 0
  llvm::SMRange range;
  // Extents that are not points, i.e. the tile shape the region contributes.
  std::vector<std::optional<int64_t>> tileShape() const;
  std::string shapeStr() const;
};

class Sema {
public:
  Sema(ASTContext &ctx, DiagnosticEngine &diags, std::vector<Define> &defines)
      : ctx(ctx), diags(diags), defines(defines) {}

  // Returns false if errors were reported in the program.
  bool run();
  // The sizes at which defaults that compare shape symbols with constants are evaluated,
  // per kernel and symbol (driver/DefaultVariants.h: a range's first size); a symbol not
  // listed (and not bound by -D) is evaluated at 1, the first range.
  void evaluateDefaultsAt(std::map<std::string, std::map<std::string, int64_t>> sizes) {
    defaultSizes = std::move(sizes);
  }
  // The target's limits that the language exposes as constants: max_shared_bytes() is
  // `sharedBytesPerBlock` (target::TargetInfo), so that defaults can choose tiles that fit.
  void setTarget(int64_t sharedBytesPerBlock) { targetSharedBytes = sharedBytesPerBlock; }
  // Errors in `-D` values (reported without a source location; exit code 2).
  unsigned commandLineErrors() const { return numCommandLineErrors; }

  // Expression checking (SemaExpr.cpp).
  enum class ExprContext { Value, TileOperand };
  Type checkExpr(Expr *e, ExprContext context = ExprContext::Value);

private:
  friend class TileOpChecker;

  // Scopes (Sema.cpp).
  void pushScope() { scopes.emplace_back(); }
  void popScope() { scopes.pop_back(); }
  Decl *lookup(llvm::StringRef name) const;
  bool declare(Decl *d);
  std::vector<std::string> visibleNames() const;

  // Declarations and statements (Sema.cpp).
  void checkConst(ConstDecl *c);
  void checkKernel(KernelDecl *k);
  void checkCompileParam(CompileParamDecl *p);
  // Defaults that compare shape symbols with constants (SemaSizeDefaults.cpp): the names a
  // kernel's shapes will declare as symbols, whether `e` names one of them, and the check of
  // such a default at the size of the range being compiled (recording the range edges).
  std::set<std::string> laterShapeSymbols(const KernelDecl *k) const;
  bool namesLaterShapeSymbol(const Expr *e) const;
  Type checkSizeDependentDefault(CompileParamDecl *p);
  void checkTensorParam(TensorParamDecl *p);
  std::optional<DType> resolveElemType(llvm::StringRef name, llvm::SMRange range);
  void checkBlock(BlockStmt *b);
  void checkStmt(Stmt *s);
  void checkAlloc(AllocStmt *s);
  // Element count and bytes of an on-chip buffer with a constant, positive shape: an error
  // (with the numbers) when they overflow or exceed kMaxOnChipBytes.
  bool checkOnChipSize(BufferDecl *b);
  void checkLet(LetStmt *s);
  void checkFor(ForStmt *s);
  // Constant loop bounds, and the element count of a parallel loop, fit the i32 index.
  void checkLoopBoundsFitIndex(ForStmt *s);
  void checkIf(IfStmt *s);
  // `if last_block(counter, arrivals)` (SemaControl.cpp): where it stands and its operands.
  void checkLastBlock(IfStmt *s, CallExpr *call);
  void checkAssign(AssignStmt *s);
  void checkCallStmt(CallStmt *s);
  Define *findDefine(llvm::StringRef name);
  std::optional<ConstValue> parseDefineValue(Define &d, Type expected, llvm::StringRef what);

  // Expressions (SemaExpr.cpp).
  Type checkName(NameExpr *e, ExprContext context);
  Type checkIndex(IndexExpr *e, ExprContext context);
  Type checkUnary(UnaryExpr *e);
  Type checkBinary(BinaryExpr *e);
  Type checkCall(CallExpr *e);
  Type checkScalarBuiltin(CallExpr *e);
  Type checkCast(CallExpr *e, DType to);
  void checkIndexBounds(IndexExpr *e, BufferLikeDecl *buf);

  // Shared helpers.
  bool expectIntegral(Expr *e, Type t, llvm::StringRef what);
  bool expectBool(Expr *e, Type t, llvm::StringRef what);
  std::optional<int64_t> expectConstInt(Expr *e, llvm::StringRef what);
  bool checkConvertible(Type from, DType to, const Expr *value, llvm::StringRef what);
  // Completes a "must be a compile-time constant" error: a note at the run-time value or
  // `auto` parameter that is the reason, and a hint (`fallbackHint` when nothing better).
  void explainNotConstant(DiagnosticEngine::Builder &diag, const Expr *e,
                          llvm::StringRef fallbackHint = "");
  void reportReadOnly(BufferLikeDecl *buf, llvm::SMRange range);

  // Where tile operators may stand (SemaControl.cpp).
  // The first part of `e` that can differ between the threads of a block; null if uniform.
  // withinWarp: between the threads of one warp (warpgroup_id() does not). sharedUniform:
  // elements of shared buffers at uniform indices count as uniform (every thread reads the
  // same bytes: tile operand indices and loop bounds, not conditions).
  const Expr *firstNonUniform(const Expr *e, bool withinWarp = false, bool sharedUniform = false) const;
  // The launcher computes grid extents and tensor dimensions on the host (lower/Launch.cpp,
  // hostExpr): from constants, shape symbols and scalar parameters with integer arithmetic,
  // comparisons, ceildiv, min, max, abs, select and integer casts. The first part of `e`
  // outside that set (a float, a device function), or null; `what` names the expression.
  bool checkHostComputable(const Expr *e, llvm::StringRef what);
  // "error: ..." plus a note at the non-uniform part `bad` saying why it differs.
  void noteNonUniform(DiagnosticEngine::Builder &diag, const Expr *bad) const;
  void checkTileOpPlacement(CallExpr *call);
  // The indices of a tile operand must be the same in every thread (outside parallel loops).
  void checkUniformRegion(const Expr *region, llvm::StringRef role);
  void checkNestedPipeline(ForStmt *s);

  // Packed i4/u4 buffers (SemaPacked.cpp): an even innermost extent, regions that start and
  // end on bytes (`innerExtent`: the region's innermost extent, when known), and the tile
  // operators that take them (false: one was given to another, reported).
  void checkPackedDecl(BufferLikeDecl *b);
  bool checkPackedRegion(const Region &r, std::optional<int64_t> innerExtent, llvm::StringRef role);
  bool checkPackedOperands(CallExpr *call);

  // Tile operators (SemaTileOps.cpp).
  void checkTileOp(CallExpr *call);
  std::optional<Region> analyzeRegion(Expr *arg, bool isWrite, llvm::StringRef role);

  ASTContext &ctx;
  DiagnosticEngine &diags;
  std::vector<Define> &defines;
  unsigned numCommandLineErrors = 0;

  std::vector<llvm::StringMap<Decl *>> scopes;
  KernelDecl *kernel = nullptr;
  std::set<std::string> pendingShapeSymbols; // of `kernel`, while its compile params are checked
  bool checkingDefault = false;               // while a compile param's default is checked
  std::map<std::string, std::map<std::string, int64_t>> defaultSizes;
  int64_t targetSharedBytes = 0;
  std::vector<ForStmt *> loops;     // enclosing loops, innermost last
  unsigned conditionalDepth = 0;    // enclosing if statements
  // Enclosing branches whose condition is a constant that rules them out (`if ping_pong`
  // with ping_pong = false): checked like any code, but checks of values that only matter
  // in code that runs (a barrier id per warpgroup) are skipped there.
  unsigned deadBranchDepth = 0;
  std::vector<IfStmt *> conditions; // enclosing if statements, outermost first
  // Lets whose value can differ between threads, per mode of firstNonUniform: bit
  // 2 * withinWarp + sharedUniform set when it differs in that mode.
  llvm::DenseMap<const Decl *, unsigned> letVariance;
  llvm::DenseSet<const Decl *> parallelVars;   // variables of parallel loops
  llvm::DenseSet<const IfStmt *> reportedConditions;
  llvm::DenseSet<const ForStmt *> reportedLoops;
};

} // namespace tlc
