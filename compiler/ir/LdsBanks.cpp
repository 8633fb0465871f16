#include "ir/LdsBanks.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tlc::lds {

Conflicts countConflicts(const BankModel &model, const WaveAccess &access) {
  Conflicts c;
  const int lanesPerPhase = std::max(1, model.bytesPerCycle / std::max(model.bankBytes, access.bytes));
  const int64_t lanes = int64_t(access.address.size());
  // (bank, word) of every word a phase asks for, distinct pairs counted per bank: a flat
  // vector sorted in place (the recommender measures thousands of candidate layouts, and a
  // map of sets per phase made the allocator most of its time on gfx9).
  std::vector<std::pair<int64_t, int64_t>> asked;
  for (int64_t first = 0; first < lanes; first += lanesPerPhase) {
    asked.clear();
    for (int64_t l = first; l < std::min(lanes, first + lanesPerPhase); ++l) {
      int64_t a = access.address[size_t(l)];
      if (a < 0)
        continue;
      for (int64_t w = a / model.bankBytes; w <= (a + access.bytes - 1) / model.bankBytes; ++w)
        asked.push_back({w % model.banks, w});
    }
    if (asked.empty())
      continue;
    std::sort(asked.begin(), asked.end());
    asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
    int ways = 1, run = 0;
    for (size_t i = 0; i < asked.size(); ++i) {
      run = i > 0 && asked[i].first == asked[i - 1].first ? run + 1 : 1;
      ways = std::max(ways, run);
    }
    c.ideal += 1;
    c.cycles += ways;
    c.ways = std::max(c.ways, ways);
  }
  return c;
}

Conflicts countConflicts(const BankModel &model, const std::vector<WaveAccess> &accesses) {
  Conflicts sum;
  for (const WaveAccess &a : accesses) {
    Conflicts c = countConflicts(model, a);
    sum.cycles += c.cycles;
    sum.ideal += c.ideal;
    sum.ways = std::max(sum.ways, c.ways);
  }
  return sum;
}

std::vector<WaveAccess> mfmaReads(const SharedLayout &layout, const MfmaOperandUse &use, int waveSize) {
  std::vector<WaveAccess> out;
  const int64_t elemBytes = std::max(1, layout.elemBits / 8);
  // Each lane reads `run` consecutive K elements per instruction (8 bytes: 4 16-bit or 8 fp8
  // elements); a K-major run is one read when the layout keeps it (tl/hip/gemm.h).
  const int run = std::max(1, use.size * use.kStep / waveSize);
  const bool vector = use.kMajor && layout.vectorRun(run) == run;
  for (int64_t base : use.mnBases)
    for (int64_t mi = 0; mi < use.mnPerWave / use.size; ++mi)
      for (int64_t kk = 0; kk < use.k / use.kStep; ++kk)
        for (int part = 0; part < (vector ? 1 : run); ++part) {
          WaveAccess a;
          a.bytes = int(vector ? run * elemBytes : elemBytes);
          for (int l = 0; l < waveSize; ++l) {
            int64_t mn = base + mi * use.size + l % use.size;
            int64_t k = kk * use.kStep + run * (l / use.size) + part;
            bool inside = k < use.k && mn < (use.kMajor ? layout.rows : layout.cols);
            int64_t off = !inside ? -1 : use.kMajor ? layout.offset(mn, k) : layout.offset(k, mn);
            a.address.push_back(off < 0 ? -1 : off * elemBytes);
          }
          out.push_back(std::move(a));
        }
  return out;
}

std::vector<WaveAccess> copyStores(const SharedLayout &layout, int64_t threads, int64_t vec, int waveSize) {
  std::vector<WaveAccess> out;
  const int64_t elemBytes = std::max(1, layout.elemBits / 8);
  if (vec < 1 || layout.cols % vec != 0)
    vec = 1;
  const int64_t run = layout.vectorRun(vec), chunks = layout.rows * layout.cols / vec, perRow = layout.cols / vec;
  for (int64_t first = 0; first < chunks; first += threads)
    for (int64_t wave = 0; wave * waveSize < threads; ++wave)
      for (int64_t part = 0; part < vec / run; ++part) {
        WaveAccess a;
        a.bytes = int(run * elemBytes);
        for (int64_t l = 0; l < waveSize; ++l) {
          int64_t t = wave * waveSize + l, c = first + t;
          bool active = t < threads && c < chunks;
          a.address.push_back(active ? layout.offset(c / perRow, (c % perRow) * vec + part * run) * elemBytes : -1);
        }
        out.push_back(std::move(a));
      }
  return out;
}

namespace {

std::string describe(const char *what, const Conflicts &c) {
  return std::string(what) + (c.extra() == 0 ? " conflict-free" : " " + std::to_string(c.ways) + "-way");
}

} // namespace

namespace {

LdsChoice chooseUncached(const BankModel &model, int64_t rows, int64_t cols, int elemBits,
                         const std::vector<MfmaOperandUse> &uses, int64_t threads) {
  const int64_t maxVec = std::max<int64_t>(1, 128 / elemBits); // 16-byte accesses
  auto measure = [&](const SharedLayout &l, Conflicts &reads, Conflicts &stores) {
    std::vector<WaveAccess> r;
    for (const MfmaOperandUse &u : uses) {
      std::vector<WaveAccess> one = mfmaReads(l, u, model.waveSize);
      r.insert(r.end(), one.begin(), one.end());
    }
    reads = countConflicts(model, r);
    stores = countConflicts(model, copyStores(l, threads, cols % maxVec == 0 ? maxVec : 1, model.waveSize));
  };
  LdsChoice best{SharedLayout::swizzled(rows, cols, elemBits), {}, {}, {}, {}, ""};
  measure(best.layout, best.reads, best.stores);
  best.swizzle16Reads = best.reads;
  best.swizzle16Stores = best.stores;
  // XOR swizzles of 8-byte units (the MFMA lanes' runs), key (row >> shift) & mask: a key
  // that changes with the row inside one phase's rows moves their runs apart. Then the same
  // with the flip (rows of 256 bytes or more): a phase of 16 lanes reads one unit of 16 rows,
  // which a key of row & 15 spreads over all 32 banks, but the 16-byte chunks of the copy no
  // longer stay whole under an 8-byte XOR and are stored as two 8-byte halves, and 16 lanes
  // storing the same half of 16 consecutive chunks (256 bytes of one row) hit only the even or
  // the odd 8-byte slots of the banks: 2-way under any key that is constant along the row.
  // Flipping unit bit 0 by unit bit 4 (which 128 bytes of the 256 the unit is in) puts the
  // second 8 chunks' halves on the other slots; the reads are unchanged (one unit for all 16
  // rows: the flip moves it the same way for each). Flips come last, so they are taken only
  // where they are strictly better.
  int flipBit = 0; // log2 of the 8-byte units in one cycle's bytes (4 on CDNA)
  while ((int64_t(8) << flipBit) < model.bytesPerCycle)
    ++flipBit;
  if (best.reads.extra() + best.stores.extra() > 0)
    for (int flip : {0, flipBit})
      for (int shift = 0; shift <= 3; ++shift)
        for (int mask : {1, 3, 7, 15}) {
          std::optional<SharedLayout> l = SharedLayout::xorUnits(rows, cols, elemBits, 8, shift, mask, flip);
          if (!l)
            continue;
          Conflicts r, s;
          measure(*l, r, s);
          if (r.extra() + s.extra() < best.reads.extra() + best.stores.extra()) {
            best.layout = *l;
            best.reads = r;
            best.stores = s;
          }
        }
  best.text = "LDS banks: MFMA reads" + describe("", best.reads).substr(0) + ", copy stores" +
              describe("", best.stores);
  if (!(best.layout == SharedLayout::swizzled(rows, cols, elemBits)))
    best.text += " (the 16-byte swizzle:" + describe(" reads", best.swizzle16Reads) + "," +
                 describe(" stores", best.swizzle16Stores) + ")";
  return best;
}

} // namespace

LdsChoice chooseMfmaOperandLayout(const BankModel &model, int64_t rows, int64_t cols, int elemBits,
                                  const std::vector<MfmaOperandUse> &uses, int64_t threads) {
  // The recommender asks the same question for every candidate that shares an operand tile
  // (thousands on gfx9): answer each once per thread. Bounded: a long-running process (the
  // fuzzer) starts over past 4096 answers.
  std::string key = std::to_string(model.banks) + " " + std::to_string(model.bankBytes) + " " +
                    std::to_string(model.bytesPerCycle) + " " + std::to_string(model.waveSize) + " " +
                    std::to_string(rows) + "x" + std::to_string(cols) + " " + std::to_string(elemBits) + " " +
                    std::to_string(threads);
  for (const MfmaOperandUse &u : uses) {
    key += u.kMajor ? " K" : " MN";
    for (int64_t v : {int64_t(u.size), int64_t(u.kStep), u.mnPerWave, u.k})
      key += " " + std::to_string(v);
    for (int64_t b : u.mnBases)
      key += "," + std::to_string(b);
  }
  thread_local std::map<std::string, LdsChoice> answered;
  if (auto it = answered.find(key); it != answered.end())
    return it->second;
  if (answered.size() >= 4096)
    answered.clear();
  return answered.emplace(key, chooseUncached(model, rows, cols, elemBits, uses, threads)).first->second;
}

} // namespace tlc::lds
