// WarpSpecialization, a pass over the loop IR of a kernel's warp-specialized variant (after
// SyncInsertion): the producer warpgroup leaves at the end of its branch, so every barrier
// after that branch in program order synchronizes the consumer threads only. They become
// named barrier 1 over the consumers (bar.sync 1, T); id 0 stays __syncthreads, which the
// block's barriers before the branch (all threads present) keep using.
#include "lower/Lower.h"

namespace tlc::lower {

namespace {

struct Namer {
  int consumers = 0; // set once the producer branch has been passed

  void walk(StmtList &list) {
    for (StmtPtr &s : list) {
      if (s->kind == StmtKind::If && s->warpSpecialized) {
        consumers = int(s->count); // the threads below the branch's bound (`tid >= T`)
        continue;
      }
      if (s->kind == StmtKind::Barrier && consumers)
        s->barrierThreads = consumers;
      walk(s->body);
      walk(s->elseBody);
    }
  }
};

} // namespace

void nameConsumerBarriers(Kernel &k) { Namer().walk(k.bulkBody); }

} // namespace tlc::lower
