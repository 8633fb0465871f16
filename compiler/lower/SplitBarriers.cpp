// SplitBarriers, a pass over the loop IR after SyncInsertion. In a loop body whose statements
// run partly on the block's first T threads (Stmt::threadSubset: the tile operators over the
// fragments of a gemm with `threads = T`), the body is the two sides of a handover: the subset
// writes a shared tile (FlashMLA's probabilities and row scales), every thread reads it. A
// barrier there makes each side wait for the other, though often one side only has to let the
// other go on:
//  - the rest (threads T and up) need not wait at barrier b when they touch no shared memory
//    between b and the next barrier of the body, where they do wait: they arrive at b
//    (bar.arrive) and the subset, which waits, goes on once they have (the subset's writes
//    after b wait for the rest's reads before it);
//  - the subset need not wait for the rest at b when the rest touched no shared memory since
//    the previous barrier of the body, where the subset waited for them: what the subset does
//    after b can conflict only with its own accesses, so it waits for its own threads (a
//    barrier of T threads) and arrives at b, where the rest wait for its writes.
// Measured on FlashMLA's schedule (GPU run 211, MLA decoding at 64 x 128 heads): 2-9% faster
// than both warpgroups waiting at both barriers. Only barriers at the top level of such a body,
// and only decisions within one iteration (the previous and next barrier in the same body),
// so that every arrive is paired with a wait in the same phase: each split barrier takes a
// named barrier id of its own (an arrive of one phase must not complete the next), from the
// ids no other barrier of the kernel takes; without enough ids the barriers stay as they are.
#include "lower/KernelLowering.h"
#include "lower/Lower.h"

#include "llvm/ADT/STLExtras.h"

namespace tlc::lower {

namespace {

bool touchesShared(const Stmt &s) {
  auto shared = [](const Access &a) { return a.buffer->scope == MemScope::Shared; };
  return anyStmt(s, [&](const Stmt &x) { return llvm::any_of(x.reads, shared) || llvm::any_of(x.writes, shared); });
}

// Whether the threads outside the subset touch shared memory in body[from, to).
bool restTouchesShared(const StmtList &body, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    if (!body[i]->threadSubset && touchesShared(*body[i]))
      return true;
  return false;
}

struct Splitter {
  std::vector<int> ids; // free named barrier ids, taken from the back
  int subsetId = 0;     // the subsets' own barrier, once taken
  int blockThreads = 0;

  int take() {
    if (ids.empty())
      return 0;
    int id = ids.back();
    ids.pop_back();
    return id;
  }

  void walk(StmtList &list) {
    for (StmtPtr &s : list) {
      if (s->kind == StmtKind::For && s->role == ForRole::Tile)
        splitBody(s->body);
      walk(s->body);
      walk(s->elseBody);
    }
  }

  void splitBody(StmtList &body) {
    // The kernel's own turns, and votes (a barrier that also reduces): left as they are.
    if (anyStmt(body, [](const Stmt &s) {
          return s.kind == StmtKind::NamedBarrier || (s.kind == StmtKind::Barrier && !s.name.empty());
        }))
      return;
    int subset = 0;
    for (const StmtPtr &s : body)
      if (s->threadSubset) {
        if (subset && subset != int(s->count))
          return; // statements on two different subsets: left alone
        subset = int(s->count);
      }
    if (!subset)
      return;
    std::vector<size_t> barriers;
    for (size_t i = 0; i < body.size(); ++i)
      if (body[i]->kind == StmtKind::Barrier && !body[i]->splitThreads)
        barriers.push_back(i);
    bool subsetWaitedAtPrevious = false, restMustWait = false;
    for (size_t b = 0; b < barriers.size(); ++b) {
      size_t at = barriers[b];
      bool restPasses = !restMustWait && b + 1 < barriers.size() && !restTouchesShared(body, at + 1, barriers[b + 1]);
      bool subsetPasses = b > 0 && subsetWaitedAtPrevious && !restTouchesShared(body, barriers[b - 1] + 1, at);
      subsetWaitedAtPrevious = true;
      restMustWait = false;
      if (!restPasses && !subsetPasses)
        continue;
      // Ids first: a barrier that cannot have its own stays whole.
      int id = restPasses && subsetPasses ? -1 : take();
      if (subsetPasses && !subsetId)
        subsetId = take();
      if (!id || (subsetPasses && !subsetId))
        return;
      Stmt &s = *body[at];
      s.splitThreads = subset;
      s.cond = kThreadIndex + " < " + std::to_string(subset);
      s.restWaits = !restPasses;
      s.subsetWaits = !subsetPasses;
      s.splitId = id > 0 ? id : 0;
      s.subsetId = subsetPasses ? subsetId : 0;
      if (!s.barrierThreads)
        s.barrierThreads = blockThreads;
      subsetWaitedAtPrevious = !subsetPasses;
      restMustWait = restPasses; // the rest's next barrier is where it catches up
    }
  }
};

} // namespace

void splitSubsetBarriers(Kernel &k, std::vector<int> freeIds) {
  Splitter splitter;
  splitter.blockThreads = k.threads;
  std::sort(freeIds.begin(), freeIds.end()); // the highest ids first (taken from the back)
  for (StmtList *body : {&k.body, &k.bulkBody}) {
    splitter.ids = freeIds;
    splitter.subsetId = 0;
    splitter.walk(*body);
  }
}

} // namespace tlc::lower
