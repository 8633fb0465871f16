// Layout inference, in the spirit of the TileLang paper's appendix E. The tile operators own
// their rules (ir/TileOp.h, compiler/ops/); this pass runs them level by level:
//   STRICT  layouts an instruction fixes (gemm: its accumulator over the warp split, a register
//           A operand, swizzled shared operands);
//   COMMON  layouts that follow from the operands' (a reduction's rows, a fragment copy) and,
//           here, from the fragments a parallel loop indexes together; to a fixed point;
//   FREE    every fragment still unconstrained gets the blocked layout (vectorized, rows over
//           groups of consecutive lanes), then COMMON runs again.
#include "infer/ParallelAccess.h"
#include "infer/Passes.h"
#include "infer/RegisterEstimate.h"
#include "target/TargetInfo.h"
#include "ir/TileOp.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

namespace tlc::infer {

using namespace ftg;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

std::vector<FragmentAccess> collectFragmentAccesses(const Graph &g, const ForStmt &loop, Scope scope) {
  std::vector<FragmentAccess> out;
  std::function<void(const Expr *, bool)> visitExpr = [&](const Expr *e, bool isWrite) {
    if (!e)
      return;
    if (auto *ix = dyn_cast<IndexExpr>(e)) {
      ftg::Buffer *b = g.bufferOf(ix->base->decl);
      if (b && b->scope == scope) {
        FragmentAccess a{FragmentAccess::Other, b, ix, isWrite};
        bool full = ix->indices.size() == loop.vars.size();
        for (size_t i = 0; full && i < ix->indices.size(); ++i) {
          auto *n = dyn_cast_or_null<NameExpr>(ix->indices[i].lo);
          full = n && n->decl == loop.vars[i];
        }
        if (full)
          a.kind = FragmentAccess::Full;
        else if (loop.vars.size() == 2 && ix->indices.size() == 1)
          if (auto *n = dyn_cast_or_null<NameExpr>(ix->indices[0].lo); n && n->decl == loop.vars[0])
            a.kind = FragmentAccess::Row;
        out.push_back(a);
      }
      for (const IndexItem &i : ix->indices)
        visitExpr(i.lo, false);
      return;
    }
    if (auto *u = dyn_cast<UnaryExpr>(e))
      return visitExpr(u->operand, false);
    if (auto *b = dyn_cast<BinaryExpr>(e)) {
      visitExpr(b->lhs, false);
      visitExpr(b->rhs, false);
      return;
    }
    if (auto *c = dyn_cast<CallExpr>(e))
      for (const CallArg &a : c->args)
        visitExpr(a.value, false);
  };
  std::function<void(const Stmt *)> visitStmt = [&](const Stmt *s) {
    if (auto *b = dyn_cast<BlockStmt>(s)) {
      for (const Stmt *c : b->body)
        visitStmt(c);
    } else if (auto *l = dyn_cast<LetStmt>(s)) {
      visitExpr(l->decl->init, false);
    } else if (auto *a = dyn_cast<AssignStmt>(s)) {
      visitExpr(a->value, false);
      visitExpr(a->target, true);
      if (a->op != AssignOp::Assign)
        visitExpr(a->target, false);
    } else if (auto *i = dyn_cast<IfStmt>(s)) {
      visitExpr(i->cond, false);
      visitStmt(i->thenBody);
      if (i->elseBody)
        visitStmt(i->elseBody);
    } else if (auto *c = dyn_cast<CallStmt>(s)) {
      visitExpr(c->call, false);
    }
  };
  visitStmt(loop.body);
  return out;
}

ftg::Buffer *pickDriver(const std::vector<FragmentAccess> &accesses) {
  for (bool wantWrite : {true, false})
    for (const FragmentAccess &a : accesses)
      if (a.kind == FragmentAccess::Full && a.isWrite == wantWrite)
        return a.buffer;
  return nullptr;
}

namespace {

int64_t dim(const ftg::Buffer &b, size_t i) { return b.shape.size() > i ? b.shape[i].value_or(1) : 1; }

// Rows and columns of a fragment seen as a 2-d tile (a 1-d fragment is one row).
std::pair<int64_t, int64_t> tile2d(const ftg::Buffer &b) {
  if (b.shape.size() == 1)
    return {1, dim(b, 0)};
  return {dim(b, 0), dim(b, 1)};
}

// A lower bound of the register estimate that instruction selection checks, before any
// layout exists (as the recommender's QuickCheck): a fragment holds at least its elements
// spread evenly over the threads, a local array all of its own. Checked first because the
// layout search costs time in proportion to the tiles' sizes (a [1, 1048576] fragment took
// 12 s before its register error): a knob's value must not set the compile time.
bool registersCanFit(const Graph &g, DiagnosticEngine &diags) {
  const int limit = g.target->limits().registersPerThread;
  for (const auto &b : g.buffers) {
    if ((b->scope != Scope::Fragment && b->scope != Scope::Local) || !b->decl)
      continue;
    int64_t elements = 1;
    bool known = true;
    for (const auto &d : b->shape)
      known = known && d && *d > 0 && !llvm::MulOverflow(elements, *d, elements);
    if (!known)
      continue; // not positive or overflowing: Sema reports it
    int64_t registers = kScalarRegisters + minRegistersFor(elements, b->scope == Scope::Local, g.threads, b->dtype);
    if (registers <= limit)
      continue;
    diags.error(b->decl->getRange(), "buffer '" + b->name + "' needs at least " + std::to_string(registers) +
                                         " registers per thread (" + std::to_string(elements) + " elements" +
                                         (b->scope == Scope::Local ? " in each thread" : " over " +
                                          std::to_string(g.threads) + " threads") + ", with " +
                                         std::to_string(kScalarRegisters) + " for addresses and indices) but " +
                                         g.target->name().str() + " allows " + std::to_string(limit))
        .hint("use more threads, smaller tiles, or keep large tiles in shared memory");
    return false;
  }
  return true;
}

class LayoutInference : public Pass, public ftg::LayoutRules {
public:
  llvm::StringRef name() const override { return "layout-inference"; }

  bool run(Graph &g, DiagnosticEngine &diags) override {
    this->g = &g;
    this->diags = &diags;
    ok = true;
    // Layouts spread tiles over whole warps (waves). Sema checks NVIDIA's 32 threads without
    // knowing the target; a gfx9 wave is 64, and a block of 32 threads there had no whole wave
    // (a division by zero further on).
    const int wave = g.target->warpSize();
    if (g.threads % wave != 0) {
      diags.error(g.kernel->threads ? g.kernel->threads->getRange() : g.kernel->nameRange, "threads(" + std::to_string(g.threads) + ") is not a multiple of " +
                                                     g.target->name().str() + "'s wave size (" +
                                                     std::to_string(wave) + ")")
          .hint("tile operators distribute work over whole waves: use a multiple of " + std::to_string(wave) +
                " threads on this target");
      return false;
    }
    if (!registersCanFit(g, diags))
      return false;
    g.walk([&](Node &n) {
      if (n.op)
        n.op->inferLayout(n, InferLevel::Strict, *this);
    });
    if (!ok)
      return false;
    common();
    // FREE: 2-d fragments first, since 1-d ones are usually rows of a 2-d one and get their
    // layout from it through COMMON.
    llvm::SmallPtrSet<const ftg::Buffer *, 16> used;
    g.walk([&](Node &n) {
      for (const auto *list : {&n.inputs, &n.outputs})
        for (const Operand &o : *list)
          used.insert(o.buffer);
    });
    // An on-chip buffer no node reads or writes is not declared in the generated code (nvcc
    // would warn of an unreferenced variable).
    for (auto &b : g.buffers)
      if (b->scope != Scope::Global && b->decl && !used.count(b.get())) {
        diags.warning(b->decl->getRange(), std::string(b->scope == Scope::Fragment ? "fragment '"
                                                       : b->scope == Scope::Shared ? "shared buffer '"
                                                                                   : "local buffer '") +
                                               b->name + "' is never used");
        b->unused = true;
      }
    for (size_t rank : {2, 1})
      for (auto &b : g.buffers)
        if (ok && b->scope == Scope::Fragment && !b->fragment && b->shape.size() == rank &&
            used.count(b.get())) {
          freeLayout(*b);
          common();
        }
    common();
    if (!ok)
      return false;
    g.walk([&](Node &n) {
      if (n.kind == NodeKind::Parallel)
        checkParallel(n);
      checkPartialSums(n);
    });
    for (auto &b : g.buffers)
      if (b->scope == Scope::Shared && !b->shared) {
        auto [rows, cols] = b->shape.size() >= 2
                                ? std::pair<int64_t, int64_t>{b->numElements() / dim(*b, b->shape.size() - 1),
                                                              dim(*b, b->shape.size() - 1)}
                                : std::pair<int64_t, int64_t>{1, dim(*b, 0)};
        b->shared = SharedLayout::rowMajor(rows, cols, int(bitWidth(b->dtype)));
        b->layoutReason = "free: row-major";
      }
    return ok;
  }

  const Graph &graph() const override { return *g; }

  void error(llvm::SMRange r, const std::string &msg, const std::string &hint = "") override {
    auto d = diags->error(r, msg);
    if (!hint.empty())
      d.hint(hint);
    ok = false;
  }

  void assign(ftg::Buffer &b, const FragmentLayout &l, const std::string &reason, llvm::SMRange at) override {
    if (b.fragment) {
      if (*b.fragment != l)
        error(at, "layout conflict for fragment '" + b.name + "': " + reason + " needs " + l.str() +
                      " but it already has " + b.fragment->str() + " (" + b.layoutReason + ")",
              "use the same warp policy for gemms whose results are combined, or copy through a "
              "shared buffer");
      return;
    }
    b.fragment = l;
    b.layoutReason = reason;
    changed = true;
  }

  bool assignShared(ftg::Buffer &b, const SharedLayout &l, const std::string &reason,
                    llvm::SMRange at) override {
    // An annotated layout is the kernel's decision. One that gives every element the offset
    // the rule needs takes the rule's form (its alignment, its instructions: ldmatrix, wgmma
    // descriptors, bulk copies); any other conflicts.
    if (b.shared && b.shared->isAnnotated() && !(*b.shared == l)) {
      if (!b.shared->sameOffsets(l)) {
        error(at, "shared buffer '" + b.name + "' has an annotated layout (" + b.layoutReason + "), but " + reason +
                      " needs " + l.str(),
              "annotate the layout it needs, or remove the annotation");
        return false;
      }
      b.shared = l;
      b.layoutReason += ", the same offsets as " + reason;
      return true;
    }
    if (b.shared && !(*b.shared == l)) {
      error(at, "shared buffer '" + b.name + "' needs two layouts: " + reason + " needs " + l.str() +
                    " but it already has " + b.shared->str() + " (" + b.layoutReason + ")");
      return false;
    }
    // A rule that agrees keeps the reason of the first (an annotation's, say, when a second
    // gemm reads the buffer), as fragments do.
    if (b.shared)
      return true;
    b.shared = l;
    b.layoutReason = reason;
    return true;
  }

private:
  void common() {
    // After an error the rules would only report the same conflict again.
    if (!ok)
      return;
    do {
      changed = false;
      g->walk([&](Node &n) {
        if (n.op)
          return n.op->inferLayout(n, InferLevel::Common, *this);
        switch (n.kind) {
        case NodeKind::Parallel:
          propagateParallel(n);
          break;
        default:
          break;
        }
      });
    } while (changed && ok);
  }

  void propagateParallel(Node &n) {
    auto accesses = collectFragmentAccesses(*g, *n.loop);
    const FragmentLayout *full = nullptr;
    for (const FragmentAccess &a : accesses)
      if (a.kind == FragmentAccess::Full && a.buffer->fragment && a.buffer->shape.size() == n.loop->vars.size())
        full = &*a.buffer->fragment;
    // In a 1-d loop every fragment is indexed by the one variable: they share one layout.
    if (!full)
      return;
    FragmentLayout layout = *full;
    for (const FragmentAccess &a : accesses) {
      if (a.kind == FragmentAccess::Full && a.buffer->shape.size() == n.loop->vars.size())
        assign(*a.buffer, layout, "common: indexed like the other fragments of a parallel loop",
               a.expr->getRange());
      else if (a.kind == FragmentAccess::Row && layout.kind != FragmentLayout::Row)
        assign(*a.buffer, layout.rowLayout(), "common: row of a parallel loop's fragment",
               a.expr->getRange());
    }
  }

  void freeLayout(ftg::Buffer &b) {
    auto [rows, cols] = tile2d(b);
    int bytes = std::max(1, int(bitWidth(b.dtype) / 8));
    bool fits = false;
    // Among the layouts that cover the tile, the fewest registers (copies of a small tile on
    // further threads when it cannot keep every thread busy), then the widest vectors, up to
    // 16 bytes per access (one 128-bit load or store).
    FragmentLayout l = FragmentLayout::fewestRegisters(rows, cols, g->threads, std::max(1, 16 / bytes), fits);
    if (!fits) { // one copy per thread always fits; kept for a future family that may not
      error(b.decl->getRange(), "fragment '" + b.name + "' of " + std::to_string(rows) + "x" +
                                    std::to_string(cols) + " elements has no layout over " +
                                    std::to_string(g->threads) + " threads");
      return;
    }
    b.fragment = l;
    b.layoutReason = l.replicas > 1 ? "free: fewest registers (the tile is smaller than the block)"
                                    : "free: fewest registers, vectorized";
    changed = true;
  }

  // A fragment of partial sums (a gemm whose warp groups split K: FragmentLayout::partials)
  // holds no element's value in any one thread: only that gemm (accumulating), `clear`, and a
  // copy (which adds the sums through shared memory) may touch it.
  void checkPartialSums(const Node &n) {
    auto partial = [](const ftg::Buffer *b) { return b && b->fragment && b->fragment->partials > 1; };
    auto refuse = [&](const ftg::Buffer &b, llvm::SMRange at, const std::string &what) {
      error(at, "not supported yet: " + what + " '" + b.name + "', which holds the partial sums of " +
                    std::to_string(b.fragment->partials) + " warp groups (a gemm whose warps split K)",
            "copy '" + b.name + "' into a fragment of its own first (a copy adds the partial sums) and use "
            "that");
    };
    if (n.kind == NodeKind::Parallel) {
      for (const FragmentAccess &a : collectFragmentAccesses(*g, *n.loop))
        if (partial(a.buffer))
          refuse(*a.buffer, a.expr->getRange(), "a parallel loop over");
      return;
    }
    if (!n.call)
      return;
    bool clears = n.kind == NodeKind::Fill && n.call->builtin == Builtin::Clear;
    bool addsUp = n.kind == NodeKind::Copy;
    for (const auto *ops : {&n.inputs, &n.outputs})
      for (const ftg::Operand &o : *ops) {
        bool accumulator = n.kind == NodeKind::Gemm && o.buffer == n.inputs[2].buffer && n.bKSplit > 1;
        bool read = ops == &n.inputs;
        if (partial(o.buffer) && !accumulator && !(clears && !read) && !(addsUp && read))
          refuse(*o.buffer, n.call->getRange(),
                 std::string(nodeKindName(n.kind)) + (read ? " reads" : " writes"));
      }
  }

  void checkParallel(Node &n) {
    auto accesses = collectFragmentAccesses(*g, *n.loop);
    n.driver = pickDriver(accesses);
    if (!n.driver && !accesses.empty() && n.loop->vars.size() == 1)
      n.driver = accesses[0].buffer;
    for (const FragmentAccess &a : accesses) {
      if (a.kind == FragmentAccess::Other && !(n.loop->vars.size() == 1 && a.buffer == n.driver)) {
        error(a.expr->getRange(), "not supported yet: fragment '" + a.buffer->name +
                                      "' indexed other than by the loop variables in order",
              "index fragments inside parallel loops as F[i, j] (or F[i] for a row vector)");
        continue;
      }
      if (!n.driver || a.buffer == n.driver)
        continue;
      const FragmentLayout &d = *n.driver->fragment;
      const FragmentLayout &l = *a.buffer->fragment;
      bool compatible = a.kind == FragmentAccess::Row ? l == d.rowLayout() : l == d;
      if (!compatible)
        error(a.expr->getRange(), "fragment '" + a.buffer->name + "' (" + l.str() +
                                      ") does not line up with '" + n.driver->name + "' (" +
                                      d.str() + ") in this parallel loop",
              "the compiler cannot move elements between threads inside a parallel loop; copy "
              "one of them through shared memory first");
    }
    if (n.driver) {
      const ForStmt *f = n.loop;
      for (size_t i = 0; i < f->extents.size() && i < n.driver->shape.size(); ++i)
        if (!f->extents[i]->constant || f->extents[i]->constant->getInt() != dim(*n.driver, i))
          error(f->extents[i]->getRange(),
                "not supported yet: a parallel loop that covers part of fragment '" +
                    n.driver->name + "'",
                "loop over the whole fragment and guard with `if`");
      n.vectorWidth = n.driver->fragment->kind == FragmentLayout::Blocked ? n.driver->fragment->vec : 1;
    }
  }

  Graph *g = nullptr;
  DiagnosticEngine *diags = nullptr;
  bool ok = true;
  bool changed = false;
};

} // namespace

std::unique_ptr<Pass> createLayoutInference() { return std::make_unique<LayoutInference>(); }

} // namespace tlc::infer
