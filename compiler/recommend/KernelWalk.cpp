#include "recommend/KernelWalk.h"

namespace tlc::recommend {

using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

void forEachStmt(const Stmt *s, const std::function<void(const Stmt *)> &f) {
  if (!s)
    return;
  f(s);
  if (auto *b = dyn_cast<BlockStmt>(s)) {
    for (const Stmt *c : b->body)
      forEachStmt(c, f);
  } else if (auto *i = dyn_cast<IfStmt>(s)) {
    forEachStmt(i->thenBody, f);
    forEachStmt(i->elseBody, f);
  } else if (auto *l = dyn_cast<ForStmt>(s)) {
    forEachStmt(l->body, f);
  }
}

void forEachExpr(const Expr *e, const std::function<void(const Expr *)> &f) {
  if (!e)
    return;
  f(e);
  if (auto *u = dyn_cast<UnaryExpr>(e)) {
    forEachExpr(u->operand, f);
  } else if (auto *b = dyn_cast<BinaryExpr>(e)) {
    forEachExpr(b->lhs, f);
    forEachExpr(b->rhs, f);
  } else if (auto *c = dyn_cast<CallExpr>(e)) {
    for (const CallArg &a : c->args)
      forEachExpr(a.value, f);
  } else if (auto *ix = dyn_cast<IndexExpr>(e)) {
    for (const IndexItem &i : ix->indices) {
      forEachExpr(i.lo, f);
      forEachExpr(i.hi, f);
    }
  }
}

std::vector<const Expr *> exprsOf(const Stmt *s) {
  std::vector<const Expr *> out;
  if (auto *a = dyn_cast<AllocStmt>(s)) {
    for (const Expr *d : a->buffer->shape.dims)
      out.push_back(d);
  } else if (auto *l = dyn_cast<LetStmt>(s)) {
    out.push_back(l->decl->init);
  } else if (auto *f = dyn_cast<ForStmt>(s)) {
    for (const CallArg &a : f->args)
      out.push_back(a.value);
  } else if (auto *i = dyn_cast<IfStmt>(s)) {
    out.push_back(i->cond);
  } else if (auto *a = dyn_cast<AssignStmt>(s)) {
    out.push_back(a->target);
    out.push_back(a->value);
  } else if (auto *c = dyn_cast<CallStmt>(s)) {
    out.push_back(c->call);
  }
  return out;
}

const Expr *tileOpArg(const CallExpr *call, size_t position, llvm::StringRef keyword) {
  if (const CallArg *a = call->keywordArg(keyword))
    return a->value;
  std::vector<Expr *> p = call->positional();
  return position < p.size() ? p[position] : nullptr;
}

const BufferLikeDecl *operandBuffer(const Expr *e) {
  const NameExpr *n = dyn_cast_or_null<NameExpr>(e);
  if (auto *ix = dyn_cast_or_null<IndexExpr>(e))
    n = ix->base;
  return n ? dyn_cast_or_null<BufferLikeDecl>(n->decl) : nullptr;
}

} // namespace tlc::recommend
