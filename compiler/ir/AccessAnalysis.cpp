#include "ir/AccessAnalysis.h"

#include "ir/FTG.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace tlc::ftg {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

void forEachRead(const Expr *e, llvm::function_ref<void(const Decl *)> f) {
  if (!e)
    return;
  switch (e->getKind()) {
  case Expr::EK_Name:
    if (const Decl *d = cast<NameExpr>(e)->decl)
      f(d);
    return;
  case Expr::EK_Index: {
    auto *ix = cast<IndexExpr>(e);
    forEachRead(ix->base, f);
    for (const IndexItem &i : ix->indices) {
      forEachRead(i.lo, f);
      forEachRead(i.hi, f);
    }
    return;
  }
  case Expr::EK_Unary: return forEachRead(cast<UnaryExpr>(e)->operand, f);
  case Expr::EK_Binary:
    forEachRead(cast<BinaryExpr>(e)->lhs, f);
    forEachRead(cast<BinaryExpr>(e)->rhs, f);
    return;
  case Expr::EK_Call:
    for (const CallArg &a : cast<CallExpr>(e)->args)
      forEachRead(a.value, f);
    return;
  default:
    return;
  }
}

void AccessSet::addRead(Buffer *b) {
  if (b && !llvm::is_contained(reads, b))
    reads.push_back(b);
}

void AccessSet::addWrite(Buffer *b) {
  if (b && !llvm::is_contained(writes, b))
    writes.push_back(b);
}

void AccessSet::merge(const AccessSet &o) {
  for (Buffer *b : o.reads)
    addRead(b);
  for (Buffer *b : o.writes)
    addWrite(b);
}

namespace {

void readsOf(const Graph &g, const Expr *e, AccessSet &out) {
  forEachRead(e, [&](const Decl *d) { out.addRead(g.bufferOf(d)); });
}

// What the indices of an operand expression read (the operand itself is the node's input or
// output, not necessarily a read).
void indexReadsOf(const Graph &g, const Expr *e, AccessSet &out) {
  if (auto *ix = dyn_cast_or_null<IndexExpr>(e))
    for (const IndexItem &i : ix->indices) {
      readsOf(g, i.lo, out);
      readsOf(g, i.hi, out);
    }
}

void statement(const Graph &g, const Stmt *s, AccessSet &out) {
  switch (s->getKind()) {
  case Stmt::SK_Let: return readsOf(g, cast<LetStmt>(s)->decl->init, out);
  case Stmt::SK_Assign: {
    auto *a = cast<AssignStmt>(s);
    readsOf(g, a->value, out);
    if (auto *ix = dyn_cast<IndexExpr>(a->target)) {
      out.addWrite(g.bufferOf(ix->base->decl));
      if (a->op != AssignOp::Assign)
        out.addRead(g.bufferOf(ix->base->decl));
      indexReadsOf(g, ix, out);
    }
    return;
  }
  case Stmt::SK_If: {
    auto *i = cast<IfStmt>(s);
    readsOf(g, i->cond, out);
    statement(g, i->thenBody, out);
    if (i->elseBody)
      statement(g, i->elseBody, out);
    return;
  }
  case Stmt::SK_Block:
    for (const Stmt *c : cast<BlockStmt>(s)->body)
      statement(g, c, out);
    return;
  case Stmt::SK_For: {
    auto *f = cast<ForStmt>(s);
    for (const CallArg &a : f->args)
      readsOf(g, a.value, out);
    statement(g, f->body, out);
    return;
  }
  case Stmt::SK_Call: {
    // Per-thread atomic_add(dst[i], v) inside a parallel body writes dst.
    const CallExpr *c = cast<CallStmt>(s)->call;
    if (c->builtin == Builtin::AtomicAdd && !c->args.empty()) {
      const CallArg *dst = c->keywordArg("dst");
      const Expr *target = dst ? dst->value : c->positional().empty() ? nullptr : c->positional()[0];
      for (const CallArg &a : c->args)
        if (a.value != target)
          readsOf(g, a.value, out);
      if (auto *ix = dyn_cast_or_null<IndexExpr>(target)) {
        out.addWrite(g.bufferOf(ix->base->decl));
        out.addRead(g.bufferOf(ix->base->decl));
        indexReadsOf(g, ix, out);
      }
      return;
    }
    return readsOf(g, c, out);
  }
  default:
    return;
  }
}

} // namespace

AccessSet statementAccesses(const Graph &g, const Stmt *s) {
  AccessSet out;
  statement(g, s, out);
  return out;
}

void computeAccesses(const Graph &g, Node &n) {
  AccessSet acc;
  switch (n.kind) {
  case NodeKind::Let:
  case NodeKind::Scalar:
    acc = statementAccesses(g, n.stmt);
    break;
  case NodeKind::Parallel:
    acc = statementAccesses(g, n.loop->body);
    for (const Expr *e : n.loop->extents)
      readsOf(g, e, acc);
    break;
  case NodeKind::Loop:
    for (const Expr *e : n.loop->extents)
      readsOf(g, e, acc);
    readsOf(g, n.loop->start, acc);
    break;
  case NodeKind::If: {
    auto *i = cast<IfStmt>(n.stmt);
    readsOf(g, i->cond, acc);
    // last_block's arrival updates its counter (an atomic increment).
    if (i->lastBlock)
      acc.addWrite(g.bufferOf(i->lastBlockCounter()->base->decl));
    break;
  }
  default:
    // A tile operator: its operands, and whatever its arguments read besides (addresses,
    // fill values, scalar sources).
    for (const Operand &o : n.inputs)
      acc.addRead(o.buffer);
    if (n.call)
      for (const CallArg &a : n.call->args) {
        auto isOperand = [&](const std::vector<Operand> &ops) {
          return llvm::any_of(ops, [&](const Operand &o) { return o.expr == a.value; });
        };
        if (isOperand(n.inputs) || isOperand(n.outputs))
          indexReadsOf(g, a.value, acc);
        else
          readsOf(g, a.value, acc);
      }
    for (const Operand &o : n.outputs)
      acc.addWrite(o.buffer);
    break;
  }
  for (auto *list : {&n.body, &n.elseBody})
    for (auto &c : *list) {
      AccessSet child;
      child.reads = c->reads;
      child.writes = c->writes;
      acc.merge(child);
    }
  n.reads = std::move(acc.reads);
  n.writes = std::move(acc.writes);
}

llvm::DenseMap<const Buffer *, Lifetime> topLevelLifetimes(const Graph &g) {
  llvm::DenseMap<const Buffer *, Lifetime> out;
  for (size_t i = 0; i < g.body.size(); ++i)
    for (const auto *list : {&g.body[i]->reads, &g.body[i]->writes})
      for (const Buffer *b : *list) {
        auto [it, inserted] = out.try_emplace(b, Lifetime{i, i});
        it->second.first = std::min(it->second.first, i);
        it->second.last = std::max(it->second.last, i);
      }
  if (g.persistent && g.tilesOverlap)
    for (auto &entry : out)
      entry.second = Lifetime{0, g.body.size() - 1};
  return out;
}

// A read follows the buffer's last writer; a write follows the last writer and every reader
// since. Earlier conflicts are implied through those, so the edges grow linearly with the
// statements (linking every earlier conflicting node was cubic: 34 s for 10k copies of one
// buffer).
void linkDependencies(std::vector<std::unique_ptr<Node>> &nodes) {
  struct Access {
    Node *lastWriter = nullptr;
    std::vector<Node *> readersSince;
  };
  llvm::DenseMap<const Buffer *, Access> access;
  for (auto &np : nodes) {
    Node &n = *np;
    llvm::SmallPtrSet<Node *, 8> linked;
    auto link = [&](Node *p) {
      if (p && linked.insert(p).second)
        n.deps.push_back(p);
    };
    for (const Buffer *b : n.reads)
      link(access[b].lastWriter);
    for (const Buffer *b : n.writes) {
      Access &a = access[b];
      link(a.lastWriter);
      for (Node *r : a.readersSince)
        link(r);
    }
    // Latest first, as the dumps list them.
    llvm::sort(n.deps, [](const Node *a, const Node *b) { return a->id > b->id; });
    for (const Buffer *b : n.reads)
      access[b].readersSince.push_back(&n);
    for (const Buffer *b : n.writes) {
      Access &a = access[b];
      a.lastWriter = &n;
      a.readersSince.clear();
    }
  }
}

} // namespace tlc::ftg
