#include "recommend/ExprEval.h"

#include "frontend/ConstantFolder.h"

namespace tlc::recommend {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

std::optional<ConstValue> ExprEvaluator::evalName(const Decl *d) const {
  if (!d)
    return std::nullopt;
  if (auto it = bindings.find(d); it != bindings.end())
    return it->second;
  if (auto *let = dyn_cast<LetDecl>(d)) {
    std::optional<ConstValue> v = eval(let->init);
    if (v && let->declaredType && !v->isBool())
      return castConstant(*v, *let->declaredType);
    return v;
  }
  return d->constant;
}

std::optional<ConstValue> ExprEvaluator::evalCall(const CallExpr *c) const {
  std::vector<ConstValue> args;
  for (const CallArg &a : c->args) {
    std::optional<ConstValue> v = eval(a.value);
    if (!v)
      return std::nullopt;
    args.push_back(*v);
  }
  if (c->calleeKind == CalleeKind::Cast)
    return args.size() == 1 ? std::optional<ConstValue>(castConstant(args[0], c->castType))
                            : std::nullopt;
  if (c->calleeKind != CalleeKind::Builtin)
    return std::nullopt;
  if (c->builtin == Builtin::Select) {
    // Only the chosen branch matters; the other may be -inf or out of range.
    if (args.size() != 3 || !args[0].isBool())
      return std::nullopt;
    return args[0].getBool() ? args[1] : args[2];
  }
  FoldResult r = foldBuiltin(c->builtin, args);
  return r.error.empty() ? r.value : std::nullopt;
}

std::optional<ConstValue> ExprEvaluator::eval(const Expr *e) const {
  if (!e)
    return std::nullopt;
  switch (e->getKind()) {
  case Expr::EK_IntLit: return ConstValue{cast<IntLitExpr>(e)->value};
  case Expr::EK_FloatLit: return ConstValue{cast<FloatLitExpr>(e)->value};
  case Expr::EK_BoolLit: return ConstValue{cast<BoolLitExpr>(e)->value};
  case Expr::EK_DTypeRef: return ConstValue{cast<DTypeRefExpr>(e)->dtype};
  case Expr::EK_PolicyRef: return ConstValue{cast<PolicyRefExpr>(e)->policy};
  case Expr::EK_Name: return evalName(cast<NameExpr>(e)->decl);
  case Expr::EK_Unary: {
    auto *u = cast<UnaryExpr>(e);
    std::optional<ConstValue> v = eval(u->operand);
    if (!v)
      return std::nullopt;
    FoldResult r = foldUnary(u->op, *v);
    return r.error.empty() ? r.value : std::nullopt;
  }
  case Expr::EK_Binary: {
    auto *b = cast<BinaryExpr>(e);
    std::optional<ConstValue> l = eval(b->lhs), r = eval(b->rhs);
    if (!l || !r)
      return std::nullopt;
    FoldResult f = foldBinary(b->op, *l, *r);
    return f.error.empty() ? f.value : std::nullopt;
  }
  case Expr::EK_Call: return evalCall(cast<CallExpr>(e));
  default: return std::nullopt;
  }
}

std::optional<int64_t> ExprEvaluator::evalInt(const Expr *e) const {
  std::optional<ConstValue> v = eval(e);
  if (!v || !v->isInt())
    return std::nullopt;
  return v->getInt();
}

bool mentions(const Expr *e, const Decl *d) {
  if (!e)
    return false;
  switch (e->getKind()) {
  case Expr::EK_Name: {
    const Decl *n = cast<NameExpr>(e)->decl;
    if (n == d)
      return true;
    auto *let = dyn_cast_or_null<LetDecl>(n);
    return let && mentions(let->init, d);
  }
  case Expr::EK_Unary: return mentions(cast<UnaryExpr>(e)->operand, d);
  case Expr::EK_Binary:
    return mentions(cast<BinaryExpr>(e)->lhs, d) || mentions(cast<BinaryExpr>(e)->rhs, d);
  case Expr::EK_Call:
    for (const CallArg &a : cast<CallExpr>(e)->args)
      if (mentions(a.value, d))
        return true;
    return false;
  case Expr::EK_Index: {
    auto *ix = cast<IndexExpr>(e);
    if (ix->base->decl == d)
      return true;
    for (const IndexItem &i : ix->indices)
      if (mentions(i.lo, d) || mentions(i.hi, d))
        return true;
    return false;
  }
  default: return false;
  }
}

ExprEvaluator shapeEnvironment(const KernelDecl &k, const std::map<std::string, int64_t> &values) {
  ExprEvaluator env;
  for (const ShapeSymbolDecl *s : k.shapeSymbols)
    if (auto it = values.find(s->getName().str()); it != values.end() && !s->constant)
      env.bind(s, ConstValue{it->second});
  return env;
}

} // namespace tlc::recommend
