// What one thread block of an inferred FTG does (TileLang paper §4.2: "total memory traffic at
// each memory level, and total operations for each compute type"), per block and averaged
// over the blocks of the grid:
//
//   tensor-core FLOPs      2·M·N·K of every gemm, by input dtype
//   CUDA-core operations   the expression trees of parallel-loop bodies, counted per element
//                          (one per arithmetic, comparison, select, cast), element-wise fills
//                          and conversions, reduction folds and shuffles
//   SFU operations         exp2, log2, rsqrt, sqrt, tanh, sigmoid, exp, log and divisions
//   shared-memory bytes    copies into and out of shared tiles, gemm operands as each warp
//                          reads them (A once per warp column, B once per warp row), shared
//                          elements parallel loops touch
//   global accesses        per tensor: bytes, read or written, and which block indices the
//                          tile's origin depends on (so BlockOrder can count L2 reuse)
//   register bytes         operands of every MMA and fragment elements parallel loops touch
//
// Loops multiply their bodies by their trip counts. A trip count or branch that depends on
// the block index (a causal mask's `min(..., bx + 1)`) is averaged over a sample of blocks.
#pragma once

#include "recommend/ExprEval.h"

#include "infer/BulkPipelinePlan.h"
#include "ir/FTG.h"

#include <map>
#include <string>
#include <vector>

namespace tlc::recommend {

struct GlobalAccess {
  const ftg::Buffer *tensor = nullptr;
  bool write = false;
  bool atomic = false;
  unsigned blockDims = 0; // bit i: the tile origin depends on block index i
  double bytes = 0;       // per block
};

struct BlockWork {
  std::map<DType, double> tensorFlops;
  double cudaOps = 0, sfuOps = 0;
  double sharedBytes = 0, registerBytes = 0;
  std::vector<GlobalAccess> global;

  // Latency hiding.
  double mmaPerWarpStep = 0;    // independent MMAs one warp issues per k-step (the smallest gemm)
  double bytesInFlight = 0;     // global bytes a block has requested ahead of use
  double exposedLoads = 0;      // global loads a block waits for with nothing else to do
  double barriers = 0;          // block-wide barriers
  int gemmOperandRegisters = 0; // per thread, for ldmatrix'd A and B fragments

  // Warpgroup MMA (wgmma): whether the kernel's gemms run on it, the FLOPs one warpgroup
  // issues per k-step of its smallest gemm, and whether their groups stay in flight into
  // the next k-step (infer::gemmsLeftInFlight).
  bool warpgroupMma = false;
  double warpgroupStepFlops = 0;
  bool groupsInFlight = false;
  // The warp-specialized variant (infer::planBulkPipeline), which the launcher takes for
  // aligned tensors: the model assumes it runs. Empty when the kernel has none.
  infer::BulkPipelinePlan bulk;

  double tensorFlopsTotal() const;
  double globalBytes(bool writes) const;
};

struct GridShape {
  int64_t dims[3] = {1, 1, 1};
  int64_t blocks() const { return dims[0] * dims[1] * dims[2]; }
};

// Evaluates the kernel's grid; `shapes` binds the dynamic shape symbols (shapeEnvironment).
// nullopt when a dimension depends on something else unknown.
std::optional<GridShape> gridOf(const KernelDecl &k, const ExprEvaluator &shapes);

// Analyses a graph after tile inference; `shapes` as for gridOf.
BlockWork analyzeWork(const ftg::Graph &g, const GridShape &grid, const ExprEvaluator &shapes);

} // namespace tlc::recommend
