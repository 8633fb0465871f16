// Integer index expressions: the arithmetic that layouts, loop bounds and addresses are made
// of. An IntExpr is an immutable tree with value semantics (copies share nodes), built from
// constants, variables and the operators index arithmetic needs:
//
//   + - *               wrap-free 64-bit integer arithmetic
//   floordiv floormod   rounding toward negative infinity (the only division that keeps
//                       x == floordiv(x, c) * c + floormod(x, c) for every x)
//   min max
//   & | ^ << >>         two's complement bit operations (XOR swizzles, masks, shifts)
//
// Builders fold constant operands and nothing else; the canonical form is the simplifier's
// job (Simplify.h), so that tests and passes can still build exactly the tree they mean.
//
// Variables are identified by a unique id, not by their name: two layouts may both call
// their first index `i` without the two ever being confused.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
}

namespace tlc {

enum class IntExprKind : uint8_t {
  Const,
  Var,
  Add,
  Sub,
  Mul,
  FloorDiv,
  FloorMod,
  Min,
  Max,
  And,
  Or,
  Xor,
  Shl,
  Shr,
};

// The operator spelling used in printed expressions ("+", "floordiv", ...).
llvm::StringRef intExprKindName(IntExprKind kind);

struct IntExprNode;

class IntExpr {
public:
  // A null expression; only useful as a placeholder before assignment.
  IntExpr() = default;
  // Integer literals convert implicitly so that `i * 64 + j` reads like the math.
  IntExpr(int64_t value);
  IntExpr(int value) : IntExpr(static_cast<int64_t>(value)) {}

  // A fresh variable, distinct from every other variable ever created.
  static IntExpr var(llvm::StringRef name);
  static IntExpr binary(IntExprKind kind, IntExpr lhs, IntExpr rhs);

  explicit operator bool() const { return node != nullptr; }
  IntExprKind kind() const;

  bool isConst() const { return node && kind() == IntExprKind::Const; }
  bool isConst(int64_t value) const { return isConst() && constValue() == value; }
  int64_t constValue() const;

  bool isVar() const { return node && kind() == IntExprKind::Var; }
  uint64_t varId() const;
  llvm::StringRef varName() const;

  bool isBinary() const { return node && !isConst() && !isVar(); }
  const IntExpr &lhs() const;
  const IntExpr &rhs() const;

  // Structural comparison: a total order on trees (kind, then constants/variable ids,
  // then operands). Equal trees compare 0 no matter how they were built.
  int compare(const IntExpr &other) const;
  bool operator==(const IntExpr &other) const { return compare(other) == 0; }
  bool operator!=(const IntExpr &other) const { return compare(other) != 0; }
  bool operator<(const IntExpr &other) const { return compare(other) < 0; }

  // Number of nodes; the simplifier uses it to prefer smaller equivalent forms.
  unsigned size() const;

  // The expression in TileLang surface syntax (see IntExprPrinter.h).
  void print(llvm::raw_ostream &os) const;
  std::string str() const;

  // Node identity, for memoization. Equal trees may have different identities.
  const IntExprNode *identity() const { return node.get(); }

private:
  explicit IntExpr(std::shared_ptr<const IntExprNode> n) : node(std::move(n)) {}
  std::shared_ptr<const IntExprNode> node;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const IntExpr &e);

IntExpr operator+(const IntExpr &a, const IntExpr &b);
IntExpr operator-(const IntExpr &a, const IntExpr &b);
IntExpr operator*(const IntExpr &a, const IntExpr &b);
// `/` and `%` are floor division and modulus, as in the TileLang language: index math
// never wants C's truncation.
IntExpr operator/(const IntExpr &a, const IntExpr &b);
IntExpr operator%(const IntExpr &a, const IntExpr &b);
IntExpr operator&(const IntExpr &a, const IntExpr &b);
IntExpr operator|(const IntExpr &a, const IntExpr &b);
IntExpr operator^(const IntExpr &a, const IntExpr &b);
IntExpr operator<<(const IntExpr &a, const IntExpr &b);
IntExpr operator>>(const IntExpr &a, const IntExpr &b);
IntExpr floordiv(const IntExpr &a, const IntExpr &b);
IntExpr floormod(const IntExpr &a, const IntExpr &b);
IntExpr min(const IntExpr &a, const IntExpr &b);
IntExpr max(const IntExpr &a, const IntExpr &b);

// Floor division and modulus on plain integers (divisor must be nonzero).
int64_t floorDiv(int64_t a, int64_t b);
int64_t floorMod(int64_t a, int64_t b);
// Folds `kind` on constants; nullopt where the operation is undefined (division by zero,
// shift by a negative or >= 64 amount).
std::optional<int64_t> foldIntOp(IntExprKind kind, int64_t a, int64_t b);

// Variable id -> replacement expression / value.
using VarSubstitution = llvm::DenseMap<uint64_t, IntExpr>;
using VarValues = llvm::DenseMap<uint64_t, int64_t>;

// Replaces variables by expressions (no simplification).
IntExpr substitute(const IntExpr &e, const VarSubstitution &subst);
// The value of `e` with every variable bound by `values`; nullopt if a variable is unbound
// or an operation is undefined on the values.
std::optional<int64_t> evaluate(const IntExpr &e, const VarValues &values);
// True if `e` mentions the variable `var`.
bool usesVar(const IntExpr &e, const IntExpr &var);
// True if some node of `e` has the given kind.
bool containsKind(const IntExpr &e, IntExprKind kind);

} // namespace tlc
