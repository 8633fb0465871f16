// The warp-specialized variant of a kernel on Hopper: when the producers of its pipelined loop
// are whole-tile copies from 2-d tensors into wgmma operand tiles, a producer warpgroup
// (appended after the kernel's own threads, so that theirs keep their numbering) issues them
// as bulk tensor copies (TMA) onto a ring of mbarriers, and the kernel's threads consume.
// The variant is the kernel's kAligned instantiation: the launcher takes it when every
// tensor's rows are 16-byte aligned and the tensor maps encode (the bulk copy's own
// conditions), and the kernel's ordinary instantiation otherwise.
//
// Eligibility (planBulkPipeline), kept narrow: two consumer warpgroups or more; one pipelined
// loop at the top level of the kernel; before it lets, block swizzles, fills and copies (the
// producer warpgroup runs the lets and swizzles too; fills and copies that write memory run
// under `tid < consumers`, their own barriers none); each producer copies a [rows, cols] tile
// (rows <= 256) of a 16-bit tensor of 2 to 5 dimensions, its columns the innermost dimension,
// its rows another, the others held at a point, into a shared buffer of the same dtype in
// wgmma panels, one bulk copy per panel. The rest of the kernel runs on the consumers only,
// its barriers named barriers over them (lower/WarpSpecialization).
#include "lower/KernelLowering.h"
#include "lower/Naming.h"

#include "ir/TileOp.h"
#include "target/TargetInfo.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace tlc::lower {

namespace {

// The buffer dims of a producer copy's source that carry its tile's rows and columns, or
// {-1, -1}: two dims, in order, the columns the innermost (a bulk copy's contiguous dim).
std::pair<int, int> tileDimsOf(const ftg::Operand &src, const ftg::Buffer &dst) {
  const Region &r = src.region;
  int rank = int(src.buffer->shape.size());
  std::vector<int> dims;
  if (r.originOnly) {
    dims = {rank - 2, rank - 1};
  } else {
    if (int(r.extents.size()) != rank)
      return {-1, -1};
    for (int d = 0; d < rank; ++d)
      if (!(!r.isPoint.empty() && r.isPoint[d]) && r.extents[d] != std::optional<int64_t>(1))
        dims.push_back(d);
    if (dims.size() != 2 || r.extents[dims[0]] != dst.shape[0] || r.extents[dims[1]] != dst.shape[1])
      return {-1, -1};
  }
  if (dims.size() != 2 || dims[1] != rank - 1 || dims[0] < 0)
    return {-1, -1};
  return {dims[0], dims[1]};
}

bool writesMemory(const ftg::Node &n) {
  return llvm::any_of(n.writes, [](const ftg::Buffer *b) {
    return b->scope == Scope::Global || b->scope == Scope::Shared;
  });
}

std::string dataTypeOf(DType t) {
  return t == DType::BF16 ? "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" : "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
}

std::string swizzleOf(int64_t spanBytes) {
  return spanBytes == 128 ? "CU_TENSOR_MAP_SWIZZLE_128B"
         : spanBytes == 64 ? "CU_TENSOR_MAP_SWIZZLE_64B"
                           : "CU_TENSOR_MAP_SWIZZLE_32B";
}

// Whether producer copy `c` can be a bulk tensor copy per panel of its destination.
bool bulkCopyable(const ftg::Node &c) {
  if (c.kind != ftg::NodeKind::Copy || c.inputs.size() != 1 || c.outputs.size() != 1)
    return false;
  const ftg::Operand &src = c.inputs[0], &dst = c.outputs[0];
  const ftg::Buffer &S = *src.buffer, &D = *dst.buffer;
  if (S.scope != Scope::Global || D.scope != Scope::Shared || S.shape.size() < 2 || S.shape.size() > 5 ||
      D.shape.size() != 2 || S.dtype != D.dtype || (S.dtype != DType::F16 && S.dtype != DType::BF16))
    return false;
  if (!D.shared || !D.shared->isPanelled() || !D.shape[0] || !D.shape[1] || *D.shape[0] > 256)
    return false;
  return tileDimsOf(src, D).first >= 0;
}

} // namespace

int producerThreads(int consumers) { return consumers >= 256 ? 128 : 32; }

const ftg::Node *KernelLowering::planBulkPipeline() const {
  const target::TargetInfo &t = *g.target;
  // With one consumer warpgroup the producer is one warp and the block asks for two blocks per
  // SM (a producer warpgroup doubled the block and halved the blocks an SM holds: run 11, the
  // 128x128x32 GEMM went from 383 to 273 TFLOP/s).
  if (!t.copyAtom(target::CopyKind::BulkTensor) || !t.warpgroupMma() || g.threads % 128 != 0 ||
      g.threads + producerThreads(g.threads) > t.limits().threadsPerBlock)
    return nullptr;
  const ftg::Node *loop = nullptr;
  for (const auto &n : g.body) {
    if (n->kind == ftg::NodeKind::Loop && n->loop->loopKind == LoopKind::Pipelined) {
      if (loop)
        return nullptr; // one pipelined loop
      loop = n.get();
      continue;
    }
    // Before the loop: what the producer warpgroup may run too, or a fill or copy that only the
    // consumers run (no barrier inside either).
    bool harmless = n->kind == ftg::NodeKind::Let || n->kind == ftg::NodeKind::SwizzleBlocks ||
                    ((n->kind == ftg::NodeKind::Fill || n->kind == ftg::NodeKind::Copy) && !writesMemory(*n));
    bool consumersOnly = n->kind == ftg::NodeKind::Fill || n->kind == ftg::NodeKind::Copy;
    if (!loop && !harmless && !consumersOnly)
      return nullptr;
  }
  if (!loop || loop->stages < 2)
    return nullptr;
  int producers = 0;
  for (const auto &c : loop->body)
    if (c->producer) {
      if (!bulkCopyable(*c))
        return nullptr;
      ++producers;
    }
  // The mbarrier rings follow everything else in shared memory.
  int64_t rings = (g.sharedBytes + 7) / 8 * 8 + 16 * loop->stages;
  if (producers == 0 || rings > t.limits().sharedBytesPerBlock)
    return nullptr;
  return loop;
}

void KernelLowering::lowerBulkBody() {
  bool beforeLoop = true;
  for (const auto &n : g.body) {
    beforeLoop = beforeLoop && n.get() != bulkLoop;
    if (beforeLoop && writesMemory(*n))
      nest(makeIf(kThreadIndex + " < " + std::to_string(g.threads), IfStyle::Braced, /*uniform=*/false),
           [&] { lowerNode(*n); });
    else
      lowerNode(*n);
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
  p->consumers = g.threads;
  p->producers = producerThreads(g.threads);
  // A producer warpgroup keeps 40 registers per thread (enough to issue copies) and gives
  // the rest of the register file to the consumers, in multiples of 8 (setmaxnreg); a
  // producer warp cannot (setmaxnreg moves a warpgroup's registers).
  if (p->producers == 128) {
    p->producerRegisters = 40;
    p->consumerRegisters = int(std::min<int64_t>(
        240, (g.target->limits().registersPerSM - 128 * p->producerRegisters) / g.threads / 8 * 8));
  }
  p->barrierOffset = (g.sharedBytes + 7) / 8 * 8;
  std::string id = std::to_string(pipelineCounter++);
  for (int part = 0; part < 3; ++part) {
    p->slots.push_back("\x01stage" + id + "." + std::to_string(part) + "\x01");
    p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq));
  }
  p->body.push_back(std::make_unique<Stmt>(StmtKind::Seq));
  std::vector<const ftg::Node *> producers;
  for (auto &c : n.body)
    if (c->producer)
      producers.push_back(c.get());
  // The producer's issue of one iteration: the lets its addresses use, then one bulk copy per
  // panel of each destination, at stage slot 0. No access sets: the mbarrier protocol, not
  // barriers, orders these writes before the consumers' reads.
  within(p->body[0]->body, [&] {
    for (const LetStmt *let : n.prefetchLets)
      scalarStmt(let);
    for (const ftg::Node *c : producers) {
      const ftg::Buffer &dst = *c->outputs[0].buffer;
      const SharedLayout &layout = *dst.shared;
      TileDims src = tileDims(*this, c->inputs[0], dst.shape);
      auto [rowDim, colDim] = tileDimsOf(c->inputs[0], dst);
      const int rank = int(c->inputs[0].buffer->shape.size());
      if (!src.ok || int(src.origin.size()) != rank || rowDim < 0) {
        unsupported(c->call->getRange(), "this copy as a bulk tensor copy");
        return;
      }
      Kernel::TensorMap map;
      map.param = generatedName("map" + std::to_string(out->tensorMaps.size()));
      map.tensor = cppName(c->inputs[0].buffer->name);
      map.dataType = dataTypeOf(dst.dtype);
      map.rank = rank;
      map.box.assign(size_t(rank), 1);
      map.box[size_t(rowDim)] = layout.rows;
      map.box[size_t(colDim)] = layout.panelCols;
      map.swizzle = swizzleOf(layout.panelCols * layout.elemBits / 8);
      out->tensorMaps.push_back(map);
      int64_t panels = layout.cols / layout.panelCols;
      add(makeComment("bulk copy: " + c->op->describe(*c) + ", " + std::to_string(panels) + " panel(s) of " +
                      std::to_string(layout.rows) + "x" + std::to_string(layout.panelCols)));
      for (int64_t q = 0; q < panels; ++q) {
        // Coordinates innermost first: the columns (with the panel's offset), then outwards.
        std::string coords;
        for (int d = rank - 1; d >= 0; --d)
          coords += ", " + src.origin[size_t(d)] +
                    (d == colDim && q ? " + " + std::to_string(q * layout.panelCols) : "");
        add(makeEval("tl::tma::load_" + std::to_string(rank) + "d(" + cppName(dst.name) + " + " + p->slots[0] + " * " +
                     std::to_string(dst.numElements()) +
                     (q ? " + " + std::to_string(q * layout.rows * layout.panelCols) : "") + ", &" + map.param +
                     ", tl_full + " + p->slots[0] + coords + ")"));
      }
      p->txBytes += dst.bytes();
    }
  });
  // The consumers: everything else, reading stage slot 2.
  std::vector<const ftg::Node *> inFlight = gemmsLeftInFlight(n);
  p->inFlight = !inFlight.empty();
  finishPipeline(n, std::move(p), producers, inFlight);
}

} // namespace tlc::lower
