// The Hopper pipeline decisions that depend only on the inferred graph, made once here and
// read by lowering (lower/BulkPipeline.cpp, lower/KernelLowering.cpp) and by the recommender's
// cost model (recommend/Work.cpp), as TileLang's gemm computes its warp split once for
// inference and lowering:
//
//  - whether a kernel gets a warp-specialized variant (bulk tensor copies by producer threads
//    onto mbarrier rings, the kernel's threads consuming), which loop it applies to, and how
//    threads, registers and shared memory are split;
//  - which gemms of a pipelined loop leave their wgmma group in flight into the next
//    iteration (only in cp.async pipelines).
//
// Eligibility of the warp-specialized variant, kept narrow: whole warpgroups of consumers; one
// pipelined loop (>= 2 stages) at the top level of the kernel; before it lets, block swizzles,
// fills and copies (fills and copies that write memory run on the consumers only); each
// producer copies a [rows, cols] tile (rows <= 256) of a 16-bit tensor of 2 to 5 dimensions,
// its columns the innermost dimension, its rows another, the others held at a point, into a
// shared buffer of the same dtype in wgmma panels, one bulk copy per panel; or an operator that
// has a bulk form of its own (TileOp::bulkLoadable: im2col's im2col-mode tensor copies).
#pragma once

#include "ir/FTG.h"

#include <utility>
#include <vector>

namespace tlc::infer {

struct BulkPipelinePlan {
  const ftg::Node *loop = nullptr; // the pipelined loop; null: the kernel has no such variant
  int consumers = 0;               // the kernel's own threads
  // A producer warpgroup for two consumer warpgroups or more; one warp for one (a producer
  // warpgroup doubled a one-warpgroup block and halved the blocks an SM holds: GPU run 11, the
  // 128x128x32 GEMM went from 383 to 273 TFLOP/s).
  int producers = 0;
  // setmaxnreg: a producer warpgroup keeps producerRegisters per thread and gives the rest of
  // the register file to the consumers (0, 0: a producer warp, which cannot).
  int producerRegisters = 0, consumerRegisters = 0;
  int minBlocksPerSM = 1;     // __launch_bounds__: two blocks per SM with one consumer warpgroup
  int64_t barrierOffset = 0;  // the mbarrier rings follow everything else in shared memory ...
  int64_t sharedBytes = 0;    // ... up to here: the variant's shared memory per block
  // The named barrier the consumers synchronize on (bar.sync id, consumers): the lowest id
  // the kernel's own barrier_arrive/barrier_wait never take (no variant when all 15 are).
  int consumerBarrier = 1;
  // Lead copies: copies before the loop into shared tiles that nothing before the loop touches
  // again (attention's Q tile, MLA's query), which the producer issues as bulk copies onto a
  // barrier of their own ahead of the loop's first stages, so that their latency overlaps the
  // ring's first loads instead of preceding them; the consumers wait for them before the
  // loop. In persistent kernels they are reloaded per tile once the consumers release them.
  std::vector<const ftg::Node *> leads;
  int64_t leadBytes = 0;

  explicit operator bool() const { return loop != nullptr; }
  int threads() const { return consumers + producers; }
};

BulkPipelinePlan planBulkPipeline(const ftg::Graph &g);

// Whether `g` is eligible for a warp-specialized variant (planBulkPipeline's rule before shared
// memory is planned; the plan may still find it does not fit). A persistent kernel that is
// runs its tiles overlapped: the producer loads the next tile's stages and lead tiles while
// the consumers finish the last one (ftg::Graph::tilesOverlap).
bool mayWarpSpecialize(const ftg::Graph &g);

// The buffer dims of a producer copy's source that carry its tile's rows and columns, or
// {-1, -1}: two dims, in order, the columns the innermost (a bulk copy's contiguous dim).
std::pair<int, int> bulkTileDims(const ftg::Operand &src, const ftg::Buffer &dst);

// Whether a [rows, cols] tile of `dtype` (`tileShape`) moves between shared memory and global
// region `global` as bulk tensor copies, one box per wgmma panel: a 16-bit tensor (with `load`,
// also an 8-bit one: i8 and fp8 gemm operands) of 2 to 5 dimensions of the tile's dtype, the
// tile's columns its innermost dimension, at most 256 rows (a box's limit). The one rule the
// loads of the warp-specialized loop, the staging of accumulators (StoreStaging) and the bulk
// stores (lower/BulkPipeline) share.
bool bulkTensorTile(const ftg::Operand &global, const std::vector<std::optional<int64_t>> &tileShape, DType dtype,
                    bool load = false);

// Whether a bulk tensor reduction (cp.reduce.async.bulk.tensor .add) adds elements of `t`:
// f32, f16, bf16, i32, u32.
bool bulkReducesDType(DType t);

// Whether the nodes the kernel runs touch `tensor` only by atomic adds (whose order does not
// matter, so each may complete asynchronously as a bulk tensor reduction).
bool onlyAtomicAddsTouch(const ftg::Graph &g, const ftg::Buffer &tensor);

// Whether a plain row-major shared tile can take an unswizzled bulk tensor copy as one box:
// rows of whole 16-byte units and at most 256 elements, the tile a multiple of 128 bytes.
bool rowMajorBulkTile(const SharedLayout &layout);

// Whether node `n` writes global or shared memory (such nodes before a warp-specialized loop
// run on the consumers only).
bool writesMemory(const ftg::Node &n);
// Whether node `n` is or holds one of the kernel's named barriers (barrier_arrive/barrier_wait,
// which count the consumers: before a warp-specialized loop they run on the consumers only).
bool holdsNamedBarrier(const ftg::Node &n);
// The ids the kernel's named barriers take, over every warpgroup, in [1, 15].
std::vector<bool> namedBarrierIds(const ftg::Graph &g);

// The gemms of pipelined loop `loop` that may leave their wgmma group in flight into the next
// iteration: from shared A, whose accumulator nothing else in the loop touches, in a cp.async
// loop of >= 4 stages. None in the warp-specialized loop (`bulk`), whose producer runs ahead
// on its own.
std::vector<const ftg::Node *> gemmsLeftInFlight(const ftg::Node &loop, bool bulk);

// A gemm whose wgmma group stays in flight past the nodes that follow it (deferredGemmWaits):
// it is sibling `issuedAt` and must have completed before sibling
// `waitAt` (siblings.size(): the end of the list). It returns with `pending` groups in flight
// (its own and earlier deferred ones), and the wait before `waitAt` leaves `depth` younger
// groups in flight (wgmma.wait_group depth).
struct DeferredGemm {
  const ftg::Node *gemm;
  size_t issuedAt, waitAt;
  int pending, depth;
};

// `n` if it is a wgmma gemm (whose group may be left in flight), else null.
const ftg::Node *wgmmaOf(const ftg::Node &n);

// Gemms of `siblings` (nodes of one list, in program order) whose wgmma group may stay in
// flight past the nodes that follow them, until the first sibling that touches the
// accumulator, writes an operand the gemm reads, or loops or calls code of its own; another
// wgmma gemm may follow (both groups in flight: FlashAttention-3's intra-warpgroup overlap,
// where O += P_k V_k runs on the tensor cores while the softmax of S_{k+1} runs). A gemm whose
// next sibling reads its accumulator waits at once, as before. Also what the ping-pong
// schedule needs: a warpgroup hands the tensor cores over (barrier_arrive) right after
// issuing Q @ K^T and waits for it afterwards.
std::vector<DeferredGemm> deferredGemmWaits(const std::vector<const ftg::Node *> &siblings);

} // namespace tlc::infer
