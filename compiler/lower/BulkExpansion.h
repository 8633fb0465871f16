// The warp-specialized expansion of a bulk pipeline in pieces (PipelineExpansion.cpp), for
// the passes that assemble them in another shape: PersistentTiles runs the producer's and the
// consumers' parts in loops over tiles of their own.
#pragma once

#include "lower/LoopIR.h"

namespace tlc::lower {

struct BulkParts {
  StmtPtr comment, count, rings; // rings: the full/empty lets, their initialization, a barrier
  StmtPtr producer;              // the producer warpgroup's branch; ends in `return`
  Stmt *issuer = nullptr;        // its issuing thread's branch, whose one statement is the loop over k
  StmtPtr claim;                 // the consumers' setmaxnreg (may be null)
  StmtList consumers;            // the loop over k, what follows it, the last release
  // Persistent kernels: the issue of the lead copies of one tile (wait until the last tile's
  // are released, announce, copy), which PersistentTiles puts before the tile's loop over k.
  StmtList leadIssue;
};

// The pieces of bulk pipeline `p`. `ring`: the C++ name of the count of iterations the rings
// ran before this loop (persistent kernels); empty: none, iteration k is the rings' k.
// `tilePhase`: with `ring`, the parity of the block's tile count (the lead barriers' phase).
BulkParts expandBulkParts(Stmt &p, const std::string &tid, const std::string &ring, const std::string &tilePhase);

} // namespace tlc::lower
