// PipelineExpansion: a pipelined loop whose producer copies (global -> shared, planned by
// infer/PipelinePlanner) prefetch S - 1 iterations ahead into S rotating stages of their
// shared buffers, expanded into
//
//   prologue      for s < S - 1: issue the copies of iteration s into stage s; commit
//   steady state  for k: wait until the group of iteration k landed (at most S - 2 groups in
//                 flight), barrier, issue iteration k + S - 1 into stage (k + S - 1) % S,
//                 commit, run the consumers on stage k % S
//   epilogue      wait for every group (the last ones are empty)
//
// with async-copy groups (cp.async commit/wait, the sm_80 pipeline style). The consumers'
// accesses carry their stage (StageRef), so that SyncInsertion sees that the prefetch into
// stage (k + S - 1) % S and the reads of stage k % S touch different bytes.
#include "lower/KernelLowering.h"

namespace tlc::lower {

namespace {

// The decisions of one expansion.
struct PipelineSchedule {
  int stages;
  int prologue() const { return stages - 1; }  // iterations issued before the steady loop
  int distance() const { return stages - 1; }  // how far ahead the steady loop prefetches
  // Groups still in flight when iteration k's must have landed: those of k + 1 .. k + S - 2.
  int waitDepth() const { return stages - 2; }
};

} // namespace

void KernelLowering::expandPipeline(const ftg::Node &n) {
  const ForStmt *f = n.loop;
  llvm::StringRef userVar = f->vars[0]->getName();
  std::string var = cppName(userVar);
  std::vector<const ftg::Node *> producers;
  for (auto &c : n.body)
    if (c->producer)
      producers.push_back(c.get());
  if (producers.empty() || n.stages < 2)
    return lowerLoop(n);
  PipelineSchedule plan{n.stages};
  const std::string S = std::to_string(plan.stages);

  nonNegativeVars.insert(f->vars[0]); // counts up from 0
  const std::string count = generatedName(userVar + "_count"), stage = generatedName("stage"),
                    next = generatedName("next");
  add(makeComment("pipelined loop over " + userVar.str() + ": " + std::to_string(producers.size()) +
                  " copies prefetched " + std::to_string(plan.distance()) + " iteration(s) ahead into " + S +
                  " rotating shared buffers"));
  // Issues the producers of iteration `iter` into stage `index` (= (stageVar + offset) % S).
  auto issue = [&](const std::string &iter, const std::string &index, const std::string &stageVar,
                   int64_t offset) {
    add(makeLet("const int", var, iter)); // copies may not use it
    // The lets the copies' addresses use, recomputed for the prefetched iteration; their
    // access sets are those of their nodes.
    for (const LetStmt *let : n.prefetchLets) {
      const ftg::Node *letNode = nullptr;
      for (auto &c : n.body)
        if (c->stmt == let)
          letNode = c.get();
      if (letNode)
        tileOp(*letNode, [&] { scalarStmt(let); });
      else
        scalarStmt(let);
    }
    for (const ftg::Node *p : producers) {
      stageOf[p->outputs[0].buffer] = {index, {stageVar, offset, plan.stages}};
      copy(*p, /*prefetch=*/true);
    }
  };
  scope([&] {
    add(makeLet("const int", count, expr(f->extents[0]), /*maybeUnused=*/false));
    nest(makeFor(ForRole::Stages, stage, "0", std::to_string(plan.prologue()), "", 0), [&] {
      nest(makeIf(stage + " < " + count), [&] { issue(stage, stage, stage, 0); });
      add(std::make_unique<Stmt>(StmtKind::AsyncCommit));
    });

    nest(makeFor(ForRole::Tile, var, "0", count), [&] {
      Stmt &wait = add(std::make_unique<Stmt>(StmtKind::AsyncWait));
      wait.count = plan.waitDepth();
      // Part of the protocol, not derived from access sets: the wait covers this thread's
      // copies only, the barrier everyone's; and every thread is done with the stage the
      // prefetch below overwrites (read in iteration k - 1).
      add(makeBarrier("stage " + userVar.str() + " % " + S + " has landed; stage (" + userVar.str() +
                      " - 1) % " + S + " is free again"));
      scope([&] {
        add(makeLet("const int", next, var + " + " + std::to_string(plan.distance()), false));
        nest(makeIf(next + " < " + count),
             [&] { issue(next, "(" + next + " % " + S + ")", var, plan.distance()); });
        add(std::make_unique<Stmt>(StmtKind::AsyncCommit));
      });
      for (const ftg::Node *p : producers)
        stageOf[p->outputs[0].buffer] = {"(" + var + " % " + S + ")", {var, 0, plan.stages}};
      for (auto &c : n.body)
        if (!c->producer)
          lowerNode(*c);
    });
    Stmt &drain = add(std::make_unique<Stmt>(StmtKind::AsyncWait));
    drain.count = 0;
    for (const ftg::Node *p : producers)
      stageOf.erase(p->outputs[0].buffer);
  });
}

} // namespace tlc::lower
