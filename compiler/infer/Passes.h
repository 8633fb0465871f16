// The tile-inference passes (TileLang paper §4.3, appendices E and F), in pipeline order.
#pragma once

#include "ir/PassManager.h"

#include <memory>

namespace tlc::infer {

// STRICT -> COMMON -> FREE: gemm fixes accumulator fragments and swizzled shared operands;
// reductions, fragment copies and parallel loops propagate; what is left gets the blocked
// layout with the fewest registers. Also binds parallel loops to threads.
std::unique_ptr<ftg::Pass> createLayoutInference();
// Parallel loops that are a copy of gathered global elements into a shared tile
// (ftg::GatherCopy): cp.async, vectorized where proven, prefetched by pipelines like copies.
std::unique_ptr<ftg::Pass> createGatherRecognition();
// A W4A16 gemm on B dequantized in registers applies the group scales to its f32 sums, and
// the dequant_i4 before it converts without them (Node::foldedScales, scalesFolded).
std::unique_ptr<ftg::Pass> createScaleFolding();
// Pipelined loops: which copies are prefetched, how many buffers each shared tile needs.
std::unique_ptr<ftg::Pass> createPipelinePlanner();
// A register-staged pipelined loop (gfx9) back to an ordinary loop: its copies unprefetched,
// their tiles single-buffered, `why` for --emit=inferred. Returns false when `loop` is not one.
bool unstageRegisterPipeline(ftg::Node &loop, const std::string &why);
// Accumulators leave through shared memory on Hopper: a copy of an accumulator fragment to
// a global tile after the pipelined loop goes through a shared tile (and, in the
// warp-specialized variant, out with bulk tensor stores), in bytes the loop's tiles free.
std::unique_ptr<ftg::Pass> createStoreStaging();
// Places shared buffers in the block's shared memory; buffers whose lifetimes do not overlap
// share bytes (as Q and O tiles do in attention).
std::unique_ptr<ftg::Pass> createSharedMemoryPlanner();
// cp.async / vector / scalar copies, mma.m16n8k16 variants, and the shared-memory budget.
std::unique_ptr<ftg::Pass> createInstructionSelection();

// The tile-inference pipeline, in order: the one list that the driver and the recommender's
// candidate compiles both run, so that a candidate is judged by the passes that compile it.
inline void addInferencePasses(ftg::PassManager &pm) {
  pm.add(createLayoutInference());
  pm.add(createGatherRecognition());
  pm.add(createScaleFolding());
  pm.add(createPipelinePlanner());
  pm.add(createStoreStaging());
  pm.add(createSharedMemoryPlanner());
  pm.add(createInstructionSelection());
}

} // namespace tlc::infer
