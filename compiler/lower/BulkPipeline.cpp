// The warp-specialized variant of a kernel on Hopper: when the producers of its pipelined loop
// are whole-tile copies from 2-d tensors into wgmma operand tiles, a producer warpgroup
// (appended after the kernel's own threads, so that theirs keep their numbering) issues them
// as bulk tensor copies (TMA) onto a ring of mbarriers, and the kernel's threads consume.
// The variant is the kernel's kAligned instantiation: the launcher takes it when every
// tensor's rows are 16-byte aligned and the tensor maps encode (the bulk copy's own
// conditions), and the kernel's ordinary instantiation otherwise.
//
// Which kernels get the variant, on which loop, and how threads, registers and shared memory
// are split, is infer::planBulkPipeline's decision (infer/BulkPipelinePlan.h), which the
// recommender's cost model reads too. The rest of the kernel runs on the consumers only, its
// barriers named barriers over them (lower/WarpSpecialization).
#include "lower/KernelLowering.h"
#include "infer/BulkPipelinePlan.h"
#include "lower/Naming.h"

#include "ir/TileOp.h"
#include "target/TargetInfo.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace tlc::lower {

std::string tensorMapDataType(DType t) {
  // 8-bit tiles move as bytes (no conversion, no out-of-bounds fill value but zero).
  if (bitWidth(t) == 8)
    return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
  if (bitWidth(t) == 32) // loads and reductions: moved as they are
    return t == DType::F32 ? "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"
           : t == DType::I32 ? "CU_TENSOR_MAP_DATA_TYPE_INT32"
                             : "CU_TENSOR_MAP_DATA_TYPE_UINT32";
  return t == DType::BF16 ? "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" : "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
}

std::string tensorMapSwizzle(const SharedLayout &panels) {
  if (!panels.isPanelled())
    return "CU_TENSOR_MAP_SWIZZLE_NONE"; // a plain row-major tile: the box as it lies in memory
  int64_t spanBytes = panels.panelCols * panels.elemBits / 8;
  return spanBytes == 128 ? "CU_TENSOR_MAP_SWIZZLE_128B"
         : spanBytes == 64 ? "CU_TENSOR_MAP_SWIZZLE_64B"
                           : "CU_TENSOR_MAP_SWIZZLE_32B";
}

std::optional<KernelLowering::BulkPanels> KernelLowering::bulkPanels(const ftg::Node &c, const ftg::Operand &global,
                                                                   const ftg::Buffer &tile) {
  const SharedLayout &layout = *tile.shared;
  TileDims src = tileDims(*this, global, tile.shape);
  auto [rowDim, colDim] = infer::bulkTileDims(global, tile);
  const int rank = int(global.buffer->shape.size());
  if (!src.ok || int(src.origin.size()) != rank || rowDim < 0 ||
      !(layout.isPanelled() || infer::rowMajorBulkTile(layout))) {
    unsupported(c.call->getRange(), "this copy as a bulk tensor copy");
    return std::nullopt;
  }
  // A row-major tile is one panel as wide as the tile.
  const int64_t panelCols = layout.isPanelled() ? layout.panelCols : layout.cols;
  Kernel::TensorMap map;
  map.param = generatedName("map" + std::to_string(out->tensorMaps.size()));
  map.tensor = bufferName(*global.buffer);
  map.dataType = tensorMapDataType(tile.dtype);
  map.rank = rank;
  map.box.assign(size_t(rank), 1);
  map.box[size_t(rowDim)] = layout.rows;
  map.box[size_t(colDim)] = panelCols;
  map.swizzle = tensorMapSwizzle(layout);
  out->tensorMaps.push_back(map);
  BulkPanels r;
  r.map = map.param;
  r.rank = rank;
  int64_t panels = layout.cols / panelCols;
  add(makeComment("bulk copy: " + c.op->describe(c) + ", " + std::to_string(panels) + " panel(s) of " +
                  std::to_string(layout.rows) + "x" + std::to_string(panelCols) +
                  (layout.isPanelled() ? "" : ", unswizzled")));
  for (int64_t q = 0; q < panels; ++q) {
    // Coordinates innermost first: the columns (with the panel's offset), then outwards.
    std::string coords;
    for (int d = rank - 1; d >= 0; --d)
      coords += ", " + src.origin[size_t(d)] + (d == colDim && q ? " + " + std::to_string(q * panelCols) : "");
    r.panels.push_back({q * layout.rows * panelCols, coords});
  }
  return r;
}

bool KernelLowering::addBulkLoads(const ftg::Node &c, const std::string &tile, const std::string &barrier) {
  if (c.kind != ftg::NodeKind::Copy)
    return c.op && c.op->lowerBulkLoad(c, *this, tile, barrier);
  auto panels = bulkPanels(c, c.inputs[0], *c.outputs[0].buffer);
  if (!panels)
    return false;
  for (const BulkPanel &q : panels->panels)
    add(makeEval("tl::tma::load_" + std::to_string(panels->rank) + "d(" + tile +
                 (q.offset ? " + " + std::to_string(q.offset) : "") + ", &" + panels->map + ", " + barrier +
                 q.coords + ")"));
  return true;
}

bool KernelLowering::bulkStorable(const ftg::Node &c) const {
  if (!bulkPlan || c.kind != ftg::NodeKind::Copy || c.inputs.size() != 1 || c.outputs.size() != 1)
    return false;
  const ftg::Buffer &S = *c.inputs[0].buffer, &D = *c.outputs[0].buffer;
  if (S.scope != Scope::Shared || !S.shared || !S.shared->isPanelled() ||
      !infer::bulkTensorTile(c.outputs[0], S.shape, S.dtype))
    return false;
  // The store's global writes complete asynchronously (the issuing thread waits only until
  // they have read shared memory): nothing after it in the kernel may touch the tensor. So a
  // top-level copy whose tensor no later top-level node reads or writes.
  const std::vector<const ftg::Node *> siblings = ftg::flattenedSiblings(g.body);
  auto at = llvm::find(siblings, &c);
  if (at == siblings.end())
    return false;
  return std::none_of(std::next(at), siblings.end(), [&](const ftg::Node *n) {
    return llvm::is_contained(n->reads, &D) || llvm::is_contained(n->writes, &D);
  });
}

bool KernelLowering::bulkReducible(const ftg::Node &c) const {
  if (!bulkPlan || c.kind != ftg::NodeKind::AtomicAdd || c.inputs.size() != 1 || c.outputs.size() != 1)
    return false;
  const ftg::Buffer &S = *c.inputs[0].buffer, &D = *c.outputs[0].buffer;
  return S.scope == Scope::Shared && S.shared && D.dtype == S.dtype && infer::bulkReducesDType(S.dtype) &&
         (S.shared->isPanelled() || infer::rowMajorBulkTile(*S.shared)) &&
         infer::bulkTensorTile(c.outputs[0], S.shape, S.dtype, /*load=*/true) && infer::onlyAtomicAddsTouch(g, D);
}

void KernelLowering::lowerBulkStore(const ftg::Node &c, const std::function<void()> &ordinary) {
  const ftg::Buffer &tile = *c.inputs[0].buffer, &tensor = *c.outputs[0].buffer;
  // The launcher encodes the store's tensor map only when the tensor's rows are aligned (bit
  // `index` of the kernel's mask); otherwise the consumers copy the tile out themselves.
  size_t index = noteVectorTensor(&tensor);
  if (index >= kAlignedRowBits)
    return ordinary();
  Stmt &choice = add(makeIf(alignedRowsTest(uint64_t(1) << index)));
  choice.variants = true;
  knownUnaligned.push_back(&tensor);
  within(choice.elseBody, ordinary);
  knownUnaligned.pop_back();
  within(choice.body, [&] {
    std::vector<Access> reads;
    std::optional<BulkPanels> panels;
    Stmt &once = add(makeIf(kThreadIndex + " == 0", IfStyle::Braced, /*uniform=*/false));
    within(once.body, [&] {
      reads = readsOf([&] { panels = bulkPanels(c, c.outputs[0], tile); });
      if (!panels)
        return;
      out->tensorMaps.back().alignedRowsBit = int(index);
      const bool reduce = c.kind == ftg::NodeKind::AtomicAdd;
      for (const BulkPanel &q : panels->panels) {
        std::string from = bufferName(tile) + (q.offset ? " + " + std::to_string(q.offset) : "");
        add(makeEval(reduce ? "tl::tma::reduce_add<" + std::to_string(panels->rank) + ">(&" + panels->map + ", " +
                                  from + ", {" + q.coords.substr(2) + "})"
                            : "tl::tma::store_" + std::to_string(panels->rank) + "d(&" + panels->map + ", " + from +
                                  q.coords + ")"));
      }
      add(makeEval("tl::tma::store_commit()")); // waited for by SyncInsertion, before the tile is written again
    });
    reads.insert(reads.begin(), access(&tile));
    accessing(once, reads, {access(&tensor)}).asyncProxyRead = true;
  });
}

void KernelLowering::lowerBulkBody() {
  bulkLoaded.clear();
  std::vector<const ftg::Node *> loaded = ftg::producersOf(*bulkPlan.loop);
  loaded.insert(loaded.end(), bulkPlan.leads.begin(), bulkPlan.leads.end());
  for (const ftg::Node *c : loaded)
    for (const ftg::Operand &in : c->inputs)
      if (in.buffer->scope == Scope::Global)
        bulkLoaded.push_back(in.buffer);
  bool beforeLoop = true;
  for (const ftg::Node *n : ftg::flattenedSiblings(g.body)) {
    beforeLoop = beforeLoop && n != bulkPlan.loop;
    if (llvm::is_contained(bulkPlan.leads, n))
      continue; // the producer issues it with the loop's copies (lowerBulkPipelined)
    if (beforeLoop && (infer::writesMemory(*n) || infer::holdsNamedBarrier(*n)))
      atLineOf(*n, [&] {
        nest(makeIf(kThreadIndex + " < " + std::to_string(g.threads), IfStyle::Braced, /*uniform=*/false),
             [&] { lowerNode(*n); });
      });
    else
      lowerNode(*n);
  }
  for (const ftg::Buffer *t : bulkLoaded) {
    auto at = llvm::find(out->vectorTensors, t->name);
    size_t index = size_t(at - out->vectorTensors.begin());
    if (at != out->vectorTensors.end() && index < kAlignedRowBits)
      out->bulkRowsMask |= uint64_t(1) << index;
  }
}

void KernelLowering::lowerBulkPipelined(const ftg::Node &n) {
  const ForStmt *f = n.loop;
  nonNegativeVars.insert(f->vars[0]);
  auto p = std::make_unique<Stmt>(StmtKind::Pipeline);
  p->var = cppName(f->vars[0]->getName());
  p->text = f->vars[0]->getName().str();
  p->count = n.stages;
  p->hi = expr(f->extents[0]);
  p->bulk = true;
  p->consumers = bulkPlan.consumers;
  p->producers = bulkPlan.producers;
  p->producerRegisters = bulkPlan.producerRegisters;
  p->consumerRegisters = bulkPlan.consumerRegisters;
  p->barrierOffset = bulkPlan.barrierOffset;
  std::string id = std::to_string(pipelineCounter++);
  for (int part = 0; part < 3; ++part) {
    p->slots.push_back("\x01stage" + id + "." + std::to_string(part) + "\x01");
    p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq));
  }
  p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq));
  std::vector<const ftg::Node *> producers = ftg::producersOf(n);
  // The producer's issue of one iteration: the lets its addresses use, the bytes it announces
  // on the stage's full barrier (those of the copies whose condition holds, when some stand
  // under an `if`), then one bulk copy per panel of each destination, at stage slot 0. No
  // access sets: the mbarrier protocol, not barriers, orders these writes before the
  // consumers' reads.
  within(p->body[0]->body, [&] {
    for (const LetStmt *let : n.prefetchLets)
      scalarStmt(let);
    // Bytes per condition (copies under the same `if` branch share one term), in order.
    int64_t always = 0;
    std::vector<std::pair<const ftg::Node *, int64_t>> guards;
    for (const ftg::Node *c : producers) {
      int64_t bytes = c->outputs[0].buffer->bytes();
      if (!c->prefetchGuard) {
        always += bytes;
        continue;
      }
      auto same = llvm::find_if(guards, [&](const auto &g) {
        return g.first->prefetchGuard == c->prefetchGuard && g.first->prefetchGuardNegated == c->prefetchGuardNegated;
      });
      if (same == guards.end())
        guards.push_back({c, bytes});
      else
        same->second += bytes;
    }
    std::string total = always || guards.empty() ? std::to_string(always) : "";
    for (const auto &[c, bytes] : guards)
      total += std::string(total.empty() ? "" : " + ") + "((" + prefetchCondition(*c) + ") ? " +
               std::to_string(bytes) + " : 0)";
    add(makeEval("tl::mbarrier::arrive_expect_tx(" + fullBarrierRing() + " + " + p->slots[0] + ", " + total + ")"));
    for (const ftg::Node *c : producers) guardedPrefetch(*c, [&] {
      const ftg::Buffer &dst = *c->outputs[0].buffer;
      if (addBulkLoads(*c, bufferName(dst) + " + " + p->slots[0] + " * " + std::to_string(dst.numElements()),
                       fullBarrierRing() + " + " + p->slots[0]))
        p->txBytes += dst.bytes();
    });
  });
  // The lead copies: bulk copies onto the lead barrier, issued once before the loop's.
  if (!bulkPlan.leads.empty()) {
    p->leads = std::make_unique<Stmt>(StmtKind::Seq);
    p->leadBytes = bulkPlan.leadBytes;
    within(p->leads->body, [&] {
      for (const ftg::Node *c : bulkPlan.leads)
        atLineOf(*c, [&] { addBulkLoads(*c, bufferName(*c->outputs[0].buffer), leadBarrier()); });
    });
  }
  // The consumers: everything else, reading stage slot 2.
  std::vector<const ftg::Node *> inFlight = infer::gemmsLeftInFlight(n, /*bulk=*/true);
  p->inFlight = !inFlight.empty();
  finishPipeline(n, std::move(p), producers, inFlight);
}

} // namespace tlc::lower
