// L2 reuse from the order in which blocks run. Blocks resident at the same time (one wave:
// SMs x blocks per SM, dispatched in blockIdx order) that read the same tile of a tensor -
// the same values of the block indices its origin depends on - fetch it from HBM once and
// hit in L2 afterwards. swizzle_blocks(panel) renumbers blocks exactly as tl::swizzle_blocks
// does on the device, so a wave covers a panel x (wave / panel) patch of C tiles instead of
// one or two full rows, and reads fewer distinct A and B panels.
//
// Reuse across waves is not counted (a conservative choice: a wave's tiles are usually
// evicted by the time a later wave would reuse them in large problems).
#pragma once

#include "recommend/Work.h"

#include <array>
#include <map>
#include <tuple>

namespace tlc::recommend {

struct Traffic {
  double hbmBytes = 0; // reads after L2 reuse, plus every write
  double l2Bytes = 0;  // every global request of every block
  double hbmReadBytes = 0, l2ReadBytes = 0;
};

class TrafficModel {
public:
  // `slots`: blocks resident at once over the whole device; `panel`: 0 or 1 for row-major
  // order, else the swizzle_blocks panel.
  Traffic traffic(const BlockWork &work, const GridShape &grid, int64_t slots, int panel);

private:
  // Distinct tiles a whole grid's waves fetch, for one set of block indices a tile depends
  // on. Candidates share grids, occupancies and panels, so this is cached.
  double distinctTiles(const GridShape &grid, int64_t slots, int panel, unsigned dims);

  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int, unsigned>;
  std::map<Key, double> cache;
};

// The (bx, by, bz) a linear block id runs as (tests).
std::array<int64_t, 3> blockIndexOf(int64_t id, const GridShape &grid, int panel);

} // namespace tlc::recommend
