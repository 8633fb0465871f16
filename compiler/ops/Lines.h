// Helpers of the operators that work along one dimension of a tile (cumsum, the reductions'
// general path): a tile's constant extents, the coordinates of a line's elements, and where
// a fragment's register lives in the f32 scratch copy of its tile.
#pragma once

#include "ir/FTG.h"

#include <string>
#include <vector>

namespace tlc::ops {

// The tile of a region as constants, or empty when an extent is not one.
std::vector<int64_t> constantTile(const ftg::Operand &op);

// Coordinates of line `line` (row-major over every dimension but `dim`), with `dim` at `at`.
std::vector<std::string> lineCoords(const std::vector<int64_t> &tile, size_t dim, const std::string &line,
                                    const std::string &at);

// The row-major index, in a [tile] copy of a 1-d or 2-d fragment, of the element register
// `r` of layout `f` holds.
std::string scratchIndex(const FragmentLayout &f, const std::vector<int64_t> &tile, const std::string &r);

} // namespace tlc::ops
