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

namespace {

// Counts distinct projections of the blocks of a wave onto a subset of block indices,
// with a stamp per key so that no set is cleared between waves.
class DistinctCounter {
public:
  DistinctCounter(const GridShape &grid, unsigned dims) : dims(dims) {
    int64_t size = 1;
    for (int i = 0; i < 3; ++i)
      if (dims & (1u << i)) {
        stride[i] = size;
        size *= grid.dims[i];
      }
    // A projection too large to stamp is as good as "no reuse" for the estimate.
    if (size <= (int64_t(1) << 22))
      stamps.assign(size_t(size), -1);
  }

  bool usable() const { return !stamps.empty(); }

  int64_t count(const std::vector<std::array<int64_t, 3>> &blocks, int64_t wave) {
    int64_t distinct = 0;
    for (const auto &b : blocks) {
      int64_t key = 0;
      for (int i = 0; i < 3; ++i)
        if (dims & (1u << i))
          key += b[i] * stride[i];
      if (stamps[size_t(key)] != wave) {
        stamps[size_t(key)] = wave;
        ++distinct;
      }
    }
    return distinct;
  }

private:
  unsigned dims;
  int64_t stride[3] = {0, 0, 0};
  std::vector<int64_t> stamps;
};

} // namespace

Traffic globalTraffic(const BlockWork &work, const GridShape &grid, int64_t slots, int panel) {
  Traffic t;
  int64_t blocks = grid.blocks();
  slots = std::max<int64_t>(1, std::min(slots, blocks));
  for (const GlobalAccess &a : work.global) {
    double all = a.bytes * double(blocks);
    // Atomics read and write at L2; plain writes go to HBM once each.
    t.l2Bytes += a.atomic ? 2 * all : all;
    if (a.write) {
      t.hbmBytes += all;
    } else {
      t.l2ReadBytes += all;
    }
  }

  // Waves: every full wave is like the others up to the block order's period, so up to
  // eight spread over the grid are simulated and the partial last one exactly.
  int64_t fullWaves = blocks / slots, tail = blocks % slots;
  std::vector<int64_t> sampled;
  int64_t samples = std::min<int64_t>(fullWaves, 8);
  for (int64_t s = 0; s < samples; ++s)
    sampled.push_back(s * fullWaves / samples);
  std::vector<DistinctCounter> counters;
  for (const GlobalAccess &a : work.global)
    counters.emplace_back(grid, a.write ? 0u : a.blockDims);
  std::vector<double> perFullWave(work.global.size(), 0.0), lastWave(work.global.size(), 0.0);
  std::vector<std::array<int64_t, 3>> ids;
  auto simulate = [&](int64_t wave, int64_t first, int64_t count, std::vector<double> &into,
                      double weight) {
    ids.clear();
    for (int64_t id = first; id < first + count; ++id)
      ids.push_back(blockIndexOf(id, grid, panel));
    for (size_t i = 0; i < work.global.size(); ++i) {
      if (work.global[i].write)
        continue;
      double distinct = counters[i].usable() ? double(counters[i].count(ids, wave)) : double(count);
      into[i] += weight * distinct;
    }
  };
  for (int64_t w : sampled)
    simulate(w, w * slots, slots, perFullWave, 1.0 / double(samples));
  if (tail)
    simulate(fullWaves, fullWaves * slots, tail, lastWave, 1.0);
  for (size_t i = 0; i < work.global.size(); ++i) {
    const GlobalAccess &a = work.global[i];
    if (a.write)
      continue;
    double tiles = perFullWave[i] * double(fullWaves) + lastWave[i];
    t.hbmReadBytes += tiles * a.bytes;
  }
  t.hbmBytes += t.hbmReadBytes;
  return t;
}

} // namespace tlc::recommend
