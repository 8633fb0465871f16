// WarpSpecialization, a pass over the loop IR of a kernel's warp-specialized variant (after
// SyncInsertion): the producer warpgroup leaves at the end of its branch, so every barrier
// after that branch in program order synchronizes the consumer threads only. They become
// a named barrier over the consumers (bar.sync id, T), whose id the plan chose clear of the
// kernel's own barrier_arrive/barrier_wait (infer/BulkPipelinePlan); id 0 stays
// __syncthreads, which the block's barriers before the branch (all threads present) keep using.
#include "lower/Lower.h"

namespace tlc::lower {

namespace {

struct Namer {
  int id = 1;
  int consumers = 0; // set once the producer branch has been passed

  void walk(StmtList &list) {
    for (StmtPtr &s : list) {
      if (s->kind == StmtKind::If && s->warpSpecialized) {
        consumers = int(s->count); // the threads below the branch's bound (`tid >= T`)
        continue;
      }
      if (s->kind == StmtKind::Barrier && consumers) {
        s->barrierThreads = consumers;
        s->barrierId = id;
      }
      walk(s->body);
      walk(s->elseBody);
    }
  }
};

} // namespace

void nameConsumerBarriers(Kernel &k) {
  Namer namer;
  namer.id = k.consumerBarrier;
  namer.walk(k.bulkBody);
}

} // namespace tlc::lower
