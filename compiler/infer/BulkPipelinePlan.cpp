#include "infer/BulkPipelinePlan.h"

#include "frontend/ConstantFolder.h"
#include "infer/RegisterEstimate.h"
#include "ir/TileOp.h"
#include "target/TargetInfo.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <functional>

namespace tlc::infer {

std::pair<int, int> bulkTileDims(const ftg::Operand &src, const ftg::Buffer &dst) {
  const Region &r = src.region;
  int rank = int(src.buffer->shape.size());
  // A 1-d tile is one row of the tensor's innermost dimension: the row dim is the one before,
  // held at a point (a box of one row).
  const bool oneRow = dst.shape.size() == 1;
  if (rank < 2 || (!oneRow && dst.shape.size() != 2))
    return {-1, -1};
  std::vector<int> dims;
  if (r.originOnly) {
    dims = {rank - 2, rank - 1};
  } else {
    if (int(r.extents.size()) != rank)
      return {-1, -1};
    for (int d = 0; d < rank; ++d)
      if (!(!r.isPoint.empty() && r.isPoint[d]) && r.extents[d] != std::optional<int64_t>(1))
        dims.push_back(d);
    if (oneRow) {
      if (dims.size() != 1 || dims[0] != rank - 1 || r.extents[size_t(rank - 1)] != dst.shape[0])
        return {-1, -1};
      dims.insert(dims.begin(), rank - 2);
    } else if (dims.size() != 2 || r.extents[dims[0]] != dst.shape[0] || r.extents[dims[1]] != dst.shape[1]) {
      return {-1, -1};
    }
  }
  if (dims.size() != 2 || dims[1] != rank - 1 || dims[0] < 0)
    return {-1, -1};
  return {dims[0], dims[1]};
}

bool bulkTensorTile(const ftg::Operand &global, const std::vector<std::optional<int64_t>> &tileShape, DType dtype,
                    bool load) {
  const ftg::Buffer &G = *global.buffer;
  // Loads also move 8-bit tiles (the wgmma operands of i8 and fp8 gemms, as bytes) and 32-bit
  // ones (f32 rows such as attention's log-sum-exp; bulkCopyable admits them only into plain
  // row-major tiles); stores stage 16-bit accumulators only.
  bool eightBit = dtype == DType::I8 || dtype == DType::U8 || dtype == DType::F8E4M3 || dtype == DType::F8E5M2;
  bool thirtyTwoBit = dtype == DType::F32 || dtype == DType::I32 || dtype == DType::U32;
  // Not packed 4-bit tensors: the launcher's views of them count 4-bit elements, which a
  // tensor map of bytes cannot take.
  if (G.scope != Scope::Global || G.shape.size() < 2 || G.shape.size() > 5 || G.dtype != dtype || G.packed ||
      (dtype != DType::F16 && dtype != DType::BF16 && !(load && (eightBit || thirtyTwoBit))))
    return false;
  // A tile of one row (1-d) only for loads.
  bool oneRow = tileShape.size() == 1 && load;
  if (!(tileShape.size() == 2 || oneRow) || llvm::any_of(tileShape, [](auto e) { return !e; }) ||
      (!oneRow && *tileShape[0] > 256))
    return false;
  ftg::Buffer tile;
  tile.shape = tileShape;
  return bulkTileDims(global, tile).first >= 0;
}

bool bulkReducesDType(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::I32 || t == DType::U32;
}

bool onlyAtomicAddsTouch(const ftg::Graph &g, const ftg::Buffer &tensor) {
  // Loops and ifs list their bodies' accesses: their nodes are visited themselves.
  return llvm::none_of(ftg::liveNodes(g.body), [&](const ftg::Node *n) {
    return n->kind != ftg::NodeKind::AtomicAdd && n->kind != ftg::NodeKind::Loop && n->kind != ftg::NodeKind::If &&
           (llvm::is_contained(n->reads, &tensor) || llvm::is_contained(n->writes, &tensor));
  });
}

bool writesMemory(const ftg::Node &n) {
  return llvm::any_of(n.writes, [](const ftg::Buffer *b) {
    return b->scope == Scope::Global || b->scope == Scope::Shared;
  });
}

namespace {

using NodeList = std::vector<std::unique_ptr<ftg::Node>>;
using ftg::liveChildren;

} // namespace

bool holdsNamedBarrier(const ftg::Node &n) {
  if (n.kind == ftg::NodeKind::Barrier)
    return true;
  for (const NodeList *list : liveChildren(n))
    for (const auto &c : *list)
      if (holdsNamedBarrier(*c))
        return true;
  return false;
}

std::vector<bool> namedBarrierIds(const ftg::Graph &g) {
  std::vector<bool> used(size_t(kNamedBarriers), false);
  std::function<void(const ftg::Node &)> visit = [&](const ftg::Node &n) {
    if (n.kind == ftg::NodeKind::Barrier && n.call && !n.call->args.empty()) {
      const CallArg *keyword = n.call->keywordArg("id");
      const Expr *id = keyword ? keyword->value : n.call->args[0].value;
      // Sema checked that the id is known in each warpgroup and within 1..15.
      if (auto ids = valuesPerWarpgroup(id, g.threads))
        for (int64_t id : *ids)
          if (id >= 1 && id < kNamedBarriers)
            used[size_t(id)] = true;
    }
    for (const NodeList *list : liveChildren(n))
      for (const auto &c : *list)
        visit(*c);
  };
  for (const auto &n : g.body)
    visit(*n);
  return used;
}

namespace {

// Whether `n` holds nothing but named barriers (an `if` that picks a warpgroup's barrier).
bool onlyNamedBarriers(const ftg::Node &n) {
  if (n.kind == ftg::NodeKind::Barrier)
    return true;
  if (n.kind != ftg::NodeKind::If)
    return false;
  for (const NodeList *list : liveChildren(n))
    for (const auto &c : *list)
      if (!onlyNamedBarriers(*c))
        return false;
  return true;
}

} // namespace

bool rowMajorBulkTile(const SharedLayout &l) {
  int64_t rowBytes = l.cols * l.elemBits / 8;
  // A box's innermost extent is whole 16-byte units and at most 256 elements; each stage of
  // the tile starts 128-byte aligned (the planner aligns the first, the tile's bytes the rest).
  return l.isPlainRowMajor() && l.elemBits >= 8 && rowBytes % 16 == 0 && l.cols <= 256 &&
         rowBytes * l.rows % 128 == 0;
}

namespace {

// Whether producer copy `c` can be bulk tensor copies into its destination: one per panel of
// a wgmma operand tile, or one unswizzled box for a plain row-major tile (packed weights,
// scales: tiles the consumers read element by element).
bool bulkCopyable(const ftg::Node &c) {
  if (c.kind != ftg::NodeKind::Copy || c.inputs.size() != 1 || c.outputs.size() != 1)
    return false;
  const ftg::Buffer &D = *c.outputs[0].buffer;
  // 32-bit tiles and 1-d ones only as plain row-major tiles (no wgmma operand is either).
  bool plainOnly = bitWidth(D.dtype) == 32 || D.shape.size() == 1;
  return D.scope == Scope::Shared && D.shared &&
         ((D.shared->isPanelled() && !plainOnly) || rowMajorBulkTile(*D.shared)) &&
         bulkTensorTile(c.inputs[0], D.shape, D.dtype, /*load=*/true);
}

const ftg::Node *bulkLoopOf(const ftg::Graph &g, int producerThreads) {
  const target::TargetInfo &t = *g.target;
  if (!g.warpSpecialize || !t.copyAtom(target::CopyKind::BulkTensor) || !t.warpgroupMma() || g.threads % 128 != 0 ||
      g.threads + producerThreads > t.limits().threadsPerBlock)
    return nullptr;
  const ftg::Node *loop = nullptr;
  for (const ftg::Node *n : ftg::flattenedSiblings(g.body)) {
    if (n->kind == ftg::NodeKind::Loop && n->loop->loopKind == LoopKind::Pipelined) {
      if (loop)
        return nullptr; // one pipelined loop
      loop = n;
      continue;
    }
    // Before the loop: what the producers may run too, or a fill or copy that only the
    // consumers run (no barrier inside either).
    bool harmless = n->kind == ftg::NodeKind::Let || n->kind == ftg::NodeKind::SwizzleBlocks ||
                    ((n->kind == ftg::NodeKind::Fill || n->kind == ftg::NodeKind::Copy) && !writesMemory(*n));
    bool consumersOnly =
        n->kind == ftg::NodeKind::Fill || n->kind == ftg::NodeKind::Copy || onlyNamedBarriers(*n);
    if (!loop && !harmless && !consumersOnly)
      return nullptr;
  }
  if (!loop || loop->stages < 2)
    return nullptr;
  std::vector<const ftg::Node *> producers = ftg::producersOf(*loop);
  for (const ftg::Node *c : producers)
    if (!bulkCopyable(*c) && !(c->kind != ftg::NodeKind::Copy && c->op && c->op->bulkLoadable(*c, g)))
      return nullptr;
  return producers.empty() ? nullptr : loop;
}

// The lead copies of `loop` (BulkPipelinePlan::leads): top-level copies before it that could be
// producer copies, whose destination no node between them and the loop reads or writes and
// whose source no such node writes. In a persistent kernel, where the consumers release the
// lead tiles after the loop for the next tile's copies, also no node after the loop may touch
// the destination.
std::vector<const ftg::Node *> leadCopies(const ftg::Graph &g, const ftg::Node &loop) {
  std::vector<const ftg::Node *> leads;
  const std::vector<const ftg::Node *> siblings = ftg::flattenedSiblings(g.body);
  auto at = llvm::find(siblings, &loop);
  for (auto n = siblings.begin(); n != at; ++n) {
    const ftg::Node &c = **n;
    if (c.kind != ftg::NodeKind::Copy || c.gather || !bulkCopyable(c))
      continue;
    const ftg::Buffer *dst = c.outputs[0].buffer, *src = c.inputs[0].buffer;
    bool untouched = std::none_of(std::next(n), at, [&](const ftg::Node *m) {
      return llvm::is_contained(m->reads, dst) || llvm::is_contained(m->writes, dst) ||
             llvm::is_contained(m->writes, src);
    });
    if (g.persistent) { // what runs after the loop (a compile-time `if` counts as the branch it takes)
      std::vector<ftg::Node *> live = ftg::liveNodes(g.body);
      for (auto m = std::next(llvm::find(live, &loop)); m < live.end(); ++m)
        untouched = untouched && !llvm::is_contained((*m)->reads, dst) && !llvm::is_contained((*m)->writes, dst);
    }
    if (untouched)
      leads.push_back(&c);
  }
  return leads;
}

} // namespace

// A producer warpgroup for two consumer warpgroups or more, one warp for one.
static int producerThreads(const ftg::Graph &g) { return g.threads >= 256 ? 128 : 32; }

bool mayWarpSpecialize(const ftg::Graph &g) { return bulkLoopOf(g, producerThreads(g)) != nullptr; }

BulkPipelinePlan planBulkPipeline(const ftg::Graph &g) {
  BulkPipelinePlan p;
  p.consumers = int(g.threads);
  p.producers = producerThreads(g);
  const ftg::Node *loop = bulkLoopOf(g, p.producers);
  if (!loop)
    return {};
  const target::Limits &limits = g.target->limits();
  p.barrierOffset = (g.sharedBytes + 7) / 8 * 8;
  p.sharedBytes = p.barrierOffset + 16 * loop->stages; // a full and an empty mbarrier per stage
  p.leads = leadCopies(g, *loop);
  for (const ftg::Node *c : p.leads)
    p.leadBytes += c->outputs[0].buffer->bytes();
  if (!p.leads.empty())
    p.sharedBytes += g.persistent ? 16 : 8; // their mbarrier(s), after the rings
  if (p.sharedBytes > limits.sharedBytesPerBlock)
    return {};
  // The producers share the SM's registers too: ptxas compiles the warp-specialized
  // instantiation within registersPerSM / (consumers + producers) per thread, setmaxnreg
  // notwithstanding, and a wgmma that no longer fits there does not compile (C7602, GPU run
  // 168: 192x256 tiles on three consumer warpgroups and a producer warpgroup leave 128 for
  // m64n256's 154). Such a kernel keeps the path without producers.
  if (wgmmaInstructionRegisters(g) > launchBoundRegisters(limits, p.consumers + p.producers))
    return {};
  std::vector<bool> taken = namedBarrierIds(g);
  auto free = std::find(taken.begin() + 1, taken.end(), false);
  if (free == taken.end())
    return {}; // the kernel's barriers take all 15 ids: its consumers would have none
  p.consumerBarrier = int(free - taken.begin());
  p.loop = loop;
  // setmaxnreg counts in multiples of 8. A kernel that moves registers is compiled with the
  // most its launch bounds allow (R per thread, whole multiples of 8), and setmaxnreg.inc
  // takes only what the producers' setmaxnreg.dec gave back to the block's pool: each
  // consumer gets R plus its share of the producers' R - P (a larger claim waits forever: GPU
  // run 112, four consumer warpgroups, 96 + 16). P = 40 lets the producers compute their
  // copies' coordinates without spilling (MLA's spill at 24); a kernel estimated to need about
  // as many registers as that leaves its consumers keeps P = 24, setmaxnreg's least, as
  // FlashAttention-3 does for two consumer warpgroups: at 232 ptxas serialized the attention
  // backward's wgmma (C7512), at 240 it runs 2-9% faster (GPU run 143).
  const int estimate = estimateRegisters(g);
  if (p.producers == 128) {
    const int64_t perThread = limits.registersPerSM / (p.consumers + p.producers) / 8 * 8;
    auto claim = [&](int producerRegisters) {
      const int64_t share = (perThread - producerRegisters) * p.producers / p.consumers / 8 * 8;
      return int(std::min<int64_t>(240, perThread + share));
    };
    // The estimate counts fragments and 32 scalars; wgmma groups in flight need headroom
    // beyond it (the backward: estimated 224 against 232, serialized), hence the 16.
    p.producerRegisters = estimate + 16 > claim(40) ? 24 : 40;
    p.consumerRegisters = claim(p.producerRegisters);
  }
  // Two blocks per SM with one consumer warpgroup, where the registers the kernel is estimated
  // to need fit two blocks' share: asking for two caps every thread at that share, and a
  // kernel that needs more (FlashAttention's backward on one warpgroup: 226 registers) spills.
  const int64_t twoBlockShare = limits.registersPerSM / (2 * int64_t(p.threads())) / 8 * 8;
  p.minBlocksPerSM = p.consumers < 256 && estimate <= twoBlockShare ? 2 : 1;
  return p;
}

std::vector<const ftg::Node *> gemmsLeftInFlight(const ftg::Node &loop, bool bulk) {
  std::vector<const ftg::Node *> inFlight;
  // A group left in flight while the next iteration waits, synchronizes and prefetches makes
  // the prefetch run S - 2 iterations ahead, so that it never overwrites the stage the group
  // still reads (PipelineExpansion); with 3 stages that leaves one iteration of prefetch, too
  // little to cover a global load: from 4 stages on. The warp-specialized loop waits for each group and frees its stage at once: its producer
  // already runs ahead, and leaving the group in flight there made ptxas serialize the wgmmas
  // (C7514) and measured slower on the H100 (2026-11-25: 128x256x64, 4 stages, 2-6% slower;
  // 128x128x32, 3 stages, 5-34% slower at five of six shapes).
  if (bulk || loop.stages < 4)
    return inFlight;
  for (auto &c : loop.body)
    if (c->kind == ftg::NodeKind::Gemm && c->warpgroupMma && c->inputs[0].buffer->scope == Scope::Shared) {
      // A node's access sets cover its whole body (regions included).
      ftg::Buffer *acc = c->outputs[0].buffer;
      bool touched = llvm::any_of(loop.body, [&](const auto &other) {
        return other.get() != c.get() &&
               (llvm::is_contained(other->reads, acc) || llvm::is_contained(other->writes, acc));
      });
      if (!touched)
        inFlight.push_back(c.get());
    }
  return inFlight;
}

const ftg::Node *wgmmaOf(const ftg::Node &n) {
  // Not a gemm under an `if` (skipped at a pipeline's ends): ptxas cannot follow wgmma groups
  // through branches and serializes every wgmma of the kernel (warning C7514), so such a
  // gemm waits for its group as any other.
  return n.kind == ftg::NodeKind::Gemm && n.warpgroupMma ? &n : nullptr;
}

std::vector<DeferredGemm> deferredGemmWaits(const std::vector<const ftg::Node *> &siblings) {
  std::vector<DeferredGemm> deferred;
  for (size_t i = 0; i < siblings.size(); ++i) {
    const ftg::Node *g = wgmmaOf(*siblings[i]);
    if (!g)
      continue;
    const ftg::Buffer *acc = g->outputs[0].buffer;
    size_t j = i + 1;
    for (; j < siblings.size(); ++j) {
      const ftg::Node &m = *siblings[j];
      bool touchesAcc = llvm::is_contained(m.reads, acc) || llvm::is_contained(m.writes, acc);
      bool overwritesOperand = llvm::any_of(g->reads, [&](const ftg::Buffer *b) { return llvm::is_contained(m.writes, b); });
      // Another wgmma gemm may be issued behind it (its group queues after this one's).
      bool opaque = !wgmmaOf(m) && (m.kind == ftg::NodeKind::Gemm || m.kind == ftg::NodeKind::Loop ||
                                    m.kind == ftg::NodeKind::Extern ||
                                    (m.kind == ftg::NodeKind::If && !onlyNamedBarriers(m)));
      if (touchesAcc || overwritesOperand || opaque)
        break;
    }
    if (j > i + 1)
      deferred.push_back({g, i, j, 0, 0});
  }
  // Groups complete in the order they were committed: the pending count a gemm leaves on
  // return is itself plus the deferred groups issued before it and still in flight; the wait
  // before sibling j leaves the groups issued after the gemm that stay in flight past j.
  for (DeferredGemm &d : deferred) {
    d.pending = 1;
    for (const DeferredGemm &e : deferred) {
      if (e.issuedAt < d.issuedAt && e.waitAt > d.issuedAt)
        ++d.pending;
      if (e.issuedAt > d.issuedAt && e.issuedAt < d.waitAt && e.waitAt > d.waitAt)
        ++d.depth;
    }
  }
  return deferred;
}

} // namespace tlc::infer
