// StoreStaging: an accumulator's way out through shared memory, on targets with bulk tensor
// copies (Hopper). `copy(C_f, C[...])` after a kernel's pipelined loop becomes
//
//   copy(C_f, C_staged)      each thread's registers into a shared tile in wgmma's swizzled
//                            panels (whole 4-byte pairs, no bank conflicts, no predicates)
//   copy(C_staged, C[...])   the tile out: in the warp-specialized variant one bulk tensor
//                            store per panel (the hardware clips the ragged edges), otherwise
//                            16-byte stores of whole rows
//
// instead of each thread storing 4 bytes at a time under a bounds predicate. Measured on the
// H100 against the direct stores in one process (bench/results/h100-2026-11-26-run28-store-
// staging/): the 128x256x64 GEMM 4.9-7.5% faster at four of five large shapes (the same at
// 8192^3), the sample's default tiles 4.3-11.2%. The predicated stores also read the
// accumulator inside branches, which makes ptxas serialize wgmma groups left in flight
// (C7514); the staged copy has no branch.
//
// The shared tile takes bytes the loop's tiles no longer need (the shared-memory planner
// overlaps buffers whose lifetimes do not meet), so the rewrite happens only when such bytes
// are there: it never grows a kernel's shared memory.
//
// Atomic adds of an accumulator inside a pipelined loop of a kernel that gets the
// warp-specialized variant (FlashAttention's dQ: `atomic_add(dQ_accum[...], acc_dq)` per
// query block) go the same way: `copy(acc_dq, acc_dq_staged)` into f32 panels, then
// `atomic_add(dQ_accum[...], acc_dq_staged)`, which that variant issues as one bulk tensor
// reduction per panel (cp.reduce.async.bulk.tensor .add: whole lines added in L2 instead of
// 4096 reductions of 8 bytes; GPU run 140: the backward 10-17% faster). This tile lives
// through the loop, so it takes new bytes: only where they fit beside the loop's buffers.
#include "infer/Passes.h"

#include "infer/BulkPipelinePlan.h"
#include "ir/AccessAnalysis.h"
#include "ir/TileOp.h"
#include "target/TargetInfo.h"

namespace tlc::infer {

using namespace ftg;

namespace {

// The shared tile `copy(frag, dst)` would be staged through, or nullopt when the copy does not
// qualify: a 2-d accumulator fragment to a [rows <= 256, cols] tile of a 16-bit tensor whose
// columns are its innermost dimension (a bulk tensor store's box), in wgmma panels.
std::optional<SharedLayout> stagingLayout(const Node &n) {
  if (n.kind != NodeKind::Copy || n.inputs.size() != 1 || n.outputs.size() != 1)
    return std::nullopt;
  const Buffer &F = *n.inputs[0].buffer, &D = *n.outputs[0].buffer;
  if (F.scope != Scope::Fragment || !F.fragment || F.fragment->kind != FragmentLayout::MmaC ||
      !bulkTensorTile(n.outputs[0], F.shape, D.dtype))
    return std::nullopt;
  return SharedLayout::wgmmaOperand(*F.shape[0], *F.shape[1], int(bitWidth(D.dtype)));
}

// The f32 (or 16-bit, i32, u32) tile `atomic_add(dst, frag)` inside a pipelined loop would be
// staged through: an accumulator fragment into a [rows <= 256, cols] tile of a tensor that a
// bulk tensor reduction can add into and that nothing but atomic adds touches.
std::optional<SharedLayout> atomicStagingLayout(const Graph &g, const Node &n) {
  if (n.kind != NodeKind::AtomicAdd || n.inputs.size() != 1 || n.outputs.size() != 1)
    return std::nullopt;
  const Buffer &F = *n.inputs[0].buffer, &D = *n.outputs[0].buffer;
  const DType t = D.dtype;
  if (F.scope != Scope::Fragment || !F.fragment || F.fragment->kind != FragmentLayout::MmaC ||
      F.fragment->partials > 1 || F.shape.size() != 2 || !F.shape[0] || !F.shape[1] || !bulkReducesDType(t) ||
      !bulkTensorTile(n.outputs[0], F.shape, t, /*load=*/true) || !onlyAtomicAddsTouch(g, D))
    return std::nullopt;
  return SharedLayout::wgmmaOperand(*F.shape[0], *F.shape[1], int(bitWidth(t)));
}

class StoreStaging : public Pass {
public:
  llvm::StringRef name() const override { return "store-staging"; }

  bool run(Graph &g, DiagnosticEngine &) override {
    // The first pass that plans shared bytes decides for the rest whether a persistent
    // kernel's tiles may overlap (FTG.h).
    g.tilesOverlap = mayWarpSpecialize(g);
    if (!g.target->copyAtom(target::CopyKind::BulkTensor))
      return true;
    bool changed = false;
    // Atomic adds inside the pipelined loop (and the branches compile-time ifs take there), in
    // kernels that get the warp-specialized variant.
    // Not in persistent kernels: their tile loop around the pipeline would hold the bulk
    // reductions' reads across tiles, a protocol no GPU run has checked yet.
    if (!g.persistent && (g.tilesOverlap || mayWarpSpecialize(g)))
      for (size_t i = 0; i < g.body.size(); ++i)
        if (g.body[i]->kind == NodeKind::Loop && g.body[i]->loop->loopKind == LoopKind::Pipelined)
          changed |= stageAtomics(g, i, g.body[i]->body, {g.body[i].get()});
    bool afterPipeline = false;
    auto pipelined = [](const Node *m) { return m->kind == NodeKind::Loop && m->loop->loopKind == LoopKind::Pipelined; };
    for (size_t i = 0; i < g.body.size(); ++i) {
      Node &n = *g.body[i];
      // A pipelined loop, or a compile-time `if` whose branch lowering flattens holds one.
      const auto *taken = takenBranch(n);
      if (pipelined(&n) || (taken && llvm::any_of(flattenedSiblings(*taken), pipelined))) {
        afterPipeline = true;
        continue;
      }
      auto layout = afterPipeline ? stagingLayout(n) : std::nullopt;
      if (!layout)
        continue;
      // Shared bytes free by now: buffers whose last access is an earlier top-level node.
      auto lifetimes = topLevelLifetimes(g);
      int64_t freed = 0;
      for (const auto &b : g.buffers)
        if (b->scope == Scope::Shared)
          if (auto it = lifetimes.find(b.get()); it != lifetimes.end() && it->second.last < i)
            freed += b->bytes() * b->stages;
      const Buffer &F = *n.inputs[0].buffer;
      DType dt = n.outputs[0].buffer->dtype;
      int64_t bytes = *F.shape[0] * *F.shape[1] * int64_t(bitWidth(dt)) / 8;
      // A persistent kernel frees nothing (the next tile's copies fill the pipeline's stages
      // while this tile's accumulator leaves): the tile gets bytes of its own when they fit
      // beside every other buffer, with room for the mbarrier rings and the alignment of
      // wgmma tiles.
      if (g.persistent && g.tilesOverlap) {
        int64_t used = 0;
        for (const auto &b : g.buffers)
          if (b->scope == Scope::Shared)
            used += b->bytes() * b->stages;
        if (used + bytes + 2048 > g.target->limits().sharedBytesPerBlock)
          continue;
      } else if (bytes > freed) {
        continue;
      }
      stage(g, i, *layout);
      changed = true;
    }
    if (changed) {
      for (auto &n : g.body)
        n->deps.clear();
      linkDependencies(g.body);
    }
    panelUserStaging(g);
    return true;
  }

private:
  // A staging tile the kernel declares itself (attention's `copy(acc_o, O_s); copy(O_s,
  // O[...])`): a shared buffer left row-major by layout inference (no operator constrains it)
  // that only accumulator copies write and only copies to a bulk-storable global tile read
  // gets wgmma's panels instead, as the tiles this pass makes: 4-byte pair writes without
  // bank conflicts (row-major rows of 256 bytes put 8 rows on the same banks) and, in the
  // warp-specialized variant, bulk tensor stores.
  void panelUserStaging(Graph &g) {
    for (auto &b : g.buffers) {
      if (b->scope != Scope::Shared || !b->decl || b->layoutReason != "free: row-major" || b->shape.size() != 2 ||
          !b->shape[0] || !b->shape[1] || *b->shape[0] > 256 || (b->dtype != DType::F16 && b->dtype != DType::BF16))
        continue;
      auto layout = SharedLayout::wgmmaOperand(*b->shape[0], *b->shape[1], int(bitWidth(b->dtype)));
      bool onlyStaging = layout.has_value(), used = false;
      g.walk([&](const Node &n) {
        bool touches = llvm::is_contained(n.reads, b.get()) || llvm::is_contained(n.writes, b.get());
        if (!touches || n.kind == NodeKind::Loop || n.kind == NodeKind::If)
          return; // loops and branches list their bodies' accesses; the bodies are visited
        used = true;
        bool in = n.kind == NodeKind::Copy && n.inputs.size() == 1 && n.outputs.size() == 1 &&
                  n.outputs[0].buffer == b.get() && n.outputs[0].region.originOnly == false &&
                  n.inputs[0].buffer->scope == Scope::Fragment && n.inputs[0].buffer->fragment &&
                  n.inputs[0].buffer->fragment->kind == FragmentLayout::MmaC;
        bool out = n.kind == NodeKind::Copy && n.inputs.size() == 1 && n.outputs.size() == 1 &&
                   n.inputs[0].buffer == b.get() && bulkTensorTile(n.outputs[0], b->shape, b->dtype);
        onlyStaging = onlyStaging && (in || out) && llvm::count(n.reads, b.get()) + llvm::count(n.writes, b.get()) == 1;
      });
      if (!onlyStaging || !used)
        continue;
      b->shared = *layout;
      b->layoutReason = "free: wgmma panels, a staging tile for a bulk tensor store";
    }
  }

  // Stages the qualifying atomic adds of `list` (inside the regions `outer`), looking into the
  // branches compile-time ifs take; true if any was.
  bool stageAtomics(Graph &g, size_t loopAt, std::vector<std::unique_ptr<Node>> &list, std::vector<Node *> outer) {
    bool changed = false;
    for (size_t i = 0; i < list.size(); ++i) {
      Node &n = *list[i];
      if (n.kind == NodeKind::If) {
        if (const auto *taken = takenBranch(n)) {
          auto &branch = taken == &n.body ? n.body : n.elseBody;
          std::vector<Node *> inner = outer;
          inner.push_back(&n);
          changed |= stageAtomics(g, loopAt, branch, inner);
        }
        continue;
      }
      auto layout = atomicStagingLayout(g, n);
      if (!layout)
        continue;
      const Buffer &F = *n.inputs[0].buffer;
      int64_t bytes = *F.shape[0] * *F.shape[1] * int64_t(bitWidth(n.outputs[0].buffer->dtype)) / 8, used = 0;
      // The tile lives through the loop: it needs bytes beside the buffers live there (those
      // used only before or after the loop share bytes with the loop's).
      auto lifetimes = topLevelLifetimes(g);
      for (const auto &b : g.buffers)
        if (b->scope == Scope::Shared)
          if (auto it = lifetimes.find(b.get());
              it == lifetimes.end() || (it->second.first <= loopAt && loopAt <= it->second.last))
            used += b->bytes() * b->stages;
      // Room for the mbarrier rings and the alignment of wgmma tiles, as above.
      if (used + bytes + 2048 > g.target->limits().sharedBytesPerBlock)
        continue;
      Buffer *staged = stage(g, list, i, *layout);
      for (Node *region : outer) { // loops and ifs list their bodies' accesses
        region->reads.push_back(staged);
        region->writes.push_back(staged);
      }
      ++i; // past the atomic add from the staged tile
      changed = true;
    }
    if (changed)
      linkDependencies(list);
    return changed;
  }

  // Replaces top-level node i (copy(frag, dst)) by copy(frag, staged) and copy(staged, dst).
  Buffer *stage(Graph &g, size_t i, const SharedLayout &layout) { return stage(g, g.body, i, layout); }

  // Replaces node i of `list` (copy(frag, dst) or atomic_add(dst, frag)) by copy(frag, staged)
  // and the same operator from staged to dst.
  Buffer *stage(Graph &g, std::vector<std::unique_ptr<Node>> &list, size_t i, const SharedLayout &layout) {
    Node &n = *list[i];
    const Operand &from = n.inputs[0], &to = n.outputs[0];
    auto buf = std::make_unique<Buffer>();
    // An invented buffer: its name is a stem, spelled tl_<stem> in C++ (lower::bufferName).
    buf->name = from.buffer->name + "_staged";
    buf->scope = Scope::Shared;
    buf->dtype = to.buffer->dtype;
    buf->shape = from.buffer->shape;
    buf->shared = layout;
    const bool atomic = n.kind == NodeKind::AtomicAdd;
    buf->layoutReason = "staging of " + from.buffer->name + " for a bulk tensor " + (atomic ? "reduction" : "store");
    Buffer *staged = buf.get();
    g.buffers.push_back(std::move(buf));

    Operand whole;
    whole.buffer = staged;
    whole.region.extents = staged->shape;
    whole.region.isPoint.assign(staged->shape.size(), false);
    whole.region.origins.assign(staged->shape.size(), nullptr);
    whole.region.range = from.region.range;

    unsigned nextId = 0;
    g.walk([&](const Node &m) { nextId = std::max(nextId, m.id + 1); });
    auto part = [&](const Operand &in, const Operand &out, bool toSharedPart) {
      auto m = std::make_unique<Node>();
      // The atomic add's first half is a copy; its second stays an atomic add.
      m->kind = atomic && toSharedPart ? NodeKind::Copy : n.kind;
      m->op = atomic && toSharedPart ? tileOpFor(Builtin::Copy) : n.op;
      m->stmt = n.stmt;
      m->call = n.call;
      m->id = nextId++;
      m->staged = true;
      m->inputs = {in};
      m->outputs = {out};
      return m;
    };
    auto toShared = part(from, whole, true), toGlobal = part(whole, to, false);
    // Access sets by hand: the call's arguments name the fragment and the tensor, but each
    // half touches one of them. The tensor's region reads what its origins read.
    toShared->reads = {from.buffer};
    toShared->writes = {staged};
    toGlobal->reads = {staged};
    for (Buffer *b : n.reads)
      if (b != from.buffer)
        toGlobal->reads.push_back(b);
    toGlobal->writes = {to.buffer};
    if (atomic && !llvm::is_contained(toGlobal->reads, to.buffer))
      toGlobal->reads.push_back(to.buffer); // an atomic add reads what it adds to
    list[i] = std::move(toShared);
    list.insert(list.begin() + std::ptrdiff_t(i) + 1, std::move(toGlobal));
    return staged;
  }
};

} // namespace

std::unique_ptr<Pass> createStoreStaging() { return std::make_unique<StoreStaging>(); }

} // namespace tlc::infer
