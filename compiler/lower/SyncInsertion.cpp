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
#include "lower/Lower.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

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
  void merge(const State &o) { add(o.reads, o.writes); }
};

// The accesses of a unit before its first barrier (head) and after its last (tail).
struct Effect {
  std::vector<Access> headReads, headWrites, tailReads, tailWrites;
  bool barrier = false;
};

void gather(const Stmt &s, Effect &e) {
  if (s.kind == StmtKind::Barrier) {
    e.barrier = true;
    e.tailReads.clear();
    e.tailWrites.clear();
    return;
  }
  auto &r = e.barrier ? e.tailReads : e.headReads;
  auto &w = e.barrier ? e.tailWrites : e.headWrites;
  r.insert(r.end(), s.reads.begin(), s.reads.end());
  w.insert(w.end(), s.writes.begin(), s.writes.end());
  for (const StmtList *l : {&s.body, &s.elseBody})
    for (const StmtPtr &c : *l)
      gather(*c, e);
}

bool isShared(const Access &a) { return a.buffer->scope == MemScope::Shared; }

class SyncInsertion {
public:
  void walk(StmtList &list) {
    for (size_t i = 0; i < list.size(); ++i) {
      Stmt &s = *list[i];
      switch (s.kind) {
      case StmtKind::Barrier:
        state.clear();
        continue;
      case StmtKind::Seq:
      case StmtKind::Scope:
        walk(s.body);
        continue;
      case StmtKind::If:
        if (s.uniform && !s.isConstexpr) {
          // Each branch starts from the state before the if; after it, either may have run.
          State entry = state;
          walk(s.body);
          State taken = state;
          state = entry;
          walk(s.elseBody);
          state.merge(taken);
          continue;
        }
        break;
      case StmtKind::For:
        if (s.role == ForRole::Tile) {
          State entry = state;
          // Only a barrier the body starts with by construction (a pipeline's) is known
          // before the walk. One this walk places at the top would serve as well, but would
          // drop a back-edge barrier from the output of 6b76e3e: left for a GPU-checked change.
          bool protocolBarrier = startsWithBarrier(s.body);
          walk(s.body);
          // The next iteration may overwrite what this one still reads (or read what it
          // wrote): pending writes, or pending reads of a buffer the body writes anywhere
          // (whatever the stage: the stage offsets shift across the back edge), get the
          // barrier. Reads of buffers the loop never writes (a warp-specialized consumer's
          // tiles, written by bulk copies under an mbarrier protocol) need none.
          if (!state.empty() && !protocolBarrier && (!state.writes.empty() || readsRewritten(s.body))) {
            s.body.push_back(makeBarrier("loop back-edge: shared buffers are reused by the next iteration"));
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
      if (!why.empty()) {
        // From the line of the statement that needs it.
        StmtPtr barrier = makeBarrier(why);
        barrier->line = s.line;
        list.insert(list.begin() + i, std::move(barrier));
        ++i;
        state.clear();
      }
      state.add(e.headReads, e.headWrites);
      if (e.barrier) {
        state.clear();
        state.add(e.tailReads, e.tailWrites);
      }
    }
  }

private:
  // Whether `s` touches shared memory or holds a barrier. Memoized: every enclosing loop's
  // back-edge check asks it of the same statements (nested loops stay linear).
  bool touchesShared(const Stmt &s) {
    auto [it, inserted] = touches.try_emplace(&s, false);
    if (!inserted)
      return it->second;
    bool result = s.kind == StmtKind::Barrier || llvm::any_of(s.reads, isShared) || llvm::any_of(s.writes, isShared);
    for (const StmtList *l : {&s.body, &s.elseBody})
      for (const StmtPtr &c : *l)
        result = touchesShared(*c) || result; // every child, so that each is memoized
    touches[&s] = result;
    return result;
  }

  // True when the loop body's first statement that touches shared memory or holds a barrier
  // is a barrier: the back edge needs none (a pipeline's steady state starts so).
  bool startsWithBarrier(const StmtList &body) {
    for (const StmtPtr &s : body)
      if (touchesShared(*s))
        return s->kind == StmtKind::Barrier;
    return false;
  }

  // Whether a statement of `body` writes a buffer with a pending read.
  bool readsRewritten(const StmtList &body) const {
    std::vector<Access> reads, writes;
    for (const StmtPtr &s : body)
      collectAccesses(*s, reads, writes);
    return llvm::any_of(state.reads, [&](const Access &r) {
      return llvm::any_of(writes, [&](const Access &w) { return w.buffer == r.buffer; });
    });
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

  State state;
  llvm::DenseMap<const Stmt *, bool> touches;
};

} // namespace

void insertBarriers(Kernel &k) {
  SyncInsertion().walk(k.body);
  SyncInsertion().walk(k.bulkBody);
}

} // namespace tlc::lower
