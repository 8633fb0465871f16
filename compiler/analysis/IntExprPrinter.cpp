#include "IntExprPrinter.h"

#include "llvm/Support/raw_ostream.h"

namespace tlc {

namespace {

// C precedence levels; higher binds tighter.
constexpr int kPrimaryPrec = 100;

int precedence(IntExprKind kind) {
  switch (kind) {
  case IntExprKind::Mul:
  case IntExprKind::FloorDiv:
  case IntExprKind::FloorMod: return 10;
  case IntExprKind::Add:
  case IntExprKind::Sub: return 9;
  case IntExprKind::Shl:
  case IntExprKind::Shr: return 8;
  case IntExprKind::And: return 6;
  case IntExprKind::Xor: return 5;
  case IntExprKind::Or: return 4;
  case IntExprKind::Const:
  case IntExprKind::Var:
  case IntExprKind::Min:
  case IntExprKind::Max: return kPrimaryPrec;
  }
  return kPrimaryPrec;
}

bool isAssociative(IntExprKind kind) {
  switch (kind) {
  case IntExprKind::Add:
  case IntExprKind::Mul:
  case IntExprKind::And:
  case IntExprKind::Or:
  case IntExprKind::Xor: return true;
  default: return false;
  }
}

bool isBitwise(IntExprKind kind) {
  switch (kind) {
  case IntExprKind::And:
  case IntExprKind::Or:
  case IntExprKind::Xor:
  case IntExprKind::Shl:
  case IntExprKind::Shr: return true;
  default: return false;
  }
}

} // namespace

IntExprPrinter IntExprPrinter::cpp(const VarBounds *bounds, CppPrintOptions options) {
  IntExprPrinter printer;
  printer.dialect = Dialect::Cpp;
  printer.bounds = bounds;
  printer.options = std::move(options);
  return printer;
}

IntExprPrinter &IntExprPrinter::rename(const IntExpr &var, std::string text) {
  names[var.varId()] = std::move(text);
  return *this;
}

std::string IntExprPrinter::toString(const IntExpr &e) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os, e);
  return os.str();
}

bool IntExprPrinter::truncationIsExact(const IntExpr &e) const {
  if (!bounds)
    return false;
  return boundOf(e.lhs(), *bounds).isNonNegative() && boundOf(e.rhs(), *bounds).lo > 0;
}

void IntExprPrinter::printCall(llvm::raw_ostream &os, llvm::StringRef fn,
                               const IntExpr &e) const {
  os << fn << '(';
  print(os, e.lhs());
  os << ", ";
  print(os, e.rhs());
  os << ')';
}

void IntExprPrinter::printOperand(llvm::raw_ostream &os, const IntExpr &parent,
                                  const IntExpr &child, bool isRhs) const {
  bool parens;
  if (child.isConst()) {
    parens = child.constValue() < 0;
  } else if (!child.isBinary() || precedence(child.kind()) == kPrimaryPrec) {
    parens = false;
  } else {
    int parentPrec = precedence(parent.kind());
    int childPrec = precedence(child.kind());
    bool sameAssociativeOp = child.kind() == parent.kind() && isAssociative(parent.kind());
    // `(a / 8) % 8` and `(a % 8) * 2` read ambiguously without parentheses even though C
    // parses them left to right.
    bool mixedSamePrec = childPrec == parentPrec && child.kind() != parent.kind();
    parens = childPrec < parentPrec || (isRhs && childPrec == parentPrec && !sameAssociativeOp) ||
             (mixedSamePrec && childPrec == precedence(IntExprKind::Mul)) ||
             (isBitwise(parent.kind()) && child.kind() != parent.kind());
  }
  if (parens)
    os << '(';
  print(os, child);
  if (parens)
    os << ')';
}

void IntExprPrinter::print(llvm::raw_ostream &os, const IntExpr &e) const {
  if (!e) {
    os << "<null>";
    return;
  }
  switch (e.kind()) {
  case IntExprKind::Const: {
    int64_t v = e.constValue();
    os << v;
    // A literal beyond int's range would silently narrow in generated index code.
    if (dialect == Dialect::Cpp && (v > INT32_MAX || v < INT32_MIN))
      os << "LL";
    return;
  }
  case IntExprKind::Var: {
    auto it = names.find(e.varId());
    os << (it == names.end() ? e.varName() : llvm::StringRef(it->second));
    return;
  }
  case IntExprKind::Min:
    printCall(os, dialect == Dialect::Cpp ? options.minFn : "min", e);
    return;
  case IntExprKind::Max:
    printCall(os, dialect == Dialect::Cpp ? options.maxFn : "max", e);
    return;
  case IntExprKind::FloorDiv:
  case IntExprKind::FloorMod:
    if (dialect == Dialect::Cpp && !truncationIsExact(e)) {
      printCall(os,
                e.kind() == IntExprKind::FloorDiv ? options.floorDivFn : options.floorModFn, e);
      return;
    }
    break;
  default: break;
  }
  llvm::StringRef op;
  switch (e.kind()) {
  case IntExprKind::FloorDiv: op = "/"; break;
  case IntExprKind::FloorMod: op = "%"; break;
  default: op = intExprKindName(e.kind()); break;
  }
  printOperand(os, e, e.lhs(), /*isRhs=*/false);
  os << ' ' << op << ' ';
  printOperand(os, e, e.rhs(), /*isRhs=*/true);
}

} // namespace tlc
