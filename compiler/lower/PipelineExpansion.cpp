// PipelineExpansion, a pass over the loop IR: a pipelined loop whose producer copies
// (global -> shared, planned by infer/PipelinePlanner) prefetch S - 1 iterations ahead into
// S rotating stages of their shared buffers (a Pipeline statement, lower/LoopIR.h) becomes
//
//   prologue      for s < S - 1: issue the copies of iteration s into stage s; commit
//   steady state  for k: wait until the group of iteration k landed (at most S - 2 groups in
//                 flight), barrier, issue iteration k + S - 1 into stage (k + S - 1) % S,
//                 commit, run the consumers on stage k % S
//   epilogue      wait for every group (the last ones are empty); drain what consumers left
//                 in flight
//
// (one iteration less ahead when a consumer leaves its wgmma group in flight: PipelineSchedule)
//
// with async-copy groups (cp.async commit/wait), the expansion of the AsyncGroups style; the
// kernel carries its target's style (target/PipelineStyle.h), and the mbarrier + bulk-copy
// style (Hopper) and the register-staged style (AMD) get their expansions here. The pass fills in the stage index of every access in
// text and as a StageRef, so that SyncInsertion sees that the prefetch into stage
// (k + S - 1) % S and the reads of stage k % S touch different bytes.
#include "lower/Lower.h"
#include "lower/Naming.h"

namespace tlc::lower {

namespace {

// The decisions of one expansion. The steady loop prefetches S - 1 iterations ahead, into the
// stage iteration k - 1 read; when a consumer leaves an asynchronous group (wgmma) reading
// stage k % S in flight into iteration k + 1, only S - 2 ahead, into the stage of k - 2, whose
// group every thread has waited for before iteration k + 1's barrier.
struct PipelineSchedule {
  int stages;
  bool consumersInFlight;
  int distance() const { return stages - 1 - (consumersInFlight ? 1 : 0); }
  int prologue() const { return distance(); } // iterations issued before the steady loop
  // Copy groups still in flight when iteration k's must have landed: those of k + 1 ..
  // k + distance - 1.
  int waitDepth() const { return distance() - 1; }
};

void replaceAll(std::string &s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// Puts stage `index` (C++) = (var + offset) % S where `slot` stands in `s` and below.
void fillSlot(Stmt &s, const std::string &slot, const std::string &index, const StageRef &ref) {
  forEachText(s, [&](std::string &t) {
    if (t.find('\x01') != std::string::npos)
      replaceAll(t, slot, index);
  });
  for (auto *set : {&s.reads, &s.writes})
    for (Access &a : *set)
      if (a.stage && a.stage->var == slot)
        a.stage = ref;
  for (StmtList *l : {&s.body, &s.elseBody})
    for (StmtPtr &c : *l)
      fillSlot(*c, slot, index, ref);
}

StmtPtr waitFor(int groups) {
  auto s = std::make_unique<Stmt>(StmtKind::AsyncWait);
  s->count = groups;
  return s;
}

// The statements that replace pipeline `p`.
StmtList expand(Stmt &p) {
  PipelineSchedule plan{int(p.count), p.inFlight};
  const std::string S = std::to_string(plan.stages), &var = p.var, &user = p.text;
  const std::string count = generatedName(user + "_count"), stage = generatedName("stage"),
                    next = generatedName("next");
  StmtList &issueFirst = p.body[0]->body, &issueNext = p.body[1]->body, &consumers = p.body[2]->body,
           &after = p.body[3]->body;
  size_t producers = 0;
  for (const StmtPtr &s : issueFirst)
    producers += s->kind == StmtKind::TileOp && !s->writes.empty() && s->writes[0].stage;

  StmtList out;
  out.push_back(makeComment("pipelined loop over " + user + ": " + std::to_string(producers) +
                            " copies prefetched " + std::to_string(plan.distance()) + " iteration(s) ahead into " +
                            S + " rotating shared buffers"));
  auto scope = std::make_unique<Stmt>(StmtKind::Scope);
  scope->body.push_back(makeLet("const int", count, p.hi, /*maybeUnused=*/false));
  // The copies of iteration `iter` into stage `index`; the loop variable is there for the
  // lets the addresses use.
  auto issue = [&](StmtList &copies, const std::string &slot, const std::string &iter, const std::string &index,
                   const StageRef &ref) {
    StmtPtr guard = makeIf(iter + " < " + count);
    guard->body.push_back(makeLet("const int", var, iter));
    for (StmtPtr &c : copies) {
      fillSlot(*c, slot, index, ref);
      guard->body.push_back(std::move(c));
    }
    return guard;
  };

  StmtPtr prologue = makeFor(ForRole::Stages, stage, "0", std::to_string(plan.prologue()), "", 0);
  prologue->body.push_back(issue(issueFirst, p.slots[0], stage, stage, {stage, 0, plan.stages}));
  prologue->body.push_back(std::make_unique<Stmt>(StmtKind::AsyncCommit));
  scope->body.push_back(std::move(prologue));

  StmtPtr steady = makeFor(ForRole::Tile, var, "0", count);
  steady->body.push_back(waitFor(plan.waitDepth()));
  // Part of the protocol, not derived from access sets: the wait covers this thread's copies
  // only, the barrier everyone's; and every thread is done with the stage the prefetch below
  // overwrites (read in iteration k - 1, or k - 2 when a wgmma group of k - 1 is in flight).
  std::string freed = std::to_string(plan.stages - plan.distance());
  steady->body.push_back(makeBarrier("stage " + user + " % " + S + " has landed; stage (" + user + " - " + freed +
                                     ") % " + S + " is free again"));
  auto prefetch = std::make_unique<Stmt>(StmtKind::Scope);
  prefetch->body.push_back(makeLet("const int", next, var + " + " + std::to_string(plan.distance()), false));
  prefetch->body.push_back(
      issue(issueNext, p.slots[1], next, "(" + next + " % " + S + ")", {var, plan.distance(), plan.stages}));
  prefetch->body.push_back(std::make_unique<Stmt>(StmtKind::AsyncCommit));
  steady->body.push_back(std::move(prefetch));
  for (StmtPtr &c : consumers) {
    fillSlot(*c, p.slots[2], "(" + var + " % " + S + ")", {var, 0, plan.stages});
    steady->body.push_back(std::move(c));
  }
  scope->body.push_back(std::move(steady));
  scope->body.push_back(waitFor(0));
  for (StmtPtr &s : after)
    scope->body.push_back(std::move(s));
  out.push_back(std::move(scope));
  return out;
}

void expandIn(StmtList &list) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i]->kind == StmtKind::Pipeline) {
      StmtList expanded = expand(*list[i]);
      list.erase(list.begin() + i);
      list.insert(list.begin() + i, std::make_move_iterator(expanded.begin()),
                  std::make_move_iterator(expanded.end()));
    }
    // Also into what was just expanded: the consumers may hold pipelines of their own.
    expandIn(list[i]->body);
    expandIn(list[i]->elseBody);
  }
}

} // namespace

void expandPipelines(Kernel &k) {
  switch (k.pipelineStyle) {
  case target::PipelineStyle::AsyncGroups:
    return expandIn(k.body);
  case target::PipelineStyle::MbarrierBulk:
  case target::PipelineStyle::RegisterStaged:
    // The lowering refuses pipelined loops on these targets until their expansions exist
    // (KernelLowering::lowerPipelined), so no Pipeline statement reaches here.
    return;
  }
}

} // namespace tlc::lower
