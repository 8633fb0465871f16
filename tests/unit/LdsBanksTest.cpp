// The LDS bank-conflict analysis of gfx9 (ir/LdsBanks.h): the phase model on hand-made
// accesses, the MFMA operand reads and copy stores on the layouts tlc chooses, and the choice
// itself (the 16-byte XOR swizzle where it is conflict-free, an 8-byte one where it is not).
#include "ir/LdsBanks.h"

#include <catch2/catch.hpp>

#include <functional>

using namespace tlc;
using namespace tlc::lds;

namespace {

const BankModel kCdna{32, 4, 128, 64};

WaveAccess lanes(int bytes, const std::function<int64_t(int)> &address) {
  WaveAccess a;
  a.bytes = bytes;
  for (int l = 0; l < 64; ++l)
    a.address.push_back(address(l));
  return a;
}

// The A operand [128, 32] f16 of samples/gemm.tl on 2 waves of the 32x32x8 MFMA, K-major.
MfmaOperandUse gemmA() { return MfmaOperandUse{true, 32, 8, {0}, 128, 32}; }

} // namespace

TEST_CASE("LDS phases: consecutive words are conflict-free at every width", "[lds]") {
  for (int bytes : {4, 8, 16}) {
    Conflicts c = countConflicts(kCdna, lanes(bytes, [&](int l) { return int64_t(l) * bytes; }));
    CHECK(c.extra() == 0);
    CHECK(c.ideal == 64 * bytes / 128); // b32: 2 phases, b64: 4, b128: 8
  }
}

TEST_CASE("LDS phases: a 128-byte stride puts a phase on one bank", "[lds]") {
  // ds_read_b32, 32 lanes per phase, every lane on bank 0 with a distinct word: 32-way.
  Conflicts c = countConflicts(kCdna, lanes(4, [](int l) { return int64_t(l) * 128; }));
  CHECK(c.ways == 32);
  CHECK(c.extra() == 2 * 31);
  // The same word for every lane is a broadcast.
  CHECK(countConflicts(kCdna, lanes(4, [](int) { return int64_t(64); })).extra() == 0);
  // 2-byte reads of consecutive elements share words pairwise: no conflict.
  CHECK(countConflicts(kCdna, lanes(2, [](int l) { return int64_t(l) * 2; })).extra() == 0);
}

TEST_CASE("LDS phases: b64 lanes are checked 16 at a time", "[lds]") {
  // Lanes 0-15 and 16-31 hit the same banks at different words, but in different phases.
  Conflicts c = countConflicts(kCdna, lanes(8, [](int l) { return int64_t(l % 16) * 8 + (l / 16) * 4096; }));
  CHECK(c.extra() == 0);
  // Two lanes of one phase 128 bytes apart: 2-way.
  Conflicts d = countConflicts(kCdna, lanes(8, [](int l) { return int64_t(l % 8) * 8 + ((l / 8) % 2) * 128; }));
  CHECK(d.ways == 2);
}

TEST_CASE("the 16-byte swizzle has 2-way conflicts under MFMA's 8-byte reads of a 64-byte row", "[lds]") {
  SharedLayout sw = SharedLayout::swizzled(128, 32, 16);
  Conflicts reads = countConflicts(kCdna, mfmaReads(sw, gemmA(), 64));
  CHECK(reads.ways == 2);
  // Its 16-byte copy stores are conflict-free.
  CHECK(countConflicts(kCdna, copyStores(sw, 128, 8, 64)).extra() == 0);
}

TEST_CASE("the chosen 8-byte swizzle makes the A operand's reads and stores conflict-free", "[lds]") {
  LdsChoice c = chooseMfmaOperandLayout(kCdna, 128, 32, 16, {gemmA()}, 128);
  CHECK(c.layout.unitBytes == 8);
  CHECK(c.layout.isSwizzled());
  CHECK(c.reads.extra() == 0);
  CHECK(c.stores.extra() == 0);
  CHECK(c.swizzle16Reads.ways == 2);
  // A bijection of the tile, keeping runs of 4 elements (one 8-byte read), not 8.
  std::vector<bool> hit(128 * 32, false);
  for (int64_t r = 0; r < 128; ++r)
    for (int64_t col = 0; col < 32; ++col) {
      int64_t o = c.layout.offset(r, col);
      REQUIRE(o >= 0);
      REQUIRE(o < 128 * 32);
      CHECK(!hit[size_t(o)]);
      hit[size_t(o)] = true;
      if (col % 4)
        CHECK(o == c.layout.offset(r, col - 1) + 1);
    }
  CHECK(c.layout.vectorRun(8) == 4);
  CHECK(c.text.find("MFMA reads conflict-free") != std::string::npos);
}

TEST_CASE("an operand the 16-byte swizzle already serves keeps it", "[lds]") {
  // B [32, 128] f16, not K-major (read element by element along N): conflict-free as it is.
  MfmaOperandUse b{false, 32, 8, {0, 64}, 64, 32};
  LdsChoice c = chooseMfmaOperandLayout(kCdna, 32, 128, 16, {b}, 128);
  CHECK(c.layout == SharedLayout::swizzled(32, 128, 16));
  CHECK(c.reads.extra() == 0);
  CHECK(c.stores.extra() == 0);
}

TEST_CASE("the 16x16x16 MFMA's K-major reads are conflict-free on the chosen layout", "[lds]") {
  for (int64_t cols : {32, 64}) {
    MfmaOperandUse use{true, 16, 16, {0, 32}, 32, cols};
    LdsChoice c = chooseMfmaOperandLayout(kCdna, 64, cols, 16, {use}, 256);
    INFO("cols " << cols << ": " << c.layout.str());
    CHECK(c.reads.extra() == 0);
    CHECK(c.stores.extra() == 0);
  }
}

TEST_CASE("rows of 256 bytes: no row-keyed XOR serves both reads and stores", "[lds]") {
  // 16 lanes read one 8-byte unit of 16 rows (a conflict-free key needs row & 15), while a
  // phase of the copy's first 8-byte stores writes the 16 even units of one row, which only
  // cover half the banks under such a key: 2-way either way.
  MfmaOperandUse use{true, 16, 16, {0, 32}, 32, 128};
  std::optional<SharedLayout> readsFree = SharedLayout::xorUnits(64, 128, 16, 8, 0, 15);
  REQUIRE(readsFree);
  CHECK(countConflicts(kCdna, mfmaReads(*readsFree, use, 64)).extra() == 0);
  CHECK(countConflicts(kCdna, copyStores(*readsFree, 256, 8, 64)).ways == 2);
  for (int shift = 0; shift <= 3; ++shift)
    for (int mask : {1, 3, 7, 15}) {
      std::optional<SharedLayout> l = SharedLayout::xorUnits(64, 128, 16, 8, shift, mask);
      REQUIRE(l);
      CHECK(countConflicts(kCdna, mfmaReads(*l, use, 64)).extra() +
                countConflicts(kCdna, copyStores(*l, 256, 8, 64)).extra() >
            0);
    }
}

// The flip (unit ^= (unit >> 4) & 1 besides the row's key) frees both: the stores of chunks
// 8..15 of a row land on the other 8-byte slots than those of chunks 0..7, and the reads keep
// one distinct slot per row. Checked for every K-major case of 256 bytes and more: f16 and fp8
// rows (8 elements per lane: the fp8 MFMA), 16x16 and 32x32 instructions, 1 to 4 waves.
TEST_CASE("rows of 256 bytes or more: the flipped 8-byte swizzle is conflict-free for reads and stores", "[lds]") {
  struct Case {
    int64_t rows, cols;
    int elemBits, size, kStep;
    int64_t threads;
  };
  for (Case k : {Case{64, 128, 16, 16, 16, 256}, Case{32, 128, 16, 16, 16, 128}, Case{64, 128, 16, 32, 8, 128},
                 Case{64, 256, 16, 32, 8, 256}, Case{64, 256, 8, 32, 16, 128}, Case{32, 256, 8, 16, 32, 128},
                 Case{64, 512, 8, 32, 16, 256}}) {
    std::vector<int64_t> bases;
    int64_t waves = k.threads / 64, perWave = std::max<int64_t>(k.size, k.rows / waves);
    for (int64_t b = 0; b < k.rows; b += perWave)
      bases.push_back(b);
    MfmaOperandUse use{true, k.size, k.kStep, bases, perWave, k.cols};
    LdsChoice c = chooseMfmaOperandLayout(kCdna, k.rows, k.cols, k.elemBits, {use}, k.threads);
    INFO(k.rows << "x" << k.cols << " of " << k.elemBits << "-bit, " << k.size << "x" << k.size << ": "
                << c.layout.str());
    CHECK(c.layout.unitFlipBit == 4);
    CHECK(c.reads.extra() == 0);
    CHECK(c.stores.extra() == 0);
    CHECK(c.swizzle16Reads.ways == 2); // what the 16-byte swizzle gave
    // A bijection of the tile that keeps the lanes' 8-byte runs.
    const int64_t run = 64 / k.elemBits;
    std::vector<bool> hit(size_t(k.rows * k.cols), false);
    for (int64_t r = 0; r < k.rows; ++r)
      for (int64_t col = 0; col < k.cols; ++col) {
        int64_t o = c.layout.offset(r, col);
        REQUIRE(o >= 0);
        REQUIRE(o < k.rows * k.cols);
        REQUIRE(!hit[size_t(o)]);
        hit[size_t(o)] = true;
        if (col % run)
          REQUIRE(o == c.layout.offset(r, col - 1) + 1);
      }
    CHECK(c.layout.vectorRun(16) == run);
  }
}

TEST_CASE("the flip is refused where bit 4 of a unit does not vary in the row", "[lds]") {
  CHECK(!SharedLayout::xorUnits(16, 64, 16, 8, 0, 15, 4)); // 16 units of 8 bytes per row
  CHECK(SharedLayout::xorUnits(16, 128, 16, 8, 0, 15, 4));
  // Rows of 64 and 128 bytes keep their unflipped choice.
  LdsChoice c = chooseMfmaOperandLayout(kCdna, 128, 32, 16, {gemmA()}, 128);
  CHECK(c.layout.unitFlipBit == 0);
}

TEST_CASE("xorUnits refuses keys that would move units out of their row", "[lds]") {
  CHECK(!SharedLayout::xorUnits(16, 12, 16, 8, 0, 3)); // 3 units per row
  CHECK(!SharedLayout::xorUnits(16, 32, 16, 8, 0, 6)); // not a mask
  CHECK(SharedLayout::xorUnits(16, 32, 16, 8, 1, 7));
}
