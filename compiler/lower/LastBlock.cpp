// `if last_block(counter, arrivals) { ... }` (docs/language.md 9.17): the branch runs in the
// block whose arrival on `counter` is the last of `arrivals`: the threadfence-reduction pattern
// of the CUDA samples and CUTLASS's split-K semaphore, written once here. Sema put it outside
// loops and under block-uniform conditions only, so the barriers below are reached by every
// thread of the block.
//
//   barrier                      every thread's global writes before the arrival are issued
//   arrived = tid == 0 && in_bounds && tl::arrive_last(&counter, arrivals)
//                                an increment that wraps to 0 on the last arrival, with release
//                                and acquire semantics (atom.acq_rel.gpu; fences around atomicInc
//                                where that does not exist): the other blocks' writes before
//                                their arrivals are visible to this block (PTX memory model: a
//                                release by one thread is cumulative over what the barrier
//                                ordered before it)
//   last = barrier OR arrived    one barrier that also votes (bar.red.or / __syncthreads_or;
//                                on AMD thread 0 writes a word of the scratch, a barrier, every
//                                thread reads it, a barrier)
//   if (last) { branch } else { else branch }
//
// The barriers are ordinary Barrier statements, so that in a warp-specialized kernel they
// become the consumers' named barrier (nameConsumerBarriers) like every barrier after the
// producer's branch. A counter index outside its tensor is no arrival (the branch is not taken).
#include "lower/KernelLowering.h"

#include "ir/AccessAnalysis.h"
#include "target/TargetInfo.h"

namespace tlc::lower {

using llvm::cast;

void KernelLowering::lowerLastBlock(const ftg::Node &n) {
  const auto *s = cast<IfStmt>(n.stmt);
  const auto *call = cast<CallExpr>(s->cond);
  const Expr *arrivalsExpr = call->positional()[1];
  const IndexExpr *ix = s->lastBlockCounter();
  const ftg::Buffer *counter = g.bufferOf(ix->base->decl);
  if (g.persistent) {
    // Each tile of a persistent kernel would arrive in turn; the tile loop's barriers and the
    // warp-specialized variant's rings have not been reasoned about with it.
    unsupported(call->getRange(), "last_block in a persistent() kernel");
    return;
  }
  // The counter is the construct's alone: any other access would break its count, or read a
  // count that is mid-way. Leaf nodes by their access sets; loops and branches by what they
  // evaluate themselves (their bodies' nodes come in turn).
  const tlc::Stmt *other = nullptr;
  g.walk([&](const ftg::Node &m) {
    if (other || &m == &n)
      return;
    std::vector<const Expr *> own;
    if (m.kind == ftg::NodeKind::If) {
      own.push_back(cast<IfStmt>(m.stmt)->cond);
    } else if (m.kind == ftg::NodeKind::Loop) {
      own.assign(m.loop->extents.begin(), m.loop->extents.end());
      own.push_back(m.loop->start);
    } else if (llvm::is_contained(m.reads, counter) || llvm::is_contained(m.writes, counter)) {
      other = m.stmt;
      return;
    }
    for (const Expr *e : own)
      ftg::forEachRead(e, [&](const Decl *d) {
        if (d == ix->base->decl)
          other = m.stmt;
      });
  });
  if (other) {
    diags.error(other->getRange(), "'" + ix->base->name + "' is last_block's counter and may not be used elsewhere")
        .note(ix->getRange(), "it counts the arrivals of this last_block")
        .hint("give last_block a tensor of its own, zero-filled by the caller");
    ok = false;
    return;
  }
  sourceComment(n, "last_block: the last of the blocks that arrive on " + ix->base->name + " takes the branch");
  std::vector<std::string> idx;
  std::string arrivals;
  auto reads = readsOf([&] {
    for (const IndexItem &i : ix->indices)
      idx.push_back(expr(i.lo));
    arrivals = expr(arrivalsExpr);
  });
  std::string inBounds;
  for (size_t d = 0; d < idx.size(); ++d)
    inBounds += (provablyNonNegative(ix->indices[d].lo) ? "" : " && (" + idx[d] + ") >= 0") + " && (" + idx[d] +
                ") < " + dimExpr(*counter, d);
  const std::string arrived = fresh("arriveslast"), last = fresh("lastblock");
  add(makeBarrier("last_block: the block's writes before its arrival are done"));
  accessing(add(makeLet("const bool", arrived,
                        kThreadIndex + " == 0" + inBounds + " && tl::arrive_last(&" + elementAt(*this, *counter, idx) +
                            ", " + arrivals + ")",
                        /*maybeUnused=*/false)),
            reads, {access(counter)});
  if (g.target->vendor() == target::Vendor::Amd) {
    // No barrier reduces on gfx9 (HIP's __syncthreads_or does not compile for it with
    // Debian's hipcc): the outcome goes through a word of the scratch area (SharedMemoryPlanner
    // reserves it), under barriers of its own, one unit for SyncInsertion.
    StmtPtr unit = std::make_unique<Stmt>(StmtKind::TileOp);
    unit->text = "last_block";
    StmtPtr once = makeIf(kThreadIndex + " == 0", IfStyle::SameLine, /*uniform=*/false);
    once->body.push_back(makeStore("tl_reduce_scratch[0]", arrived + " ? 1.0f : 0.0f"));
    unit->body.push_back(std::move(once));
    unit->body.push_back(makeBarrier("last_block: whether this block arrived last is in the scratch"));
    unit->body.push_back(makeLet("const bool", last, "tl_reduce_scratch[0] != 0.0f", /*maybeUnused=*/false));
    unit->body.push_back(makeBarrier("last_block: the scratch area may be reused"));
    add(std::move(unit));
  } else {
    Stmt &vote = add(makeBarrier("last_block: whether this block arrived last, in every thread"));
    vote.name = last;
    vote.value = arrived;
  }
  Stmt &branch = add(makeIf(last, IfStyle::Braced, /*uniform=*/true));
  within(branch.body, [&] { lowerNodes(n.body); });
  within(branch.elseBody, [&] { lowerNodes(n.elseBody); });
}

} // namespace tlc::lower
