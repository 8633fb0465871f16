// ProxyFences, a pass over the loop IR after SyncInsertion. wgmma reads its shared operands
// through the async proxy (and so do bulk tensor stores their shared tile), while ordinary stores and cp.async write through the generic
// proxy; another thread's write becomes visible to a wgmma only when the writer orders it
// with fence.proxy.async before the barrier that hands it over (PTX ISA, "Proxies" and
// "wgmma.mma_async": operands in shared memory). Barriers are exactly where a block's writes
// are handed over, so in a kernel that issues wgmma every barrier gets the fence; it costs
// little beside the barrier itself and needs no reasoning about which write feeds which read.
#include "lower/Lower.h"

#include "llvm/ADT/STLExtras.h"

namespace tlc::lower {

namespace {

bool issuesAsyncProxyReads(const StmtList &list) {
  return llvm::any_of(list, [](const StmtPtr &s) {
    return (s->kind == StmtKind::Mma && s->warpgroup) || s->asyncProxyRead || issuesAsyncProxyReads(s->body) ||
           issuesAsyncProxyReads(s->elseBody);
  });
}

void fenceBarriers(StmtList &list) {
  for (StmtPtr &s : list) {
    if (s->kind == StmtKind::Barrier)
      s->proxyFence = true;
    fenceBarriers(s->body);
    fenceBarriers(s->elseBody);
  }
}

} // namespace

void insertProxyFences(Kernel &k) {
  for (StmtList *body : {&k.body, &k.bulkBody})
    if (issuesAsyncProxyReads(*body))
      fenceBarriers(*body);
}

} // namespace tlc::lower
