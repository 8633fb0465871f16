// Defaults that depend on the sizes of a call (docs/language.md 3.1): a compile-time
// parameter's default may compare a shape symbol with a constant,
//
//     block_M = select(causal && seq_len <= 2048, 128, 192)
//
// or test it for divisibility by a constant,
//
//     hopper_tiles: bool = N % 8 == 0 && seq_len >= 1024
//
// and nothing else may use the symbol there. Each comparison splits the symbol's sizes into
// two ranges, and each divisibility test into multiples and the rest, so the tests of a kernel
// split its sizes into buckets on which every default is constant. Sema evaluates the
// defaults at one size (the smallest of the bucket being compiled, 1 unless the driver says
// otherwise) and records where the ranges start and which divisors are tested; the
// driver compiles one variant per distinct set of values and dispatches on the sizes of each
// call (driver/DefaultVariants.h). The rule keeps the choice exact: the variant a call runs is
// the one the default names for its sizes, not that of a nearby size.
#include "frontend/Sema.h"

namespace tlc {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

bool isComparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
  case BinaryOp::Eq: case BinaryOp::Ne:
    return true;
  default:
    return false;
  }
}

// `symbol op bound` (or `bound op symbol` when !symbolLeft) in a default; for a divisibility
// test `symbol % divisor == 0` (or `!=`, either side), `divisor` is set and `bound` is the 0.
struct SizeComparison {
  NameExpr *symbol;
  BinaryExpr *comparison;
  Expr *bound;
  bool symbolLeft;
  Expr *divisor = nullptr;
};

// The first sizes at which `c` changes value, given the constant it compares with: `s < 64`
// is true up to 63 and false from 64 on.
std::vector<int64_t> edgesOf(const SizeComparison &c, int64_t bound) {
  BinaryOp op = c.comparison->op;
  if (!c.symbolLeft) // `64 > s` is `s < 64`
    op = op == BinaryOp::Lt ? BinaryOp::Gt : op == BinaryOp::Gt ? BinaryOp::Lt
       : op == BinaryOp::Le ? BinaryOp::Ge : op == BinaryOp::Ge ? BinaryOp::Le : op;
  switch (op) {
  case BinaryOp::Lt: case BinaryOp::Ge:
    return {bound};
  case BinaryOp::Le: case BinaryOp::Gt:
    return {bound + 1};
  default: // == and !=
    return {bound, bound + 1};
  }
}

// Calls `f` on each direct subexpression of `e` (E: Expr or const Expr).
template <typename E, typename F> void forEachChild(E *e, F &&f) {
  switch (e->getKind()) {
  case Expr::EK_Index: {
    auto *x = cast<IndexExpr>(e);
    f(x->base);
    for (const IndexItem &i : x->indices)
      for (Expr *bound : {i.lo, i.hi})
        if (bound)
          f(bound);
    return;
  }
  case Expr::EK_Unary:
    return f(cast<UnaryExpr>(e)->operand);
  case Expr::EK_Binary:
    f(cast<BinaryExpr>(e)->lhs);
    return f(cast<BinaryExpr>(e)->rhs);
  case Expr::EK_Call:
    for (const CallArg &a : cast<CallExpr>(e)->args)
      f(a.value);
    return;
  default:
    return;
  }
}

} // namespace

std::set<std::string> Sema::laterShapeSymbols(const KernelDecl *k) const {
  // As checkTensorParam declares them: a bare name in a shape that names nothing visible
  // then (a constant, a compile-time parameter or an earlier scalar parameter).
  std::set<std::string> declaredLater, symbols;
  for (const CompileParamDecl *p : k->compileParams)
    declaredLater.insert(p->getName().str());
  for (const TensorParamDecl *p : k->params) {
    for (const Expr *dim : p->shape.dims)
      if (auto *n = dyn_cast<NameExpr>(dim); n && !lookup(n->name) && !declaredLater.count(n->name))
        symbols.insert(n->name);
    declaredLater.insert(p->getName().str());
  }
  return symbols;
}

bool Sema::namesLaterShapeSymbol(const Expr *e) const {
  if (!e || pendingShapeSymbols.empty())
    return false;
  if (auto *n = dyn_cast<NameExpr>(e))
    return pendingShapeSymbols.count(n->name) && !lookup(n->name);
  bool found = false;
  forEachChild(e, [&](const Expr *child) { found = found || namesLaterShapeSymbol(child); });
  return found;
}

Type Sema::checkSizeDependentDefault(CompileParamDecl *p) {
  // Every use of a symbol must be one side of a comparison whose other side names none.
  std::vector<SizeComparison> comparisons;
  bool ok = true;
  std::function<void(Expr *)> collect = [&](Expr *e) {
    if (!e || !ok)
      return;
    if (auto *n = dyn_cast<NameExpr>(e)) {
      if (namesLaterShapeSymbol(n)) {
        diags.error(n->getRange(), "the default of '" + p->getName() + "' uses the shape symbol '" + n->name +
                                       "' outside a comparison with a constant")
            .hint("a default may compare a size with a constant (`" + n->name + " <= 2048`) or test its "
                  "divisibility (`" + n->name + " % 8 == 0`); tlc compiles the kernel once per range of sizes "
                  "the tests make and picks one per call");
        ok = false;
      }
      return;
    }
    if (auto *b = dyn_cast<BinaryExpr>(e); b && isComparison(b->op))
      for (bool left : {true, false}) {
        Expr *side = left ? b->lhs : b->rhs, *other = left ? b->rhs : b->lhs;
        auto *n = dyn_cast<NameExpr>(side);
        if (n && namesLaterShapeSymbol(n) && !namesLaterShapeSymbol(other)) {
          comparisons.push_back({n, b, other, left});
          return collect(other); // names no symbol; nothing to report
        }
        // `symbol % divisor == 0`: a divisibility test.
        auto *rem = dyn_cast<BinaryExpr>(side);
        if (rem && rem->op == BinaryOp::Rem && (n = dyn_cast<NameExpr>(rem->lhs)) && namesLaterShapeSymbol(n) &&
            !namesLaterShapeSymbol(rem->rhs) && !namesLaterShapeSymbol(other)) {
          comparisons.push_back({n, b, other, left, rem->rhs});
          collect(rem->rhs);
          return collect(other);
        }
      }
    forEachChild(e, collect);
  };
  collect(p->defaultValue);
  if (!ok)
    return Type::error();

  // The symbols stand for the size being compiled: -D's value, the driver's range, or 1.
  std::set<std::string> bound;
  pushScope();
  for (const SizeComparison &c : comparisons) {
    if (lookup(c.symbol->name))
      continue; // declared for an earlier comparison
    int64_t size = 1;
    if (Define *d = findDefine(c.symbol->name)) {
      // A malformed or out-of-range value is reported where the shape declares the symbol.
      std::optional<int64_t> v = parseIntegerOption(d->value);
      if (v && *v >= 1 && *v <= kMaxShapeExtent) {
        size = *v;
        bound.insert(c.symbol->name);
      }
    } else if (auto k = defaultSizes.find(kernel->name); k != defaultSizes.end()) {
      if (auto s = k->second.find(c.symbol->name); s != k->second.end())
        size = s->second;
    }
    auto *sym = ctx.make<ShapeSymbolDecl>(c.symbol->name, c.symbol->getRange());
    sym->type = Type::index();
    sym->constant = ConstValue{size};
    declare(sym);
  }
  Type t = checkExpr(p->defaultValue);
  popScope();

  // The variants share one launcher signature, which an element type can change (a scalar
  // parameter of that type): element types are chosen by -D, not by size.
  if (t.kind() == Type::DTypeValue) {
    diags.error(p->defaultValue->getRange(), "the default of '" + p->getName() +
                                                 "' chooses an element type by the sizes of the call")
        .hint("a default that compares sizes may choose a number, a flag or a warp policy; pass the "
              "element type with -D " + p->getName() + "=...");
    return Type::error();
  }
  // A -D value replaces the default (checked all the same): no variants for it.
  const bool pinned = findDefine(p->getName()) != nullptr;
  for (const SizeComparison &c : comparisons) {
    if (c.bound->type.isError() || bound.count(c.symbol->name))
      continue;
    if (c.divisor) {
      if (c.divisor->type.isError())
        continue;
      const bool positive = c.divisor->constant && c.divisor->constant->isInt() && c.divisor->constant->getInt() >= 2 &&
                            c.divisor->constant->getInt() <= kMaxSizeDivisor;
      const bool zero = c.bound->constant && c.bound->constant->isInt() && c.bound->constant->getInt() == 0;
      if (!positive || !zero || (c.comparison->op != BinaryOp::Eq && c.comparison->op != BinaryOp::Ne)) {
        diags.error(c.comparison->getRange(), "the default of '" + p->getName() + "' tests the shape symbol '" +
                                                   c.symbol->name + "' in a way tlc cannot dispatch on")
            .hint("a default may test a size for divisibility by a constant from 2 to " +
                  std::to_string(kMaxSizeDivisor) + ": `" + c.symbol->name + " % 8 == 0` or `" + c.symbol->name +
                  " % 8 != 0`");
        t = Type::error();
        continue;
      }
      if (!pinned)
        kernel->sizeDivisors[c.symbol->name].insert(c.divisor->constant->getInt());
      continue;
    }
    if (!c.bound->constant || !c.bound->constant->isInt()) {
      auto diag = diags.error(c.bound->getRange(), "the default of '" + p->getName() + "' compares the shape symbol '" +
                                                       c.symbol->name + "' with " +
                                                       (c.bound->constant ? "a value that is not an integer"
                                                                          : "a value that is not a compile-time constant"));
      explainNotConstant(diag, c.bound, "compare sizes with integer constants or compile-time parameters");
      t = Type::error();
      continue;
    }
    for (int64_t edge : edgesOf(c, c.bound->constant->getInt()))
      if (!pinned && edge > 1 && edge <= kMaxShapeExtent) // sizes are 1 .. kMaxShapeExtent
        kernel->sizeEdges[c.symbol->name].insert(edge);
  }
  if (!t.isError() && !pinned && llvm::any_of(comparisons, [&](const SizeComparison &c) { return !bound.count(c.symbol->name); }))
    kernel->sizeDependentParams.push_back(p);
  return t;
}

} // namespace tlc
