#include "ops/Lines.h"

#include "lower/KernelLowering.h"

namespace tlc::ops {

std::vector<int64_t> constantTile(const ftg::Operand &op) {
  std::vector<int64_t> tile;
  for (const std::optional<int64_t> &e : op.region.tileShape()) {
    if (!e)
      return {};
    tile.push_back(*e);
  }
  return tile;
}

std::vector<std::string> lineCoords(const std::vector<int64_t> &tile, size_t dim, const std::string &line,
                                    const std::string &at) {
  std::vector<std::string> coords(tile.size());
  size_t outermost = dim == 0 ? 1 : 0;
  std::string rest = line;
  for (size_t i = tile.size(); i-- > 0;) {
    if (i == dim) {
      coords[i] = at;
      continue;
    }
    coords[i] = i == outermost ? rest : "(" + rest + ") % " + std::to_string(tile[i]);
    rest = "(" + rest + ") / " + std::to_string(tile[i]);
  }
  return coords;
}

std::string scratchIndex(const FragmentLayout &f, const std::vector<int64_t> &tile, const std::string &r) {
  if (tile.size() == 1)
    return f.kind == FragmentLayout::Row ? f.rowOf(lower::kThreadIndex, r) : f.colOf(lower::kThreadIndex, r);
  return "(" + f.rowOf(lower::kThreadIndex, r) + ") * " + std::to_string(tile[1]) + " + " +
         f.colOf(lower::kThreadIndex, r);
}

} // namespace tlc::ops
