// How a gemm's accumulator C[M, N] is split over the warps of a block: written once and used
// by layout inference (which assigns the split) and by the recommender's quick check (which
// rejects knob values no split fits), as TileLang's GemmNode computes its warp partition once
// for inference and lowering.
#pragma once

#include "frontend/Types.h"
#include "target/TargetInfo.h"

namespace tlc::infer {

struct WarpSplit {
  int m = 0, n = 0; // warps along M and N; m * n is the block's warp count
  bool fits = false; // every warp tile is a whole number of the atom's m x n tiles
};

// full_row puts every warp on its own rows, full_col on its own columns, square the most
// balanced split (warp tiles closest to square) among those that fit; when none fits, the
// full_row split, reported as not fitting.
WarpSplit splitWarps(int64_t M, int64_t N, int warps, WarpPolicy policy, const target::MmaAtom &atom);

// The same over the warpgroups of a block for a warpgroup atom (wgmma): full_col puts every
// warpgroup on its own columns; otherwise as many warpgroups along M as fit, since one
// instruction covers a warpgroup's whole N (up to 256) and wider instructions read each A
// tile once for more columns.
WarpSplit splitWarpgroups(int64_t M, int64_t N, int groups, WarpPolicy policy, const target::MmaAtom &atom);

} // namespace tlc::infer
