// Pipeline inference (TileLang paper appendix F), for the cp.async multistage scheme of
// sm_80+: in a `pipelined(n, stages = s)` loop, the copies from global into shared memory
// whose source addresses depend only on the loop variable and values fixed before the loop
// are producers. They are issued s - 1 iterations ahead into s rotating shared buffers; the
// rest of the body consumes buffer k % s after cp.async.wait_group(s - 2) and a barrier.
// Issuing the prefetch of iteration k + s - 1 right after that barrier is what makes
// overwriting buffer (k - 1) % s safe: every thread has finished iteration k - 1.
#include "infer/Passes.h"

#include "infer/RegisterEstimate.h"
#include "ir/AccessAnalysis.h"
#include "target/TargetInfo.h"

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
    // A target with no asynchronous copy into shared memory (gfx9) stages the prefetch through
    // registers (PipelineStyle::RegisterStaged): the same copies qualify, but only plain ones
    // (no gathers, none under an `if`), into two LDS buffers, within a register budget.
    const bool registerStaged = g.target->pipelineStyle() == target::PipelineStyle::RegisterStaged;
    g.walk([&](Node &loop) {
      if (loop.kind != NodeKind::Loop || loop.loop->loopKind != LoopKind::Pipelined)
        return;
      llvm::SmallPtrSet<const Decl *, 8> inLoop;
      collectLocalLets(loop.loop->body, inLoop);
      // Tensors and buffers the loop writes: a prefetch reading them for a later iteration
      // would read them before this iteration writes them.
      auto writtenByLoop = [&](const Decl *d) {
        return llvm::any_of(loop.writes, [&](const ftg::Buffer *w) { return w->decl == d; });
      };
      // Top-level lets of the body computed from the loop variable and values fixed before
      // the loop (or such lets) can be recomputed for a later iteration by the prefetch; they
      // may read elements of global tensors the loop does not write (a table of offsets).
      llvm::SmallPtrSet<const Decl *, 8> recomputable;
      std::vector<const LetStmt *> lets;
      for (auto &n : loop.body) {
        auto *let = n->kind == NodeKind::Let ? llvm::cast<LetStmt>(n->stmt) : nullptr;
        if (!let)
          continue;
        llvm::SmallPtrSet<const Decl *, 8> deps;
        collectDecls(let->decl->init, deps);
        bool ok = llvm::all_of(deps, [&](const Decl *d) {
          return d && d->getKind() != Decl::DK_Buffer && !writtenByLoop(d) &&
                 (!inLoop.count(d) || recomputable.count(d));
        });
        if (ok) {
          recomputable.insert(let->decl);
          lets.push_back(let);
        }
      }
      // Buffers written in the loop by anything but one copy from global memory (in the body,
      // or directly under one of its `if`s).
      llvm::SmallPtrSet<const ftg::Buffer *, 8> writtenOtherwise;
      llvm::DenseMap<const ftg::Buffer *, int> copiesInto;
      auto writes = [&](const Node &n) {
        if (isGlobalToShared(n))
          ++copiesInto[n.outputs[0].buffer];
        else if (n.gather)
          ++copiesInto[n.gather->dst];
        else
          writtenOtherwise.insert(n.writes.begin(), n.writes.end());
      };
      for (Node *n : liveNodes(loop.body)) {
        if (n->kind != NodeKind::If) {
          writes(*n);
          continue;
        }
        for (const auto *branch : {&n->body, &n->elseBody})
          for (Node *c : liveNodes(*branch))
            writes(*c);
      }
      for (auto &[b, count] : copiesInto)
        if (count > 1)
          writtenOtherwise.insert(b);
      // Whether copy `n` (a direct child of the body, or of an `if` of it) can be issued ahead:
      // its addresses, and the condition it stands under, computed from the loop variable
      // and values fixed before the loop; its destination written by nothing else.
      auto plan = [&](Node &n, const Expr *guard) -> bool {
        ftg::Buffer *dst = n.outputs[0].buffer;
        llvm::SmallPtrSet<const Decl *, 8> used;
        // Both addresses: the prefetch computes the destination's origin ahead of time too.
        for (const Operand *op : {&n.inputs[0], &n.outputs[0]})
          for (const Expr *o : op->region.origins)
            collectDecls(o, used);
        if (n.im2col) // an im2col tile's address: its pixel, tap and channel (or column)
          for (const Expr *e : {n.im2col->pixel, n.im2col->channel, n.im2col->r, n.im2col->s, n.im2col->column})
            if (e)
              collectDecls(e, used);
        const Decl *blocker = nullptr;
        bool independent = !writtenOtherwise.count(dst);
        for (const Decl *d : used)
          if ((inLoop.count(d) && !recomputable.count(d)) ||
              (d && (d->getKind() == Decl::DK_Buffer || writtenByLoop(d)))) {
            independent = false;
            blocker = d;
          }
        if (!independent) {
          // Not an error (the loop still runs correctly), but the author asked for a pipeline.
          bool data = blocker && (blocker->getKind() == Decl::DK_Buffer || writtenByLoop(blocker));
          auto w = diags.warning(
              n.call->getRange(),
              "this copy is not prefetched by the pipelined loop: " +
                  (!blocker ? "'" + dst->name + "' is also written in the loop"
                   : data   ? "its address reads '" + blocker->getName().str() +
                                  "', which the loop may change"
                            : "its address depends on '" + blocker->getName().str() +
                                  "', computed from values of the loop"));
          if (blocker && !data)
            w.hint("compute the address from the loop variable and values fixed before the loop");
          return false;
        }
        if (guard)
          collectDecls(guard, used);
        n.producer = true;
        dst->stages = std::max(dst->stages, loop.stages);
        // Lets may build on each other: the prefetch recomputes all recomputable ones, in order.
        if (llvm::any_of(used, [&](const Decl *d) { return recomputable.count(d); }))
          loop.prefetchLets = lets;
        return true;
      };
      if (registerStaged && loop.stages < 2) {
        loop.plannedAsOrdinaryLoop = true;
        loop.pipelineNote = "not pipelined: stages = " + std::to_string(loop.stages);
      } else if (registerStaged) {
        for (Node *n : liveNodes(loop.body)) {
          if (isGlobalToShared(*n) && n->kind == NodeKind::Copy)
            plan(*n, nullptr);
          else if (n->gather)
            n->gatherNote += ", not prefetched: a register-staged pipeline stages plain copies only";
          else if (n->im2col)
            n->im2col->note += ", not prefetched: a register-staged pipeline stages plain copies only";
          else if (n->kind == NodeKind::If || n->kind == NodeKind::Loop)
            warnNestedCopies(*n, n->kind == NodeKind::If ? "an 'if'" : "an inner loop", diags);
        }
        planRegisterStaging(g, loop, inLoop);
      } else if (loop.stages >= 2)
        for (Node *n : liveNodes(loop.body)) {
          if (isGlobalToShared(*n))
            plan(*n, nullptr);
          else if (n->gather)
            planGather(*n, loop, inLoop, recomputable, lets, writtenOtherwise);
          else if (n->kind == NodeKind::If)
            planGuarded(*n, loop, inLoop, recomputable, writtenOtherwise, plan, diags);
          else if (n->kind == NodeKind::Loop)
            warnNestedCopies(*n, "an inner loop", diags);
        }
    });
    return true;
  }

private:
  // The register-staged form of pipelined loop `loop` (gfx9), after its copies were planned
  // as for cp.async: iteration k + 1's tiles are loaded into registers before the consumers
  // of iteration k and stored into the other of two LDS buffers after them
  // (lower/PipelineExpansion.cpp). A staged tile stays live in registers across the gemm, so
  // the copies are staged only when their registers fit the target's budget (and the
  // kernel's estimate stays within the registers of a thread); otherwise the loop runs as an
  // ordinary loop, and --emit=inferred says why. A copy whose LDS destination is addressed by
  // values of the loop is not staged (the store half runs after the consumers).
  static void planRegisterStaging(const Graph &g, Node &loop, const llvm::SmallPtrSetImpl<const Decl *> &inLoop) {
    std::vector<Node *> staged;
    std::string names;
    int64_t registers = 0;
    for (Node *n : liveNodes(loop.body)) {
      if (!n->producer)
        continue;
      ftg::Buffer *dst = n->outputs[0].buffer;
      llvm::SmallPtrSet<const Decl *, 8> used;
      for (const Expr *o : n->outputs[0].region.origins)
        collectDecls(o, used);
      if (llvm::any_of(used, [&](const Decl *d) { return inLoop.count(d) != 0; })) {
        n->producer = false;
        dst->stages = 1;
        continue;
      }
      staged.push_back(n);
      registers += stagingRegisters(g, *n);
      names += (names.empty() ? "" : ", ") + dst->name;
    }
    if (staged.empty()) {
      loop.plannedAsOrdinaryLoop = true;
      loop.pipelineNote = "not pipelined: no copy from global memory into a shared tile to stage";
      return;
    }
    const int budget = g.target->stagingRegisterBudget();
    const int64_t total = estimateRegisters(g) + registers;
    if (registers > budget || total > g.target->limits().registersPerThread) {
      loop.pipelineNote = "register-staged"; // what unstageRegisterPipeline undoes
      unstageRegisterPipeline(
          loop, "staging " + names + " through registers needs " + std::to_string(registers) +
                    " registers per thread, over the budget of " +
                    (registers > budget ? std::to_string(budget) + " (" + g.target->name().str() + ")"
                                        : std::to_string(g.target->limits().registersPerThread - estimateRegisters(g)) +
                                              " left by the kernel's other registers"));
      return;
    }
    for (Node *n : staged)
      n->outputs[0].buffer->stages = target::kRegisterStagedBuffers;
    loop.pipelineNote = "register-staged: " + std::to_string(staged.size()) +
                        " copies global -> registers -> LDS one iteration ahead, " +
                        std::to_string(target::kRegisterStagedBuffers) + " LDS buffers, " + std::to_string(registers) +
                        " registers per thread staged (budget " + std::to_string(budget) + ")";
  }

  // The 32-bit registers one thread holds for copy `n`'s staged tile: its share of the
  // destination tile, in whole accesses of the widest vector.
  static int64_t stagingRegisters(const Graph &g, const Node &n) {
    const ftg::Buffer &dst = *n.outputs[0].buffer;
    return stagedTileRegisters(dst.numElements(), dst.dtype, g.threads, n.copyVector);
  }

  // Gathered copy `n` (infer/GatherCopy.cpp), a direct child of the loop body, is issued ahead
  // like a copy when everything its addresses and condition read can be read for a later
  // iteration: the loop variable, lets of the body computed from it and from values fixed
  // before the loop, and buffers the loop does not write, such as tables of row offsets
  // written before it (SyncInsertion puts the barrier that publishes them before the
  // prologue); and nothing else in the loop writes its tile. Otherwise it runs in its own
  // iteration (still through cp.async); --emit=inferred says why.
  static void planGather(Node &n, Node &loop, const llvm::SmallPtrSetImpl<const Decl *> &inLoop,
                         const llvm::SmallPtrSetImpl<const Decl *> &recomputable,
                         const std::vector<const LetStmt *> &lets,
                         const llvm::SmallPtrSetImpl<const ftg::Buffer *> &writtenOtherwise) {
    const GatherCopy &G = *n.gather;
    // Declarations the body reads, less its own loop variables and lets.
    llvm::SmallPtrSet<const Decl *, 8> own(n.loop->vars.begin(), n.loop->vars.end()), used;
    for (const LetStmt *l : G.lets) {
      collectDecls(l->decl->init, used);
      own.insert(l->decl);
    }
    collectDecls(G.load, used);
    for (const IndexItem &i : G.store->indices)
      collectDecls(i.lo, used);
    if (G.cond)
      collectDecls(G.cond, used);
    std::string why;
    if (writtenOtherwise.count(G.dst))
      why = "'" + G.dst->name + "' is also written in the loop";
    for (const Decl *d : used) {
      if (!why.empty())
        break;
      if (!d || own.count(d))
        continue;
      if (auto *b = llvm::dyn_cast<BufferLikeDecl>(d)) {
        const ftg::Buffer *buf = nullptr;
        for (const ftg::Buffer *w : loop.writes)
          if (w->decl == b)
            buf = w;
        if (buf)
          why = "it reads '" + buf->name + "', which the loop writes";
        else if (b->scope == Scope::Fragment || b->scope == Scope::Local)
          why = "it reads " + scopeName(b->scope).str() + " '" + b->getName().str() + "'";
      } else if (inLoop.count(d) && !recomputable.count(d)) {
        why = "it depends on '" + d->getName().str() + "', computed from values of the loop";
      }
    }
    if (!why.empty()) {
      n.gatherNote += ", not prefetched: " + why;
      return;
    }
    n.producer = true;
    G.dst->stages = std::max(G.dst->stages, loop.stages);
    if (llvm::any_of(used, [&](const Decl *d) { return recomputable.count(d); }))
      loop.prefetchLets = lets;
  }

  // The copies directly under `if` node `branch` of the loop body are prefetched under its
  // condition when the condition can be evaluated for a later iteration (it reads the loop
  // variable, values fixed before the loop and global tensors the loop does not write) and
  // nothing outside the branch reads what they copy (a stage the condition skipped holds an
  // older tile). Anything else is issued in its own iteration, with a warning saying why.
  template <class Plan>
  static void planGuarded(Node &branch, const Node &loop, const llvm::SmallPtrSetImpl<const Decl *> &inLoop,
                          const llvm::SmallPtrSetImpl<const Decl *> &recomputable,
                          const llvm::SmallPtrSetImpl<const ftg::Buffer *> &writtenOtherwise, Plan &plan,
                          DiagnosticEngine &diags) {
    const Expr *cond = llvm::cast<IfStmt>(branch.stmt)->cond;
    std::string why;
    llvm::SmallPtrSet<const Decl *, 8> reads;
    collectDecls(cond, reads);
    for (const Decl *d : reads) {
      if (!d)
        continue;
      if (d->getKind() == Decl::DK_Buffer)
        why = "its condition reads on-chip buffer '" + d->getName().str() + "'";
      else if (inLoop.count(d) && !recomputable.count(d))
        why = "its condition depends on '" + d->getName().str() + "', computed from values of the loop";
      else if (llvm::any_of(writtenOtherwise, [&](const ftg::Buffer *b) { return b->decl == d; }))
        why = "its condition reads '" + d->getName().str() + "', which the loop writes";
      if (!why.empty())
        break;
    }
    if (why.empty() && containsCall(cond))
      why = "its condition calls a device function";
    for (int side = 0; side < 2; ++side) {
      const auto &list = side ? branch.elseBody : branch.body;
      // An `else if` is an `if` in the else branch: its copies are nested one level deeper.
      for (Node *c : liveNodes(list)) {
        if (!isGlobalToShared(*c)) {
          warnNestedCopies(*c, "an 'if'", diags);
          continue;
        }
        std::string readOutside = readOutsideBranch(*c, branch, side == 1, loop);
        if (!why.empty() || !readOutside.empty()) {
          diags.warning(c->call->getRange(), "this copy under an 'if' is not prefetched by the pipelined loop: " +
                                                 (why.empty() ? readOutside : why) +
                                                 ", so it is issued and waited for in its own iteration")
              .hint(why.empty() ? "read the copied tile only under the same condition"
                                : "build the condition from the loop variable, values fixed before the loop and "
                                  "global tensors the loop does not write");
          continue;
        }
        if (plan(*c, cond)) {
          c->prefetchGuard = cond;
          c->prefetchGuardNegated = side == 1;
        }
      }
    }
  }

  // Why the tile `copy` (in the else branch of `ifNode` when `inElse`) loads is read outside
  // its branch, or "".
  static std::string readOutsideBranch(const Node &copy, const Node &ifNode, bool inElse, const Node &loop) {
    const ftg::Buffer *dst = copy.outputs[0].buffer;
    for (const Node *n : liveNodes(loop.body)) {
      if (n == &ifNode) {
        for (const Node *c : liveNodes(inElse ? n->body : n->elseBody))
          if (llvm::is_contained(c->reads, dst))
            return "'" + dst->name + "' is also read in the other branch";
        continue;
      }
      if (llvm::is_contained(n->reads, dst))
        return "'" + dst->name + "' is also read outside the 'if'";
    }
    return "";
  }

  static bool containsCall(const Expr *e) {
    if (!e)
      return false;
    if (auto *c = dyn_cast<CallExpr>(e))
      return c->builtin == Builtin::CallExtern || c->builtin == Builtin::Print ||
             llvm::any_of(c->args, [](const CallArg &a) { return containsCall(a.value); });
    if (auto *u = dyn_cast<UnaryExpr>(e))
      return containsCall(u->operand);
    if (auto *b = dyn_cast<BinaryExpr>(e))
      return containsCall(b->lhs) || containsCall(b->rhs);
    if (auto *ix = dyn_cast<IndexExpr>(e))
      return llvm::any_of(ix->indices, [](const IndexItem &i) { return containsCall(i.lo) || containsCall(i.hi); });
    return false;
  }

  static void warnNestedCopies(Node &n, const char *under, DiagnosticEngine &diags) {
    // A gathered copy here runs in its own iteration (still through cp.async): no warning, as
    // for any parallel loop, but --emit=inferred says so.
    if (n.gather)
      n.gatherNote += std::string(", not prefetched: under ") + under + " inside the loop";
    if (n.kind != NodeKind::If && n.kind != NodeKind::Loop)
      return;
    for (auto *list : {&n.body, &n.elseBody})
      for (auto &c : *list) {
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

  // A copy, or an im2col tile (a copy whose addresses it computes itself).
  static bool isGlobalToShared(const Node &n) {
    return (n.kind == NodeKind::Copy || n.kind == NodeKind::Im2col) && !n.inputs.empty() && !n.outputs.empty() &&
           n.inputs[0].buffer->scope == Scope::Global && n.outputs[0].buffer->scope == Scope::Shared;
  }
};

} // namespace

std::unique_ptr<Pass> createPipelinePlanner() { return std::make_unique<PipelinePlanner>(); }

bool unstageRegisterPipeline(Node &loop, const std::string &why) {
  if (loop.kind != NodeKind::Loop || loop.plannedAsOrdinaryLoop || loop.pipelineNote.rfind("register-staged", 0) != 0)
    return false;
  for (Node *n : liveNodes(loop.body))
    if (n->producer) {
      n->producer = false;
      n->outputs[0].buffer->stages = 1;
    }
  loop.prefetchLets.clear();
  loop.plannedAsOrdinaryLoop = true;
  loop.pipelineNote = "not pipelined: " + why + "; synchronous copies into one buffer each";
  return true;
}

} // namespace tlc::infer
