// PersistentTiles, a pass over the loop IR of a kernel that says `persistent()` (before
// PipelineExpansion): the launcher starts only as many blocks as are resident on the GPU at
// once, and each block runs the kernel body for one block index after another,
//
//   for (slot = blockIdx.x; slot < tiles; slot += gridDim.x) {
//     tile = tl::persistent_tile(slot, tiles); bx, by = tile's indices; body }
//
// in swizzle_blocks' order when the kernel asks for it (the grid's row-major order otherwise).
// persistent_tile walks every other full round of gridDim.x tiles backward, so that blocks
// whose tiles cost less in one round get costlier ones in the next (tl/gemm.h says why).
// The body is unchanged, so SyncInsertion orders what one tile leaves in shared memory
// before the next tile's first accesses, as for any loop, and buffers share bytes as in any
// kernel. Where a warp-specialized variant may exist, the shared-memory planner overlaps no
// buffers (ftg::Graph::tilesOverlap).
//
// The warp-specialized variant is where it pays: its producer warp and its consumers each
// loop over the block's tiles, the mbarrier rings running on from tile to tile (iteration k
// of a tile is iteration ring + k of the rings), so that the producer loads the next tile's
// first stages while the consumers store the last tile's accumulator. The producer runs only
// what its copies need of the statements before the pipelined loop (the lets); the
// consumers run all of it.
#include "lower/BulkExpansion.h"
#include "lower/Lower.h"
#include "lower/Naming.h"

#include "llvm/ADT/STLExtras.h"

namespace tlc::lower {

namespace {

const std::string kSlot = generatedName("slot"), kTile = generatedName("tile"), kTiles = generatedName("tiles"),
                  kRing = generatedName("ring");

std::string gridExtent(size_t d) { return generatedName(std::string("grid_") + "xyz"[d]); }

// The grid's extents and tile count, once per kernel body.
void addGridLets(const Kernel &k, StmtList &out) {
  std::string tiles;
  for (size_t d = 0; d < k.persistent.grid.size(); ++d) {
    out.push_back(makeLet("const int", gridExtent(d), k.persistent.grid[d], false));
    tiles += (tiles.empty() ? "" : " * ") + gridExtent(d);
  }
  out.push_back(makeLet("const int", kTiles, tiles.empty() ? "1" : tiles, false));
}

// `for (slot = blockIdx.x; slot < tiles; slot += gridDim.x) { tile; block indices; body }`.
StmtPtr tileLoop(const Kernel &k, StmtList body) {
  StmtPtr loop = makeFor(ForRole::Tile, kSlot, "static_cast<int>(blockIdx.x)", kTiles, "static_cast<int>(gridDim.x)");
  loop->body.push_back(makeLet("const int", kTile, "tl::persistent_tile(" + kSlot + ", " + kTiles + ")", false));
  const std::vector<std::string> &idx = k.blockIndices;
  const size_t dims = k.persistent.grid.size();
  auto set = [&](size_t d, const std::string &value) {
    if (d < idx.size())
      loop->body.push_back(makeStore(idx[d], value));
  };
  if (dims <= 1) {
    set(0, kTile);
  } else {
    // The tile within its xy plane (the z index outermost).
    std::string plane = kTile;
    if (dims == 3) {
      set(2, kTile + " / (" + gridExtent(0) + " * " + gridExtent(1) + ")");
      plane = "(" + kTile + " % (" + gridExtent(0) + " * " + gridExtent(1) + "))";
    }
    if (k.persistent.swizzlePanel > 0 && idx.size() >= 2) {
      loop->body.push_back(makeComment("swizzle_blocks: this tile's block indices in the L2-friendly order"));
      loop->body.push_back(makeEval("tl::swizzled_coords(" + std::to_string(k.persistent.swizzlePanel) + ", " + plane +
                                    ", " + gridExtent(0) + ", " + gridExtent(1) + ", " + idx[0] + ", " + idx[1] + ")"));
    } else {
      set(0, plane + " % " + gridExtent(0));
      set(1, plane + " / " + gridExtent(0));
    }
  }
  for (StmtPtr &s : body)
    loop->body.push_back(std::move(s));
  return loop;
}

// Appends to `out` a copy of what of statement `s` the producer can run: lets that read no
// memory (alone or as a tile-level statement's unit). False for anything else (comments
// included: they name the statements the producer skips).
bool copyForProducer(const Stmt &s, StmtList &out) {
  if (s.kind == StmtKind::TileOp && !s.body.empty() && s.reads.empty() && s.writes.empty()) {
    for (const StmtPtr &c : s.body)
      if (c->kind != StmtKind::Let || !c->reads.empty() || !c->writes.empty())
        return false;
    for (const StmtPtr &c : s.body)
      copyForProducer(*c, out);
    return true;
  }
  if (s.kind != StmtKind::Let || !s.reads.empty() || !s.writes.empty())
    return false;
  StmtPtr c = makeLet(s.type, s.name, s.value, s.maybeUnused);
  c->note = s.note;
  c->isConstexprLet = s.isConstexprLet;
  c->line = s.line;
  out.push_back(std::move(c));
  return true;
}

// What the producer may skip of the statements before the pipelined loop: code for the
// consumers (under `tid < T`, lowerBulkBody's guard), and statements that write only the
// registers of the thread running them (clearing an accumulator).
bool producerMaySkip(const Stmt &s, const std::string &consumerGuard) {
  if (s.kind == StmtKind::Comment)
    return true;
  if (s.kind == StmtKind::If && s.cond == consumerGuard)
    return true;
  std::vector<Access> reads, writes;
  collectAccesses(s, reads, writes);
  if (!reads.empty())
    return false;
  for (const Access &w : writes)
    if (w.buffer->scope != MemScope::Fragment && w.buffer->scope != MemScope::Local)
      return false;
  return !writes.empty();
}

// The warp-specialized body around its top-level bulk pipeline at `at`. Returns the reason
// when it cannot be made persistent.
std::string persistentBulkBody(Kernel &k) {
  StmtList &body = k.bulkBody;
  size_t at = 0;
  while (at < body.size() && !(body[at]->kind == StmtKind::Pipeline && body[at]->bulk))
    ++at;
  if (at == body.size())
    return "its pipelined loop is not at the top level of the kernel body";
  Stmt &p = *body[at];
  const std::string consumerGuard = k.threadIndex + " < " + std::to_string(p.consumers);
  // The producer's share of what comes before the loop.
  StmtList producerPre;
  for (size_t i = 0; i < at; ++i) {
    const Stmt &s = *body[i];
    if (!copyForProducer(s, producerPre) && !producerMaySkip(s, consumerGuard))
      return "a statement before its pipelined loop that its producer warp would have to run too (line " +
             std::to_string(s.line) + ")";
  }
  // The parity of the tiles this block ran before this one (the lead barriers' phase).
  const std::string tilePhase = "(((" + kSlot + " - static_cast<int>(blockIdx.x)) / static_cast<int>(gridDim.x)) & 1)";
  BulkParts parts = expandBulkParts(p, k.threadIndex, kRing, tilePhase);
  const std::string count = parts.count->name;
  auto countAgain = [&] { return makeLet("const int", count, parts.count->value, false); };
  auto advance = [&] { return makeStore(kRing, kRing + " + " + count); };

  StmtList out;
  out.push_back(makeComment("persistent: each block runs one tile of each round of gridDim.x tiles "
                            "(tl::persistent_tile); the mbarrier rings run on from tile to tile"));
  addGridLets(k, out);
  for (StmtPtr &s : parts.rings->body)
    out.push_back(std::move(s));
  // The producer: its issuing thread loops over the tiles around the loop over k.
  Stmt *issuer = parts.issuer;
  StmtPtr produce = std::move(issuer->body[0]);
  issuer->body.clear();
  issuer->body.push_back(makeLet("int", kRing, "0", false));
  StmtList producerTile = std::move(producerPre);
  producerTile.push_back(countAgain());
  for (StmtPtr &s : parts.leadIssue)
    producerTile.push_back(std::move(s));
  producerTile.push_back(std::move(produce));
  producerTile.push_back(advance());
  issuer->body.push_back(tileLoop(k, std::move(producerTile)));
  out.push_back(std::move(parts.comment));
  out.push_back(std::move(parts.producer));
  if (parts.claim)
    out.push_back(std::move(parts.claim));
  // The consumers: the whole body per tile.
  out.push_back(makeLet("int", kRing, "0", false));
  StmtList consumerTile;
  bool writesShared = false;
  for (size_t i = 0; i < at; ++i) {
    std::vector<Access> reads, writes;
    collectAccesses(*body[i], reads, writes);
    writesShared = writesShared || llvm::any_of(writes, [](const Access &a) { return a.buffer->scope == MemScope::Shared; });
    consumerTile.push_back(std::move(body[i]));
  }
  consumerTile.push_back(std::move(parts.count));
  // The rings' barrier, before the loop in the kernel that is not persistent, also made the
  // shared tiles written before the loop (attention's Q_s) visible to every consumer: one
  // barrier per tile here (SyncInsertion would put it at the first read, in every iteration).
  if (writesShared)
    consumerTile.push_back(makeBarrier("the tile's shared inputs written before the loop are visible"));
  for (StmtPtr &s : parts.consumers)
    consumerTile.push_back(std::move(s));
  for (size_t i = at + 1; i < body.size(); ++i)
    consumerTile.push_back(std::move(body[i]));
  consumerTile.push_back(advance());
  out.push_back(tileLoop(k, std::move(consumerTile)));
  body = std::move(out);
  return "";
}

} // namespace

std::string makePersistent(Kernel &k) {
  if (!k.persistent.on)
    return "";
  if (k.hasBulk())
    if (std::string why = persistentBulkBody(k); !why.empty())
      return why;
  StmtList out;
  out.push_back(makeComment("persistent: each block runs one tile of each round of gridDim.x tiles (tl::persistent_tile)"));
  addGridLets(k, out);
  out.push_back(tileLoop(k, std::move(k.body)));
  k.body = std::move(out);
  return "";
}

} // namespace tlc::lower
