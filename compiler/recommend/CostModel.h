// The roofline cost model (TileLang paper §4.2) over one inferred configuration:
//
//   t = max(t_HBM, t_L2, t_inflight, t_shared, t_tensor, t_CUDA, t_SFU) + t_intrinsic
//
// where the max is softened into an L^p norm (target::TargetDesc::overlapNorm, p = 4 by default):
// the paper's formula assumes perfect overlap of all levels and units, which ranks every
// compute-bound configuration alike; the norm charges for the other resources a
// configuration keeps busy (shared-memory and L2 traffic of small tiles).
//
// Memory levels: HBM bytes after L2 reuse within a wave (BlockOrder), L2 bytes (every global
// request), shared-memory bytes; each over its bandwidth. t_inflight is Little's law: a
// device with too few bytes requested ahead of use (shallow pipelines, little occupancy)
// cannot reach its bandwidth, only S x (bytes in flight per SM) / latency.
//
// Compute units: tensor-core FLOPs at the rate of the instruction path the back end emits,
// CUDA-core and SFU operations at theirs. SM-local terms (compute, shared memory) charge the
// busiest SM, which runs ceil(blocks / SMs) blocks, so a last wave that fills a third of the
// device costs a full block time: the tail effect. Each is derated by latency hiding: an SM
// sub-partition needs enough independent MMAs in flight (warps x MMAs per warp and k-step,
// against the path's `ilp_needed`) and enough warps for scalar pipes.
//
// t_intrinsic: launch, the pipeline fill of every block and every global load a block waits
// for without overlap (loads outside pipelined loops, every iteration of an unpipelined
// loop), block-wide barriers; each divided by the blocks resident per SM, which overlap
// one another's stalls.
//
// Occupancy: blocks per SM from shared memory (plus the per-block reservation), registers
// (fragments, gemm operand fragments and ~32 for addresses, in allocation units) and threads.
// Registers beyond what a thread may have spill to local memory: the excess is stored and
// reloaded once per loop iteration, through the L1/shared-memory SRAM (the shared term).
#pragma once

#include "recommend/BlockOrder.h"
#include "target/Descriptor.h"
#include "recommend/Work.h"

#include <string>

namespace tlc::recommend {

struct Occupancy {
  int registersPerThread = 0;  // allocated (the estimate, capped at what a thread may have)
  int registersWanted = 0;     // the estimate
  bool registersSpill = false; // the estimate exceeds what a thread may have
  int blocksPerSM = 0;
  int warpsPerSM = 0;
  double fraction = 0;        // resident warps / the SM's maximum
  std::string limitedBy;      // "shared memory", "registers", "threads", "blocks"
};

// One term of the model: a level or unit, its seconds and what it moves or computes.
struct Term {
  std::string name; // "HBM", "L2", "in-flight", "shared", "tensor core", "CUDA cores", "SFU"
  std::string kind; // "memory", "latency" or "compute"
  double seconds = 0;
  double amount = 0; // bytes or operations over the whole kernel
};

struct Prediction {
  bool legal = true;
  std::string reason; // why not, when illegal

  double seconds = 0;
  std::vector<Term> terms; // the max() operands
  double overlapped = 0;   // their combination (the L^p norm)
  double intrinsic = 0;    // launch + exposed latency + barriers
  const Term *bound() const;

  Occupancy occupancy;
  std::string tensorPath;  // the tensor-core path its gemms run on ("mma_sync", "wgmma")
  int producerThreads = 0; // the warp-specialized variant's producers (0: none)
  int64_t blocks = 0, waves = 0;
  double lastWaveFill = 1; // fraction of the device the last wave occupies
  int64_t sharedBytes = 0;
  Traffic traffic;
  double tensorFlops = 0, cudaOps = 0, sfuOps = 0, sharedBytesMoved = 0, registerBytes = 0;
  double arithmeticIntensity = 0; // operations per HBM byte
};

Occupancy occupancyOf(const ftg::Graph &g, const BlockWork &work, const target::TargetDesc &target);

// `panel` is the block order to model (the graph's swizzle_blocks panel, or a candidate's).
Prediction predict(const ftg::Graph &g, const GridShape &grid, const BlockWork &work,
                   const target::TargetDesc &target, int panel, TrafficModel &traffic);

} // namespace tlc::recommend
