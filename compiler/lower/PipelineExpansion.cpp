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
// kernel carries its target's style (target/PipelineStyle.h); the mbarrier + bulk-copy
// style (Hopper) and the register-staged style (AMD) have their expansions here too. The pass fills in the stage index of every access in
// text and as a StageRef, so that SyncInsertion sees that the prefetch into stage
// (k + S - 1) % S and the reads of stage k % S touch different bytes.
#include "lower/BulkExpansion.h"
#include "lower/Lower.h"
#include "lower/Naming.h"

#include <functional>

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
  // Copies into a stage, some under the `if` they stand under in the loop.
  std::function<size_t(const StmtList &)> countProducers = [&](const StmtList &l) {
    size_t n = 0;
    for (const StmtPtr &s : l)
      n += s->kind == StmtKind::TileOp ? size_t(!s->writes.empty() && s->writes[0].stage)
                                       : countProducers(s->body) + countProducers(s->elseBody);
    return n;
  };
  size_t producers = countProducers(issueFirst);

  // Element copies staged through registers (KernelLowering::stagedThroughRegisters): their
  // stores, after the consumers, and the arrays.
  StmtList none, &stores = p.body.size() > 4 ? p.body[4]->body : none, &arrays = p.body.size() > 5 ? p.body[5]->body : none;

  StmtList out;
  out.push_back(makeComment("pipelined loop over " + user + ": " + std::to_string(producers) +
                            " copies prefetched " + std::to_string(plan.distance()) + " iteration(s) ahead into " +
                            S + " rotating shared buffers" +
                            (arrays.empty() ? "" : ", " + std::to_string(arrays.size()) +
                                                       " of them element by element through registers")));
  auto scope = std::make_unique<Stmt>(StmtKind::Scope);
  scope->body.push_back(makeLet("const int", count, p.hi, /*maybeUnused=*/false));
  for (StmtPtr &a : arrays)
    scope->body.push_back(std::move(a));
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
  // `next` is the prefetch's alone, but for the stores after the consumers.
  StmtPtr nextLet = makeLet("const int", next, var + " + " + std::to_string(plan.distance()), false);
  const StageRef nextStage{var, plan.distance(), plan.stages};
  auto prefetch = std::make_unique<Stmt>(StmtKind::Scope);
  (stores.empty() ? prefetch->body : steady->body).push_back(std::move(nextLet));
  prefetch->body.push_back(issue(issueNext, p.slots[1], next, "(" + next + " % " + S + ")", nextStage));
  prefetch->body.push_back(std::make_unique<Stmt>(StmtKind::AsyncCommit));
  steady->body.push_back(std::move(prefetch));
  for (StmtPtr &c : consumers) {
    fillSlot(*c, p.slots[2], "(" + var + " % " + S + ")", {var, 0, plan.stages});
    steady->body.push_back(std::move(c));
  }
  if (!stores.empty()) {
    // Stage (k + distance) % S is free since this iteration's barrier, and the barrier of
    // iteration k + 1 hands these stores over before iteration k + distance reads them.
    steady->body.push_back(makeComment("store the element copies' registers into stage (" + user + " + " +
                                       std::to_string(plan.distance()) + ") % " + S));
    steady->body.push_back(issue(stores, p.slots[1], next, "(" + next + " % " + S + ")", nextStage));
  }
  scope->body.push_back(std::move(steady));
  scope->body.push_back(waitFor(0));
  for (StmtPtr &s : after)
    scope->body.push_back(std::move(s));
  out.push_back(std::move(scope));
  return out;
}

// The register-staged expansion (gfx9: no asynchronous copy into LDS), double-buffered as
// rocWMMA's and Composable Kernel's GEMMs are:
//
//   prologue      load iteration 0's tiles into registers, store them into buffer 0; barrier
//   steady state  for k: load iteration k + 1's tiles into registers (the global loads are in
//                 flight while the consumers run), run the consumers on buffer k % 2, store
//                 the registers into buffer (k + 1) % 2, barrier
//
// One barrier per iteration does both jobs: after it, buffer (k + 1) % 2 holds iteration
// k + 1's tiles for every thread, and every thread is done reading buffer k % 2, which the
// stores of iteration k + 1 overwrite.
StmtList expandRegisterStaged(Stmt &p) {
  const int S = int(p.count);
  const std::string St = std::to_string(S), &var = p.var, &user = p.text;
  const std::string count = generatedName(user + "_count"), next = generatedName("next");
  StmtList &prologueCopies = p.body[0]->body, &loads = p.body[1]->body, &consumers = p.body[2]->body,
           &after = p.body[3]->body, &stores = p.body[4]->body, &arrays = p.body[5]->body;
  StmtList out;
  out.push_back(makeComment("pipelined loop over " + user + ": " + std::to_string(arrays.size()) +
                            " copies staged through registers (global -> registers -> LDS) one iteration "
                            "ahead, into " + St + " LDS buffers"));
  auto scope = std::make_unique<Stmt>(StmtKind::Scope);
  scope->body.push_back(makeLet("const int", count, p.hi, /*maybeUnused=*/false));
  for (StmtPtr &a : arrays)
    scope->body.push_back(std::move(a));
  // The statements of iteration `iter` under `if (iter < count)`, the loop variable bound to it.
  auto guarded = [&](StmtList &list, const std::string &iter) {
    StmtPtr guard = makeIf(iter + " < " + count);
    guard->body.push_back(makeLet("const int", var, iter));
    for (StmtPtr &c : list)
      guard->body.push_back(std::move(c));
    return guard;
  };
  for (StmtPtr &c : prologueCopies)
    fillSlot(*c, p.slots[0], "0", {"0", 0, S});
  scope->body.push_back(guarded(prologueCopies, "0"));
  scope->body.push_back(makeBarrier("buffer 0 holds the tiles of " + user + " = 0"));

  StmtPtr steady = makeFor(ForRole::Tile, var, "0", count);
  steady->body.push_back(makeLet("const int", next, var + " + 1", false));
  steady->body.push_back(makeComment("load the tiles of " + user + " + 1 into registers: in flight while the "
                                     "consumers run"));
  steady->body.push_back(guarded(loads, next));
  for (StmtPtr &c : consumers) {
    fillSlot(*c, p.slots[2], "(" + var + " % " + St + ")", {var, 0, S});
    steady->body.push_back(std::move(c));
  }
  steady->body.push_back(makeComment("store them into the other buffer"));
  for (StmtPtr &c : stores)
    fillSlot(*c, p.slots[1], "(" + next + " % " + St + ")", {var, 1, S});
  steady->body.push_back(guarded(stores, next));
  steady->body.push_back(makeBarrier("buffer (" + user + " + 1) % " + St + " holds the tiles of " + user +
                                     " + 1; every thread is done with buffer " + user + " % " + St));
  scope->body.push_back(std::move(steady));
  for (StmtPtr &s : after)
    scope->body.push_back(std::move(s));
  out.push_back(std::move(scope));
  return out;
}

} // namespace

// The warp-specialized expansion (the mbarrier + bulk-copy style, lower/BulkPipeline.cpp):
//
//   rings       full[S] (one arrival: the producer's expect_tx) and empty[S] (one arrival per
//               consumer), initialized by thread 0 before a block barrier
//   producer    the warpgroup after the consumers; one thread, for every k: wait until stage
//               k % S is free (empty, the opposite parity: a fresh stage is free), announce
//               the bytes on full, issue the bulk copies; then the warpgroup leaves
//   consumers   for every k: wait for full[k % S], run the consumers on stage k % S, release
//               the stage (the previous one when a wgmma group is left in flight)
//
// A producer warpgroup gives registers to the consumers (the counts lower/BulkPipeline chose).
// In a persistent kernel the rings run on over the tiles a block visits: iteration k of a
// tile is iteration `ring + k` of the rings, where `ring` counts the iterations of the
// block's earlier tiles (PersistentTiles), so the producer fills stages for the next tile
// while the consumers finish the last one.

BulkParts expandBulkParts(Stmt &p, const std::string &tid, const std::string &ring, const std::string &tilePhase) {
  const int S = int(p.count), T = p.consumers;
  const std::string St = std::to_string(S), &var = p.var, &user = p.text;
  const std::string count = generatedName(user + "_count"), full = fullBarrierRing(),
                    empty = generatedName("empty");
  StmtList &issue = p.body[0]->body, &consumers = p.body[2]->body, &after = p.body[3]->body;
  BulkParts r;
  r.comment = makeComment("pipelined loop over " + user + ", warp-specialized: a producer " +
                          (p.producers >= 128 ? "warpgroup" : "warp") + " (threads " + std::to_string(T) + ".." +
                          std::to_string(T + p.producers - 1) + ") issues the bulk copies of each iteration into " +
                          St + " rotating stages; the other threads consume");
  r.count = makeLet("const int", count, p.hi, /*maybeUnused=*/false);
  r.rings = std::make_unique<Stmt>(StmtKind::Seq);
  StmtList &rings = r.rings->body;
  rings.push_back(makeLet("std::uint64_t* const", full,
                          "reinterpret_cast<std::uint64_t*>(tl_smem + " + std::to_string(p.barrierOffset) + ")", false));
  rings.push_back(makeLet("std::uint64_t* const", empty, full + " + " + St, false));
  // Lead copies: one barrier they complete on; in a persistent kernel (`ring`) also one the
  // consumers release the lead tiles on, since each tile reloads them.
  const std::string lead = leadBarrier(), leadFree = generatedName("lead_free");
  const bool perTile = p.leads && !ring.empty();
  if (p.leads)
    rings.push_back(makeLet("std::uint64_t* const", lead, empty + " + " + St, false));
  if (perTile)
    rings.push_back(makeLet("std::uint64_t* const", leadFree, lead + " + 1", false));
  StmtPtr init = makeIf(tid + " == 0", IfStyle::Braced, /*uniform=*/false);
  const std::string slot = generatedName("s");
  StmtPtr initLoop = makeFor(ForRole::Stages, slot, "0", St, "", 0);
  initLoop->body.push_back(makeEval("tl::mbarrier::init(" + full + " + " + slot + ", 1)"));
  initLoop->body.push_back(makeEval("tl::mbarrier::init(" + empty + " + " + slot + ", " + std::to_string(T) + ")"));
  init->body.push_back(std::move(initLoop));
  if (p.leads)
    init->body.push_back(makeEval("tl::mbarrier::init(" + lead + ", 1)"));
  if (perTile)
    init->body.push_back(makeEval("tl::mbarrier::init(" + leadFree + ", " + std::to_string(T) + ")"));
  init->body.push_back(makeEval("tl::mbarrier::fence_init()"));
  rings.push_back(std::move(init));
  rings.push_back(makeBarrier("the mbarrier rings are initialized"));

  // Iteration `it` of the rings: its stage and the parity of its round.
  const std::string it = ring.empty() ? var : "(" + ring + " + " + var + ")";
  const std::string stage = "(" + it + " % " + St + ")", phase = "((" + it + " / " + St + ") & 1)";
  r.producer = makeIf(tid + " >= " + std::to_string(T), IfStyle::Braced, /*uniform=*/false);
  r.producer->warpSpecialized = true;
  r.producer->count = T;
  if (p.producerRegisters)
    r.producer->body.push_back(makeEval("tl::tma::release_registers<" + std::to_string(p.producerRegisters) + ">()"));
  StmtPtr issuer = makeIf(tid + " == " + std::to_string(T), IfStyle::Braced, false);
  if (p.leads) {
    // The lead copies first: the consumers wait for them before their first iteration. Per
    // tile, once the consumers have released the last tile's (a fresh barrier reports the
    // phase before the first complete, as the empty ring does).
    StmtList &leadIssue = perTile ? r.leadIssue : issuer->body;
    leadIssue.push_back(makeComment("lead copies: needed before the loop, issued ahead of its stages"));
    if (perTile)
      leadIssue.push_back(makeEval("tl::mbarrier::wait(" + leadFree + ", " + tilePhase + " ^ 1)"));
    leadIssue.push_back(
        makeEval("tl::mbarrier::arrive_expect_tx(" + lead + ", " + std::to_string(p.leadBytes) + ")"));
    for (StmtPtr &c : p.leads->body)
      leadIssue.push_back(std::move(c));
  }
  StmtPtr produce = makeFor(ForRole::Stages, var, "0", count);
  produce->body.push_back(makeEval("tl::mbarrier::wait(" + empty + " + " + stage + ", " + phase + " ^ 1)"));
  for (StmtPtr &c : issue) {
    fillSlot(*c, p.slots[0], stage, {var, 0, S});
    produce->body.push_back(std::move(c));
  }
  issuer->body.push_back(std::move(produce));
  r.issuer = issuer.get();
  r.producer->body.push_back(std::move(issuer));
  r.producer->body.push_back(makeEval("return"));
  if (p.consumerRegisters)
    r.claim = makeEval("tl::tma::claim_registers<" + std::to_string(p.consumerRegisters) + ">()");

  if (p.leads)
    r.consumers.push_back(makeEval("tl::mbarrier::wait(" + lead + ", " + (perTile ? tilePhase : "0") + ")"));
  StmtPtr steady = makeFor(ForRole::Tile, var, "0", count);
  steady->body.push_back(makeEval("tl::mbarrier::wait(" + full + " + " + stage + ", " + phase + ")"));
  for (StmtPtr &c : consumers) {
    fillSlot(*c, p.slots[2], stage, {var, 0, S});
    steady->body.push_back(std::move(c));
  }
  if (p.inFlight) {
    // The group of k - 1 has completed (only k's may be pending): its stage is free.
    StmtPtr release = makeIf(var + " > 0", IfStyle::SameLine);
    release->body.push_back(makeEval("tl::mbarrier::arrive(" + empty + " + (" + it + " - 1) % " + St + ")"));
    steady->body.push_back(std::move(release));
  } else {
    steady->body.push_back(makeEval("tl::mbarrier::arrive(" + empty + " + " + stage + ")"));
  }
  r.consumers.push_back(std::move(steady));
  for (StmtPtr &s : after)
    r.consumers.push_back(std::move(s));
  if (perTile) // nothing after the loop reads the lead tiles (infer::BulkPipelinePlan::leads)
    r.consumers.push_back(makeEval("tl::mbarrier::arrive(" + leadFree + ")"));
  if (p.inFlight && !ring.empty()) {
    // `after` waited for the last group: its stage is free for the next tile's copies.
    StmtPtr release = makeIf(count + " > 0", IfStyle::SameLine);
    release->body.push_back(
        makeEval("tl::mbarrier::arrive(" + empty + " + (" + ring + " + " + count + " - 1) % " + St + ")"));
    r.consumers.push_back(std::move(release));
  }
  return r;
}

namespace {

StmtList expandBulk(Stmt &p, const std::string &tid) {
  BulkParts parts = expandBulkParts(p, tid, "", "0");
  StmtList out;
  out.push_back(std::move(parts.comment));
  auto scope = std::make_unique<Stmt>(StmtKind::Scope);
  scope->body.push_back(std::move(parts.count));
  for (StmtPtr &s : parts.rings->body)
    scope->body.push_back(std::move(s));
  scope->body.push_back(std::move(parts.producer));
  if (parts.claim)
    scope->body.push_back(std::move(parts.claim));
  for (StmtPtr &s : parts.consumers)
    scope->body.push_back(std::move(s));
  out.push_back(std::move(scope));
  return out;
}

void expandIn(StmtList &list, const std::string &tid) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i]->kind == StmtKind::Pipeline) {
      StmtList expanded = list[i]->bulk             ? expandBulk(*list[i], tid)
                          : list[i]->registerStaged ? expandRegisterStaged(*list[i])
                                                    : expand(*list[i]);
      // The pipeline's machinery (waits, commits, rings) comes from the pipelined loop's line.
      for (StmtPtr &s : expanded)
        if (!s->line)
          s->line = list[i]->line;
      list.erase(list.begin() + i);
      list.insert(list.begin() + i, std::make_move_iterator(expanded.begin()),
                  std::make_move_iterator(expanded.end()));
    }
    // Also into what was just expanded: the consumers may hold pipelines of their own.
    expandIn(list[i]->body, tid);
    expandIn(list[i]->elseBody, tid);
  }
}

} // namespace

void expandPipelines(Kernel &k) {
  switch (k.pipelineStyle) {
  case target::PipelineStyle::AsyncGroups:
    // The warp-specialized variant (sm_90a) carries its own mbarrier pipelines.
    expandIn(k.bulkBody, k.threadIndex);
    return expandIn(k.body, k.threadIndex);
  case target::PipelineStyle::RegisterStaged:
    return expandIn(k.body, k.threadIndex);
  case target::PipelineStyle::MbarrierBulk:
    // The lowering refuses pipelined loops on this style until its expansion exists
    // (KernelLowering::lowerPipelined), so no Pipeline statement reaches here.
    return;
  }
}

} // namespace tlc::lower
