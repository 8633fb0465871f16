// Shared-memory planning: every shared buffer gets a byte offset in the block's dynamic
// shared memory. Lifetimes are measured in top-level statements of the kernel body (a loop
// counts as one, so a buffer used anywhere in a loop lives through all of it); two buffers
// whose lifetimes do not overlap may occupy the same bytes. The code generator's barrier
// placement compares byte ranges, so reuse gets the __syncthreads it needs.
#include "infer/Passes.h"
#include "ir/TileOp.h"
#include "target/TargetInfo.h"

#include "ir/AccessAnalysis.h"

#include <algorithm>

namespace tlc::infer {

using namespace ftg;

namespace {

class SharedMemoryPlanner : public Pass {
public:
  llvm::StringRef name() const override { return "shared-memory-planner"; }

  bool run(Graph &g, DiagnosticEngine &) override {
    plan(g);
    // gfx9's register-staged pipelines double their tiles; where that leaves the block over
    // its LDS, they run as ordinary loops instead (one buffer each), and --emit=inferred says so.
    const int64_t limit = g.target->limits().sharedBytesPerBlock, doubled = g.sharedBytes;
    if (limit > 0 && doubled > limit) {
      bool undone = false;
      g.walk([&](Node &loop) {
        undone |= unstageRegisterPipeline(loop, "double-buffering its tiles needs " + std::to_string(doubled) +
                                                    " bytes of LDS, over the " + std::to_string(limit) + " of " +
                                                    g.target->name().str());
      });
      if (undone)
        plan(g);
    }
    return true;
  }

private:
  static void plan(Graph &g) {
    struct Interval {
      ftg::Buffer *buffer;
      size_t first = SIZE_MAX, last = 0;
      int64_t bytes = 0;
    };
    std::vector<Interval> items;
    llvm::DenseMap<const ftg::Buffer *, size_t> index;
    for (auto &b : g.buffers)
      if (b->scope == Scope::Shared) {
        index[b.get()] = items.size();
        items.push_back({b.get(), SIZE_MAX, 0, (b->bytes() * b->stages + 127) / 128 * 128});
      }
    // A top-level node's access set covers its whole body, index reads included (a block
    // table read only in addresses lives as long as those addresses are computed).
    for (auto [b, life] : topLevelLifetimes(g))
      if (auto it = index.find(b); it != index.end()) {
        items[it->second].first = life.first;
        items[it->second].last = life.last;
      }
    // Largest first, each at the lowest offset free of every live-overlapping buffer.
    std::vector<Interval *> order;
    for (Interval &iv : items)
      order.push_back(&iv);
    std::stable_sort(order.begin(), order.end(),
                     [](const Interval *a, const Interval *b) { return a->bytes > b->bytes; });
    std::vector<Interval *> placed;
    int64_t total = 0;
    for (Interval *iv : order) {
      bool unused = iv->first == SIZE_MAX;
      // wgmma tiles start on their swizzle's 1024-byte period, others on 128 bytes.
      int64_t align = iv->buffer->shared ? iv->buffer->shared->alignBytes() : 128;
      int64_t offset = 0;
      bool moved = true;
      while (moved) {
        moved = false;
        for (Interval *p : placed) {
          bool liveTogether = unused || p->first == SIZE_MAX ||
                              !(iv->last < p->first || p->last < iv->first);
          int64_t pOff = p->buffer->sharedOffset;
          if (liveTogether && offset < pOff + p->bytes && pOff < offset + iv->bytes) {
            offset = (pOff + p->bytes + align - 1) / align * align;
            moved = true;
          }
        }
      }
      iv->buffer->sharedOffset = offset;
      placed.push_back(iv);
      total = std::max(total, offset + iv->bytes);
    }
    g.scratchOffset = total;
    // Operators that combine partial results across warps (reductions) use a slot of a
    // scratch area after the buffers; two slots when the second costs nothing that matters:
    // consecutive reductions then alternate, so that one's writes need no barrier after the
    // previous one's reads (lower/SyncInsertion places the barriers they do need). Operators
    // that stage whole tiles there (cumsum) use the area from its start, with barriers of
    // their own around it.
    int64_t slot = 0, whole = 0;
    g.walk([&](Node &n) {
      if (n.op) {
        slot = std::max(slot, n.op->scratchSlotBytes(n, g));
        whole = std::max(whole, n.op->scratchBytes(n, g));
      }
      // last_block's vote on AMD (no barrier that reduces): a word of the scratch
      // (lower/LastBlock.cpp).
      if (n.kind == NodeKind::If && llvm::cast<IfStmt>(n.stmt)->lastBlock &&
          g.target->vendor() == target::Vendor::Amd)
        whole = std::max<int64_t>(whole, 4);
    });
    // The scratch starts, and its slots follow one another, on 16-byte boundaries: reductions
    // of 64-bit integers and of (value, position) pairs keep 8- and 16-byte elements there.
    if (slot || whole) {
      total = (total + 15) / 16 * 16;
      g.scratchOffset = total;
    }
    slot = (slot + 15) / 16 * 16;
    g.scratchSlotBytes = slot;
    g.scratchSlots = slot ? (secondSlotFits(g, total, slot, whole) ? 2 : 1) : 0;
    g.sharedBytes = total + std::max(whole, slot * g.scratchSlots);
  }

  // The second slot must leave the block within its shared-memory limit, with room for a
  // warp-specialized variant's mbarrier rings (16 bytes a stage, at most 16 stages), and
  // must not cost a block per SM.
  static bool secondSlotFits(const Graph &g, int64_t buffers, int64_t slot, int64_t whole) {
    const target::Limits &limits = g.target->limits();
    constexpr int64_t kRings = 16 * 16, kPerBlockReserve = 1024;
    int64_t one = buffers + std::max(whole, slot), two = buffers + std::max(whole, 2 * slot);
    if (two + kRings > limits.sharedBytesPerBlock)
      return false;
    auto blocksPerSM = [&](int64_t bytes) { return limits.sharedBytesPerSM / (bytes + kPerBlockReserve); };
    return blocksPerSM(two) == blocksPerSM(one);
  }
};

} // namespace

std::unique_ptr<Pass> createSharedMemoryPlanner() { return std::make_unique<SharedMemoryPlanner>(); }

} // namespace tlc::infer
