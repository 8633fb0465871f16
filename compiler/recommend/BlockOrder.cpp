#include "recommend/BlockOrder.h"

#include <algorithm>

namespace tlc::recommend {

std::array<int64_t, 3> blockIndexOf(int64_t id, const GridShape &grid, int panel) {
  int64_t gx = grid.dims[0], gy = grid.dims[1];
  int64_t x = id % gx, y = id / gx % gy, z = id / (gx * gy);
  if (panel > 1 && gy > 1) {
    // tl::swizzle_blocks (stdlib/tl/gemm.h).
    int64_t linear = y * gx + x, group = panel * gx;
    int64_t first = linear / group * panel;
    int64_t rows = std::min(gy - first, int64_t(panel));
    y = first + linear % group % rows;
    x = linear % group / rows;
  }
  return {x, y, z};
}

double TrafficModel::distinctTiles(const GridShape &grid, int64_t slots, int panel, unsigned dims) {
  Key key{grid.dims[0], grid.dims[1], grid.dims[2], slots, panel, dims};
  if (auto it = cache.find(key); it != cache.end())
    return it->second;

  // A tile is identified by the block indices in `dims`; each key gets the number of the
  // last wave that fetched it, so nothing is cleared between waves.
  int64_t strides[3] = {0, 0, 0}, size = 1;
  for (int i = 0; i < 3; ++i)
    if (dims & (1u << i)) {
      strides[i] = size;
      size *= grid.dims[i];
    }
  int64_t blocks = grid.blocks();
  int64_t fullWaves = blocks / slots, tail = blocks % slots;
  // Too many tiles to track is as good as no reuse at all.
  if (size > (int64_t(1) << 22))
    return cache[key] = double(blocks);
  std::vector<int64_t> stamps(size_t(size), -1);
  auto wave = [&](int64_t w, int64_t count) {
    int64_t distinct = 0;
    for (int64_t id = w * slots; id < w * slots + count; ++id) {
      std::array<int64_t, 3> b = blockIndexOf(id, grid, panel);
      int64_t k = b[0] * strides[0] + b[1] * strides[1] + b[2] * strides[2];
      if (stamps[size_t(k)] != w) {
        stamps[size_t(k)] = w;
        ++distinct;
      }
    }
    return double(distinct);
  };
  // Full waves repeat the block order's pattern: up to eight spread over the grid stand for
  // all of them; the partial last wave is counted exactly.
  double total = 0;
  int64_t samples = std::min<int64_t>(fullWaves, 8);
  for (int64_t s = 0; s < samples; ++s)
    total += wave(s * fullWaves / samples, slots) * double(fullWaves) / double(samples);
  if (tail)
    total += wave(fullWaves, tail);
  return cache[key] = total;
}

Traffic TrafficModel::traffic(const BlockWork &work, const GridShape &grid, int64_t slots, int panel) {
  Traffic t;
  int64_t blocks = grid.blocks();
  slots = std::max<int64_t>(1, std::min(slots, blocks));
  for (const GlobalAccess &a : work.global) {
    double all = a.bytes * double(blocks);
    // Atomics read and write at L2; plain writes go to HBM once each.
    t.l2Bytes += a.atomic ? 2 * all : all;
    if (a.write) {
      t.hbmBytes += all;
      continue;
    }
    t.l2ReadBytes += all;
    t.hbmReadBytes += distinctTiles(grid, slots, panel, a.blockDims) * a.bytes;
  }
  t.hbmBytes += t.hbmReadBytes;
  return t;
}

} // namespace tlc::recommend
