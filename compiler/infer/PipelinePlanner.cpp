// Pipeline inference (TileLang paper appendix F), for the cp.async multistage scheme of
// sm_80+: in a `pipelined(n, stages = s)` loop, the copies from global into shared memory
// whose source addresses depend only on the loop variable and values fixed before the loop
// are producers. They are issued s - 1 iterations ahead into s rotating shared buffers; the
// rest of the body consumes buffer k % s after cp.async.wait_group(s - 2) and a barrier.
// Issuing the prefetch of iteration k + s - 1 right after that barrier is what makes
// overwriting buffer (k - 1) % s safe: every thread has finished iteration k - 1.
#include "infer/Passes.h"

#include "ir/AccessAnalysis.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace tlc::infer {

using namespace ftg;
using llvm::cast;
using llvm::dyn_cast;

namespace {

// Declarations an expression reads (ir/AccessAnalysis.h: index expressions included).
void collectDecls(const Expr *e, llvm::SmallPtrSetImpl<const Decl *> &out) {
  forEachRead(e, [&](const Decl *d) { out.insert(d); });
}

// Declarations made inside a loop body (lets), which a prefetch cannot see ahead of time.
void collectLocalLets(const Stmt *s, llvm::SmallPtrSetImpl<const Decl *> &out) {
  if (auto *b = dyn_cast<BlockStmt>(s)) {
    for (const Stmt *c : b->body)
      collectLocalLets(c, out);
  } else if (auto *l = dyn_cast<LetStmt>(s)) {
    out.insert(l->decl);
  } else if (auto *i = dyn_cast<IfStmt>(s)) {
    collectLocalLets(i->thenBody, out);
    if (i->elseBody)
      collectLocalLets(i->elseBody, out);
  } else if (auto *f = dyn_cast<ForStmt>(s)) {
    collectLocalLets(f->body, out);
  }
}

class PipelinePlanner : public Pass {
public:
  llvm::StringRef name() const override { return "pipeline-planner"; }

  bool run(Graph &g, DiagnosticEngine &diags) override {
    g.walk([&](Node &loop) {
      if (loop.kind != NodeKind::Loop || loop.loop->loopKind != LoopKind::Pipelined)
        return;
      llvm::SmallPtrSet<const Decl *, 8> inLoop;
      collectLocalLets(loop.loop->body, inLoop);
      // Top-level lets of the body computed from the loop variable and values fixed before
      // the loop (or such lets) can be recomputed for a later iteration by the prefetch.
      llvm::SmallPtrSet<const Decl *, 8> recomputable;
      std::vector<const LetStmt *> lets;
      for (auto &n : loop.body) {
        auto *let = n->kind == NodeKind::Let ? llvm::cast<LetStmt>(n->stmt) : nullptr;
        if (!let)
          continue;
        llvm::SmallPtrSet<const Decl *, 8> deps;
        collectDecls(let->decl->init, deps);
        bool ok = llvm::all_of(deps, [&](const Decl *d) {
          return d && d->getKind() != Decl::DK_Buffer && (!inLoop.count(d) || recomputable.count(d));
        });
        if (ok) {
          recomputable.insert(let->decl);
          lets.push_back(let);
        }
      }
      // Buffers written in the loop by anything but a copy from global memory.
      llvm::SmallPtrSet<const ftg::Buffer *, 8> writtenOtherwise;
      for (auto &n : loop.body)
        if (!isGlobalToShared(*n))
          for (const ftg::Buffer *b : n->writes)
            writtenOtherwise.insert(b);
      for (auto &n : loop.body) {
        if (!isGlobalToShared(*n) || loop.stages < 2)
          continue;
        ftg::Buffer *dst = n->outputs[0].buffer;
        llvm::SmallPtrSet<const Decl *, 8> used;
        // Both addresses: the prefetch computes the destination's origin ahead of time too.
        for (const Operand *op : {&n->inputs[0], &n->outputs[0]})
          for (const Expr *o : op->region.origins)
            collectDecls(o, used);
        bool independent = !writtenOtherwise.count(dst);
        const Decl *blocker = nullptr;
        for (const Decl *d : used)
          if ((inLoop.count(d) && !recomputable.count(d)) || (d && d->getKind() == Decl::DK_Buffer)) {
            independent = false;
            blocker = d;
          }
        if (!independent) {
          // Not an error (the loop still runs correctly), but the author asked for a pipeline.
          bool data = blocker && blocker->getKind() == Decl::DK_Buffer;
          auto w = diags.warning(
              n->call->getRange(),
              "this copy is not prefetched by the pipelined loop: " +
                  (!blocker ? "'" + dst->name + "' is also written in the loop"
                   : data   ? "its address reads '" + blocker->getName().str() +
                                  "', which the loop may change"
                            : "its address depends on '" + blocker->getName().str() +
                                  "', computed from values of the loop"));
          if (blocker && !data)
            w.hint("compute the address from the loop variable and values fixed before the loop");
          continue;
        }
        n->producer = true;
        dst->stages = std::max(dst->stages, loop.stages);
        // Lets may build on each other: the prefetch recomputes all recomputable ones, in order.
        if (llvm::any_of(used, [&](const Decl *d) { return recomputable.count(d); }))
          loop.prefetchLets = lets;
      }
      // Copies nested under an `if` or an inner loop of the body are issued where they stand,
      // every iteration, and waited for at once: say so, since the author asked for a pipeline
      // (block-sparse kernels copy under a condition).
      if (loop.stages >= 2)
        for (auto &n : loop.body)
          warnNestedCopies(*n, n->kind == NodeKind::If ? "an 'if'" : "an inner loop", diags);
    });
    return true;
  }

private:
  static void warnNestedCopies(const Node &n, const char *under, DiagnosticEngine &diags) {
    if (n.kind != NodeKind::If && n.kind != NodeKind::Loop)
      return;
    for (const auto *list : {&n.body, &n.elseBody})
      for (const auto &c : *list) {
        if (isGlobalToShared(*c)) {
          diags
              .warning(c->call->getRange(),
                       std::string("this copy is not prefetched by the pipelined loop: it is under ") + under +
                           " inside the loop, so it is issued and waited for in its own iteration")
              .hint("copy unconditionally at the top of the loop body (reading a tile that is not "
                    "used costs bandwidth, not correctness) and apply the condition where the tile "
                    "is consumed");
        }
        warnNestedCopies(*c, under, diags);
      }
  }

  static bool isGlobalToShared(const Node &n) {
    return n.kind == NodeKind::Copy && !n.inputs.empty() && !n.outputs.empty() &&
           n.inputs[0].buffer->scope == Scope::Global && n.outputs[0].buffer->scope == Scope::Shared;
  }
};

} // namespace

std::unique_ptr<Pass> createPipelinePlanner() { return std::make_unique<PipelinePlanner>(); }

} // namespace tlc::infer
