// barrier_arrive and barrier_wait: the kernel's own named barriers (bar.arrive / bar.sync),
// for schedules the compiler does not infer, such as FlashAttention-3's ping-pong, where each
// consumer warpgroup waits for its turn on the tensor cores and then hands it to the other.
// A barrier completes when every thread of the kernel (its `threads(...)`; in a
// warp-specialized variant, the consumers) has arrived, each warp counting whole. The id may
// differ between warpgroups (`1 + warpgroup_id()`); Sema checked that it lies in 1..15 in
// each, and the consumers' own barrier takes an id none of them uses
// (infer/BulkPipelinePlan). No access sets: the compiler does not rely on them to order its
// own accesses, so it places its barriers as if they were not there.
#include "ops/Arguments.h"

#include "frontend/AST.h"
#include "ir/TileOp.h"
#include "target/TargetInfo.h"
#include "lower/KernelLowering.h"

namespace tlc::ops {

using namespace lower;
using ftg::Node;

namespace {

class BarrierOp : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::Barrier; }
  bool buildsFrom(Builtin b) const override { return b == Builtin::BarrierArrive || b == Builtin::BarrierWait; }
  void build(Node &, const CallExpr &, ftg::NodeBuilder &) const override {}

  std::string describe(const Node &n) const override { return toSource(n.call); }

  void lower(const Node &n, KernelLowering &L) const override {
    // Named barriers (bar.sync / bar.arrive with an id and a count) are a target capability
    // (target::BarrierKind::NamedBarrier); some targets have only the block's barrier. Checked
    // here, where only code that runs is lowered (a ping-pong under a knob that is false
    // compiles for every target).
    const target::TargetInfo &t = *L.g.target;
    if (!t.hasBarrier(target::BarrierKind::NamedBarrier)) {
      L.diags
          .error(n.call->getRange(), std::string(n.call->builtin == Builtin::BarrierArrive ? "barrier_arrive"
                                                                                           : "barrier_wait") +
                                         ": " + t.name().str() + " has no named barriers (only the whole block's s_barrier)")
          .hint("keep named-barrier schedules (ping-pong) to the targets that have named barriers, e.g. under a "
                "knob that is false elsewhere");
      L.ok = false;
      return;
    }
    auto s = std::make_unique<lower::Stmt>(StmtKind::NamedBarrier);
    s->arriveOnly = n.call->builtin == Builtin::BarrierArrive;
    s->value = L.expr(argument(*n.call, 0, "id"));
    s->barrierThreads = int(L.g.threads);
    s->text = s->arriveOnly ? "arrive and go on" : "arrive, then wait for the kernel's other threads";
    L.add(std::move(s));
  }
};

const BarrierOp barrierOp;
const bool registered = ftg::registerTileOp(barrierOp);

} // namespace

} // namespace tlc::ops
