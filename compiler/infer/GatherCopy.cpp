// Gathered copies, as TileLang's inject_ptx_async_copy finds them: a parallel loop whose body
// is lets and one store of a global tensor's element into a shared tile indexed by the loop
// variables, optionally zero where a condition fails,
//
//   for i, j in parallel(M, K) {                       for i, j in parallel(M, K) {
//     let h = row_h[i] + r;                              A_s[i, j] = select(c, X[..], 0);
//     if c { A_s[i, j] = X[n, h, w, c0 + j]; }        }
//     else { A_s[i, j] = 0; }
//   }
//
// is a copy whose addresses are computed per element: it is lowered to cp.async, zero-filled
// where the condition fails (the padding of a convolution never reads memory), and a pipelined
// loop prefetches it like a `copy` (infer/PipelinePlanner.cpp). Along the innermost loop
// variable j it moves 16 (or 8, 4) bytes per access when
//   - the tensor's last index is j plus a multiple of the vector and no other index uses j,
//   - the tile keeps such vectors together in its layout,
//   - the condition is the same for every element of a vector: terms without j, and bounds
//     `j + a < B` / `j + a >= B` with a and B multiples of the vector (B may be the tensor's last
//     extent: the aligned instantiation has it whole 16-byte chunks);
// those accesses need the aligned instantiation (the launcher checks the tensor's rows, as for
// copies: HostLauncher.cpp), whose other half stores element by element. 4-byte elements take
// a 4-byte cp.async on both. Anything else stays the element-wise loop it was (never wrong);
// --emit=inferred says which was chosen and why (Node::gatherNote).
#include "infer/Passes.h"

#include "ir/AccessAnalysis.h"
#include "target/TargetInfo.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

namespace tlc::infer {

using namespace ftg;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

bool isPositiveZero(const Expr *e) {
  if (!e || !e->constant)
    return false;
  const ConstValue &c = *e->constant;
  return (c.isInt() && c.getInt() == 0) || (c.isFloat() && c.getFloat() == 0.0 && !std::signbit(c.getFloat()));
}

bool reads(const Expr *e, const llvm::SmallPtrSetImpl<const Decl *> &decls) {
  bool found = false;
  forEachRead(e, [&](const Decl *d) { found = found || decls.count(d); });
  return found;
}

// The one store of a single-statement block (or the statement itself).
const AssignStmt *onlyStore(const Stmt *s) {
  if (auto *b = dyn_cast_or_null<BlockStmt>(s))
    return b->body.size() == 1 ? onlyStore(b->body[0]) : nullptr;
  auto *a = dyn_cast_or_null<AssignStmt>(s);
  return a && a->op == AssignOp::Assign && llvm::isa<IndexExpr>(a->target) ? a : nullptr;
}

class Recognizer {
public:
  Recognizer(const Graph &g, Node &n) : g(g), n(n), f(*n.loop) {}

  void run() {
    AccessSet acc = statementAccesses(g, f.body);
    bool candidate = llvm::any_of(acc.writes, [](Buffer *b) { return b->scope == Scope::Shared; }) &&
                     llvm::any_of(acc.reads, [](Buffer *b) { return b->scope == Scope::Global; });
    if (!candidate)
      return; // not a copy of any kind: nothing to say
    std::string why = recognize();
    if (!why.empty()) {
      n.gather.reset();
      n.gatherNote = "element by element: " + why;
      return;
    }
    GatherCopy &G = *n.gather;
    G.bytes = 0;
    std::string vecWhy = chooseWidth(G);
    std::string what = "gathered copy " + G.src->name + " -> " + G.dst->name + ": ";
    if (G.bytes == 0)
      n.gatherNote = what + "element by element (" + vecWhy + ")";
    else
      n.gatherNote = what + "cp.async " + std::to_string(G.bytes) + "B, " + std::to_string(G.vector) +
                     (G.vector == 1 ? " element" : " elements") + "/access" +
                     (G.cond ? ", zero-filled where the condition fails" : "") +
                     (G.needsAligned ? " (aligned instantiation; element by element otherwise)" : "");
  }

private:
  // Fills n.gather, or says why the loop is not a gathered copy.
  std::string recognize() {
    GatherCopy G;
    if (!g.target->copyAtom(target::CopyKind::CpAsync))
      return g.target->name().str() + " has no cp.async";
    if (n.driver)
      return "it reads fragment '" + n.driver->name + "'";
    if (f.vars.size() > 3)
      return "a gathered copy has 1 to 3 loop variables";
    const auto &body = f.body->body;
    if (body.empty())
      return "empty body";
    for (size_t i = 0; i + 1 < body.size(); ++i) {
      auto *let = dyn_cast<LetStmt>(body[i]);
      if (!let)
        return "the body is not lets followed by one store of a global element into a shared tile";
      G.lets.push_back(let);
    }
    const Stmt *last = body.back();
    const AssignStmt *load = nullptr, *zero = nullptr;
    if (auto *a = dyn_cast<AssignStmt>(last)) {
      load = onlyStore(a);
      if (!load)
        return "the store is not a plain assignment of an element";
      if (auto *c = dyn_cast<CallExpr>(a->value); c && c->builtin == Builtin::Select) {
        auto args = c->positional();
        if (args.size() != 3)
          return "select without three arguments";
        G.cond = args[0];
        const Expr *value = args[1], *other = args[2];
        if (isPositiveZero(value) && !isPositiveZero(other)) {
          std::swap(value, other);
          G.negated = true;
        }
        if (!isPositiveZero(other))
          return "the select's other value is not 0";
        G.load = dyn_cast<IndexExpr>(value);
      } else {
        G.load = dyn_cast<IndexExpr>(a->value);
      }
    } else if (auto *i = dyn_cast<IfStmt>(last)) {
      const AssignStmt *thenStore = onlyStore(i->thenBody), *elseStore = onlyStore(i->elseBody);
      if (!thenStore || !elseStore)
        return "the 'if' does not store one element in each branch (an 'else' storing 0 is the zero padding)";
      G.cond = i->cond;
      load = thenStore;
      zero = elseStore;
      if (isPositiveZero(thenStore->value) && !isPositiveZero(elseStore->value)) {
        std::swap(load, zero);
        G.negated = true;
      }
      if (!isPositiveZero(zero->value))
        return "the other branch does not store 0";
      G.load = dyn_cast<IndexExpr>(load->value);
    } else {
      return "the body does not end in a store";
    }
    G.store = cast<IndexExpr>(load->target);
    if (!G.load)
      return "the stored value is not an element of a global tensor";
    G.src = g.bufferOf(G.load->base->decl);
    G.dst = g.bufferOf(G.store->base->decl);
    if (!G.src || G.src->scope != Scope::Global || !G.dst || G.dst->scope != Scope::Shared)
      return "the store is not of a global tensor's element into a shared tile";
    if (G.src->packed)
      return "'" + G.src->name + "' is " + dtypeName(*G.src->packed).str() + ": its elements are nibbles, not bytes to copy";
    if (zero && toSource(zero->target) != toSource(load->target))
      return "the two branches store to different elements";
    // The tile's element at the loop variables, every one of them: each stage of a prefetched
    // tile is then written whole.
    if (G.store->indices.size() != f.vars.size() || G.dst->shape.size() != f.vars.size())
      return "'" + G.dst->name + "' is not indexed by exactly the loop variables";
    for (size_t d = 0; d < f.vars.size(); ++d) {
      auto *name = dyn_cast_or_null<NameExpr>(G.store->indices[d].lo);
      if (G.store->indices[d].isSlice || !name || name->decl != f.vars[d])
        return "'" + G.dst->name + "' is not indexed by the loop variables in order";
      auto extent = f.extents[d] && f.extents[d]->constant && f.extents[d]->constant->isInt()
                        ? std::optional<int64_t>(f.extents[d]->constant->getInt())
                        : std::nullopt;
      if (!extent || extent != G.dst->shape[d])
        return "the loop does not cover all of '" + G.dst->name + "'";
    }
    if (G.src->dtype != G.dst->dtype)
      return "'" + G.src->name + "' is " + dtypeName(G.src->dtype).str() + " and '" + G.dst->name + "' is " +
             dtypeName(G.dst->dtype).str() + " (cp.async copies bytes, it does not convert)";
    if (bitWidth(G.dst->dtype) < 8)
      return "sub-byte elements";
    // The addresses and the condition may not read the tile being written.
    llvm::SmallPtrSet<const Decl *, 2> dstDecl;
    dstDecl.insert(G.store->base->decl);
    bool readsDst = reads(G.load, dstDecl) || (G.cond && reads(G.cond, dstDecl)) ||
                    llvm::any_of(G.lets, [&](const LetStmt *l) { return reads(l->decl->init, dstDecl); });
    if (readsDst)
      return "its addresses or condition read '" + G.dst->name + "'";
    n.gather = std::move(G);
    return "";
  }

  // The widest cp.async the loop allows (GatherCopy::bytes, 0 for none) and, when narrower than
  // 16 bytes, why.
  std::string chooseWidth(GatherCopy &G) {
    const Decl *j = f.vars.back();
    inner.insert(j);
    for (const LetStmt *l : G.lets)
      if (reads(l->decl->init, inner))
        inner.insert(l->decl);
    int elemBytes = int(bitWidth(G.dst->dtype) / 8);
    int64_t cols = *G.dst->shape.back();
    const SharedLayout *L = G.dst->shared ? &*G.dst->shared : nullptr;
    std::string why;
    for (int bytes : {16, 8, 4}) {
      if (bytes > g.target->maxVectorBytes() || bytes < elemBytes)
        continue;
      int V = bytes / elemBytes;
      if (V == 1) { // a whole element: aligned by its type, on either instantiation
        G.bytes = bytes;
        G.vector = 1;
        return why;
      }
      std::string no = vectorObstacle(G, j, V, cols, L);
      if (no.empty()) {
        G.bytes = bytes;
        G.vector = V;
        G.needsAligned = true;
        return why;
      }
      if (why.empty())
        why = no;
    }
    if (why.empty())
      why = std::to_string(elemBytes) + "-byte elements";
    return why;
  }

  std::string vectorObstacle(const GatherCopy &G, const Decl *j, int V, int64_t cols, const SharedLayout *L) {
    std::string vs = std::to_string(V);
    if (cols % V != 0)
      return "the loop's last extent is not a multiple of " + vs;
    if (!L || (L->isPanelled() ? L->panelCols : L->cols) % V != 0 || !L->keepsVectors(V))
      return "the layout of '" + G.dst->name + "' does not keep " + vs + " elements together";
    const auto &idx = G.load->indices;
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      if (idx[d].isSlice || reads(idx[d].lo, inner))
        return "an index of '" + G.src->name + "' other than the last depends on '" + j->getName().str() + "'";
    auto last = split(idx.back().lo, V, G);
    if (idx.back().isSlice || !last || last->coef != 1)
      return "the last index of '" + G.src->name + "' is not '" + j->getName().str() + "' plus an offset";
    if (!last->restMultiple)
      return "the last index of '" + G.src->name + "' is not a multiple of " + vs + " plus '" +
             j->getName().str() + "'";
    if (G.cond && !uniform(G.cond, V, G))
      return "the condition may differ between the " + vs + " elements of a vector along '" +
             j->getName().str() + "'";
    return "";
  }

  // e = coef * j + rest, and whether rest is provably a multiple of V (looking through lets).
  struct Split {
    int64_t coef = 0;
    bool restMultiple = false;
  };
  std::optional<Split> split(const Expr *e, int V, const GatherCopy &G, int depth = 0) {
    if (!e || depth > 64)
      return std::nullopt;
    if (!reads(e, inner))
      return Split{0, multipleOf(e, V) || isAlignedExtent(e, G)};
    if (auto *name = dyn_cast<NameExpr>(e)) {
      if (name->decl == f.vars.back())
        return Split{1, true};
      if (auto *let = dyn_cast_or_null<LetDecl>(name->decl))
        return split(let->init, V, G, depth + 1);
      return std::nullopt;
    }
    if (auto *u = dyn_cast<UnaryExpr>(e); u && u->op == UnaryOp::Neg) {
      auto s = split(u->operand, V, G, depth + 1);
      if (s)
        s->coef = -s->coef;
      return s;
    }
    auto *b = dyn_cast<BinaryExpr>(e);
    if (!b || !b->type.isIntegral())
      return std::nullopt;
    if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) {
      auto l = split(b->lhs, V, G, depth + 1), r = split(b->rhs, V, G, depth + 1);
      if (!l || !r)
        return std::nullopt;
      return Split{b->op == BinaryOp::Add ? l->coef + r->coef : l->coef - r->coef, l->restMultiple && r->restMultiple};
    }
    if (b->op == BinaryOp::Mul)
      for (auto [x, y] : {std::pair{b->lhs, b->rhs}, std::pair{b->rhs, b->lhs}})
        if (x->constant && x->constant->isInt()) {
          auto s = split(y, V, G, depth + 1);
          if (!s)
            return std::nullopt;
          int64_t c = x->constant->getInt();
          return Split{s->coef * c, s->restMultiple || c % V == 0};
        }
    return std::nullopt;
  }

  // The source tensor's last extent: whole 16-byte chunks in the aligned instantiation.
  static bool isAlignedExtent(const Expr *e, const GatherCopy &G) {
    auto *name = dyn_cast<NameExpr>(e);
    auto *tensor = dyn_cast_or_null<BufferLikeDecl>(G.src->decl);
    if (!name || !name->decl || !tensor || tensor->shape.dims.empty())
      return false;
    auto *dim = dyn_cast_or_null<NameExpr>(tensor->shape.dims.back());
    return dim && dim->decl == name->decl;
  }

  // Whether condition `c` has the same value for the V elements j0 .. j0 + V - 1 of a vector
  // (j0 a multiple of V): terms without j, and bounds on j + a (a multiple of V) by a multiple
  // of V, `<` from above or `>=` from below, combined by &&, || and !.
  bool uniform(const Expr *c, int V, const GatherCopy &G) {
    if (!reads(c, inner))
      return true;
    if (auto *u = dyn_cast<UnaryExpr>(c))
      return u->op == UnaryOp::Not && uniform(u->operand, V, G);
    auto *b = dyn_cast<BinaryExpr>(c);
    if (!b)
      return false;
    if (b->op == BinaryOp::And || b->op == BinaryOp::Or)
      return uniform(b->lhs, V, G) && uniform(b->rhs, V, G);
    const Expr *lo = nullptr, *hi = nullptr; // lo < hi, or lo >= hi
    switch (b->op) {
    case BinaryOp::Lt:
    case BinaryOp::Ge:
      lo = b->lhs, hi = b->rhs;
      break;
    case BinaryOp::Gt:
    case BinaryOp::Le:
      lo = b->rhs, hi = b->lhs;
      break;
    default:
      return false;
    }
    // `lo < hi` bounds lo from above, `lo >= hi` from below: j must be in lo.
    auto l = split(lo, V, G), h = split(hi, V, G);
    return l && h && l->coef == 1 && h->coef == 0 && l->restMultiple && h->restMultiple;
  }

  const Graph &g;
  Node &n;
  const ForStmt &f;
  // The innermost loop variable and the body's lets computed from it.
  llvm::SmallPtrSet<const Decl *, 8> inner;
};

class GatherRecognition : public Pass {
public:
  llvm::StringRef name() const override { return "gather-copy"; }
  bool run(Graph &g, DiagnosticEngine &) override {
    g.walk([&](Node &n) {
      if (n.kind == NodeKind::Parallel)
        Recognizer(g, n).run();
    });
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createGatherRecognition() { return std::make_unique<GatherRecognition>(); }

} // namespace tlc::infer
