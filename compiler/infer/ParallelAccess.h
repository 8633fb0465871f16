// How a parallel loop's body indexes fragments. The back end lowers a parallel loop by
// iterating over the registers of one fragment (the driver); every other fragment in the
// body must be reachable from the driver's register index.
#pragma once

#include "ir/FTG.h"

#include <vector>

namespace tlc::infer {

struct FragmentAccess {
  enum Kind {
    Full,  // F[i, j] with exactly the loop variables, in order
    Row,   // F[i] of a 1-d fragment in a 2-d loop: the row of the driver
    Other, // anything else: not lowerable
  };
  Kind kind;
  ftg::Buffer *buffer;
  const IndexExpr *expr;
  bool isWrite;
};

// The accesses of the loop's body to buffers of `scope` (fragments; the lowering also asks for
// shared tiles, whose reads it may vectorize: lower/Parallel.cpp).
std::vector<FragmentAccess> collectFragmentAccesses(const ftg::Graph &g, const ForStmt &loop,
                                                    Scope scope = Scope::Fragment);

// The fragment whose registers the loop iterates: the first fully indexed fragment, writes
// preferred. Null if the loop touches no fragment (it is then bound by a flattened index).
ftg::Buffer *pickDriver(const std::vector<FragmentAccess> &accesses);

} // namespace tlc::infer
