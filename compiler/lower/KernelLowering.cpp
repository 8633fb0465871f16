// Lowering of a kernel's tile-level structure: its parameters and buffers, the nodes of the
// FTG in order, serial loops and branches. Tile operators, parallel loops and pipelines have
// their own files (KernelLowering.h).
#include "lower/KernelLowering.h"
#include "infer/BulkPipelinePlan.h"
#include "infer/RegisterEstimate.h"

#include "ir/TileOp.h"
#include "target/TargetInfo.h"

namespace tlc::lower {

using llvm::cast;

KernelLowering::KernelLowering(ftg::Graph &g, DiagnosticEngine &diags, std::string sourceName)
    : g(g), k(*g.kernel), diags(diags), sourceName(std::move(sourceName)) {}

Access KernelLowering::access(const ftg::Buffer *b) const {
  Access a{bufferOf.lookup(b), std::nullopt};
  auto staged = stageOf.find(b);
  if (staged != stageOf.end())
    a.stage = staged->second.ref;
  return a;
}

KernelLowering::ScratchSlot KernelLowering::nextScratchSlot() {
  Buffer *slot = scratchSlots[scratchUses++ % scratchSlots.size()];
  return {Access{slot, std::nullopt}, (slot->offset - g.scratchOffset) / 4};
}

size_t KernelLowering::noteVectorTensor(const ftg::Buffer *b) {
  auto it = llvm::find(out->vectorTensors, b->name);
  if (it != out->vectorTensors.end())
    return size_t(it - out->vectorTensors.begin());
  out->vectorTensors.push_back(b->name);
  return out->vectorTensors.size() - 1;
}

void KernelLowering::atLine(llvm::SMLoc loc, const std::function<void()> &f) {
  unsigned saved = currentLine;
  if (loc.isValid())
    currentLine = diags.sourceManager().getLineAndColumn(loc).first;
  f();
  currentLine = saved;
}

Stmt &KernelLowering::tileOp(const ftg::Node &n, const std::function<void()> &f) {
  auto op = std::make_unique<Stmt>(StmtKind::TileOp);
  op->text = nodeKindName(n.kind).str();
  for (const ftg::Buffer *b : n.reads)
    op->reads.push_back(access(b));
  for (const ftg::Buffer *b : n.writes)
    op->writes.push_back(access(b));
  // Half of a register-staged copy: the load writes registers only, the store reads them only
  // (SyncInsertion compares the shared accesses). Where only its element path is staged, the
  // load half also issues the vector path's cp.async into the stage the store half writes.
  if (registerStaging && registerStaging->elementsOnly && registerStaging->half == RegisterStaging::Load)
    op->writesRepeated = true;
  else if (registerStaging)
    (registerStaging->half == RegisterStaging::Load ? op->writes : op->reads).clear();
  Stmt *r = nullptr;
  atLineOf(n, [&] { r = &nest(std::move(op), f); });
  return *r;
}

void KernelLowering::sourceComment(const ftg::Node &n, const std::string &what) {
  auto lc = diags.sourceManager().getLineAndColumn(n.stmt->getRange().Start);
  add(makeComment(what + " (" + sourceName + ":" + std::to_string(lc.first) + ")"));
}

void KernelLowering::lowerLoop(const ftg::Node &n) {
  const ForStmt *f = n.loop;
  if (!f->start || provablyNonNegative(f->start))
    nonNegativeVars.insert(f->vars[0]);
  // Barriers on the back edge are SyncInsertion's: this is a loop every thread runs alike.
  nest(makeFor(ForRole::Tile, cppName(f->vars[0]->getName()), f->start ? expr(f->start) : "0",
               expr(f->extents[0]), "", f->loopKind == LoopKind::Unroll ? 0 : -1),
       [&] { lowerNodes(n.body); });
}

// Gemms left in flight (infer::gemmsLeftInFlight) are drained after the loop, before anything
// reads their accumulators.
void KernelLowering::drainAfter(Stmt &pipeline, const std::vector<const ftg::Node *> &inFlight) {
  within(pipeline.body[3]->body, [&] {
    for (const ftg::Node *c : inFlight)
      atLineOf(*c, [&] {
        const ftg::Buffer &acc = *c->outputs[0].buffer;
        sourceComment(*c, "drain: the wgmma groups of the gemm into " + acc.name + " complete before it is read");
        accessing(add(makeEval("tl::wgmma::drain(" + bufferName(acc) + ")")), {access(&acc)}, {access(&acc)});
      });
  });
}

// The shared tile producer `c` of a pipeline fills: a copy's destination, a gathered copy's tile.
static const ftg::Buffer *prefetched(const ftg::Node &c) {
  return c.gather ? c.gather->dst : c.outputs[0].buffer;
}

// The lets the prefetched copies' addresses use, recomputed where the copies are issued (a
// let that is a node of the loop keeps its tile-op comment and access sets).
void KernelLowering::prefetchLets(const ftg::Node &n) {
  for (const LetStmt *let : n.prefetchLets) {
    auto letNode = llvm::find_if(n.body, [&](const auto &c) { return c->stmt == let; });
    if (letNode != n.body.end())
      tileOp(**letNode, [&] { scalarStmt(let); });
    else
      scalarStmt(let);
  }
}

void KernelLowering::lowerPipelined(const ftg::Node &n) {
  if (&n == bulkPlan.loop)
    return lowerBulkPipelined(n);
  const ForStmt *f = n.loop;
  std::vector<const ftg::Node *> producers = ftg::producersOf(n);
  if (producers.empty() || n.stages < 2)
    return lowerLoop(n);
  if (out->pipelineStyle == target::PipelineStyle::RegisterStaged)
    return lowerRegisterStaged(n, producers);
  if (out->pipelineStyle != target::PipelineStyle::AsyncGroups) {
    unsupported(f->kindRange, "software pipelines on " + g.target->name().str() +
                                  " (its pipeline style has no expansion yet)");
    return lowerLoop(n);
  }
  nonNegativeVars.insert(f->vars[0]); // counts up from 0
  std::vector<const ftg::Node *> inFlight = infer::gemmsLeftInFlight(n, /*bulk=*/false);
  auto p = std::make_unique<Stmt>(StmtKind::Pipeline);
  p->var = cppName(f->vars[0]->getName());
  p->text = f->vars[0]->getName().str();
  p->count = n.stages;
  p->hi = expr(f->extents[0]);
  // Which stage a producer's buffer is at is PipelineExpansion's decision: a slot here.
  std::string id = std::to_string(pipelineCounter++);
  for (int part = 0; part < 3; ++part) {
    p->slots.push_back("\x01stage" + id + "." + std::to_string(part) + "\x01");
    p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq));
  }
  // Part 3: what runs after the steady state (the drains of gemms left in flight).
  p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq));
  p->inFlight = !inFlight.empty();
  auto staged = [&](int part) {
    for (const ftg::Node *c : producers)
      stageOf[prefetched(*c)] = {p->slots[part], {p->slots[part], 0, n.stages}};
  };
  // The copies of one iteration, twice (the prologue's and the steady state's), with the
  // lets their addresses use recomputed (their access sets are those of their nodes). In the
  // steady state, a copy element by element (rows not aligned for cp.async) goes through
  // registers: loaded where the prefetch is issued, stored into its stage after the consumers
  // (parts 4 and 5, as in the register-staged expansion), so that its loads are in flight
  // while the consumers run instead of stalling each store.
  const std::vector<bool> viaRegisters = stagedThroughRegisters(n, producers, p->inFlight);
  std::vector<int64_t> elements(producers.size(), 0);
  auto arrayOf = [&](size_t i) { return stagingArrayName(*producers[i]->outputs[0].buffer); };
  for (int part = 0; part < 2; ++part) {
    staged(part);
    within(p->body[part]->body, [&] {
      prefetchLets(n);
      for (size_t i = 0; i < producers.size(); ++i) {
        const ftg::Node *c = producers[i];
        if (part == 1 && viaRegisters[i])
          registerStaging = RegisterStaging{RegisterStaging::Load, arrayOf(i), 0, /*elementsOnly=*/true};
        guardedPrefetch(*c, [&] { c->op ? c->op->lowerPrefetch(*c, *this) : lowerGather(*c, true); });
        if (registerStaging)
          elements[i] = registerStaging->elements;
        registerStaging.reset();
      }
    });
  }
  if (llvm::any_of(elements, [](int64_t e) { return e > 0; })) {
    p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq)); // part 4: the stores
    p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq)); // part 5: the arrays
    staged(1);
    within(p->body[4]->body, [&] {
      for (size_t i = 0; i < producers.size(); ++i) {
        if (!elements[i])
          continue;
        registerStaging = RegisterStaging{RegisterStaging::Store, arrayOf(i), 0, /*elementsOnly=*/true};
        atLineOf(*producers[i], [&] { producers[i]->op->lowerPrefetch(*producers[i], *this); });
        registerStaging.reset();
        p->body[5]->body.push_back(stagingArray(*producers[i]->outputs[0].buffer, elements[i]));
      }
    });
  }
  finishPipeline(n, std::move(p), producers, inFlight);
}

// Which producers of pipelined loop `n` (cp.async groups) take the register-staged path for
// their element copies: those whose operator allows it (TileOp::stagesElementsThroughRegisters:
// plain copies of 16- or 32-bit elements into shared memory, im2col's folded form), unguarded,
// while the prefetch runs at least one iteration ahead (the stores land in the stage of
// iteration k + distance after iteration k's consumers), in program order while their
// registers fit the target's staging budget and what the kernel's own registers leave under
// its launch bound (with kStagingMargin for the addresses and temporaries the estimate leaves
// out: an attention kernel at its bound spilled 472 bytes with its K and V tiles staged). The
// other copies' element loads stay where they are, each store waiting for its load.
std::vector<bool> KernelLowering::stagedThroughRegisters(const ftg::Node &n,
                                                         const std::vector<const ftg::Node *> &producers,
                                                         bool consumersInFlight) const {
  std::vector<bool> staged(producers.size(), false);
  if (n.stages - 1 - (consumersInFlight ? 1 : 0) < 1)
    return staged;
  const int64_t left = infer::launchBoundRegisters(g.target->limits(), g.threads) - infer::estimateRegisters(g) -
                       kStagingMargin;
  const int64_t budget = std::min<int64_t>(g.target->stagingRegisterBudget(), left);
  int64_t registers = 0;
  for (size_t i = 0; i < producers.size(); ++i) {
    const ftg::Node &c = *producers[i];
    if (!c.op || c.prefetchGuard || c.outputs.empty() || !c.op->stagesElementsThroughRegisters(c, g))
      continue;
    const ftg::Buffer &tile = *c.outputs[0].buffer;
    const int64_t regs = infer::stagedTileRegisters(tile.numElements(), tile.dtype, g.threads);
    if (registers + regs > budget)
      continue;
    registers += regs;
    staged[i] = true;
  }
  return staged;
}

// Each producer twice in halves: the load of iteration 0 and its store into buffer 0 (part
// 0, the prologue), the load of iteration k + 1 (part 1) and its store into the other buffer
// (part 4), through one per-thread array per producer (declared in part 5).
void KernelLowering::lowerRegisterStaged(const ftg::Node &n, const std::vector<const ftg::Node *> &producers) {
  const ForStmt *f = n.loop;
  const int S = target::kRegisterStagedBuffers;
  nonNegativeVars.insert(f->vars[0]); // counts up from 0
  auto p = std::make_unique<Stmt>(StmtKind::Pipeline);
  p->registerStaged = true;
  p->var = cppName(f->vars[0]->getName());
  p->text = f->vars[0]->getName().str();
  p->count = S;
  p->hi = expr(f->extents[0]);
  std::string id = std::to_string(pipelineCounter++);
  for (int part = 0; part < 3; ++part)
    p->slots.push_back("\x01stage" + id + "." + std::to_string(part) + "\x01");
  for (int part = 0; part < 6; ++part)
    p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq));
  std::vector<int64_t> elements(producers.size(), 0);
  // `half` of every producer into `list`, its stores at stage slot `slot`; the loads
  // recompute the lets their addresses use.
  auto halves = [&](StmtList &list, RegisterStaging::Half half, int slot) {
    for (const ftg::Node *c : producers)
      stageOf[c->outputs[0].buffer] = {p->slots[slot], {p->slots[slot], 0, S}};
    within(list, [&] {
      if (half == RegisterStaging::Load)
        prefetchLets(n);
      for (size_t i = 0; i < producers.size(); ++i) {
        registerStaging = RegisterStaging{half, stagingArrayName(*producers[i]->outputs[0].buffer), 0};
        atLineOf(*producers[i], [&] { producers[i]->op->lowerPrefetch(*producers[i], *this); });
        elements[i] = std::max(elements[i], registerStaging->elements);
      }
      registerStaging.reset();
    });
  };
  halves(p->body[0]->body, RegisterStaging::Load, 0);
  halves(p->body[0]->body, RegisterStaging::Store, 0);
  halves(p->body[1]->body, RegisterStaging::Load, 1);
  halves(p->body[4]->body, RegisterStaging::Store, 1);
  for (size_t i = 0; i < producers.size(); ++i)
    p->body[5]->body.push_back(stagingArray(*producers[i]->outputs[0].buffer, std::max<int64_t>(1, elements[i])));
  finishPipeline(n, std::move(p), producers, {});
}

std::string KernelLowering::stagingArrayName(const ftg::Buffer &tile) { return generatedName(tile.name + "_regs"); }

StmtPtr KernelLowering::stagingArray(const ftg::Buffer &tile, int64_t elements, const std::string &name) {
  auto decl = std::make_unique<Stmt>(StmtKind::Decl);
  decl->type = cppType(tile.dtype);
  decl->name = name.empty() ? stagingArrayName(tile) : name;
  decl->count = elements;
  decl->align = 16; // 16-byte loads and stores of it on gfx9
  return decl;
}

void KernelLowering::finishPipeline(const ftg::Node &n, StmtPtr p, const std::vector<const ftg::Node *> &producers,
                                    const std::vector<const ftg::Node *> &inFlight) {
  for (const ftg::Node *c : producers)
    stageOf[prefetched(*c)] = {p->slots[2], {p->slots[2], 0, n.stages}};
  for (const ftg::Node *c : inFlight)
    gemmsInFlight[c] = 1;
  within(p->body[2]->body, [&] {
    // flattenedSiblings: flash_attention_bwd's `if atomic_dq` kept the dK gemm waiting at once
    // otherwise (deferredGemmWaits looks at one list).
    std::vector<const ftg::Node *> consumers = ftg::flattenedSiblings(n.body);
    llvm::erase_if(consumers, [](const ftg::Node *c) { return c->producer; });
    lowerSiblings(consumers);
  });
  gemmsInFlight.clear();
  drainAfter(*p, inFlight);
  for (const ftg::Node *c : producers)
    stageOf.erase(prefetched(*c));
  add(std::move(p));
}

void KernelLowering::lowerIf(const ftg::Node &n) {
  if (cast<IfStmt>(n.stmt)->lastBlock)
    return lowerLastBlock(n);
  // An else-if chain is one If per branch, each in the else of the previous (printed at one
  // indentation level: nesting each branch one level deeper made the output quadratic in
  // the chain's length).
  // A compile-time switch (`if ping_pong`): only the branch it takes, in a scope of its own
  // (its lets stay local), and no `if (false)` in the output.
  if (const auto *taken = ftg::takenBranch(n)) {
    if (!taken->empty())
      within(add(std::make_unique<Stmt>(StmtKind::Scope)).body, [&] { lowerNodes(*taken); });
    return;
  }
  // A condition on warpgroup_id() (around the kernel's named barriers) is not block-uniform:
  // no __syncthreads may go inside.
  auto branchOn = [&](const ftg::Node &b) {
    const auto *s = cast<IfStmt>(b.stmt);
    return makeIf(expr(s->cond), IfStyle::Braced, s->blockUniform);
  };
  Stmt *branch = &add(branchOn(n));
  const ftg::Node *node = &n;
  while (true) {
    within(branch->body, [&] { lowerNodes(node->body); });
    if (node->elseBody.empty())
      break;
    const ftg::Node &next = *node->elseBody.front();
    if (node->elseBody.size() == 1 && next.kind == ftg::NodeKind::If && !cast<IfStmt>(next.stmt)->lastBlock) {
      branch->elseIf = true;
      atLineOf(next, [&] { within(branch->elseBody, [&] { add(branchOn(next)); }); });
      branch = branch->elseBody.back().get();
      node = &next;
      continue;
    }
    within(branch->elseBody, [&] { lowerNodes(node->elseBody); });
    break;
  }
}

std::string KernelLowering::prefetchCondition(const ftg::Node &c) {
  std::string cond = expr(c.prefetchGuard);
  return c.prefetchGuardNegated ? "!(" + cond + ")" : cond;
}

void KernelLowering::guardedPrefetch(const ftg::Node &c, const std::function<void()> &issue) {
  atLineOf(c, [&] {
    if (!c.prefetchGuard)
      return issue();
    // Uniform: Sema checked the condition for the tile operator.
    nest(makeIf(prefetchCondition(c)), issue);
  });
}

void KernelLowering::lowerNode(const ftg::Node &n) {
  atLineOf(n, [&] { lowerNodeHere(n); });
}

int KernelLowering::threadSubset(const ftg::Node &n) {
  using ftg::NodeKind;
  switch (n.kind) {
  case NodeKind::Copy: case NodeKind::Gemm: case NodeKind::Reduce: case NodeKind::Fill: case NodeKind::AtomicAdd:
  case NodeKind::Cumsum: case NodeKind::DequantI4: case NodeKind::Parallel:
    break;
  default:
    return 0; // loops and branches: their nodes decide one by one
  }
  int subset = 0;
  const ftg::Buffer *first = nullptr;
  auto visit = [&](const ftg::Buffer *b) {
    if (!b || b->scope != Scope::Fragment || !b->fragment || b->fragment->threads >= g.threads)
      return;
    if (subset && subset != b->fragment->threads) {
      diags.error(n.stmt ? n.stmt->getRange() : llvm::SMRange(),
                  "this statement mixes fragments on threads 0.." + std::to_string(subset - 1) + " ('" + first->name +
                      "') and 0.." + std::to_string(b->fragment->threads - 1) + " ('" + b->name + "')")
          .hint("give the gemms that produce them the same threads = T, or pass one through a shared buffer");
      ok = false;
      return;
    }
    subset = b->fragment->threads, first = b;
  };
  // The access sets hold the operands too (ir/AccessAnalysis.h).
  for (const auto *set : {&n.reads, &n.writes})
    for (const ftg::Buffer *b : *set)
      visit(b);
  return subset;
}

void KernelLowering::onThreadSubset(const ftg::Node &n, int threads, const std::function<void()> &f,
                                    SubsetGroup *group) {
  SubsetGroup single;
  SubsetGroup &g = group ? *group : single;
  auto sharedOf = [](const std::vector<ftg::Buffer *> &list) {
    std::vector<const ftg::Buffer *> out;
    for (const ftg::Buffer *b : list)
      if (b->scope == Scope::Shared)
        out.push_back(b);
    return out;
  };
  std::vector<const ftg::Buffer *> writes = sharedOf(n.writes), reads = sharedOf(n.reads);
  bool joins = g.guard && g.threads == threads && writes.empty() &&
               llvm::none_of(reads, [&](const ftg::Buffer *b) { return llvm::is_contained(g.sharedWrites, b); });
  if (!joins) {
    g = SubsetGroup{};
    g.guard = &add(makeIf(kThreadIndex + " < " + std::to_string(threads), IfStyle::Braced, /*uniform=*/false));
    g.guard->threadSubset = true;
    g.guard->count = threads;
    g.threads = threads;
  }
  g.sharedWrites.insert(g.sharedWrites.end(), writes.begin(), writes.end());
  size_t first = g.guard->body.size();
  inThreadSubset = true;
  within(g.guard->body, f);
  inThreadSubset = false;
  auto isBarrier = [](const Stmt &s) { return s.kind == StmtKind::Barrier || s.kind == StmtKind::NamedBarrier; };
  for (size_t i = first; i < g.guard->body.size(); ++i)
    if (anyStmt(*g.guard->body[i], isBarrier)) {
      diags.error(n.stmt ? n.stmt->getRange() : llvm::SMRange(),
                  "not supported yet: this statement exchanges values through shared memory between the warps of "
                  "threads 0.." + std::to_string(threads - 1) + " (the fragments of a gemm with threads = " +
                      std::to_string(threads) + "), which needs a barrier the other threads do not reach")
          .hint("give each warp whole rows (policy = full_row on the gemm; a wgmma accumulator's rows are each "
                "within one warp), or run the gemm on the whole block");
      ok = false;
      break;
    }
}

void KernelLowering::lowerNodeHere(const ftg::Node &n) {
  using ftg::NodeKind;
  if (n.prefetchGuard)
    return; // a copy under an `if` of a pipelined loop: its pipeline's prefetch issues it
  if (!inThreadSubset)
    if (int subset = threadSubset(n))
      return onThreadSubset(n, subset, [&] { lowerNodeHere(n); });
  if (n.op) {
    sourceComment(n, n.op->describe(n));
    return n.op->lower(n, *this);
  }
  switch (n.kind) {
  case NodeKind::Parallel:
    return n.gather ? lowerGather(n, false) : lowerParallel(n);
  case NodeKind::Let:
  case NodeKind::Scalar:
    tileOp(n, [&] { scalarStmt(n.stmt); });
    return;
  case NodeKind::Loop:
    sourceComment(n, loopKindName(n.loop->loopKind).str() + " loop");
    return n.loop->loopKind == LoopKind::Pipelined ? lowerPipelined(n) : lowerLoop(n);
  case NodeKind::If:
    return lowerIf(n);
  case NodeKind::SwizzleBlocks:
    if (g.persistent) // the loop over tiles numbers them in this order (PersistentTiles)
      return;
    sourceComment(n, "swizzle_blocks: L2-friendly block order");
    add(makeEval("tl::swizzle_blocks(" + std::to_string(g.swizzlePanel) + ", " +
                 cppName(k.blockIndices[0]->getName()) + ", " + cppName(k.blockIndices[1]->getName()) + ")"));
    return;
  case NodeKind::Extern:
    // Its arguments may read shared memory: a unit with the node's access set, so that
    // SyncInsertion orders it after the writes of other threads.
    tileOp(n, [&] {
      std::string call;
      auto reads = readsOf([&] { call = expr(n.call); });
      // print: one thread of the block (thread = T, default 0) unless all_threads = true.
      std::string only;
      if (n.call->builtin == Builtin::Print) {
        const CallArg *all = n.call->keywordArg("all_threads");
        const CallArg *thread = n.call->keywordArg("thread");
        if (!(all && all->value->constant && all->value->constant->isBool() && all->value->constant->getBool()))
          only = kThreadIndex + " == " + (thread ? std::to_string(thread->value->constant->getInt()) : "0");
      }
      guarded(only, withAccess(makeEval(call), reads, {}));
    });
    return;
  default:
    unsupported(n.stmt->getRange(), nodeKindName(n.kind).str() + " in code generation");
  }
}

void KernelLowering::lowerNodes(const std::vector<std::unique_ptr<ftg::Node>> &nodes) {
  lowerSiblings(ftg::flattenedSiblings(nodes));
}

void KernelLowering::lowerSiblings(const std::vector<const ftg::Node *> &siblings) {
  // Gemms already left in flight across the iterations of their loop keep that protocol.
  std::vector<infer::DeferredGemm> deferred;
  for (const infer::DeferredGemm &d : infer::deferredGemmWaits(siblings))
    if (!gemmsInFlight.count(d.gemm))
      deferred.push_back(d);
  SubsetGroup group; // the open guard of consecutive nodes on part of the threads
  auto close = [&] { group = SubsetGroup{}; };
  for (size_t i = 0; i <= siblings.size(); ++i) {
    for (const infer::DeferredGemm &d : deferred)
      if (d.waitAt == i) {
        // Not a structured binding: lambdas may not capture those before C++20 (clang).
        const ftg::Node *gemm = d.gemm;
        gemmsInFlight.erase(gemm);
        const ftg::Buffer &acc = *gemm->outputs[0].buffer;
        atLineOf(*gemm, [&] {
          auto drain = [&] {
            sourceComment(*gemm, "wait: the wgmma group of the gemm into " + acc.name + ", left in flight over what " +
                                     "follows it, completes" +
                                     (d.depth ? " (the " + std::to_string(d.depth) + " issued after it may run on)" : ""));
            accessing(add(makeEval("tl::wgmma::drain" + (d.depth ? "<" + std::to_string(d.depth) + ">" : std::string()) +
                                   "(" + bufferName(acc) + ")")),
                      {access(&acc)}, {access(&acc)});
          };
          // Only the threads that issued the gemm have its group to wait for.
          if (int subset = threadSubset(*gemm)) {
            onThreadSubset(*gemm, subset, drain, &group);
          } else {
            close();
            drain();
          }
        });
      }
    if (i == siblings.size())
      break;
    auto issued = llvm::find_if(deferred, [&](const infer::DeferredGemm &d) { return d.issuedAt == i; });
    if (issued != deferred.end())
      gemmsInFlight[issued->gemm] = issued->pending;
    const ftg::Node &n = *siblings[i];
    size_t before = cur->size();
    if (lowerAccumulatorInit(siblings, i)) {
      if (cur->size() != before) // its statements follow the open guard
        close();
      continue;
    }
    int subset = n.prefetchGuard ? 0 : threadSubset(n);
    if (!subset) {
      close();
      lowerNode(n);
      continue;
    }
    atLineOf(n, [&] { onThreadSubset(n, subset, [&] { lowerNodeHere(n); }, &group); });
  }
  close();
}

std::unique_ptr<Kernel> KernelLowering::run(llvm::raw_ostream *printAfterAll) {
  out = std::make_unique<Kernel>();
  Kernel &K = *out;
  K.symbol = g.symbolName();
  K.sourceName = sourceName;
  K.name = generatedName(g.symbolName() + "_kernel");
  K.threadIndex = kThreadIndex;
  K.launch = describeLaunch(g);
  addSizeChecks(K.launch, g, diags.sourceManager(), sourceName);
  K.threads = g.threads;
  K.sharedBytes = g.sharedBytes;
  K.scratchOffset = g.scratchOffset;
  K.pipelineStyle = g.target->pipelineStyle();

  for (auto &b : g.buffers)
    if (b->scope == Scope::Local && b->packed)
      unsupported(b->decl->getRange(), "local i4/u4 buffers (use a local u8 buffer and unpack "
                                       "with shifts)");
  // Device parameters: pointers and strides of tensors, then the run-time shape symbols.
  for (const TensorParamDecl *p : k.params) {
    std::string name = cppName(p->getName());
    if (p->isScalar()) {
      K.params.push_back({cppType(p->elemType), name, name});
      continue;
    }
    std::string T = std::string(p->isOut ? "" : "const ") + cppType(p->elemType);
    K.params.push_back({T + "* __restrict__", name, "static_cast<" + T + "*>(" + name + ".data)"});
    // An i4/u4 tensor's view counts strides in its 4-bit elements (tlc/runtime.h); the kernel
    // addresses its bytes (ftg::Buffer::packed), and the launcher checked the strides even.
    bool packed = isPacked(p->elemType);
    for (size_t d = 0; d + 1 < p->shape.rank(); ++d)
      K.params.push_back({"int64_t", strideName(p->getName(), d),
                          name + ".strides[" + std::to_string(d) + "]" + (packed ? " / 2" : "")});
  }
  for (const ShapeSymbolDecl *s : k.shapeSymbols)
    if (!s->constant) {
      std::string name = cppName(s->getName());
      K.params.push_back({"int", name, "static_cast<int>(" + name + ")"});
    }
  for (const auto *b : k.blockIndices)
    K.blockIndices.push_back(cppName(b->getName()));
  if (g.persistent) {
    K.persistent.on = true;
    for (const Expr *e : k.grid)
      K.persistent.grid.push_back(expr(e));
    K.persistent.swizzlePanel = g.swizzlePanel;
  }
  for (const ShapeSymbolDecl *s : k.shapeSymbols)
    if (s->constant)
      K.constants.push_back({cppName(s->getName()), s->constant->str()});

  for (auto &b : g.buffers) {
    auto lb = std::make_unique<Buffer>();
    lb->name = bufferName(*b);
    lb->sourceName = b->name;
    lb->elemType = cppType(b->dtype);
    lb->dtype = dtypeName(b->dtype).str();
    lb->stages = b->stages;
    switch (b->scope) {
    case Scope::Global:
      lb->scope = MemScope::Global;
      break;
    case Scope::Shared:
      lb->scope = MemScope::Shared;
      lb->offset = b->sharedOffset;
      lb->bytes = b->bytes();
      lb->layout = b->shared && !b->unused ? b->shared->str() : ""; // unused: not declared
      break;
    case Scope::Fragment:
      // Unused fragments have no layout and are not declared.
      lb->scope = MemScope::Fragment;
      lb->elements = b->fragment ? b->fragment->registers() : 0;
      lb->layout = b->fragment ? b->fragment->str() : "";
      break;
    case Scope::Local:
      lb->scope = MemScope::Local;
      lb->elements = b->numElements();
      lb->layout = b->unused ? "" : "local"; // unused: not declared
      break;
    }
    bufferOf[b.get()] = lb.get();
    K.buffers.push_back(std::move(lb));
  }
  for (int slot = 0; slot < g.scratchSlots; ++slot) {
    auto lb = std::make_unique<Buffer>();
    lb->name = "tl_reduce_scratch";
    lb->sourceName = "reduction scratch";
    lb->scope = MemScope::Shared;
    lb->elemType = "float";
    lb->dtype = "f32";
    lb->offset = g.scratchOffset + slot * g.scratchSlotBytes;
    lb->bytes = g.scratchSlotBytes;
    lb->implicit = true;
    scratchSlots.push_back(lb.get());
    K.buffers.push_back(std::move(lb));
  }

  cur = &K.body;
  lowerNodes(g.body);
  // The warp-specialized variant, lowered from the same graph into its own body.
  if (ok && (bulkPlan = infer::planBulkPipeline(g))) {
    cur = &K.bulkBody;
    lowerBulkBody();
    K.bulkThreads = bulkPlan.threads();
    K.bulkMinBlocks = bulkPlan.minBlocksPerSM;
    K.consumerBarrier = bulkPlan.consumerBarrier;
    K.bulkSharedBytes = bulkPlan.sharedBytes;
    bulkPlan = {};
  }
  if (!ok)
    return nullptr;
  // Which tensors' rows are 16-byte aligned, one bit each (ifAligned), from the launcher.
  if (!K.vectorTensors.empty())
    K.params.push_back({"const std::uint64_t", alignedRowsParam(), alignedRowsParam()});
  auto dump = [&](const char *after) {
    if (printAfterAll) {
      *printAfterAll << "// ----- loop IR of '" << K.symbol << "' after " << after << "\n";
      print(K, *printAfterAll);
    }
  };
  // The verifier runs after every pass (the lowering's own output still holds the pipelines
  // the first pass expands): a pass that breaks an invariant is named.
  auto verified = [&](const char *after) {
    dump(after);
    std::string problems;
    llvm::raw_string_ostream errs(problems);
    if (verify(K, errs))
      return true;
    diags.errorNoLocation("internal: the loop IR is invalid after " + std::string(after) + ":\n" + errs.str());
    return false;
  };
  dump("lowering");
  if (std::string why = makePersistent(K); !why.empty()) {
    unsupported(g.persistentRange, "persistent() in a warp-specialized kernel with " + why +
                                       "; say warp_specialize(false) to keep the cp.async pipeline");
    return nullptr;
  }
  if (K.persistent.on)
    dump("PersistentTiles");
  expandPipelines(K);
  if (!verified("PipelineExpansion"))
    return nullptr;
  if (std::string why = insertBarriers(K); !why.empty()) {
    diags.error(k.nameRange, "kernel '" + k.name + "': " + why)
        .hint("keep what synchronizes the whole block out of turns (a shared tile written and read in the turn, "
              "a reduction across warps, a pipelined loop): before the barrier_wait or after the barrier_arrive");
    return nullptr;
  }
  if (!verified("SyncInsertion"))
    return nullptr;
  if (g.target->vendor() == target::Vendor::Nvidia) { // gfx9 has no named barriers
    std::vector<bool> taken = infer::namedBarrierIds(g);
    std::vector<int> free;
    for (int id = 1; id < int(taken.size()); ++id)
      if (!taken[size_t(id)] && id != K.consumerBarrier)
        free.push_back(id);
    splitSubsetBarriers(K, std::move(free));
  }
  insertProxyFences(K);
  if (!verified("ProxyFences"))
    return nullptr;
  nameConsumerBarriers(K);
  if (!verified("WarpSpecialization"))
    return nullptr;
  return std::move(out);
}

std::unique_ptr<Kernel> lowerKernel(ftg::Graph &g, DiagnosticEngine &diags, const std::string &sourceName,
                                    llvm::raw_ostream *printAfterAll) {
  return KernelLowering(g, diags, sourceName).run(printAfterAll);
}

} // namespace tlc::lower
