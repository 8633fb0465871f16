// The per-thread register estimate: written once and used by instruction selection (the
// compile-time error), the cost model (occupancy) and the recommender's quick check (a
// lower bound before inference, see QuickCheck.cpp).
#pragma once

#include "frontend/Types.h"

#include <cstdint>

namespace tlc::ftg {
class Graph;
struct Node;
}
namespace tlc::target {
struct Limits;
}

namespace tlc::infer {

// Registers a kernel needs besides its fragments and local arrays: addresses, indices and
// temporaries.
constexpr int kScalarRegisters = 32;

// 32-bit registers that hold `elements` values of `dtype` in one thread (packed, rounded up).
int64_t registersFor(int64_t elements, DType dtype);

// Registers each of `threads` threads holds for a tile of `elements` values of `dtype` staged
// through registers in chunks of `vec` (a register-staged pipeline's copies: the planner's
// budget on gfx9, the element copies lower/ stages in cp.async pipelines).
inline int64_t stagedTileRegisters(int64_t elements, DType dtype, int64_t threads, int64_t vec = 1) {
  threads = threads < 1 ? 1 : threads;
  vec = vec < 1 ? 1 : vec;
  return registersFor((elements / vec + threads - 1) / threads * vec, dtype);
}

// The fewest registers one thread can hold a buffer of `elements` values in, before its layout
// is known: a fragment spread evenly over the block's `threads`, a local array whole. The lower
// bound of the estimate below that layout inference and the recommender's quick check test.
inline int64_t minRegistersFor(int64_t elements, bool local, int64_t threads, DType dtype) {
  return registersFor(local ? elements : elements / threads, dtype);
}

// Registers of the graph's fragments (by their inferred layouts) and local arrays, per thread:
// the most that are live at one point of the kernel. A buffer is live from its first access to
// its last, and across a whole loop whose iterations may carry its value; nvcc reuses the
// registers of the others (FlashAttention's backward holds 5 score-sized fragments and 3
// accumulators, never all at once).
int bufferRegisters(const ftg::Graph &g);

// The estimate instruction selection checks against the target's registers per thread.
inline int estimateRegisters(const ftg::Graph &g) { return kScalarRegisters + bufferRegisters(g); }

// The registers ptxas may give each thread of a block of `threads`: the SM's registers shared
// by the block, in whole units of 8, at most the target's per-thread limit. ptxas compiles
// every instruction of a kernel within this ceiling of its launch bounds; setmaxnreg moves
// registers between warpgroups at run time but does not raise it.
int64_t launchBoundRegisters(const target::Limits &limits, int64_t threads);

// What ptxas needs to compile the kernel's widest warpgroup MMA (wgmma.m64nNk*): the
// accumulator registers of one instruction (N/2 32-bit values per thread, N/4 for f16
// accumulators), its A registers when A is a fragment, and kWgmmaOverhead (ptxas asked for 122
// registers at m64n192k16 and 154 at m64n256k16 with f32 accumulators, each 26 over the
// accumulator). 0 when the kernel has no wgmma; `widest`, when given, gets its gemm.
constexpr int kWgmmaOverhead = 26;
int wgmmaInstructionRegisters(const ftg::Graph &g, const ftg::Node **widest = nullptr);

} // namespace tlc::infer
