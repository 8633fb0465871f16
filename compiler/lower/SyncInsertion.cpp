// SyncInsertion: __syncthreads from the access sets of the loop IR.
//
// The pass walks the kernel in program order with the shared-memory accesses made since the
// last barrier (pending reads and writes). Before a statement that reads what another thread
// may have written, or writes what another thread may still read or write, it places a
// barrier. Barriers go only where every thread of the block arrives:
//  - tile loops, uniform branches, scopes and sequences are entered: a barrier may go inside;
//  - every other statement (a tile operator, a loop over threads or registers, the pipeline
//    prologue) is one unit: a barrier goes before it, never inside; barriers a unit already
//    holds (a reduction's scratch protocol) clear what precedes them.
// Accesses of the same multi-buffered buffer at different stages of the same loop variable
// do not conflict (Access::mayAlias): a pipeline's prefetch into stage (k + S - 1) % S needs
// no barrier before the reads of stage k % S.
//
// A bulk tensor store (Stmt::asyncProxyRead) goes on reading its shared tile after the
// issuing thread has moved on, until that thread waits for it (tl::tma::store_wait_read): no
// barrier ends such a read. Before a statement that writes a tile still being read so, the
// pass puts the issuing thread's wait and a barrier; at the end of the kernel, the wait alone
// (the block's shared memory must outlive the read). In a tile loop (a persistent kernel's
// loop over output tiles) whose body ends with such a store, the barrier that would close the
// body goes instead before the next iteration's first statement that conflicts with the end
// of the body: the store reads the tile while the next tile's main loop runs.
#include "lower/KernelLowering.h"
#include "lower/Lower.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <cstdlib>

namespace tlc::lower {

namespace {

bool sameAccess(const Access &a, const Access &b) {
  if (a.buffer != b.buffer || a.stage.has_value() != b.stage.has_value())
    return false;
  return !a.stage || (a.stage->var == b.stage->var && a.stage->offset == b.stage->offset);
}

struct State {
  // In the order they happened: a barrier's reason names the first conflicting buffer.
  std::vector<Access> reads, writes;
  // Shared buffers bulk stores are still reading (no barrier ends that; only a wait does).
  std::vector<const Buffer *> asyncReads;
  bool empty() const { return reads.empty() && writes.empty(); }
  void clear() {
    reads.clear();
    writes.clear();
  }
  static void addTo(std::vector<Access> &set, const Access &a) {
    if (a.buffer->scope == MemScope::Shared && !llvm::any_of(set, [&](const Access &p) { return sameAccess(p, a); }))
      set.push_back(a);
  }
  void add(const std::vector<Access> &r, const std::vector<Access> &w) {
    for (const Access &a : r)
      addTo(reads, a);
    for (const Access &a : w)
      addTo(writes, a);
  }
  void addAsync(const std::vector<const Buffer *> &buffers) {
    for (const Buffer *b : buffers)
      if (!llvm::is_contained(asyncReads, b))
        asyncReads.push_back(b);
  }
  void merge(const State &o) {
    add(o.reads, o.writes);
    addAsync(o.asyncReads);
  }
};

// The accesses of a unit before its first barrier (head) and after its last (tail).
struct Effect {
  std::vector<Access> headReads, headWrites, tailReads, tailWrites;
  std::vector<const Buffer *> asyncReads; // read by bulk stores in it (not waited for)
  bool barrier = false;
};

// (`writes`: false below a Stmt::writesRepeated, whose writes another statement makes again.)
void gather(const Stmt &s, Effect &e, bool writes = true) {
  if (s.kind == StmtKind::Barrier) {
    e.barrier = true;
    e.tailReads.clear();
    e.tailWrites.clear();
    return;
  }
  writes = writes && !s.writesRepeated;
  auto &r = e.barrier ? e.tailReads : e.headReads;
  auto &w = e.barrier ? e.tailWrites : e.headWrites;
  r.insert(r.end(), s.reads.begin(), s.reads.end());
  if (writes)
    w.insert(w.end(), s.writes.begin(), s.writes.end());
  if (s.asyncProxyRead)
    for (const Access &a : s.reads)
      if (a.buffer->scope == MemScope::Shared)
        e.asyncReads.push_back(a.buffer);
  for (const StmtList *l : {&s.body, &s.elseBody})
    for (const StmtPtr &c : *l)
      gather(*c, e, writes);
}

bool isShared(const Access &a) { return a.buffer->scope == MemScope::Shared; }

// The issuing thread's wait for its bulk stores' reads of shared memory.
StmtPtr makeStoreWait() {
  StmtPtr once = makeIf(kThreadIndex + " == 0", IfStyle::Braced, /*uniform=*/false);
  once->body.push_back(makeEval("tl::tma::store_wait_read()"));
  return once;
}

// The wait, then a barrier (from `line`, saying `why`), at `list[at]`.
void insertStoreWait(StmtList &list, size_t at, std::string why, unsigned line) {
  StmtPtr barrier = makeBarrier(std::move(why));
  barrier->line = line;
  list.insert(list.begin() + at, makeStoreWait());
  list.insert(list.begin() + at + 1, std::move(barrier));
}

bool touchesAny(const std::vector<Access> &set, const std::vector<const Buffer *> &buffers) {
  return llvm::any_of(set, [&](const Access &a) {
    return isShared(a) && llvm::any_of(buffers, [&](const Buffer *b) { return a.buffer->overlaps(*b); });
  });
}

// The kernel's own named barrier that `s` is or holds last in program order (barrier_wait or
// barrier_arrive, possibly under an if), or null.
const Stmt *lastNamedBarrier(const Stmt &s) {
  if (s.kind == StmtKind::NamedBarrier)
    return &s;
  const Stmt *last = nullptr;
  for (const StmtList *l : {&s.body, &s.elseBody})
    for (const StmtPtr &c : *l)
      if (const Stmt *n = lastNamedBarrier(*c))
        last = n;
  return last;
}

class SyncInsertion {
public:
  void walk(StmtList &list) {
    // A turn of the kernel's own named barriers in this list: from a barrier_wait to the next
    // barrier_arrive. Warpgroups that take turns (FlashAttention-3's ping-pong) are inside
    // theirs at different times, one waiting for the other's arrive, so a __syncthreads in a
    // turn deadlocks (one stage: the barrier before Q @ K^T's read of K_s, GPU run 170 and
    // the emulator). A barrier that a statement of the turn needs only for accesses made
    // before the turn goes before the turn's wait instead; one it needs for accesses made in
    // the turn is an error (`error`).
    struct Turn {
      size_t wait;  // index of the barrier_wait in `list`
      State inside; // the shared accesses made since
    };
    std::optional<Turn> turn;
    for (size_t i = 0; i < list.size(); ++i) {
      Stmt &s = *list[i];
      if (const Stmt *named = lastNamedBarrier(s)) {
        if (named->arriveOnly)
          turn.reset();
        else
          turn = Turn{i, State{}};
      }
      switch (s.kind) {
      case StmtKind::Barrier:
        state.clear();
        turn.reset();
        continue;
      case StmtKind::Seq:
      case StmtKind::Scope:
        walk(s.body);
        turn.reset(); // what it accessed is not in the turn's sets: no barrier moves across it
        continue;
      case StmtKind::If:
        if (s.uniform && !s.isConstexpr && !s.variants) {
          // Each branch starts from the state before the if; after it, either may have run.
          State entry = state;
          walk(s.body);
          State taken = state;
          state = entry;
          walk(s.elseBody);
          state.merge(taken);
          turn.reset();
          continue;
        }
        break;
      case StmtKind::For:
        if (s.role == ForRole::Tile) {
          // What the loop's first iteration does before its first barrier conflicts with what
          // is pending before the loop: the barrier goes before the loop, once, rather than
          // inside it, where every iteration would wait at it (a loop reading a tile written
          // just before it: the split-KV combine's weights, 16 barriers between its loads).
          // Unless the body needs a barrier on its back edge anyway: then one at the start of
          // the body serves both (below). Not inside a turn of the kernel's own named barriers
          // (the loop's barriers may be where the turn wants them).
          std::optional<size_t> hoisted;
          std::string entryWhy;
          State beforeLoop; // what was pending before the loop, where a barrier was hoisted
          if (!turn && !anyStmt(s.body, [](const Stmt &x) { return x.kind == StmtKind::NamedBarrier; })) {
            std::vector<Access> headReads, headWrites;
            headAccesses(s.body, headReads, headWrites);
            entryWhy = conflict(headReads, headWrites);
            if (!entryWhy.empty()) {
              StmtPtr barrier = makeBarrier(entryWhy);
              barrier->line = s.line;
              size_t at = i;
              while (at > 0 && list[at - 1]->kind == StmtKind::Comment) // above the loop's comment
                --at;
              list.insert(list.begin() + at, std::move(barrier));
              hoisted = at;
              ++i;
              beforeLoop = std::move(state);
              state.clear();
            }
          }
          turn.reset();
          State entry = state;
          walk(s.body);
          if (!state.asyncReads.empty()) {
            barrierBeforeNextConflict(s);
            state.merge(entry); // the loop may run no iteration
            continue;
          }
          // The next iteration may overwrite what this one still reads (or read what it
          // wrote). It does so before its first barrier only through the accesses the body
          // makes before that barrier (its head): a back-edge barrier where those conflict
          // with what is pending at the end of the body. Stages are not compared (their
          // offsets shift across the back edge); reads of buffers the loop never writes (a
          // warp-specialized consumer's tiles, written by bulk copies under an mbarrier
          // protocol) conflict with nothing.
          std::vector<Access> headReads, headWrites;
          headAccesses(s.body, headReads, headWrites);
          std::string why = backEdgeConflict(headReads, headWrites);
          if (!why.empty() && !barrierBeforeFirstConflict(s)) {
            if (hoisted) {
              // One barrier at the start of the body: iteration 0's wait for what precedes the
              // loop, and every other's for the previous iteration. What the last iteration
              // leaves stays pending after the loop, as does what preceded it if none ran.
              list.erase(list.begin() + ptrdiff_t(*hoisted));
              --i;
              s.body.insert(s.body.begin(), makeBarrier(entryWhy + "; loop back-edge: " + why + " after the previous iteration"));
              state.merge(beforeLoop);
              continue;
            }
            s.body.push_back(makeBarrier("loop back-edge: " + why + " in the next iteration"));
            state.clear();
          }
          state.merge(entry); // the loop may run no iteration
          continue;
        }
        break;
      default:
        break;
      }
      // A unit.
      Effect e;
      gather(s, e);
      std::string why = conflict(e.headReads, e.headWrites);
      if (touchesAny(e.headWrites, state.asyncReads) || touchesAny(e.tailWrites, state.asyncReads)) {
        // The bulk store's issuing thread waits for its reads, then the barrier.
        insertStoreWait(list, i, "'" + state.asyncReads[0]->sourceName + "' was read by a bulk store", s.line);
        i += 2;
        state.clear();
        state.asyncReads.clear();
      } else if (!why.empty()) {
        // From the line of the statement that needs it; before the turn's wait when the
        // conflict is with accesses made before it only.
        StmtPtr barrier = makeBarrier(why);
        barrier->line = s.line;
        size_t at = i;
        if (turn && arriveFollows(list, i)) {
          if (!conflictWith(turn->inside, e)) {
            at = turn->wait;
            while (at > 0 && list[at - 1]->kind == StmtKind::Comment) // above the wait's comment
              --at;
          } else if (error.empty()) {
            error = "line " + std::to_string(s.line) + " needs a __syncthreads (" + why +
                    ") between the barrier_wait of line " + std::to_string(list[turn->wait]->line) +
                    " and the barrier_arrive after it, where the warpgroups taking turns would wait for each other";
          }
        }
        list.insert(list.begin() + at, std::move(barrier));
        ++i;
        if (at != i - 1) {
          // Pending after the moved barrier: what the turn accessed (bulk stores' reads are
          // not ended by a barrier).
          std::vector<const Buffer *> async = std::move(state.asyncReads);
          state = turn->inside;
          state.asyncReads = std::move(async);
          turn->wait += 1;
        } else {
          state.clear();
          turn.reset();
        }
      }
      if (turn && turn->wait != i)
        turn->inside.add(e.headReads, e.headWrites);
      state.add(e.headReads, e.headWrites);
      if (e.barrier) {
        state.clear();
        state.add(e.tailReads, e.tailWrites);
        turn.reset();
      }
      state.addAsync(e.asyncReads);
    }
  }

  State state;
  std::string error; // the first barrier that only a deadlocking position could take

private:
  // Whether the next of the kernel's own named barriers from list[i] on is a barrier_arrive:
  // then list[i] is inside a turn that hands over after it (a turn that only ends the
  // kernel, as FlashAttention's last barrier_wait, holds no one up).
  static bool arriveFollows(const StmtList &list, size_t i) {
    for (; i < list.size(); ++i)
      if (const Stmt *named = lastNamedBarrier(*list[i]))
        return named->arriveOnly;
    return false;
  }

  // Whether unit `e`'s first accesses conflict with `pending`.
  bool conflictWith(const State &pending, const Effect &e) {
    State saved = std::move(state);
    state = pending;
    bool found = !conflict(e.headReads, e.headWrites).empty();
    state = std::move(saved);
    return found;
  }

  // Tile loop `loop`, whose next iteration conflicts with what is pending at the end of its
  // body (`state`): where statements on part of the block's threads (Stmt::threadSubset)
  // come before the first top-level statement of the body that conflicts, the barrier goes
  // before that statement instead of closing the body, so that they overlap the end of the
  // previous iteration in the other threads (one warpgroup's score gemm of step k + 1 while
  // the other still multiplies step k's probabilities: FlashMLA's schedule). Where every
  // thread runs the same statements the closing barrier stays (moving it gains nothing).
  // Iteration 0 passes the moved barrier too (harmless); what is pending at the end of the
  // body flows out of the loop. Not in a body with the kernel's own named barriers (a barrier
  // inside a turn would deadlock). False: the caller closes the body.
  bool barrierBeforeFirstConflict(Stmt &loop) {
    if (anyStmt(loop.body, [](const Stmt &s) { return s.kind == StmtKind::NamedBarrier; }))
      return false;
    bool subsetBefore = false;
    for (size_t j = 0; j < loop.body.size(); ++j) {
      const Stmt &c = *loop.body[j];
      const Summary &all = summaryOf(c);
      std::string why = backEdgeConflict(all.reads, all.writes);
      if (!why.empty()) {
        size_t at = j;
        while (at > 0 && loop.body[at - 1]->kind == StmtKind::Comment) // above the statement's comment
          --at;
        if (at == 0 || !subsetBefore)
          return false;
        StmtPtr barrier = makeBarrier("previous iteration: " + why);
        barrier->line = c.line;
        loop.body.insert(loop.body.begin() + at, std::move(barrier));
        return true;
      }
      Effect e;
      if (c.kind != StmtKind::For)
        gather(c, e);
      if (e.barrier)
        return false; // the head ends before any conflict (headAccesses found one: not here)
      subsetBefore = subsetBefore || anyStmt(c, [](const Stmt &s) { return s.threadSubset; });
    }
    return false;
  }

  // Tile loop `loop`, whose body ends with bulk stores still reading shared memory (`state`):
  // the wait and the barrier before the first statement of the body that conflicts with what
  // is pending at its end (top-level statements run on every thread), instead of a barrier
  // closing the body. Ordinary conflicts end at the first barrier of the body; the bulk
  // stores' reads, only at a wait. With no such statement, what is pending flows out of the
  // loop.
  void barrierBeforeNextConflict(Stmt &loop) {
    bool ordinary = true;
    for (size_t j = 0; j < loop.body.size(); ++j) {
      const Stmt &c = *loop.body[j];
      const Summary &all = summaryOf(c);
      bool async = touchesAny(all.writes, state.asyncReads);
      if (async || (ordinary && !backEdgeConflict(all.reads, all.writes).empty())) {
        const unsigned line = c.line;
        while (j > 0 && loop.body[j - 1]->kind == StmtKind::Comment) // above the statement's comment
          --j;
        insertStoreWait(loop.body, j,
                        "'" + state.asyncReads[0]->sourceName + "' of the previous iteration was read by a bulk store",
                        line);
        return;
      }
      // A barrier (or a unit holding one) ends the ordinary conflicts; a nested tile loop's
      // barriers count for nothing (it may run no iteration).
      Effect e;
      if (c.kind != StmtKind::For)
        gather(c, e);
      ordinary = ordinary && !e.barrier;
    }
  }

  // The accesses `body` may make before its first barrier, on any path; true when every path
  // reaches a barrier. A unit's barriers are unconditional; a nested tile loop may run no
  // iteration, so its barriers count for nothing and all its accesses are taken.
  bool headAccesses(const StmtList &body, std::vector<Access> &reads, std::vector<Access> &writes) {
    for (const StmtPtr &p : body) {
      const Stmt &s = *p;
      switch (s.kind) {
      case StmtKind::Barrier:
        return true;
      case StmtKind::Seq:
      case StmtKind::Scope:
        if (headAccesses(s.body, reads, writes))
          return true;
        continue;
      case StmtKind::If:
        // Either branch may be the one that runs (constexpr ones too, conservatively).
        if (s.uniform || s.isConstexpr || s.variants) {
          bool taken = headAccesses(s.body, reads, writes);
          if (headAccesses(s.elseBody, reads, writes) && taken)
            return true;
          continue;
        }
        break;
      case StmtKind::For:
        if (s.role == ForRole::Tile) {
          const Summary &all = summaryOf(s);
          reads.insert(reads.end(), all.reads.begin(), all.reads.end());
          writes.insert(writes.end(), all.writes.begin(), all.writes.end());
          continue;
        }
        break;
      default:
        break;
      }
      Effect e;
      gather(s, e);
      reads.insert(reads.end(), e.headReads.begin(), e.headReads.end());
      writes.insert(writes.end(), e.headWrites.begin(), e.headWrites.end());
      if (e.barrier)
        return true;
    }
    return false;
  }

  // The shared buffers a statement reads and writes anywhere in it, once each. Memoized: the
  // back-edge check of every enclosing loop asks it of the same nested loops (nested loops
  // stay linear in the statements, times the kernel's shared buffers).
  struct Summary {
    std::vector<Access> reads, writes;
  };
  const Summary &summaryOf(const Stmt &s) {
    if (auto it = summaries.find(&s); it != summaries.end())
      return it->second;
    Summary sum;
    auto addTo = [](std::vector<Access> &set, const Access &a) {
      if (isShared(a) && !llvm::any_of(set, [&](const Access &x) { return x.buffer == a.buffer; }))
        set.push_back(Access{a.buffer, std::nullopt});
    };
    for (const Access &a : s.reads)
      addTo(sum.reads, a);
    for (const Access &a : s.writes)
      addTo(sum.writes, a);
    for (const StmtList *l : {&s.body, &s.elseBody})
      for (const StmtPtr &c : *l) {
        const Summary &child = summaryOf(*c);
        for (const Access &a : child.reads)
          addTo(sum.reads, a);
        for (const Access &a : child.writes)
          addTo(sum.writes, a);
      }
    return summaries[&s] = std::move(sum);
  }

  // Why the next iteration's head (`reads`, `writes`) needs a barrier after what is pending
  // at the end of the body, or empty: shared bytes in common, whatever the stages.
  std::string backEdgeConflict(const std::vector<Access> &reads, const std::vector<Access> &writes) const {
    auto touching = [](const std::vector<Access> &set, const Access &a) {
      return llvm::any_of(set, [&](const Access &x) { return isShared(x) && x.buffer->overlaps(*a.buffer); });
    };
    for (const Access &p : state.writes)
      if (isShared(p) && (touching(reads, p) || touching(writes, p)))
        return "'" + p.buffer->sourceName + "' is read or written again";
    for (const Access &p : state.reads)
      if (isShared(p) && touching(writes, p))
        return "'" + p.buffer->sourceName + "' is written again";
    return "";
  }

  const Access *pendingAlias(const std::vector<Access> &pending, const Access &a) const {
    for (const Access &p : pending)
      if (p.mayAlias(a))
        return &p;
    return nullptr;
  }

  // Why a barrier must precede these accesses (the last conflict found), or empty.
  std::string conflict(const std::vector<Access> &reads, const std::vector<Access> &writes) const {
    std::string why;
    for (const Access &r : reads)
      if (isShared(r))
        if (const Access *p = pendingAlias(state.writes, r))
          why = "'" + p->buffer->sourceName + "' was written by other threads";
    for (const Access &w : writes)
      if (isShared(w)) {
        const Access *p = pendingAlias(state.reads, w);
        if (!p)
          p = pendingAlias(state.writes, w);
        if (p)
          why = "'" + p->buffer->sourceName + "' is still being read or written by other threads";
      }
    return why;
  }

  llvm::DenseMap<const Stmt *, Summary> summaries;
};

// The first __syncthreads in `s` (itself, or one a tile operator or a pipeline holds), or null.
const Stmt *firstBarrier(const Stmt &s) {
  if (s.kind == StmtKind::Barrier)
    return &s;
  for (const StmtList *l : {&s.body, &s.elseBody})
    for (const StmtPtr &c : *l)
      if (const Stmt *b = firstBarrier(*c))
        return b;
  return nullptr;
}

// A __syncthreads left inside a turn of the kernel's own named barriers (see walk()): one a
// tile operator holds (a reduction's scratch protocol), a pipeline's, one in a nested loop.
// Why, for the first one, or empty. Linear: each list's next named barrier is found in one
// backward pass.
std::string barrierInTurn(const StmtList &list) {
  std::vector<const Stmt *> nextNamed(list.size() + 1, nullptr);
  for (size_t i = list.size(); i-- > 0;) {
    const Stmt *named = lastNamedBarrier(*list[i]);
    nextNamed[i] = named ? named : nextNamed[i + 1];
  }
  const Stmt *wait = nullptr;
  for (size_t i = 0; i < list.size(); ++i) {
    const Stmt &s = *list[i];
    if (const Stmt *named = lastNamedBarrier(s))
      wait = named->arriveOnly ? nullptr : &s; // a statement holding the turn's ends is looked into below
    else if (wait && nextNamed[i] && nextNamed[i]->arriveOnly)
      if (const Stmt *b = firstBarrier(s))
        return "the __syncthreads of line " + std::to_string(b->line ? b->line : s.line) +
               " falls between the barrier_wait of line " + std::to_string(wait->line) +
               " and the barrier_arrive after it, where the warpgroups taking turns would wait for each other";
    for (const StmtList *l : {&s.body, &s.elseBody})
      if (std::string why = barrierInTurn(*l); !why.empty())
        return why;
  }
  return "";
}

// Test hook (tests/emulator): TLC_TEST_DROP_BARRIER=N removes the Nth __syncthreads() of
// the kernel body (0-based, program order, those SyncInsertion and PipelineExpansion placed),
// a deliberately missing barrier that the CPU emulator's randomized thread order must catch.
bool dropBarrier(StmtList &list, int &n) {
  for (size_t i = 0; i < list.size(); ++i) {
    Stmt &s = *list[i];
    if (s.kind == StmtKind::Barrier && n-- == 0) {
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
    if (dropBarrier(s.body, n) || dropBarrier(s.elseBody, n))
      return true;
  }
  return false;
}

} // namespace

std::string insertBarriers(Kernel &k) {
  std::string error;
  for (StmtList *body : {&k.body, &k.bulkBody}) {
    SyncInsertion pass;
    pass.walk(*body);
    if (!pass.state.asyncReads.empty())
      body->push_back(makeStoreWait()); // the block's shared memory outlives the stores' reads
    if (error.empty())
      error = pass.error;
    if (error.empty())
      error = barrierInTurn(*body);
  }
  if (const char *n = std::getenv("TLC_TEST_DROP_BARRIER")) {
    int index = std::atoi(n);
    dropBarrier(k.body, index);
  }
  return error;
}

} // namespace tlc::lower
