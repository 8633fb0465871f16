// The per-thread register estimate: written once and used by instruction selection (the
// compile-time error), the cost model (occupancy) and the recommender's quick check (a
// lower bound before inference, see QuickCheck.cpp).
#pragma once

#include "frontend/Types.h"

#include <cstdint>

namespace tlc::ftg {
class Graph;
}

namespace tlc::infer {

// Registers a kernel needs besides its fragments and local arrays: addresses, indices and
// temporaries.
constexpr int kScalarRegisters = 32;

// 32-bit registers that hold `elements` values of `dtype` in one thread (packed, rounded up).
int64_t registersFor(int64_t elements, DType dtype);

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

} // namespace tlc::infer
