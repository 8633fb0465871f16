#include "IntExpr.h"

#include "IntExprPrinter.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cassert>

namespace tlc {

struct IntExprNode {
  IntExprKind kind;
  int64_t value = 0; // Const: the value; Var: the unique id
  std::string name;  // Var only
  IntExpr lhs, rhs;  // binary operators only
  unsigned size = 1;
};

llvm::StringRef intExprKindName(IntExprKind kind) {
  switch (kind) {
  case IntExprKind::Const: return "const";
  case IntExprKind::Var: return "var";
  case IntExprKind::Add: return "+";
  case IntExprKind::Sub: return "-";
  case IntExprKind::Mul: return "*";
  case IntExprKind::FloorDiv: return "floordiv";
  case IntExprKind::FloorMod: return "floormod";
  case IntExprKind::Min: return "min";
  case IntExprKind::Max: return "max";
  case IntExprKind::And: return "&";
  case IntExprKind::Or: return "|";
  case IntExprKind::Xor: return "^";
  case IntExprKind::Shl: return "<<";
  case IntExprKind::Shr: return ">>";
  }
  return "?";
}

IntExpr::IntExpr(int64_t value) {
  auto n = std::make_shared<IntExprNode>();
  n->kind = IntExprKind::Const;
  n->value = value;
  node = std::move(n);
}

IntExpr IntExpr::var(llvm::StringRef name) {
  static std::atomic<int64_t> nextId{1};
  auto n = std::make_shared<IntExprNode>();
  n->kind = IntExprKind::Var;
  n->value = nextId.fetch_add(1, std::memory_order_relaxed);
  n->name = name.str();
  return IntExpr(std::move(n));
}

IntExpr IntExpr::binary(IntExprKind kind, IntExpr lhs, IntExpr rhs) {
  assert(kind != IntExprKind::Const && kind != IntExprKind::Var && lhs && rhs);
  if (lhs.isConst() && rhs.isConst())
    if (auto folded = foldIntOp(kind, lhs.constValue(), rhs.constValue()))
      return IntExpr(*folded);
  auto n = std::make_shared<IntExprNode>();
  n->kind = kind;
  n->size = 1 + lhs.size() + rhs.size();
  n->lhs = std::move(lhs);
  n->rhs = std::move(rhs);
  return IntExpr(std::move(n));
}

IntExprKind IntExpr::kind() const { return node->kind; }

int64_t IntExpr::constValue() const {
  assert(isConst());
  return node->value;
}

uint64_t IntExpr::varId() const {
  assert(isVar());
  return static_cast<uint64_t>(node->value);
}

llvm::StringRef IntExpr::varName() const {
  assert(isVar());
  return node->name;
}

const IntExpr &IntExpr::lhs() const {
  assert(isBinary());
  return node->lhs;
}

const IntExpr &IntExpr::rhs() const {
  assert(isBinary());
  return node->rhs;
}

unsigned IntExpr::size() const { return node ? node->size : 0; }

int IntExpr::compare(const IntExpr &other) const {
  if (node == other.node)
    return 0;
  if (!node || !other.node)
    return node ? 1 : -1;
  if (kind() != other.kind())
    return kind() < other.kind() ? -1 : 1;
  if (isConst() || isVar()) {
    if (node->value == other.node->value)
      return 0;
    return node->value < other.node->value ? -1 : 1;
  }
  if (int c = lhs().compare(other.lhs()))
    return c;
  return rhs().compare(other.rhs());
}

void IntExpr::print(llvm::raw_ostream &os) const { IntExprPrinter().print(os, *this); }

std::string IntExpr::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return os.str();
}

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const IntExpr &e) {
  e.print(os);
  return os;
}

IntExpr operator+(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Add, a, b);
}
IntExpr operator-(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Sub, a, b);
}
IntExpr operator*(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Mul, a, b);
}
IntExpr operator/(const IntExpr &a, const IntExpr &b) { return floordiv(a, b); }
IntExpr operator%(const IntExpr &a, const IntExpr &b) { return floormod(a, b); }
IntExpr operator&(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::And, a, b);
}
IntExpr operator|(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Or, a, b);
}
IntExpr operator^(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Xor, a, b);
}
IntExpr operator<<(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Shl, a, b);
}
IntExpr operator>>(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Shr, a, b);
}
IntExpr floordiv(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::FloorDiv, a, b);
}
IntExpr floormod(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::FloorMod, a, b);
}
IntExpr min(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Min, a, b);
}
IntExpr max(const IntExpr &a, const IntExpr &b) {
  return IntExpr::binary(IntExprKind::Max, a, b);
}

int64_t floorDiv(int64_t a, int64_t b) {
  assert(b != 0);
  int64_t q = a / b;
  // C++ truncates toward zero; step down when the signs differ and there is a remainder.
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

static int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }

std::optional<int64_t> foldIntOp(IntExprKind kind, int64_t a, int64_t b) {
  switch (kind) {
  // Wrap instead of overflowing (undefined behaviour) on absurd constants.
  case IntExprKind::Add: return wrap(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  case IntExprKind::Sub: return wrap(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  case IntExprKind::Mul: return wrap(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  case IntExprKind::FloorDiv:
    // INT64_MIN / -1 traps; it is as undefined as a division by zero here.
    if (b == 0 || (b == -1 && a == INT64_MIN))
      return std::nullopt;
    return floorDiv(a, b);
  case IntExprKind::FloorMod:
    if (b == 0 || (b == -1 && a == INT64_MIN))
      return std::nullopt;
    return floorMod(a, b);
  case IntExprKind::Min: return a < b ? a : b;
  case IntExprKind::Max: return a < b ? b : a;
  case IntExprKind::And: return a & b;
  case IntExprKind::Or: return a | b;
  case IntExprKind::Xor: return a ^ b;
  case IntExprKind::Shl:
    if (b < 0 || b >= 64)
      return std::nullopt;
    return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
  case IntExprKind::Shr:
    if (b < 0 || b >= 64)
      return std::nullopt;
    return a >> b; // arithmetic shift: floor division by 2^b
  case IntExprKind::Const:
  case IntExprKind::Var:
    break;
  }
  return std::nullopt;
}

IntExpr substitute(const IntExpr &e, const VarSubstitution &subst) {
  if (e.isVar()) {
    auto it = subst.find(e.varId());
    return it == subst.end() ? e : it->second;
  }
  if (!e.isBinary())
    return e;
  IntExpr lhs = substitute(e.lhs(), subst);
  IntExpr rhs = substitute(e.rhs(), subst);
  if (lhs.identity() == e.lhs().identity() && rhs.identity() == e.rhs().identity())
    return e;
  return IntExpr::binary(e.kind(), std::move(lhs), std::move(rhs));
}

std::optional<int64_t> evaluate(const IntExpr &e, const VarValues &values) {
  if (e.isConst())
    return e.constValue();
  if (e.isVar()) {
    auto it = values.find(e.varId());
    if (it == values.end())
      return std::nullopt;
    return it->second;
  }
  auto lhs = evaluate(e.lhs(), values);
  if (!lhs)
    return std::nullopt;
  auto rhs = evaluate(e.rhs(), values);
  if (!rhs)
    return std::nullopt;
  return foldIntOp(e.kind(), *lhs, *rhs);
}

bool usesVar(const IntExpr &e, const IntExpr &var) {
  if (e.isVar())
    return e.varId() == var.varId();
  return e.isBinary() && (usesVar(e.lhs(), var) || usesVar(e.rhs(), var));
}

bool containsKind(const IntExpr &e, IntExprKind kind) {
  if (!e)
    return false;
  if (e.kind() == kind)
    return true;
  return e.isBinary() && (containsKind(e.lhs(), kind) || containsKind(e.rhs(), kind));
}

} // namespace tlc
